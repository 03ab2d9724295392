/* test-history-ring.c — unit tests for the ring in memory: columns, samples, wrap, encoding cost, queries. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "history.h"
#include "test-history.h"

static void test_new_args(void **state) {
        struct history *h = NULL;

        assert_int_equal(history_new(0, &h), -EINVAL);
        assert_null(h);
        assert_int_equal(history_new(10, NULL), -EINVAL);
        assert_int_equal(history_new((size_t) HISTORY_MAX_CAPACITY + 1, &h), -EINVAL);
        h = new_history(3);
        assert_int_equal(history_capacity(h), 3);
        assert_int_equal(history_count(h), 0);
        assert_int_equal(history_oldest_ms(h), 0);
        assert_int_equal(history_newest_ms(h), 0);
        history_free(h);
        history_free(NULL);
}

static void test_columns(void **state) {
        struct history *h = new_history(4);
        char long_id[HISTORY_ID_MAX + 2];

        assert_int_equal(history_column(h, "thermal_zone0", HISTORY_TEMP), 0);
        assert_int_equal(history_column(h, "cpufreq:policy0", HISTORY_FREQ), 1);
        assert_int_equal(history_column(h, "load:cpu", HISTORY_LOAD), 2);
        assert_int_equal(history_column(h, "thermal_zone0", HISTORY_TEMP), 0);
        assert_int_equal(history_column(h, "thermal_zone0", HISTORY_FREQ), -EEXIST);
        assert_int_equal(history_column(h, "", HISTORY_TEMP), -EINVAL);
        assert_int_equal(history_column(h, NULL, HISTORY_TEMP), -EINVAL);
        assert_int_equal(history_column(h, "x", (enum history_kind) 7), -EINVAL);
        memset(long_id, 'a', sizeof long_id - 1);
        long_id[sizeof long_id - 1] = '\0';
        assert_int_equal(history_column(h, long_id, HISTORY_TEMP), -EINVAL);
        long_id[HISTORY_ID_MAX] = '\0';
        assert_int_equal(history_column(h, long_id, HISTORY_TEMP), 3);

        assert_int_equal(history_n_columns(h), 4);
        assert_string_equal(history_column_id(h, 1), "cpufreq:policy0");
        assert_null(history_column_id(h, 4));
        assert_int_equal(history_column_kind(h, 2), HISTORY_LOAD);
        assert_int_equal(history_find_column(h, "load:cpu"), 2);
        assert_int_equal(history_find_column(h, "nope"), -ENOENT);
        history_free(h);
}

static void test_encoding(void **state) {
        struct history *h = new_history(16);
        int t = history_column(h, "t", HISTORY_TEMP);
        int f = history_column(h, "f", HISTORY_FREQ);
        int l = history_column(h, "l", HISTORY_LOAD);
        static const struct {
                double temp, freq, load;        /* written */
                double temp_r, freq_r, load_r;  /* read back */
        } cases[] = {
                { 43.456, 1536000000, 0.12345, 43.46, 1536e6, 0.123 },
                { -12.344, 1234567, 1.0, -12.34, 1e6, 1.0 },
                { 0.004, 499999, 0, 0, 0, 0 },
                { 400, 40e9, 5, 327.67, 32767e6, 3.2767 },
                { -400, -1, -5, -327.67, 0, -3.2767 },
                { -INFINITY, INFINITY, -INFINITY, -327.67, 32767e6, -3.2767 },
                { -327.68, 0, 0, -327.67, 0, 0 },
        };

        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                assert_int_equal(history_begin(h, (int64_t) i * 1000), 0);
                history_set(h, (size_t) t, cases[i].temp);
                history_set(h, (size_t) f, cases[i].freq);
                history_set(h, (size_t) l, cases[i].load);
                assert_near(history_get(h, i, (size_t) t), cases[i].temp_r);
                assert_near(history_get(h, i, (size_t) f), cases[i].freq_r);
                assert_near(history_get(h, i, (size_t) l), cases[i].load_r);
        }
        /* NaN and never set both read missing; so does an out-of-range index. */
        assert_int_equal(history_begin(h, 10000), 0);
        history_set(h, (size_t) t, NAN);
        assert_nan(history_get(h, 7, (size_t) t));
        assert_nan(history_get(h, 7, (size_t) f));
        assert_nan(history_get(h, 8, (size_t) t));
        assert_nan(history_get(h, 0, 3));
        history_set(h, 99, 1.0);                /* ignored */
        history_free(h);
}

