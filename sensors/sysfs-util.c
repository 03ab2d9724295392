/* sysfs-util.c — small helpers to build paths under a root, open, read and parse sysfs/procfs attributes. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sysfs-util.h"

const char *sysfs_prefix(const char *root) {
        /* "/" stands for the real root: paths then start with "/sys", not "//sys". */
        if (!root || root[0] == '\0' || strcmp(root, "/") == 0)
                return "";
        return root;
}

int sysfs_path(char *buf, size_t size, const char *fmt, ...) {
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(buf, size, fmt, ap);
        va_end(ap);
        if (n < 0)
                return -EINVAL;
        if ((size_t) n >= size)
                return -ENAMETOOLONG;
        return 0;
}

int sysfs_open(const char *path) {
        struct stat st;
        int fd, r;

        /* O_NONBLOCK: a FIFO planted at a sensor path would otherwise block
         * open() until a writer shows up. Sysfs and procfs attributes are
         * regular files; anything else is refused. */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                r = -errno;
        else if (S_ISREG(st.st_mode))
                return fd;
        else
                r = S_ISDIR(st.st_mode) ? -EISDIR : -EBADFD;
        close(fd);
        return r;
}

/* isspace() in the C locale the daemon runs in, without a call into libc
 * for every character of every value of every tick. */
