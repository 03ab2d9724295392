/* source.h — what each source of the sensors library exports: one ops table, with the channels its readings are. */
#pragma once

#include <stdint.h>

#include "sensors-internal.h"

/*
 * A source is one file of the library exporting one const struct
 * sensors_source (power.c is the model); the mapping table in sources.c
 * lists them, and its order is the order they are probed, read and
 * carried over, and the order of their channels (they are freed in the
 * reverse order; one whose probe never ran is not freed). The core
 * (sensors.c, channels.c) knows no source by name: it loops over the
 * table.
 *
 * state is the source's own memory, state_size zeroed bytes made before
 * its probe and freed after its free (NULL when state_size is 0); the
 * older sources keep theirs in struct sensors instead, where consumers
 * read more of them than their channels.
 */

/* A group of channels of one kind: its id, unit and reading. */
struct sensors_channels {
        enum sensor_kind kind;
        const char *unit;               /* of value: "celsius", "state", "hz", "fraction", "flag" */
        /* The ids: prefix and the source's own name after it, exactly prefix
         * when exact (a one-of-a-kind channel), or any id no other group
         * claims when NULL (the temperatures). */
        const char *prefix;
        bool exact;
        bool counts_errors;             /* read_errors is the channel's own (see struct sensor_channel) */
        size_t (*count)(const struct sensors *s, const void *state);
        const char *(*id)(const struct sensors *s, const void *state, size_t i);   /* NULL: prefix */
        uint64_t (*errors)(const struct sensors *s, const void *state, size_t i);  /* NULL: none kept */
        /* The reading of channel i as the last read left it, from memory
         * only (the tick calls it for every channel): 1 with *ret set, 0
         * when the source answers without a value, -1 when it failed or
         * i is not one of s's (a channel kept across a re-probe). */
        int (*value)(const struct sensors *s, const void *state, size_t i, double *ret);
};

struct sensors_source {
        const char *name;
        size_t state_size;              /* bytes of its own state; 0: none */
        /* Once per probe: find the hardware, open and keep each fd the tick
         * reads. Absent hardware is not an error; -errno fails the probe.
         * On any return the source must be safe to free. */
        int (*probe)(struct sensors *s, void *state);
        /* Every tick: one pread (or ioctl) per value on the kept fds, no
         * open or stat. Returns how many of its readings failed (>= 0).
         * NULL: nothing to read (a source that only finds temperatures). */
        int (*read)(struct sensors *s, void *state, int64_t now_ms);
        /* A re-probe: what to keep of the old set (last values, error
         * counts); NULL: nothing. */
        void (*carry)(struct sensors *to, void *to_state, const struct sensors *from, const void *from_state);
        void (*free)(struct sensors *s, void *state);      /* close what probe opened; NULL: nothing */
        const struct sensors_channels *channels;           /* in their order; NULL: none */
        size_t n_channels;
};

/* The mapping table (sources.c). */
extern const struct sensors_source *const sensors_sources[];
extern const size_t sensors_n_sources;

/* The state of row i of the table in s, NULL when it keeps none. */
static inline void *sensors_source_state(const struct sensors *s, size_t i) {
        return s->source_state ? s->source_state[i] : NULL;
}