static void test_set_without_sample(void **state) {
        struct history *h = new_history(4);
        int c = history_column(h, "t", HISTORY_TEMP);

        history_set(h, (size_t) c, 50);         /* no sample yet: ignored */
        assert_int_equal(history_count(h), 0);
        assert_int_equal(history_begin(h, 5), 0);
        assert_nan(history_get(h, 0, (size_t) c));
        history_free(h);
}

static void test_wrap(void **state) {
        struct history *h = new_history(5);
        int c = history_column(h, "t", HISTORY_TEMP);

        for (int i = 0; i < 12; i++) {
                assert_int_equal(history_begin(h, 1000 * i), 0);
                history_set(h, (size_t) c, i);
                assert_int_equal(history_count(h), i < 5 ? i + 1 : 5);
        }
        assert_int_equal(history_oldest_ms(h), 7000);
        assert_int_equal(history_newest_ms(h), 11000);
        for (size_t i = 0; i < 5; i++) {
                assert_int_equal(history_time_ms(h, i), 7000 + 1000 * (int64_t) i);
                assert_near(history_get(h, i, (size_t) c), 7.0 + (double) i);
        }
        assert_int_equal(history_time_ms(h, 5), 0);
        history_free(h);
}

static void test_time_backwards(void **state) {
        struct history *h = new_history(5);
        int c = history_column(h, "t", HISTORY_TEMP);

        assert_int_equal(history_begin(h, 1000), 0);
        history_set(h, (size_t) c, 20);
        assert_int_equal(history_begin(h, 999), -EINVAL);
        assert_int_equal(history_count(h), 1);
        assert_int_equal(history_newest_ms(h), 1000);
        /* the open sample is still the one at 1000 */
        history_set(h, (size_t) c, 21);
        assert_near(history_get(h, 0, (size_t) c), 21);
        assert_int_equal(history_begin(h, 1000), 0);     /* equal times are fine */
        assert_int_equal(history_count(h), 2);
        assert_int_equal(history_begin(h, -5000), -EINVAL);

        history_reset(h);
        assert_int_equal(history_count(h), 0);
        assert_int_equal(history_begin(h, -5000), 0);    /* after a reset anything goes */
        assert_nan(history_get(h, 0, (size_t) c));
        history_set(h, (size_t) c, 1);
        assert_near(history_get(h, 0, (size_t) c), 1);
        assert_int_equal(history_oldest_ms(h), -5000);
        history_free(h);
}

/* The old slots of a column added later hold calloc's zeros: they must read missing. */
static void test_column_added_later(void **state) {
        struct history *h = new_history(8);
        int a = history_column(h, "a", HISTORY_TEMP), b, c;

        for (int i = 0; i < 5; i++) {
                assert_int_equal(history_begin(h, 1000 * i), 0);
                history_set(h, (size_t) a, i);
        }
        b = history_column(h, "b", HISTORY_TEMP);       /* no sample open? the last one still is */
        assert_int_equal(b, 1);
        history_set(h, (size_t) b, 40);                 /* goes to the open sample 4 */
        for (size_t i = 0; i < 4; i++)
                assert_nan(history_get(h, i, (size_t) b));
        assert_near(history_get(h, 4, (size_t) b), 40);

        assert_int_equal(history_begin(h, 5000), 0);
        c = history_column(h, "c", HISTORY_LOAD);
        history_set(h, (size_t) c, 0.5);
        history_set(h, (size_t) b, 41);
        for (size_t i = 0; i < 5; i++)
                assert_nan(history_get(h, i, (size_t) c));
        assert_near(history_get(h, 5, (size_t) c), 0.5);
        assert_near(history_get(h, 5, (size_t) b), 41);

        /* After wrapping past the point of addition, every sample is a real one. */
        for (int i = 6; i < 20; i++) {
                assert_int_equal(history_begin(h, 1000 * i), 0);
                history_set(h, (size_t) c, 0.25);
        }
        for (size_t i = 0; i < 8; i++) {
                assert_near(history_get(h, i, (size_t) c), 0.25);
                assert_nan(history_get(h, i, (size_t) b));
                assert_nan(history_get(h, i, (size_t) a));
        }
        history_free(h);
}

