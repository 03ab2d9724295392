/* temps.c — the temperatures every source finds: read on each tick (slow ones by the reader thread), kept across re-probes, and their channels. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "source.h"
#include "sysfs-util.h"

/*
 * thermal.c and hwmon.c find temperatures and add them here
 * (sensors_add_temp()); this source, after them in the table, reads them
 * all on every tick and makes them the first channels, in the order found.
 * The temperatures belong to struct sensors, not to a source: they are
 * freed with it (sensors_free_temps()), whichever source's probe failed.
 */

int sensors_add_temp(struct sensors *s, const char *path, int fd, struct temp_sensor **ret) {
        struct temp_sensor *n;

        n = realloc(s->temps, (s->n_temps + 1) * sizeof(*n));
        if (!n) {
                if (fd >= 0)
                        close(fd);
                return -ENOMEM;
        }
        s->temps = n;
        n = &s->temps[s->n_temps++];
        memset(n, 0, sizeof(*n));
        sysfs_strlcpy(n->path, path, sizeof(n->path));
        if (fd >= 0)
                sensors_watch(s, path);
        /* Not read yet: ok stays false with no error until the first tick.
         * An open failure (EACCES, EIO) keeps the sensor, failed. */
        n->fd = fd < 0 ? -1 : fd;
        n->error = fd < 0 ? -fd : 0;
        *ret = n;
        return 0;
}

/* Notes how long t's read took; returns the time it ended. */
static uint64_t temp_note_time(struct temp_sensor *t, uint64_t start_ns) {
        uint64_t end = sensors_now_ns(), us = (end - start_ns) / 1000;

        t->read_us = us > UINT32_MAX ? UINT32_MAX : (uint32_t) us;     /* microseconds */
        if (t->read_us > t->read_us_max)
                t->read_us_max = t->read_us;
        return end;
}

/* *clock_ns is when the read starts (the end of the previous one: one
 * clock reading per sensor, not two); it is moved to when it ended. */
static int temp_read(struct sensors *s, struct temp_sensor *t, int64_t now_ms, uint64_t *clock_ns) {
        char buf[32];
        int32_t mc;
        ssize_t n;
        int r;

        if (t->fd < 0)
                return -t->error;
        n = sensors_pread(s, t->fd, buf, sizeof(buf));
        *clock_ns = temp_note_time(t, *clock_ns);
        r = n < 0 ? (int) n : sensors_parse_temp_sticky(buf, &mc, &t->unit_quirk, &t->unit_fixed);
        if (r < 0) {
                t->ok = false;
                t->error = -r;
                sensors_note_error(s, r);
                return r;
        }
        t->ok = true;
        t->error = 0;
        t->temp_mc = mc;
        t->last_good_ms = now_ms;
        return 0;
}

static int temps_read(struct sensors *s, void *state, int64_t now_ms) {
        uint64_t clock = sensors_now_ns();
        int failed = 0;

        for (size_t i = 0; i < s->n_temps; i++) {
                struct temp_sensor *t = &s->temps[i];

                if (t->slow)
                        continue;
                failed += sensors_count_failure(temp_read(s, t, now_ms, &clock), &t->read_errors);
                /* Too slow for the tick: the reader thread takes it (when it
                 * cannot start, the sensor stays here). */
                t->slow_reads = s->slow_us > 0 && t->read_us > s->slow_us ? t->slow_reads + 1 : 0;
                if (t->slow_reads >= SENSORS_SLOW_READS && t->fd >= 0) {
                        (void) reader_add(s, t);
                        clock = sensors_now_ns();       /* starting the thread is no sensor's read */
                }
        }
        return failed + reader_tick(s, now_ms);
}

/* Two timed reads of each temperature: slow both times, it goes to the
 * reader thread before the first tick. */
static int temps_probe(struct sensors *s, void *state) {
        for (size_t i = 0; i < s->n_temps; i++) {
                struct temp_sensor *t = &s->temps[i];
                bool slow = t->fd >= 0;
                char buf[32];

                for (int k = 0; k < 2 && slow; k++) {
                        uint64_t start = sensors_now_ns();

                        (void) sysfs_pread(t->fd, buf, sizeof(buf));
                        temp_note_time(t, start);
                        slow = t->read_us > s->slow_us;
                }
                if (slow)
                        (void) reader_add(s, t);
        }
        return 0;
}

