/* util.c — small helpers shared by the daemon, the web layer and the client: clocks, cleanup, paths. */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

int64_t util_now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t util_monotonic_us(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

int util_mkdir_p(const char *path, mode_t mode) {
        char buf[1024];
        size_t len = strlen(path);

        if (len == 0 || len >= sizeof buf)
                return -ENAMETOOLONG;
        memcpy(buf, path, len + 1);
        for (char *p = buf + 1; ; p++) {
                if (*p != '/' && *p != '\0')
                        continue;
                char saved = *p;
                *p = '\0';
                if (mkdir(buf, mode) < 0 && errno != EEXIST)
                        return -errno;
                if (saved == '\0')
                        break;
                *p = saved;
        }
        struct stat st;
        if (stat(path, &st) < 0)
                return -errno;
        return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

/* rename() that fails with -EEXIST instead of replacing `to`. */
static int rename_noreplace(const char *from, const char *to) {
        struct stat st;

        if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
                return 0;
        if (errno != EINVAL && errno != ENOSYS)
                return -errno;
        /* a file system without RENAME_NOREPLACE: look first (the callers'
         * directories are their own, so nobody else makes the name meanwhile) */
        if (lstat(to, &st) == 0)
                return -EEXIST;
        if (errno != ENOENT)
                return -errno;
        return rename(from, to) < 0 ? -errno : 0;
}

int util_rename_aside(const char *path, const char *tag, char *ret, size_t size) {
        long long now = (long long) (util_now_ms() / 1000);
        int n, r = -EEXIST;

        for (unsigned i = 1; i <= 100 && r == -EEXIST; i++) {
                n = i == 1 ? snprintf(ret, size, "%s.%s-%lld", path, tag, now) :
                             snprintf(ret, size, "%s.%s-%lld.%u", path, tag, now, i);
                if (n < 0 || (size_t) n >= size)
                        return -ENAMETOOLONG;
                r = rename_noreplace(path, ret);
        }
        return r;
}

const char *util_errno_name(int err) {
        const char *name = strerrorname_np(err);

        return name ? name : "EUNKNOWN";
}

uint64_t util_monotonic_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

uint64_t util_grid_next_ns(uint64_t realtime_ns, uint64_t monotonic_ns, uint64_t interval_ns) {
        if (interval_ns == 0)
                return monotonic_ns;
        return monotonic_ns + (interval_ns - realtime_ns % interval_ns);
}

uint64_t util_grid_next_now_ns(uint64_t interval_ns, uint64_t delay_ns) {
        struct timespec rt, mono;

        clock_gettime(CLOCK_REALTIME, &rt);
        clock_gettime(CLOCK_MONOTONIC, &mono);
        return util_grid_next_ns((uint64_t) rt.tv_sec * 1000000000u + (uint64_t) rt.tv_nsec + delay_ns,
                                 (uint64_t) mono.tv_sec * 1000000000u + (uint64_t) mono.tv_nsec + delay_ns,
                                 interval_ns);
}

uint64_t util_grid_after_ns(uint64_t point_ns, uint64_t now_ns, uint64_t interval_ns) {
        if (interval_ns == 0)
                return now_ns;
        if (now_ns < point_ns)
                return point_ns + interval_ns;
        return point_ns + ((now_ns - point_ns) / interval_ns + 1) * interval_ns;
}

int util_write_all(int fd, const void *data, size_t len) {
        const char *p = data;

        while (len > 0) {
                ssize_t n = write(fd, p, len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                p += n;
                len -= (size_t) n;
        }
        return 0;
}

size_t util_copy_part(char *buf, size_t max, const char *text, size_t len, size_t *sent) {
        size_t n = len - *sent < max ? len - *sent : max;

        memcpy(buf, text + *sent, n);
        *sent += n;
        return n;
}

int util_errorf(char *err, size_t errlen, int r, const char *format, ...) {
        va_list ap;

        if (err && errlen > 0) {
                va_start(ap, format);
                vsnprintf(err, errlen, format, ap);
                va_end(ap);
        }
        return r;
}

/* "00" to "99". */
static const char digit_pairs[] =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
        "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";

size_t util_decimal_text(uint64_t q, int decimals, bool negative, int keep, char *buf) {
        char digits[UTIL_DECIMAL_MAX];
        char *p = digits + sizeof digits;      /* the digits of q, written from the end */
        const char *frac;
        size_t n, len = 0, frac_len;

        if (decimals < 0)
                decimals = 0;
        if (decimals > 19)
                decimals = 19;
        if (keep < 0)
                keep = 0;
        while (q >= 100) {
                p -= 2;
                memcpy(p, &digit_pairs[2 * (q % 100)], 2);
                q /= 100;
        }
        if (q >= 10) {
                p -= 2;
                memcpy(p, &digit_pairs[2 * q], 2);
        } else {
                *--p = (char) ('0' + q);
        }
        for (n = (size_t) (digits + sizeof digits - p); n <= (size_t) decimals; n++)
                *--p = '0';     /* a whole digit before the point: 0.05, not .05 */
        if (negative)
                buf[len++] = '-';
        memcpy(buf + len, p, n - (size_t) decimals);
        len += n - (size_t) decimals;
        frac = p + n - (size_t) decimals;
        for (frac_len = (size_t) decimals; frac_len > (size_t) keep && frac[frac_len - 1] == '0'; frac_len--)
                ;       /* drop trailing zeros down to keep */
        if (frac_len > 0) {
                buf[len++] = '.';
                memcpy(buf + len, frac, frac_len);
                len += frac_len;
        }
        buf[len] = '\0';
        return len;
}

char *util_fixed_text(double v, int decimals, char *buf, size_t size) {
        static const double scale[] = { 1, 10, 100, 1000, 10000, 100000, 1000000 };
        int d = decimals < 0 ? 0 : decimals > 6 ? 6 : decimals;
        char text[UTIL_DECIMAL_MAX];
        long long units;

        if (!isfinite(v) || fabs(v) > 1e12)
                v = 0;
        units = llround(fabs(v) * scale[d]);
        util_decimal_text((uint64_t) units, d, v < 0 && units != 0, d, text);
        snprintf(buf, size, "%s", text);
        return buf;
}