/* Times are kept whole (int64 ms): long gaps lose nothing; absurd times are refused. */
static void test_long_gaps(void **state) {
        const int64_t t0 = INT64_C(1700000000000);
        struct history *h = new_history(10);
        int c = history_column(h, "t", HISTORY_TEMP);
        static const int64_t steps[] = { 0, 2000000000, 4000000000, 4294967295, 5000000000, 7000000000 };

        for (size_t i = 0; i < 6; i++) {
                assert_int_equal(history_begin(h, t0 + steps[i]), 0);
                history_set(h, (size_t) c, (double) i);
        }
        assert_int_equal(history_count(h), 6);
        for (size_t i = 0; i < 6; i++) {
                assert_int_equal(history_time_ms(h, i), t0 + steps[i]);
                assert_near(history_get(h, i, (size_t) c), (double) i);
        }
        assert_int_equal(history_begin(h, INT64_MAX), -EINVAL);
        assert_int_equal(history_count(h), 6);

        /* A long run at 1 h, through many blocks: nothing lost, exact times. */
        history_free(h);
        h = new_history(3000);
        c = history_column(h, "t", HISTORY_TEMP);
        for (int64_t i = 0; i < 24 * 200; i++) {
                assert_int_equal(history_begin(h, t0 + i * 3600000), 0);
                history_set(h, (size_t) c, (double) (i % 100));
        }
        assert_int_equal(history_count(h), 3000);
        for (size_t i = 0; i < 3000; i += 7) {
                int64_t k = 24 * 200 - 3000 + (int64_t) i;

                assert_int_equal(history_time_ms(h, i), t0 + k * 3600000);
                assert_near(history_get(h, i, (size_t) c), (double) (k % 100));
        }
        history_free(h);
}

/* Ten samples, t = 0, 1000, ... 9000 ms, temperature i degrees. */
static struct history *ten_samples(int *col) {
        struct history *h = new_history(16);

        *col = history_column(h, "t", HISTORY_TEMP);
        for (int i = 0; i < 10; i++) {
                assert_int_equal(history_begin(h, 1000 * i), 0);
                history_set(h, (size_t) *col, i);
        }
        return h;
}