static bool is_blank(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static size_t strip_trailing(char *buf, size_t n) {
        /* device-tree strings end in NUL, sysfs text in '\n'. */
        while (n > 0 && (buf[n - 1] == '\0' || is_blank(buf[n - 1])))
                n--;
        buf[n] = '\0';
        return n;
}

ssize_t sysfs_pread(int fd, char *buf, size_t size) {
        ssize_t n;

        if (size < 2)
                return -EINVAL;
        n = pread(fd, buf, size - 1, 0);
        if (n < 0)
                return -errno;
        return (ssize_t) strip_trailing(buf, (size_t) n);
}

ssize_t sysfs_read_file(const char *path, char *buf, size_t size) {
        ssize_t n;
        int fd;

        fd = sysfs_open(path);
        if (fd < 0)
                return fd;
        n = sysfs_pread(fd, buf, size);
        close(fd);
        return n;
}

int sysfs_check_linked(int fd) {
        struct stat st;

        if (fstat(fd, &st) < 0)
                return -errno;
        return st.st_nlink == 0 ? -ENOENT : 0;
}

int sysfs_resolve(const char *root, const char *path, char *buf, size_t size) {
        char target[PATH_MAX], joined[PATH_MAX], real[PATH_MAX];
        const char *p = path;
        ssize_t n;
        int r;

        n = readlink(path, target, sizeof(target) - 1);
        if (n > 0) {
                target[n] = '\0';
                /* Absolute link in a fixture tree: it means root + target. */
                if (target[0] == '/' && sysfs_prefix(root)[0] != '\0') {
                        r = sysfs_path(joined, sizeof(joined), "%s%s", sysfs_prefix(root), target);
                        if (r < 0)
                                return r;
                        p = joined;
                }
        }
        if (!realpath(p, real))
                return -errno;
        if (strlen(real) >= size)
                return -ENAMETOOLONG;
        strcpy(buf, real);
        return 0;
}

void sysfs_basename(const char *path, char *buf, size_t size) {
        size_t len = strlen(path);
        const char *start;

        while (len > 1 && path[len - 1] == '/')
                len--;
        start = path + len;
        while (start > path && start[-1] != '/')
                start--;
        len -= (size_t) (start - path);
        if (len >= size)
                len = size - 1;
        memcpy(buf, start, len);
        buf[len] = '\0';
}

/* Hand-written rather than strtoll(): these run for every value of every
 * tick, and the locale-aware libc parsers cost several times more. Same
 * rules: blanks around, an optional sign (sysfs_parse_ll only), decimal
 * digits, -ERANGE on overflow. */
/* Digits at *pp into *ret; -EBADMSG without a digit, -ERANGE above max. */
static int parse_digits(const char **pp, uint64_t max, uint64_t *ret) {
        const uint64_t lim = max / 10, last = max % 10;        /* one division, not one a digit */
        const char *p = *pp;
        int n;
        uint64_t v = 0;
        bool range = false;

        if (*p < '0' || *p > '9')
                return -EBADMSG;
        /* 18 digits are below 10^18 and fit every max used here: no range
         * check for them, which is every value sysfs gives. */
        for (n = 0; n < 18 && *p >= '0' && *p <= '9'; n++, p++)
                v = v * 10 + (unsigned) (*p - '0');
        for (; *p >= '0' && *p <= '9'; p++) {
                unsigned d = (unsigned) (*p - '0');

                if (v > lim || (v == lim && d > last))
                        range = true;
                else
                        v = v * 10 + d;
        }
        *pp = p;
        *ret = v;
        return range ? -ERANGE : 0;
}

static bool only_blanks(const char *p) {
        while (is_blank(*p))
                p++;
        return *p == '\0';
}

int sysfs_parse_ll(const char *text, long long *ret) {
        const char *p = text;
        bool neg = false;
        uint64_t v;
        int r;

        while (is_blank(*p))
                p++;
        if (*p == '-' || *p == '+')
                neg = *p++ == '-';
        r = parse_digits(&p, neg ? (uint64_t) LLONG_MAX + 1 : (uint64_t) LLONG_MAX, &v);
        if (r == -EBADMSG || !only_blanks(p))
                return -EBADMSG;
        if (r < 0)
                return r;
        *ret = neg ? (long long) (0 - v) : (long long) v;
        return 0;
}

int sysfs_parse_u64(const char *text, uint64_t *ret) {
        const char *p = text;
        uint64_t v;
        int r;

        while (is_blank(*p))
                p++;
        r = parse_digits(&p, UINT64_MAX, &v);
        if (r == -EBADMSG || !only_blanks(p))
                return -EBADMSG;
        if (r < 0)
                return r;
        *ret = v;
        return 0;
}

int sysfs_parse_khz(const char *text, uint32_t *ret) {
        uint64_t v;
        int r;

        r = sysfs_parse_u64(text, &v);
        if (r < 0)
                return r;
        if (v > UINT32_MAX)
                return -ERANGE;
        *ret = (uint32_t) v;
        return 0;
}

static int cmp_int(const void *a, const void *b) {
        int x = *(const int *) a, y = *(const int *) b;

        return (x > y) - (x < y);
}

int sysfs_parse_cpu_list(const char *text, int *cpus, size_t max) {
        const char *p = text;
        size_t n = 0;

        for (;;) {
                long a, b;
                char *end;

                while (*p == ' ' || *p == ',' || *p == '\t' || *p == '\n')
                        p++;
                if (*p == '\0')
                        break;
                a = strtol(p, &end, 10);
                if (end == p || a < 0 || a > INT_MAX)
                        return -EBADMSG;
                b = a;
                p = end;
                if (*p == '-') {
                        b = strtol(p + 1, &end, 10);
                        if (end == p + 1 || b < a || b > INT_MAX)
                                return -EBADMSG;
                        p = end;
                }
                for (long c = a; c <= b && n < max; c++)
                        cpus[n++] = (int) c;
        }
        if (n > 0)
                qsort(cpus, n, sizeof(int), cmp_int);
        return (int) n;
}

bool sysfs_match_index(const char *name, const char *prefix, const char *suffix, int *ret) {
        size_t lp = strlen(prefix), ls = strlen(suffix), ln = strlen(name);
        long v = 0;

        if (ln <= lp + ls || strncmp(name, prefix, lp) != 0 || strcmp(name + ln - ls, suffix) != 0)
                return false;
        for (size_t i = lp; i < ln - ls; i++) {
                if (!isdigit((unsigned char) name[i]))
                        return false;
                v = v * 10 + (name[i] - '0');
                if (v > INT_MAX / 10)
                        return false;
        }
        *ret = (int) v;
        return true;
}

int sysfs_list_indices(const char *dir, const char *prefix, const char *suffix, int **ret) {
        int *list = NULL, idx;
        size_t n = 0, cap = 0;
        struct dirent *de;
        DIR *d;

        *ret = NULL;
        d = opendir(dir);
        if (!d)
                return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
        /* errno tells the end from a failure (EOVERFLOW on 32-bit without LFS). */
        for (errno = 0; (de = readdir(d)); errno = 0) {
                if (!sysfs_match_index(de->d_name, prefix, suffix, &idx))
                        continue;
                if (n == cap) {
                        int *nl = realloc(list, (cap ? cap * 2 : 16) * sizeof(int));

                        if (!nl) {
                                free(list);
                                closedir(d);
                                return -ENOMEM;
                        }
                        list = nl;
                        cap = cap ? cap * 2 : 16;
                }
                list[n++] = idx;
        }
        if (errno != 0) {
                int r = -errno;

                free(list);
                closedir(d);
                return r;
        }
        closedir(d);
        if (n > 0)
                qsort(list, n, sizeof(int), cmp_int);
        *ret = list;
        return (int) n;
}

void sysfs_strlcpy(char *dst, const char *src, size_t size) {
        size_t len = strlen(src);

        if (size == 0)
                return;
        if (len >= size)
                len = size - 1;
        memcpy(dst, src, len);
        dst[len] = '\0';
}
