/* test-duration.c — unit tests for duration_parse(), duration_format() and the tick's grid (util_grid_next_ns()). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "duration.h"
#include "util.h"

struct parse_case {
        const char *text;
        int ret;                        /* expected return */
        uint64_t ms;                    /* expected value when ret == 0 */
};

static const struct parse_case parse_cases[] = {
        { "0s", 0, 0 },
        { "0ms", 0, 0 },
        { "250ms", 0, 250 },
        { "1s", 0, 1000 },
        { "01s", 0, 1000 },
        { "90m", 0, 5400000 },
        { "2h", 0, 7200000 },
        { "1h30m", 0, 5400000 },
        { "1d", 0, 86400000 },
        { "1s500ms", 0, 1500 },
        { "1d2h3m4s5ms", 0, 93784005 },
        { "100ms", 0, 100 },
        { "9223372036854775807ms", 0, INT64_MAX },
        { "106751991167d", 0, UINT64_C(9223372036828800000) },
        /* syntax */
        { "", -EINVAL, 0 },
        { "1", -EINVAL, 0 },
        { "250", -EINVAL, 0 },
        { "-1s", -EINVAL, 0 },
        { "+1s", -EINVAL, 0 },
        { "1x", -EINVAL, 0 },
        { "1s ", -EINVAL, 0 },
        { " 1s", -EINVAL, 0 },
        { "1 s", -EINVAL, 0 },
        { "1h 30m", -EINVAL, 0 },
        { "1.5s", -EINVAL, 0 },
        { "s", -EINVAL, 0 },
        { "ms", -EINVAL, 0 },
        { "1S", -EINVAL, 0 },
        { "1sec", -EINVAL, 0 },
        { "1mss", -EINVAL, 0 },
        { "1h30", -EINVAL, 0 },
        { "1s2", -EINVAL, 0 },
        { "30m1h", -EINVAL, 0 },
        { "1ms1s", -EINVAL, 0 },
        { "1s1s", -EINVAL, 0 },
        { "1d1d", -EINVAL, 0 },
        { "5x", -EINVAL, 0 },
        { "0x10s", -EINVAL, 0 },
        { "1s\n", -EINVAL, 0 },
        /* overflow */
        { "9223372036854775808ms", -ERANGE, 0 },
        { "18446744073709551616ms", -ERANGE, 0 },
        { "99999999999999999999999s", -ERANGE, 0 },
        { "106751991168d", -ERANGE, 0 },
        { "106751991167d23h", -ERANGE, 0 },
        { "9223372036854775s808ms", -ERANGE, 0 },
        /* junk wins over overflow: the text is wrong whatever its size */
        { "99999999999999999999999x", -EINVAL, 0 },
        { "99999999999999999999999d1", -EINVAL, 0 },
};

static void test_parse_table(void **state) {
        for (size_t i = 0; i < sizeof parse_cases / sizeof parse_cases[0]; i++) {
                const struct parse_case *t = &parse_cases[i];
                uint64_t ms = 4242;
                int r = duration_parse(t->text, &ms);

                if (r != t->ret || (r == 0 && ms != t->ms) || (r < 0 && ms != 4242))
                        fail_msg("\"%s\": got %d/%llu, want %d/%llu", t->text, r, (unsigned long long) ms,
                                 t->ret, (unsigned long long) t->ms);
        }
}

static void test_parse_null(void **state) {
        uint64_t ms;

        assert_int_equal(duration_parse(NULL, &ms), -EINVAL);
        assert_int_equal(duration_parse("1s", NULL), -EINVAL);
}

struct format_case {
        uint64_t ms;
        const char *text;
};

static const struct format_case format_cases[] = {
        { 0, "0s" },
        { 1, "1ms" },
        { 999, "999ms" },
        { 1000, "1s" },
        { 1500, "1500ms" },
        { 60000, "1m" },
        { 61000, "61s" },
        { 90000, "90s" },
        { 600000, "10m" },
        { 3600000, "1h" },
        { 5400000, "90m" },
        { 5401000, "90m1s" },
        { 86400000, "1d" },
        { 86400001, "1d1ms" },
        { 90000000, "25h" },
        { 93784005, "93784s5ms" },  /* shorter than "1d2h3m4s5ms" */
        { 172800000, "2d" },
};

static void test_format_table(void **state) {
        char buf[DURATION_FORMAT_MAX];

        for (size_t i = 0; i < sizeof format_cases / sizeof format_cases[0]; i++) {
                const char *s = duration_format(format_cases[i].ms, buf, sizeof buf);

                assert_non_null(s);
                assert_ptr_equal(s, buf);
                if (strcmp(s, format_cases[i].text) != 0)
                        fail_msg("%llu: got \"%s\", want \"%s\"", (unsigned long long) format_cases[i].ms, s,
                                 format_cases[i].text);
        }
}

