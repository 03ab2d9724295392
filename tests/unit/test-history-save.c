/* test-history-save.c — unit tests for the history saver: appends, when it writes the file whole, saves cut short. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "history.h"
#include "history-save.h"
#include "test-history.h"

#define T0 INT64_C(1700000000000)
#define KILL_RING (1u << 20)            /* samples: more than a killed saver begins */

static char tmpdir[] = "/tmp/test-history-save-XXXXXX";

static void path_in_tmp(char *buf, size_t size, const char *name) {
        snprintf(buf, size, "%s/%s", tmpdir, name);
}

/* A ring of two temperatures and a load, a sample a second. */
static struct history *test_ring(size_t capacity) {
        struct history *h = new_history(capacity);

        assert_int_equal(history_column(h, "thermal_zone0", HISTORY_TEMP), 0);
        assert_int_equal(history_column(h, "thermal_zone1", HISTORY_TEMP), 1);
        assert_int_equal(history_column(h, "load:cpu", HISTORY_LOAD), 2);
        return h;
}

/* n more samples after the k already begun: slow ramps with steps and gaps. */
static void add_samples(struct history *h, uint64_t *k, size_t n) {
        for (size_t i = 0; i < n; i++, (*k)++) {
                assert_int_equal(history_begin(h, T0 + 1000 * (int64_t) *k), 0);
                history_set(h, 0, 40 + (double) (*k % 200) / 10);
                if (*k % 97 != 0)
                        history_set(h, 1, 35 + (double) ((*k * 7) % 13));
                history_set(h, 2, (double) (*k % 1000) / 1000);
                for (size_t c = 3; c < history_n_columns(h); c++)
                        history_set(h, c, (double) *k);
        }
}

/* g holds the samples of h, column by column by id. */
static void assert_same(const struct history *h, const struct history *g) {
        assert_int_equal(history_count(g), history_count(h));
        for (size_t c = 0; c < history_n_columns(h); c++) {
                int gc = history_find_column(g, history_column_id(h, c));
                struct history_result a, b;
                size_t cols = c, gcols = (size_t) gc;
                size_t n = history_count(h);

                if (n == 0)
                        continue;               /* a column without a value is not saved */
                assert_true(gc >= 0);
                /* one bucket a millisecond: every sample as it is */
                assert_int_equal(history_query(h, history_oldest_ms(h), history_newest_ms(h), &cols, 1, 10000,
                                               &a), 0);
                assert_int_equal(history_query(g, history_oldest_ms(h), history_newest_ms(h), &gcols, 1, 10000,
                                               &b), 0);
                assert_int_equal(a.n_buckets, b.n_buckets);
                for (size_t i = 0; i < a.n_buckets; i++) {
                        assert_int_equal(a.buckets[i].t_ms, b.buckets[i].t_ms);
                        assert_int_equal(a.buckets[i].n_samples, b.buckets[i].n_samples);
                        assert_true(a.buckets[i].min[0] == b.buckets[i].min[0]);
                        assert_true(a.buckets[i].max[0] == b.buckets[i].max[0]);
                }
                history_result_free(&a);
                history_result_free(&b);
        }
        assert_int_equal(history_oldest_ms(g), history_oldest_ms(h));
        assert_int_equal(history_newest_ms(g), history_newest_ms(h));
}

/* The samples of the saves before the one cut short, and of some or all of
 * its blocks (all but its end marker), one a second from T0 without a gap. */
static void assert_whole_blocks(const struct history *g) {
        size_t n = history_count(g);

        if (n != 1000 && n != 2024 && n != 2280 && n != 2500)
                fail_msg("%zu samples", n);
        assert_int_equal(history_oldest_ms(g), T0);
        assert_int_equal(history_newest_ms(g), T0 + 1000 * (int64_t) (n - 1));
}

static void assert_loads_as(const char *path, const struct history *h) {
        struct history *g = new_history(history_capacity(h));

        assert_int_equal(history_load(g, path), 0);
        assert_same(h, g);
        history_free(g);
}

/* Saves append what is new, the file reads back as the ring, and it is
 * written whole once the samples the ring dropped outnumber the ones it
 * holds. */
