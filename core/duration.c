/* duration.c — parse and print durations written "250ms", "1s", "90m", "2h", "1h30m". */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "duration.h"

struct duration_unit {
        const char *name;
        uint64_t ms;                    /* length of one unit, ms */
};

/* Largest first: groups must be written in this order, each unit at most once. */
static const struct duration_unit duration_units[] = {
        { "d",  UINT64_C(86400000) },
        { "h",  UINT64_C(3600000) },
        { "m",  UINT64_C(60000) },
        { "s",  UINT64_C(1000) },
        { "ms", UINT64_C(1) },
};
#define N_UNITS (sizeof(duration_units) / sizeof(duration_units[0]))

static int duration_unit_find(const char *s, size_t len) {
        for (size_t i = 0; i < N_UNITS; i++)
                if (strlen(duration_units[i].name) == len && memcmp(duration_units[i].name, s, len) == 0)
                        return (int) i;
        return -EINVAL;
}

/* Reads one <digits><unit> group at *p; advances *p. */
static int duration_parse_group(const char **p, uint64_t *ret_n, int *ret_unit) {
        const char *s = *p, *u;
        uint64_t n = 0;
        bool overflow = false;
        int unit;

        if (*s < '0' || *s > '9')
                return -EINVAL;
        for (; *s >= '0' && *s <= '9'; s++) {
                if (n > (UINT64_MAX - (uint64_t) (*s - '0')) / 10)
                        overflow = true;
                else
                        n = n * 10 + (uint64_t) (*s - '0');
        }
        for (u = s; *s >= 'a' && *s <= 'z'; s++)
                ;
        unit = duration_unit_find(u, (size_t) (s - u));
        if (unit < 0)
                return unit;            /* bare number, unknown unit or junk */

        *p = s;
        *ret_n = n;
        *ret_unit = unit;
        return overflow ? -ERANGE : 0;
}

int duration_parse(const char *text, uint64_t *ret_ms) {
        const char *p = text;
        uint64_t total = 0;
        int last_unit = -1;
        bool overflow = false;

        if (!text || !ret_ms || *text == '\0')
                return -EINVAL;

        while (*p != '\0') {
                uint64_t n;
                int unit, r;

                r = duration_parse_group(&p, &n, &unit);
                if (r == -ERANGE)
                        overflow = true;
                else if (r < 0)
                        return r;
                if (unit <= last_unit)  /* "30m1h", "1s1s": almost certainly a typo */
                        return -EINVAL;
                last_unit = unit;

                if (overflow || n > (uint64_t) INT64_MAX / duration_units[unit].ms) {
                        overflow = true;
                        continue;       /* keep checking the syntax: junk beats overflow */
                }
                total += n * duration_units[unit].ms;
                if (total > (uint64_t) INT64_MAX)
                        overflow = true;
        }
        if (overflow)
                return -ERANGE;

        *ret_ms = total;
        return 0;
}

/* Writes ms as groups from unit `top` down to unit `bottom` (top holds the excess). */
static int duration_format_from(uint64_t ms, size_t top, size_t bottom, char *buf, size_t size) {
        size_t len = 0;

        for (size_t i = top; i <= bottom; i++) {
                uint64_t n = ms / duration_units[i].ms;
                int k;

                ms -= n * duration_units[i].ms;
                if (n == 0 && !(i == bottom && len == 0))
                        continue;
                k = snprintf(buf + len, size - len, "%" PRIu64 "%s", n, duration_units[i].name);
                if (k < 0 || (size_t) k >= size - len)
                        return -ENOBUFS;
                len += (size_t) k;
        }
        return (int) len;
}

const char *duration_format(uint64_t ms, char *buf, size_t size) {
        char best[DURATION_FORMAT_MAX], cand[DURATION_FORMAT_MAX];
        size_t bottom = N_UNITS - 1;
        int best_len = -1;

        if (!buf || size == 0)
                return NULL;
        if (ms == 0)
                return size >= 3 ? memcpy(buf, "0s", 3) : NULL;

        /* The smallest unit that divides ms exactly ends every candidate. */
        for (size_t i = 0; i < N_UNITS; i++)
                if (ms % duration_units[i].ms == 0) {
                        bottom = i;
                        break;
                }

        /* Candidates: "90m" (everything in one unit) ... "1h30m" (greedy from a
         * larger top unit). Largest top unit wins ties: "1d" over "24h". */
        for (size_t top = 0; top <= bottom; top++) {
                int len = duration_format_from(ms, top, bottom, cand, sizeof cand);

                if (len < 0)
                        continue;
                if (top < bottom && ms / duration_units[top].ms == 0)
                        continue;       /* empty top group: same string as a smaller top */
                if (best_len < 0 || len < best_len) {
                        best_len = len;
                        memcpy(best, cand, (size_t) len + 1);
                }
        }
        if (best_len < 0 || (size_t) best_len >= size)
                return NULL;

        memcpy(buf, best, (size_t) best_len + 1);
        return buf;
}