static void test_query_buckets(void **state) {
        struct history_result r;
        size_t cols[1];
        int c;
        struct history *h = ten_samples(&c);

        cols[0] = (size_t) c;
        /* width = ceil(10000 / 5) = 2000: two samples per bucket */
        assert_int_equal(history_query(h, 0, 9999, cols, 1, 5, &r), 0);
        assert_int_equal(r.n_buckets, 5);
        assert_int_equal(r.n_cols, 1);
        assert_int_equal(r.bucket_ms, 2000);
        for (size_t k = 0; k < 5; k++) {
                assert_int_equal(r.buckets[k].t_ms, 2000 * (int64_t) k);
                assert_int_equal(r.buckets[k].n_samples, 2);
                assert_near(r.buckets[k].min[0], 2.0 * (double) k);
                assert_near(r.buckets[k].max[0], 2.0 * (double) k + 1);
                assert_near(r.buckets[k].mean[0], 2.0 * (double) k + 0.5);
        }
        history_result_free(&r);

        /* width = ceil(9001 / 3) = 3001: buckets [0,3001) [3001,6002) [6002,9003) */
        assert_int_equal(history_query(h, 0, 9000, cols, 1, 3, &r), 0);
        assert_int_equal(r.n_buckets, 3);
        assert_int_equal(r.bucket_ms, 3001);
        assert_int_equal(r.buckets[0].n_samples, 4);
        assert_near(r.buckets[0].mean[0], 1.5);
        assert_int_equal(r.buckets[1].t_ms, 3001);
        assert_int_equal(r.buckets[1].n_samples, 3);
        assert_near(r.buckets[1].min[0], 4);
        assert_near(r.buckets[1].max[0], 6);
        assert_near(r.buckets[1].mean[0], 5);
        assert_int_equal(r.buckets[2].t_ms, 6002);
        assert_near(r.buckets[2].mean[0], 8);
        history_result_free(&r);

        /* More points than samples: one bucket per sample, empty ones left out. */
        assert_int_equal(history_query(h, 0, 9999, cols, 1, 1000, &r), 0);
        assert_int_equal(r.bucket_ms, 10);
        assert_int_equal(r.n_buckets, 10);
        for (size_t k = 0; k < 10; k++) {
                assert_int_equal(r.buckets[k].t_ms, 1000 * (int64_t) k);
                assert_near(r.buckets[k].min[0], (double) k);
        }
        history_result_free(&r);

        /* Sub-range, inclusive ends. */
        assert_int_equal(history_query(h, 3000, 5000, cols, 1, 1, &r), 0);
        assert_int_equal(r.n_buckets, 1);
        assert_int_equal(r.buckets[0].t_ms, 3000);
        assert_int_equal(r.buckets[0].n_samples, 3);
        assert_near(r.buckets[0].min[0], 3);
        assert_near(r.buckets[0].max[0], 5);
        assert_near(r.buckets[0].mean[0], 4);
        history_result_free(&r);
        assert_int_equal(history_query(h, 3001, 3999, cols, 1, 10, &r), 0);
        assert_int_equal(r.n_buckets, 0);
        history_result_free(&r);
        assert_int_equal(history_query(h, 20000, 30000, cols, 1, 10, &r), 0);
        assert_int_equal(r.n_buckets, 0);
        history_result_free(&r);

        /* The whole int64 range is one valid, if silly, query. */
        assert_int_equal(history_query(h, INT64_MIN, INT64_MAX, cols, 1, 1, &r), 0);
        assert_int_equal(r.n_buckets, 1);
        assert_int_equal(r.buckets[0].n_samples, 10);
        assert_near(r.buckets[0].mean[0], 4.5);
        history_result_free(&r);
        /* width ceil(2^64 / 10000); a bucket edge falls at 4192 ms */
        assert_int_equal(history_query(h, INT64_MIN, INT64_MAX, cols, 1, 10000, &r), 0);
        assert_int_equal(r.n_buckets, 2);
        assert_int_equal(r.buckets[1].t_ms, 4192);
        assert_int_equal(r.buckets[0].n_samples + r.buckets[1].n_samples, 10);
        history_result_free(&r);

        assert_int_equal(history_query(h, 10, 9, cols, 1, 10, &r), -EINVAL);
        assert_int_equal(history_query(h, 0, 9, cols, 1, 0, &r), -EINVAL);
        cols[0] = 1;
        assert_int_equal(history_query(h, 0, 9, cols, 1, 10, &r), -EINVAL);
        assert_int_equal(history_query(h, 0, 9, NULL, 1, 10, &r), -EINVAL);
        history_free(h);
}

static void test_query_missing(void **state) {
        struct history *h = new_history(16);
        size_t ab[2], only_b[1];
        struct history_result r;
        int a, b;

        a = history_column(h, "a", HISTORY_TEMP);
        b = history_column(h, "b", HISTORY_FREQ);
        /* a only on even seconds, b only in the first four samples */
        for (int i = 0; i < 8; i++) {
                assert_int_equal(history_begin(h, 1000 * i), 0);
                if (i % 2 == 0)
                        history_set(h, (size_t) a, 10 + i);
                if (i < 4)
                        history_set(h, (size_t) b, 1e9 * (i + 1));
        }
        ab[0] = (size_t) a;
        ab[1] = (size_t) b;
        assert_int_equal(history_query(h, 0, 7999, ab, 2, 8, &r), 0);
        /* 5 s and 7 s have neither a nor b: left out */
        assert_int_equal(r.n_buckets, 6);
        for (size_t k = 0; k < 5; k++)
                assert_int_equal(r.buckets[k].t_ms, 1000 * (int64_t) k);
        assert_int_equal(r.buckets[5].t_ms, 6000);
        assert_near(r.buckets[1].mean[1], 2e9);
        assert_nan(r.buckets[1].min[0]);
        assert_nan(r.buckets[1].max[0]);
        assert_nan(r.buckets[1].mean[0]);
        assert_nan(r.buckets[4].mean[1]);
        assert_near(r.buckets[4].mean[0], 14);
        assert_near(r.buckets[5].mean[0], 16);
        assert_nan(r.buckets[5].mean[1]);
        history_result_free(&r);

        /* Buckets where no requested column has a value are left out. */
        only_b[0] = (size_t) b;
        assert_int_equal(history_query(h, 0, 7999, only_b, 1, 8, &r), 0);
        assert_int_equal(r.n_buckets, 4);
        assert_int_equal(r.buckets[3].t_ms, 3000);
        history_result_free(&r);
        /* Mean over the values present only: a in [0, 4000) is 10 and 12. */
        ab[1] = (size_t) a;
        assert_int_equal(history_query(h, 0, 7999, ab, 1, 2, &r), 0);
        assert_int_equal(r.n_buckets, 2);
        assert_int_equal(r.buckets[0].n_samples, 4);
        assert_near(r.buckets[0].mean[0], 11);
        assert_near(r.buckets[1].mean[0], 15);
        history_result_free(&r);
        /* No columns: buckets that hold samples. */
        assert_int_equal(history_query(h, 0, 7999, NULL, 0, 4, &r), 0);
        assert_int_equal(r.n_buckets, 4);
        assert_int_equal(r.n_cols, 0);
        assert_int_equal(r.buckets[2].n_samples, 2);
        history_result_free(&r);
        history_free(h);
}