static void test_appends(void **state) {
        struct history *h = test_ring(3000);
        struct history_saver s;
        char path[512];
        uint64_t k = 0;
        struct stat st;

        path_in_tmp(path, sizeof path, "append.bin");
        assert_int_equal(history_saver_init(&s, path), 0);
        assert_int_equal(history_saver_save(&s, h), 0);         /* empty: written whole */
        assert_int_equal(s.full_saves, 1);
        assert_loads_as(path, h);
        for (int i = 0; i < 12; i++) {
                add_samples(h, &k, 300);
                assert_int_equal(history_saver_save(&s, h), 0);
                assert_int_equal(s.full_saves, 1);
                assert_int_equal(s.appends, (uint64_t) i + 1);
                assert_loads_as(path, h);
        }
        /* nothing new: nothing written */
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(history_saver_save(&s, h), 0);
        assert_int_equal(s.appends, 12);
        {
                struct stat st2;

                assert_int_equal(stat(path, &st2), 0);
                assert_int_equal(st2.st_size, st.st_size);
        }
        /* 3600 samples in the file, 3000 in the ring: 600 dropped; on to 2700 dropped */
        for (int i = 0; i < 7; i++) {
                add_samples(h, &k, 300);
                assert_int_equal(history_saver_save(&s, h), 0);
                assert_loads_as(path, h);
        }
        assert_int_equal(s.full_saves, 1);
        add_samples(h, &k, 300);
        assert_int_equal(history_saver_save(&s, h), 0);
        assert_int_equal(s.full_saves, 2);
        assert_loads_as(path, h);
        history_saver_done(&s);
        history_free(h);
}

/* Written whole: a new column, samples replaced, more samples than the
 * ring holds, the file replaced or removed by someone else. */
static void test_full_saves(void **state) {
        struct history *h = test_ring(2000);
        struct history_saver s;
        char path[512], other[512];
        uint64_t k = 0, full;

        path_in_tmp(path, sizeof path, "full.bin");
        path_in_tmp(other, sizeof other, "other.bin");
        assert_int_equal(history_saver_init(&s, path), 0);
        add_samples(h, &k, 100);
        assert_int_equal(history_saver_save(&s, h), 0);
        add_samples(h, &k, 100);
        assert_int_equal(history_saver_save(&s, h), 0);
        assert_int_equal(s.full_saves, 1);
        assert_int_equal(s.appends, 1);

        assert_int_equal(history_column(h, "cpufreq:policy0", HISTORY_FREQ), 3);
        add_samples(h, &k, 10);
        assert_int_equal(history_saver_save(&s, h), 0);
        assert_int_equal(s.full_saves, 2);
        assert_loads_as(path, h);

        history_reset(h);
        add_samples(h, &k, 10);
        assert_int_equal(history_saver_save(&s, h), 0);
        assert_int_equal(s.full_saves, 3);
        assert_loads_as(path, h);

        add_samples(h, &k, 2500);
        assert_int_equal(history_saver_save(&s, h), 0);
        assert_int_equal(s.full_saves, 4);
        assert_loads_as(path, h);

        /* replaced */
        full = s.full_saves;
        assert_int_equal(history_save(h, other), 0);
        assert_int_equal(rename(other, path), 0);
        add_samples(h, &k, 10);
        assert_int_equal(history_saver_save(&s, h), 0);
        assert_int_equal(s.full_saves, full + 1);
        assert_loads_as(path, h);
        /* removed */
        assert_int_equal(unlink(path), 0);
        add_samples(h, &k, 10);
        assert_int_equal(history_saver_save(&s, h), 0);
        assert_int_equal(s.full_saves, full + 2);
        assert_loads_as(path, h);
        /* loaded over: the samples were replaced */
        assert_int_equal(history_load(h, path), 0);
        add_samples(h, &k, 10);
        assert_int_equal(history_saver_save(&s, h), 0);
        assert_int_equal(s.full_saves, full + 3);
        assert_loads_as(path, h);
        history_saver_done(&s);
        history_free(h);
}

/* An append cut short anywhere, or followed by zeros or garbage (what a
 * power cut may leave after a file's old end): the file loads without a
 * complaint and holds the samples of the save before, or those and some of
 * the cut-short save's whole blocks. */
