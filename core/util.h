/* util.h — small helpers shared by the daemon, the web layer and the client: clocks, cleanup, paths. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

/* Unix time in ms (int64_t: boards with 32-bit time_t still get past 2038 here). */
int64_t util_now_ms(void);
/* CLOCK_MONOTONIC in microseconds, the clock sd-event timers use. */
uint64_t util_monotonic_us(void);
/* CLOCK_MONOTONIC in nanoseconds, for measuring how long something took. */
uint64_t util_monotonic_ns(void);

/* The grid of a periodic tick: the CLOCK_MONOTONIC time, in ns, of the next
 * instant strictly after the given one at which the wall clock is a whole
 * multiple of interval_ns since the epoch (a whole second at 1 s, a whole
 * tenth at 100 ms). realtime_ns and monotonic_ns are the two clocks read at
 * the same instant. interval_ns 0 gives monotonic_ns. */
uint64_t util_grid_next_ns(uint64_t realtime_ns, uint64_t monotonic_ns, uint64_t interval_ns);
/* The same, from the clocks now plus delay_ns. */
uint64_t util_grid_next_now_ns(uint64_t interval_ns, uint64_t delay_ns);
/* Along a grid already taken: the first point_ns + k x interval_ns (k >= 1)
 * strictly after now_ns, so that the points missed in a stall are dropped,
 * not made up for in a burst. interval_ns 0 gives now_ns. */
uint64_t util_grid_after_ns(uint64_t point_ns, uint64_t now_ns, uint64_t interval_ns);

/* mkdir -p with mode for each missing component. */
int util_mkdir_p(const char *path, mode_t mode);

/* Moves a file (or whatever is there) out of the way without deleting
 * anything: renames path to "<path>.<tag>-<unix seconds>" in the same
 * directory, or, when that name is taken, to "<path>.<tag>-<seconds>.2",
 * ".3" and on; never over an existing name. ret gets the new path. -errno;
 * -EEXIST when 100 names are all taken. */
int util_rename_aside(const char *path, const char *tag, char *ret, size_t size);

/* Every byte of data to fd, retrying short writes and EINTR. -errno. */
int util_write_all(int fd, const void *data, size_t len);

/* For answers made a piece at a time: copies into buf (max bytes) what is
 * left of text (len bytes) after *sent, advances *sent, returns the count. */
size_t util_copy_part(char *buf, size_t max, const char *text, size_t len, size_t *sent);

/* Formats a one-line message into err (when err is not NULL) and returns r,
 * a negative errno: the shape of every "err names the field" function. */
int util_errorf(char *err, size_t errlen, int r, const char *format, ...) __attribute__((format(printf, 4, 5)));

/* errno name ("EIO"), "EUNKNOWN" for numbers glibc has no name for. */
const char *util_errno_name(int err);

/* q units of 10^-decimals (0..19) as text in buf, NUL-terminated: a minus
 * first when negative, at least one digit before the point, then the
 * decimals with trailing zeros dropped down to `keep` of them (the point
 * too when none is left): 48686 at 3 is "48.686"; 31000 at 3 is "31.000"
 * with keep 3, "31.0" with keep 1, "31" with keep 0. Integer work only, two
 * digits a division: JSON answers, samples.csv and /metrics write numbers
 * by the ten thousand. Returns the length, at most UTIL_DECIMAL_MAX - 1. */
#define UTIL_DECIMAL_MAX 24
size_t util_decimal_text(uint64_t q, int decimals, bool negative, int keep, char *buf);

/* v as every display shows a number: rounded half away from zero to
 * decimals (0..6) places, |v| x 10^decimals rounded as one double, which the
 * dashboard's num() does alike, so 12.5 s is "13" everywhere; never "-0".
 * NaN and magnitudes over 1e12 give "0". Returns buf. */
char *util_fixed_text(double v, int decimals, char *buf, size_t size);

static inline void freep(void *p) {
        free(*(void **) p);
}

static inline void closep(int *fd) {
        if (*fd >= 0)
                close(*fd);
}

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