/* Brute force over history_time_ms()/history_get(): the reference for random queries. */
static void check_query_against_naive(const struct history *h, int64_t from, int64_t to, size_t points,
                                      const size_t *cols, size_t n_cols) {
        struct history_result r;
        uint64_t width = ((uint64_t) to - (uint64_t) from) / points + 1;
        size_t kb = 0;

        assert_int_equal(history_query(h, from, to, cols, n_cols, points, &r), 0);
        assert_int_equal(r.bucket_ms, (int64_t) width);
        for (uint64_t k = 0; k <= ((uint64_t) to - (uint64_t) from) / width; k++) {
                int64_t lo = from + (int64_t) (k * width), hi = lo + (int64_t) width - 1;
                double mn[8], mx[8], sum[8];
                size_t n[8] = {}, any = 0, ns = 0;

                if (hi > to)
                        hi = to;
                for (size_t c = 0; c < n_cols; c++)
                        mn[c] = INFINITY, mx[c] = -INFINITY, sum[c] = 0;
                for (size_t i = 0; i < history_count(h); i++) {
                        int64_t t = history_time_ms(h, i);

                        if (t < lo || t > hi)
                                continue;
                        ns++;
                        for (size_t c = 0; c < n_cols; c++) {
                                double v = history_get(h, i, cols[c]);

                                if (isnan(v))
                                        continue;
                                mn[c] = fmin(mn[c], v);
                                mx[c] = fmax(mx[c], v);
                                sum[c] += v;
                                n[c]++;
                                any++;
                        }
                }
                if (any == 0)
                        continue;
                assert_true(kb < r.n_buckets);
                assert_int_equal(r.buckets[kb].t_ms, lo);
                assert_int_equal(r.buckets[kb].n_samples, ns);
                for (size_t c = 0; c < n_cols; c++) {
                        if (n[c] == 0) {
                                assert_nan(r.buckets[kb].mean[c]);
                                continue;
                        }
                        assert_near(r.buckets[kb].min[c], mn[c]);
                        assert_near(r.buckets[kb].max[c], mx[c]);
                        if (fabs(r.buckets[kb].mean[c] - sum[c] / (double) n[c]) > 1e-6 * fabs(mx[c]) + 1e-9)
                                fail_msg("mean %g vs %g", r.buckets[kb].mean[c], sum[c] / (double) n[c]);
                }
                kb++;
        }
        assert_int_equal(r.n_buckets, kb);
        history_result_free(&r);
}

static void test_query_random(void **state) {
        struct history *h = new_history(97);
        size_t cols[3];
        uint32_t x = 1;
        int64_t t = 1000;

        cols[0] = (size_t) history_column(h, "t", HISTORY_TEMP);
        for (int i = 0; i < 500; i++) {
                x = x * 1664525 + 1013904223;
                t += (x >> 28) == 0 ? 5000 : (x >> 24) % 1500;     /* bursts, gaps, equal times */
                assert_int_equal(history_begin(h, t), 0);
                history_set(h, cols[0], (double) ((x >> 8) % 9000) / 100.0 - 20);
                if (i == 120)
                        cols[1] = (size_t) history_column(h, "f", HISTORY_FREQ);
                if (i > 120 && (x & 3) != 0)
                        history_set(h, cols[1], (double) ((x >> 4) % 2000) * 1e6);
                if (i == 300)
                        cols[2] = (size_t) history_column(h, "l", HISTORY_LOAD);
                if (i >= 300)
                        history_set(h, cols[2], (double) (x % 10001) / 10000.0);
        }
        for (int q = 0; q < 300; q++) {
                int64_t a, b, span = history_newest_ms(h) - history_oldest_ms(h) + 4000;

                x = x * 1664525 + 1013904223;
                a = history_oldest_ms(h) - 2000 + (int64_t) (x % (uint32_t) span);
                x = x * 1664525 + 1013904223;
                b = a + (int64_t) (x % (uint32_t) span);
                check_query_against_naive(h, a, b, 1 + x % 60, cols, 3);
                check_query_against_naive(h, a, b, 1 + x % 60, cols + 1, 1);
        }
        history_free(h);
}

