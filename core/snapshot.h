/* snapshot.h — what one sampling tick saw, and the interface of everything that consumes it. */
#pragma once

#include <stdint.h>

#include "sensors.h"

/* Valid during the consumer's call; sensors stays valid until the next
 * sample or on_sensors call, whichever comes first. */
struct snapshot {
        const struct sensors *sensors;  /* just read */
        int64_t time_ms;                /* Unix ms (wall clock: a label; it may step) */
        int64_t mono_ms;                /* CLOCK_MONOTONIC ms: what durations are measured on */
        uint64_t tick;                  /* count since start, from 1 */
        int64_t tick_ns;                /* ns the previous tick took (reads and consumers), -1 before one */
};

/* One consumer of the tick (history, the runs, ...). The daemon calls every
 * registered consumer in order of registration. */
struct tick_consumer {
        const char *name;
        void *userdata;
        /* A new reading. */
        void (*on_sample)(void *userdata, const struct snapshot *snap);
        /* The sensors were (re)probed; the previous struct sensors is gone. May be NULL. */
        void (*on_sensors)(void *userdata, const struct sensors *s);
};