static const struct temp_sensor *find_temp(const struct sensors *s, const char *id) {
        for (size_t i = 0; i < s->n_temps; i++)
                if (strcmp(s->temps[i].id, id) == 0)
                        return &s->temps[i];
        return NULL;
}

static void carry_values(struct sensors *to, const struct sensors *from) {
        for (size_t i = 0; i < to->n_temps; i++) {
                struct temp_sensor *t = &to->temps[i];
                const struct temp_sensor *o = find_temp(from, t->id);

                if (!o)
                        continue;
                t->temp_mc = o->temp_mc;
                t->last_good_ms = o->last_good_ms;
                t->unit_quirk = o->unit_quirk;
                t->unit_fixed = o->unit_fixed;
                t->read_errors = o->read_errors;
                t->read_us = o->read_us;
                t->read_us_max = o->read_us_max;
                if (t->fd >= 0) {
                        /* Reopened fine: show the old state until the next read. */
                        t->ok = o->ok;
                        t->error = o->error;
                }
        }
}

static void missing_add(struct sensors *s, const char *id) {
        if (find_temp(s, id))
                return;
        for (size_t i = 0; i < s->n_missing; i++)
                if (strcmp(s->missing[i], id) == 0)
                        return;
        if (s->n_missing == SENSORS_MISSING_MAX) {
                /* full: the one missing longest is forgotten */
                memmove(s->missing[0], s->missing[1], (SENSORS_MISSING_MAX - 1) * sizeof s->missing[0]);
                s->n_missing--;
        }
        memcpy(s->missing[s->n_missing++], id, SENSORS_ID_MAX);
}

/* What to look for again: what old missed and what it had, minus what s has. */
static void carry_missing(struct sensors *s, const struct sensors *old) {
        for (size_t i = 0; i < old->n_missing; i++)
                missing_add(s, old->missing[i]);
        for (size_t i = 0; i < old->n_temps; i++)
                missing_add(s, old->temps[i].id);
}

static void temps_carry(struct sensors *to, void *to_state, const struct sensors *from, const void *from_state) {
        carry_values(to, from);
        for (size_t i = 0; i < to->n_temps; i++) {
                const struct temp_sensor *o = find_temp(from, to->temps[i].id);

                if (o && o->slow && to->temps[i].fd >= 0)
                        (void) reader_add(to, &to->temps[i]);
        }
        carry_missing(to, from);
}

void sensors_free_temps(struct sensors *s) {
        reader_stop(s);                 /* before the fds it reads are closed */
        for (size_t i = 0; i < s->n_temps; i++)
                if (s->temps[i].fd >= 0)
                        close(s->temps[i].fd);
        free(s->temps);
        s->temps = NULL;
        s->n_temps = 0;
}

static size_t temps_count(const struct sensors *s, const void *state) {
        return s->n_temps;
}

static const char *temps_id(const struct sensors *s, const void *state, size_t i) {
        return s->temps[i].id;
}

static uint64_t temps_errors(const struct sensors *s, const void *state, size_t i) {
        return s->temps[i].read_errors;
}

static int temps_value(const struct sensors *s, const void *state, size_t i, double *ret) {
        if (i >= s->n_temps)
                return -1;
        *ret = s->temps[i].temp_mc / 1000.0;            /* mC -> C */
        return s->temps[i].ok ? 1 : -1;
}

/* Ids are the finding source's ("thermal_zone0", "hwmon:coretemp/temp1"):
 * no prefix, any id no other group claims. */
static const struct sensors_channels temps_channels[] = {
        { .kind = SENSOR_KIND_TEMPERATURE, .unit = "celsius", .counts_errors = true,
          .count = temps_count, .id = temps_id, .errors = temps_errors, .value = temps_value },
};

const struct sensors_source temps_source = {
        .name = "temps",
        .probe = temps_probe,
        .read = temps_read,
        .carry = temps_carry,
        .channels = temps_channels,
        .n_channels = 1,
};