/* A gap in sampling shows as consecutive buckets more than bucket_ms apart. */
static void test_query_gap(void **state) {
        struct history *h = new_history(100);
        struct history_result r;
        size_t col;

        col = (size_t) history_column(h, "t", HISTORY_TEMP);
        for (int i = 0; i < 5; i++) {
                assert_int_equal(history_begin(h, 1000 * i), 0);
                history_set(h, col, 30);
        }
        for (int i = 0; i < 5; i++) {
                assert_int_equal(history_begin(h, 100000 + 1000 * i), 0);
                history_set(h, col, 40);
        }
        assert_int_equal(history_query(h, 0, 104999, &col, 1, 105, &r), 0);
        assert_int_equal(r.n_buckets, 10);
        assert_int_equal(r.bucket_ms, 1000);
        assert_int_equal(r.buckets[4].t_ms, 4000);
        assert_int_equal(r.buckets[5].t_ms, 100000);
        assert_true(r.buckets[5].t_ms - r.buckets[4].t_ms > r.bucket_ms);
        assert_near(r.buckets[5].mean[0], 40);
        history_result_free(&r);
        history_free(h);
}

static double now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

/* 24 h at 1 s with 16 columns, downsampled to 1000 points (budget: 20 ms, measured by bench/). */
static void test_query_day(void **state) {
        const size_t n = 86400, n_cols = 16;
        const int64_t t0 = INT64_C(1700000000000);
        struct history *h = new_history(n);
        struct history_result r;
        size_t cols[16];
        double start, best = INFINITY;

        for (size_t c = 0; c < n_cols; c++) {
                char id[32];

                snprintf(id, sizeof id, "thermal_zone%zu", c);
                cols[c] = (size_t) history_column(h, id, HISTORY_TEMP);
        }
        for (size_t i = 0; i < n; i++) {
                assert_int_equal(history_begin(h, t0 + (int64_t) i * 1000), 0);
                for (size_t c = 0; c < n_cols; c++)
                        history_set(h, cols[c], 40.0 + (double) ((i + c) % 600) / 20.0);
        }
        for (int rep = 0; rep < 5; rep++) {
                start = now_ms();
                assert_int_equal(history_query(h, t0, t0 + (int64_t) n * 1000 - 1, cols, n_cols, 1000, &r), 0);
                best = fmin(best, now_ms() - start);
                assert_int_equal(r.n_buckets, 1000);
                assert_int_equal(r.bucket_ms, 86400);
                assert_near(r.buckets[0].min[0], 40);
                history_result_free(&r);
        }
        print_message("query 24 h x 16 columns -> 1000 points: %.2f ms (best of 5); ring %zu bytes\n", best,
                      history_memory_bytes(h));
        /* Compressed: a 0.05 C step every second costs 3 bits a sample. */
        assert_true(history_memory_bytes(h) < 1024 * 1024);
        history_free(h);
}

/* A load as the daemon computes it: busy over total jiffies, where the
 * total moves by a jiffy or so from one second to the next (98-101 for a
 * CPU, recorded at 1 Hz). Kept to 0.1 %, 3/99, 3/100 and 3/101 are one
 * value, and such a load takes under 7 bits a sample above a constant one
 * (5.5 here; kept to 0.01 %, the jitter took 9.7). */