static void test_append_cut_short(void **state) {
        struct history *h = test_ring(5000), *before = test_ring(5000), *g = new_history(5000);
        struct history_saver s;
        char path[512], cut[512];
        uint64_t k = 0, kb = 0;
        size_t size_before, size;
        uint8_t *data, *junk;

        path_in_tmp(path, sizeof path, "cut.bin");
        path_in_tmp(cut, sizeof cut, "cut-short.bin");
        assert_int_equal(history_saver_init(&s, path), 0);
        add_samples(h, &k, 700);
        assert_int_equal(history_saver_save(&s, h), 0);
        add_samples(h, &k, 300);
        assert_int_equal(history_saver_save(&s, h), 0);
        add_samples(before, &kb, 1000);
        size_before = (size_t) s.size;
        add_samples(h, &k, 1500);       /* blocks of 1024, 256 and 220 samples in the segment */
        assert_int_equal(history_saver_save(&s, h), 0);
        assert_int_equal(s.appends, 2);
        data = read_file(path, &size);

        for (size_t n = size_before; n < size; n++) {
                write_file(cut, data, n);
                assert_int_equal(history_load(g, cut), 0);
                assert_whole_blocks(g);
                if (history_count(g) == 1000)
                        assert_same(before, g);
        }
        /* zeros or garbage after a part of the segment */
        junk = malloc(size + 4096);
        assert_non_null(junk);
        for (size_t n = size_before; n < size; n += 97) {
                memcpy(junk, data, n);
                memset(junk + n, 0, 4096);
                write_file(cut, junk, n + 4096);
                assert_int_equal(history_load(g, cut), 0);
                assert_whole_blocks(g);
                for (size_t i = 0; i < 4096; i++)
                        junk[n + i] = (uint8_t) (i * 131 + n);
                write_file(cut, junk, n + 4096);
                assert_int_equal(history_load(g, cut), 0);
                assert_whole_blocks(g);
        }
        /* A block that fails its CRC in a segment that was finished is damage. */
        memcpy(junk, data, size);
        junk[size_before + 100] ^= 0x10;
        write_file(cut, junk, size);
        assert_int_equal(history_load(g, cut), 1);
        assert_int_equal(history_count(g), 1000 + 1500 - 1024);
        free(junk);
        free(data);
        history_saver_done(&s);
        history_free(g);
        history_free(before);
        history_free(h);
}

/* A saving process killed (SIGKILL) at random moments: the file always
 * loads, whole, with every sample of the saves that returned. */
static void test_killed_while_saving(void **state) {
        char path[512];

        path_in_tmp(path, sizeof path, "killed.bin");
        for (int round = 0; round < 20; round++) {
                struct history *g = new_history(KILL_RING);
                int fds[2], status, r;
                uint64_t saved = 0, v;
                pid_t pid;

                assert_int_equal(pipe(fds), 0);
                pid = fork();
                assert_true(pid >= 0);
                if (pid == 0) {
                        struct history *h = test_ring(KILL_RING);
                        struct history_saver s;
                        uint64_t k = 0;

                        close(fds[0]);
                        (void) unlink(path);
                        if (history_saver_init(&s, path) < 0)
                                _exit(1);
                        for (;;) {
                                add_samples(h, &k, 1 + k % 1500);
                                if (history_saver_save(&s, h) < 0 || write(fds[1], &k, sizeof k) != sizeof k)
                                        _exit(1);
                        }
                }
                close(fds[1]);
                usleep(20000 + 7000 * (useconds_t) round);
                kill(pid, SIGKILL);
                assert_int_equal(waitpid(pid, &status, 0), pid);
                assert_true(WIFSIGNALED(status));
                while (read(fds[0], &v, sizeof v) == sizeof v)
                        saved = v;
                close(fds[0]);
                r = history_load(g, path);
                if (saved == 0 && r == -ENOENT) {
                        history_free(g);
                        continue;
                }
                assert_int_equal(r, 0);
                /* no gap: the oldest and the newest a second a sample apart */
                assert_true(history_count(g) >= saved);
                assert_int_equal(history_oldest_ms(g), T0);
                assert_int_equal(history_newest_ms(g), T0 + 1000 * (int64_t) (history_count(g) - 1));
                history_free(g);
        }
}

static int setup(void **state) {
        return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state) {
        char cmd[600];

        snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
        return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_appends),
                cmocka_unit_test(test_full_saves),
                cmocka_unit_test(test_append_cut_short),
                cmocka_unit_test(test_killed_while_saving),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