static void test_format_small_buffer(void **state) {
        char buf[DURATION_FORMAT_MAX];

        assert_null(duration_format(1000, buf, 2));
        assert_string_equal(duration_format(1000, buf, 3), "1s");
        assert_null(duration_format(0, buf, 2));
        assert_null(duration_format(1500, buf, 6));
        assert_string_equal(duration_format(1500, buf, 7), "1500ms");
        assert_null(duration_format(1, NULL, 10));
        assert_null(duration_format(1, buf, 0));
}

static void test_format_max(void **state) {
        char buf[DURATION_FORMAT_MAX];

        assert_non_null(duration_format(UINT64_MAX, buf, sizeof buf));
        assert_true(strlen(buf) < DURATION_FORMAT_MAX);
        assert_non_null(duration_format(INT64_MAX, buf, sizeof buf));
}

/* Length of the one-unit form in the largest unit that divides ms. */
static size_t single_unit_len(uint64_t ms) {
        static const uint64_t units[] = { 86400000, 3600000, 60000, 1000, 1 };
        static const size_t names[] = { 1, 1, 1, 1, 2 };
        char buf[32];

        for (size_t i = 0; i < 5; i++)
                if (ms % units[i] == 0)
                        return (size_t) snprintf(buf, sizeof buf, "%llu", (unsigned long long) (ms / units[i])) +
                               names[i];
        return 0;
}

static void test_roundtrip(void **state) {
        uint64_t x = 88172645463325252ull;

        for (int i = 0; i < 20000; i++) {
                char buf[DURATION_FORMAT_MAX];
                uint64_t ms, back = 0;

                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                /* Mostly round values, the kind people write. */
                switch (i % 4) {
                case 0: ms = x % 100000000000ull; break;
                case 1: ms = (x % 1000000) * 1000; break;
                case 2: ms = (x % 100000) * 60000 + (x >> 40) % 2 * 1000; break;
                default: ms = (x % 1000) * 3600000 + (x >> 32) % 60 * 60000; break;
                }
                assert_non_null(duration_format(ms, buf, sizeof buf));
                assert_int_equal(duration_parse(buf, &back), 0);
                assert_int_equal(back, ms);
                assert_true(strlen(buf) <= single_unit_len(ms));
        }
}

/* The tick's grid: the next whole multiple of the interval on the wall
 * clock, as a monotonic time, strictly after the instant given. */
static void test_grid_next(void **state) {
        const uint64_t s = 1000000000u, ms = 1000000u;
        /* 2026-12-04 06:30:00.250 UTC on the wall clock, 5000.000 s since boot */
        const uint64_t rt = 1796365800u * s + 250 * ms, mono = 5000 * s;
        struct timespec now;
        uint64_t before, next;

        (void) state;
        assert_int_equal(util_grid_next_ns(rt, mono, s), mono + 750 * ms);             /* 06:30:01.000 */
        assert_int_equal(util_grid_next_ns(rt, mono, 100 * ms), mono + 50 * ms);        /* .300 */
        assert_int_equal(util_grid_next_ns(rt, mono, 60 * s), mono + 59750 * ms);       /* 06:31:00 */
        /* on the grid already: the next point, a whole interval on */
        assert_int_equal(util_grid_next_ns(rt - 250 * ms, mono, s), mono + s);
        /* an interval that is no divisor of a second: multiples since the epoch */
        assert_int_equal((rt + util_grid_next_ns(rt, mono, 7 * s) - mono) % (7 * s), 0);
        assert_int_equal(util_grid_next_ns(rt, mono, 0), mono);
        /* 32-bit time_t boards: past 2038 the sum still fits in 64 bits */
        assert_int_equal(util_grid_next_ns(4102444800u * s + 1, mono, s), mono + s - 1);

        /* along a grid taken: the next point after now, the ones missed dropped */
        assert_int_equal(util_grid_after_ns(mono, mono, s), mono + s);                  /* on time */
        assert_int_equal(util_grid_after_ns(mono, mono + 2 * ms, s), mono + s);         /* the wait's slack */
        assert_int_equal(util_grid_after_ns(mono, mono + 3500 * ms, s), mono + 4 * s);  /* a stall */
        assert_int_equal(util_grid_after_ns(mono, mono + 4 * s, s), mono + 5 * s);      /* on a later point */
        assert_int_equal(util_grid_after_ns(mono, mono - ms, s), mono + s);             /* not due yet */
        assert_int_equal(util_grid_after_ns(mono, mono + 7, 0), mono + 7);

        /* from the clocks: later than now plus the delay, by at most an interval */
        clock_gettime(CLOCK_MONOTONIC, &now);
        before = (uint64_t) now.tv_sec * s + (uint64_t) now.tv_nsec;
        next = util_grid_next_now_ns(100 * ms, 50 * ms);
        assert_true(next > before + 50 * ms);
        assert_true(next <= util_monotonic_ns() + 150 * ms);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_table),
                cmocka_unit_test(test_parse_null),
                cmocka_unit_test(test_format_table),
                cmocka_unit_test(test_format_small_buffer),
                cmocka_unit_test(test_format_max),
                cmocka_unit_test(test_roundtrip),
                cmocka_unit_test(test_grid_next),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