/* A load of jittered jiffies: kept to 0.1 %, then to the jiffy of its row. */
static void test_load_jiffies(void **state) {
        enum { N = 8 * 1024 };
        struct history *h = new_history(N), *j = new_history(N), *flat = new_history(N);
        uint32_t seed = 5;
        size_t bits, bits_j;

        history_column(h, "load:cpu0", HISTORY_LOAD);
        for (int total = 99; total <= 101; total++) {
                assert_int_equal(history_begin(h, total), 0);
                history_set(h, 0, 3.0 / total);
                assert_near(history_get(h, history_count(h) - 1, 0), 0.03);
        }
        history_reset(h);
        history_column(j, "load:cpu0", HISTORY_LOAD);
        assert_int_equal(history_column_step(j, 0, 0.01), 0);      /* one CPU at 100 Hz over 1 s */
        history_column(flat, "load:cpu0", HISTORY_LOAD);
        for (size_t i = 0; i < N; i++) {
                int busy, total;

                seed = seed * 1103515245u + 12345u;
                total = 99 + (int) ((seed >> 16) % 3);
                seed = seed * 1103515245u + 12345u;
                busy = ((i / 700) % 2 ? 90 : 5) + (int) ((seed >> 16) % 7) - 3;
                assert_int_equal(history_begin(h, 1000 * (int64_t) i), 0);
                history_set(h, 0, (double) busy / total);
                assert_int_equal(history_begin(j, 1000 * (int64_t) i), 0);
                history_set(j, 0, (double) busy / total);
                assert_int_equal(history_begin(flat, 1000 * (int64_t) i), 0);
                history_set(flat, 0, 0.05);
        }
        /* a jiffy either side of 100 moves busy/total by less than half a step */
        for (size_t i = N - 3; i < N; i++)
                assert_near(history_get(j, i, 0), round(history_get(h, i, 0) * 100.0) / 100.0);
        bits = (history_memory_bytes(h) - history_memory_bytes(flat)) * 8;
        bits_j = (history_memory_bytes(j) - history_memory_bytes(flat)) * 8;
        printf("jittered load: %.2f bits a sample above a constant one at 0.1 %%, %.2f at 1 %%\n",
               (double) bits / N, (double) bits_j / N);
        assert_true(bits < 7 * (size_t) N);
        assert_true(bits_j < 4 * (size_t) N);
        history_free(h);
        history_free(j);
        history_free(flat);
}

/* A Raspberry Pi 4 zone, 410.040 - 0.487 C per ADC code, kept in hundredths
 * (steps of 48 and 49), noise flickering over a slow swing: the version 3
 * symbols took 3.53 bits a sample above a constant column, version 4 takes
 * 2.29. */
static void test_quantised_flicker(void **state) {
        enum { N = 8 * 1024 };
        struct history *h = new_history(N), *flat = new_history(N);
        uint32_t seed = 9;
        size_t bits;

        history_column(h, "thermal_zone0", HISTORY_TEMP);
        history_column(flat, "thermal_zone0", HISTORY_TEMP);
        for (size_t i = 0; i < N; i++) {
                double level = 700.0 - 30.0 * sin((double) i / 900.0);      /* ADC code, about 69 C */
                int code;

                seed = seed * 1103515245u + 12345u;
                code = (int) lround(level + ((double) ((seed >> 16) % 1000) / 1000.0 - 0.5) * 2.2);
                assert_int_equal(history_begin(h, 1000 * (int64_t) i), 0);
                history_set(h, 0, (410040 - 487 * code) / 1000.0);
                assert_int_equal(history_begin(flat, 1000 * (int64_t) i), 0);
                history_set(flat, 0, 69.0);
                if (i == N / 2)
                        assert_near(history_get(h, i, 0), round((410040 - 487 * code) / 10.0) / 100.0);
        }
        bits = (history_memory_bytes(h) - history_memory_bytes(flat)) * 8;
        printf("0.487 C sensor: %.2f bits a sample above a constant one\n", (double) bits / N);
        assert_true(bits < 3 * (size_t) N);
        history_free(h);
        history_free(flat);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_new_args),
                cmocka_unit_test(test_columns),
                cmocka_unit_test(test_encoding),
                cmocka_unit_test(test_set_without_sample),
                cmocka_unit_test(test_wrap),
                cmocka_unit_test(test_time_backwards),
                cmocka_unit_test(test_column_added_later),
                cmocka_unit_test(test_long_gaps),
                cmocka_unit_test(test_query_buckets),
                cmocka_unit_test(test_query_missing),
                cmocka_unit_test(test_query_random),
                cmocka_unit_test(test_query_gap),
                cmocka_unit_test(test_query_day),
                cmocka_unit_test(test_quantised_flicker),
                cmocka_unit_test(test_load_jiffies),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
