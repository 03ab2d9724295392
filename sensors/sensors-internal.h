/* sensors-internal.h — helpers the files of the sensors library share: temperatures, kept fds, the reader thread. */
#pragma once

#include <sys/types.h>
#include <time.h>

#include "sensors.h"

/* Append a temperature probed at path; fd is its kept fd, or -errno when the
 * open failed (the sensor is kept, failed). Closes fd when out of memory. */
int sensors_add_temp(struct sensors *s, const char *path, int fd, struct temp_sensor **ret);

/* Stop the reader thread, close every temperature's fd and free them (temps.c). */
void sensors_free_temps(struct sensors *s);

/* Parse a temperature with a per-sensor unit state: *quirk and *fixed are
 * in/out so the whole-degree decision sticks once an unambiguous value was
 * seen. Returns 0, -EBADMSG or -ERANGE (not a plausible temperature). */
int sensors_parse_temp_sticky(const char *text, int32_t *ret_mc, bool *quirk, bool *fixed);

/* Parse a limit (trip point, hwmon max/crit): false when absent, garbage or
 * a sentinel. *quirk says whether the whole-degree rule was applied. */
bool sensors_parse_limit(const char *text, int32_t *ret_mc, bool *quirk);

/* On a fixture tree, watch a per-tick file so its deletion is noticed
 * without an fstat() per tick; a no-op on sysfs. Best effort. */
void sensors_watch(struct sensors *s, const char *path);

/* pread a kept fd; on fixture trees a deleted file reads as -ENOENT. */
ssize_t sensors_pread(const struct sensors *s, int fd, char *buf, size_t size);

/* Record a per-tick read error: a vanished file asks the caller to re-probe. */
void sensors_note_error(struct sensors *s, int r);

/* The slow-sensor thread (reader.c). reader_add() moves t to it (starting
 * it when needed); reader_tick() takes its results into s->temps and asks
 * for the next round, returning how many slow sensors are failed;
 * reader_stop() ends it (waits for a read under way). */
int reader_add(struct sensors *s, struct temp_sensor *t);
int reader_tick(struct sensors *s, int64_t now_ms);
void reader_stop(struct sensors *s);

/* CLOCK_MONOTONIC now, in ns (inline: taken once per temperature read). */
static inline uint64_t sensors_now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* A per-tick read's result r counted: one more in *errors when it failed.
 * Returns 1 for a failure, else 0 (a read op sums them). */
static inline int sensors_count_failure(int r, uint64_t *errors) {
        if (r >= 0)
                return 0;
        (*errors)++;
        return 1;
}
