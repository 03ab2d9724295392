/* test-history-file.c — unit tests for history.bin: save/load, blocks byte by byte, hand-made and corrupt files. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "history.h"
#include "history-save.h"
#include "sensors.h"
#include "test-history.h"

static char tmpdir[] = "/tmp/test-history-XXXXXX";

static void path_in_tmp(char *buf, size_t size, const char *name) {
        snprintf(buf, size, "%s/%s", tmpdir, name);
}

/* Bitwise CRC-32 (IEEE), independent of the table-driven one under test. */
static uint32_t crc32_bitwise(const uint8_t *p, size_t n) {
        uint32_t crc = 0xffffffffu;

        for (size_t i = 0; i < n; i++) {
                crc ^= p[i];
                for (int k = 0; k < 8; k++)
                        crc = (crc >> 1) ^ (0xEDB88320u & -(crc & 1));
        }
        return ~crc;
}

/* Wrapped ring, three columns, one added later, missing values. */
static struct history *sample_ring(void) {
        struct history *h = new_history(8);
        int t = history_column(h, "thermal_zone0", HISTORY_TEMP);
        int f = history_column(h, "cpufreq:policy0", HISTORY_FREQ);

        for (int i = 0; i < 11; i++) {
                assert_int_equal(history_begin(h, INT64_C(1700000000000) + 1000 * i), 0);
                if (i != 9)
                        history_set(h, (size_t) t, 40 + i * 0.25);
                history_set(h, (size_t) f, 1e8 * (i + 1));
                if (i == 8)
                        assert_int_equal(history_column(h, "load:cpu", HISTORY_LOAD), 2);
                if (i >= 8)
                        history_set(h, 2, 0.1 * i);
        }
        return h;
}

static void test_save_load_roundtrip(void **state) {
        struct history *h = sample_ring(), *g = new_history(8);
        char path[512], tmp[520];
        uint8_t *data;
        size_t size;
        int l, t, x;

        path_in_tmp(path, sizeof path, "history.bin");
        assert_int_equal(history_save(h, path), 0);
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        assert_int_equal(access(tmp, F_OK), -1);
        data = read_file(path, &size);
        assert_memory_equal(data, "HCHIST\x04\x00\x03\x00\x00\x00", 12);
        /* header 12 + columns (2+13, 2+15, 2+8) + crc 4, then one block of
         * 8 samples: length, crc, skip 0, ..., n = 8 */
        assert_int_equal(data[12 + 42 + 4 + 8], 0);
        assert_int_equal(data[12 + 42 + 4 + 8 + 20], 8);
        assert_memory_equal(data + size - 8, "\0\0\0\0\0\0\0\0", 8);
        free(data);

        /* g knows the columns in another order, plus one the file lacks. */
        l = history_column(g, "load:cpu", HISTORY_LOAD);
        x = history_column(g, "hwmon:cpu_thermal/temp1", HISTORY_TEMP);
        assert_int_equal(history_load(g, path), 0);
        assert_int_equal(history_count(g), 8);
        assert_int_equal(history_n_columns(g), 4);      /* thermal_zone0, cpufreq added */
        t = history_find_column(g, "thermal_zone0");
        assert_true(t >= 0);
        for (size_t i = 0; i < 8; i++) {
                assert_int_equal(history_time_ms(g, i), history_time_ms(h, i));
                for (size_t c = 0; c < 3; c++) {
                        int gc = history_find_column(g, history_column_id(h, c));
                        double a = history_get(h, i, c), b = history_get(g, i, (size_t) gc);

                        if (!(isnan(a) && isnan(b)) && a != b)
                                fail_msg("sample %zu column %zu: %g vs %g", i, c, a, b);
                }
                assert_nan(history_get(g, i, (size_t) x));
        }
        assert_nan(history_get(g, 6, (size_t) t));      /* the i == 9 gap */
        assert_nan(history_get(g, 4, (size_t) l));      /* before load:cpu existed */
        assert_near(history_get(g, 5, (size_t) l), 0.8);

        /* No sample is open after a load; the next one goes on from the newest. */
        history_set(g, (size_t) t, 99);
        assert_near(history_get(g, 7, (size_t) t), 42.5);
        assert_int_equal(history_begin(g, history_newest_ms(g) - 1), -EINVAL);
        assert_int_equal(history_begin(g, history_newest_ms(g) + 1000), 0);
        history_set(g, (size_t) x, 55);
        assert_near(history_get(g, 7, (size_t) x), 55);
        assert_nan(history_get(g, 6, (size_t) x));

        /* Saving the loaded ring gives the same bytes back (after the same samples). */
        history_free(g);
        g = new_history(8);
        assert_int_equal(history_load(g, path), 0);
        path_in_tmp(tmp, sizeof tmp, "again.bin");
        assert_int_equal(history_save(g, tmp), 0);
        {
                size_t s1, s2;
                uint8_t *d1 = read_file(path, &s1), *d2 = read_file(tmp, &s2);

                assert_int_equal(s1, s2);
                assert_memory_equal(d1, d2, s1);
                free(d1);
                free(d2);
        }
        history_free(g);
        history_free(h);
}

static void test_load_smaller_capacity(void **state) {
        struct history *h = new_history(100), *g = new_history(10);
        char path[512];
        int c = history_column(h, "t", HISTORY_TEMP);

        for (int i = 0; i < 100; i++) {
                assert_int_equal(history_begin(h, 1000 * i), 0);
                history_set(h, (size_t) c, i);
        }
        path_in_tmp(path, sizeof path, "big.bin");
        assert_int_equal(history_save(h, path), 0);
        assert_int_equal(history_load(g, path), 0);
        assert_int_equal(history_count(g), 10);
        assert_int_equal(history_oldest_ms(g), 90000);
        assert_int_equal(history_newest_ms(g), 99000);
        for (size_t i = 0; i < 10; i++)
                assert_near(history_get(g, i, 0), 90.0 + (double) i);
        history_free(g);
        history_free(h);
}

static void test_load_empty_ring(void **state) {
        struct history *h = new_history(4), *g = new_history(4);
        char path[512];

        history_column(h, "t", HISTORY_TEMP);
        path_in_tmp(path, sizeof path, "empty.bin");
        assert_int_equal(history_save(h, path), 0);
        history_column(g, "t", HISTORY_TEMP);
        assert_int_equal(history_begin(g, 5), 0);
        assert_int_equal(history_load(g, path), 0);
        assert_int_equal(history_count(g), 0);
        assert_int_equal(history_n_columns(g), 1);
        history_free(g);
        history_free(h);
}

/* Every truncation length and every flipped byte: -EBADMSG and h untouched. */
/* Every prefix and every flipped bit of a file: an error leaves the ring as
 * it was; a success keeps only samples that are in the original. */
static void test_load_truncated_corrupt(void **state) {
        struct history *h = sample_ring(), *g = new_history(8);
        char path[512], bad[512];
        uint8_t *data;
        size_t size;
        int r;

        path_in_tmp(path, sizeof path, "good.bin");
        path_in_tmp(bad, sizeof bad, "bad.bin");
        assert_int_equal(history_save(h, path), 0);
        data = read_file(path, &size);

        for (size_t n = 0; n < size; n++) {
                history_reset(g);
                history_column(g, "thermal_zone0", HISTORY_TEMP);
                assert_int_equal(history_begin(g, 42), 0);
                write_file(bad, data, n);
                r = history_load(g, bad);
                if (r < 0) {
                        assert_int_equal(r, -EBADMSG);
                        assert_int_equal(history_count(g), 1);
                        assert_int_equal(history_newest_ms(g), 42);
                } else {
                        /* The header made it: a torn block or a missing end marker
                         * counts as one rejected block; a whole block is kept. */
                        assert_int_equal(r, 1);
                        assert_true(history_count(g) == 0 || history_count(g) == 8);
                }
        }
        for (size_t i = 0; i < size; i++) {
                for (int bit = 0; bit < 8; bit += 3) {
                        data[i] ^= (uint8_t) (1u << bit);
                        write_file(bad, data, size);
                        r = history_load(g, bad);
                        assert_true(r == -EBADMSG || r == -EPROTONOSUPPORT || r >= 0);
                        if (r == 0) {
                                /* only the unused half of the end marker was hit */
                                assert_int_equal(history_count(g), 8);
                                for (size_t k = 0; k < 8; k++)
                                        for (size_t c = 0; c < 3; c++) {
                                                double x = history_get(h, k, c), y = history_get(g, k, c);

                                                assert_true((isnan(x) && isnan(y)) || x == y);
                                        }
                        } else if (r > 0)
                                assert_true(history_count(g) == 0 || history_count(g) == 8);
                        data[i] ^= (uint8_t) (1u << bit);
                }
        }
        free(data);
        history_free(g);
        history_free(h);
}

/* Many blocks: round trips at block boundaries and across wrap, and one
 * corrupt block in the middle of a file, rejected while the others stay. */
static void test_blocks(void **state) {
        const size_t cap = 5000;
        struct history *h = new_history(cap), *g = new_history(cap);
        static double want[12000][2];
        static int64_t want_t[12000];
        char path[512];
        uint32_t seed = 7;
        size_t n = 0, base;
        uint8_t *data;
        size_t size, pos;
        int a = history_column(h, "a", HISTORY_TEMP), f = history_column(h, "f", HISTORY_FREQ), r;
        int64_t t = INT64_C(1700000000000);

        for (size_t i = 0; i < 12000; i++, n++) {
                double x, y;

                seed = seed * 1103515245u + 12345u;
                t += 1000 + (int64_t) (seed >> 28) - 8;          /* 1 s with jitter */
                if (i % 3000 == 2999)
                        t += 86400000;                            /* a day down */
                assert_int_equal(history_begin(h, t), 0);
                x = (seed >> 20) % 50 == 0 ? NAN : 40.0 + 0.538 * (double) ((seed >> 8) % 4);
                y = (seed >> 12) % 7 == 0 ? NAN : 1e6 * (double) (100 * ((seed >> 4) % 16));
                history_set(h, (size_t) a, x);
                history_set(h, (size_t) f, y);
                want_t[i] = t;
                want[i][0] = isnan(x) ? NAN : round(x * 100) / 100;
                want[i][1] = y;
        }
        assert_int_equal(history_count(h), cap);
        base = n - cap;
        for (size_t i = 0; i < cap; i++) {
                double x = history_get(h, i, (size_t) a), y = history_get(h, i, (size_t) f);

                assert_int_equal(history_time_ms(h, i), want_t[base + i]);
                assert_true(isnan(x) ? isnan(want[base + i][0]) : fabs(x - want[base + i][0]) < 1e-9);
                assert_true(isnan(y) ? isnan(want[base + i][1]) : y == want[base + i][1]);
        }
        assert_int_equal(history_oldest_ms(h), want_t[base]);
        assert_int_equal(history_newest_ms(h), want_t[n - 1]);

        path_in_tmp(path, sizeof path, "blocks.bin");
        assert_int_equal(history_save(h, path), 0);
        assert_int_equal(history_load(g, path), 0);
        assert_int_equal(history_count(g), cap);
        for (size_t i = 0; i < cap; i += 13) {
                assert_int_equal(history_time_ms(g, i), want_t[base + i]);
                assert_true(isnan(history_get(g, i, 0)) == isnan(want[base + i][0]));
        }

        /* Flip a byte inside the second block record: only its samples go. */
        data = read_file(path, &size);
        pos = 12 + (2 + 1) + (2 + 1) + 4;                 /* header: "a" and "f" are 1-byte ids */
        pos += 8 + (size_t) (data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16);   /* first record */
        {
                size_t len = (size_t) (data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16);

                data[pos + 8 + len / 2] ^= 0x10;
                write_file(path, data, size);
                history_free(g);
                g = new_history(cap);
                r = history_load(g, path);
                assert_int_equal(r, 1);
        }
        assert_int_equal(history_count(g), cap - 1024);
        assert_int_equal(history_newest_ms(g), want_t[n - 1]);
        free(data);
        history_free(g);
        history_free(h);
}

/* Samples i of test_open_block: a temperature in 0.48 C steps, and a load
 * column that appears at sample 300 (inside the first, still open block). */
static double open_block_temp(size_t i) {
        return (4000 + 48 * (double) (((uint32_t) i * 2654435761u >> 20) % 4)) / 100.0;
}

static double open_block_load(size_t i) {
        return i < 300 ? NAN : (double) (((uint32_t) i * 40503u >> 7) % 101) / 100.0;
}

/* l: the load column's index, -1 before it exists. */
static void assert_open_block_sample(const struct history *h, size_t idx, size_t i, int l) {
        assert_int_equal(history_time_ms(h, idx), 1000 * (int64_t) i);
        assert_near(history_get(h, idx, 0), open_block_temp(i));
        if (i < 300 && l >= 0)
                assert_nan(history_get(h, idx, (size_t) l));
        else if (i >= 300)
                assert_near(history_get(h, idx, (size_t) l), open_block_load(i));
}

/* The head holds a quarter of a block; a full head joins the newest block
 * until it has 1024 samples. Every sample reads back at each step of that,
 * through the wrap (which drops samples of a block that may still grow),
 * a query, and a save and load. */
static void test_open_block(void **state) {
        static const size_t caps[] = { 1024, 1025, 1100, 1536, 2047 };
        struct history *e = new_history(86400);
        char path[512];

        /* 24 columns: the head is 256 samples of 8 + 48 bytes. */
        for (int k = 0; k < 24; k++) {
                char id[8];

                snprintf(id, sizeof id, "c%d", k);
                assert_true(history_column(e, id, HISTORY_TEMP) >= 0);
        }
        assert_true(history_memory_bytes(e) < 16 * 1024);
        history_free(e);

        path_in_tmp(path, sizeof path, "open-block.bin");
        for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
                size_t cap = caps[c], n = 3 * cap + 77;
                struct history *h = new_history(cap), *g = new_history(cap);
                int t = history_column(h, "t", HISTORY_TEMP), l = -1;

                assert_int_equal(t, 0);
                for (size_t i = 0; i < n; i++) {
                        size_t count = i + 1 < cap ? i + 1 : cap, first = i + 1 - count;

                        assert_int_equal(history_begin(h, 1000 * (int64_t) i), 0);
                        if (i == 300)
                                l = history_column(h, "l", HISTORY_LOAD);
                        history_set(h, (size_t) t, open_block_temp(i));
                        if (l >= 0)
                                history_set(h, (size_t) l, open_block_load(i));
                        if (i % 256 > 1 && i % 256 < 255 && i + 1 < n)
                                continue;
                        assert_int_equal(history_count(h), count);
                        assert_int_equal(history_oldest_ms(h), 1000 * (int64_t) first);
                        assert_int_equal(history_newest_ms(h), 1000 * (int64_t) i);
                        assert_open_block_sample(h, 0, first, l);
                        assert_open_block_sample(h, count / 2, first + count / 2, l);
                        assert_open_block_sample(h, count - 1, i, l);
                }
                {
                        struct history_result r;
                        size_t cols[1] = { (size_t) t }, seen = 0;

                        assert_int_equal(history_query(h, 0, 1000 * (int64_t) n, cols, 1, 7, &r), 0);
                        for (size_t k = 0; k < r.n_buckets; k++)
                                seen += r.buckets[k].n_samples;
                        assert_int_equal(seen, cap);
                        history_result_free(&r);
                }
                assert_int_equal(history_save(h, path), 0);
                assert_int_equal(history_load(g, path), 0);
                l = history_find_column(g, "l");
                assert_true(l >= 0);
                assert_int_equal(history_count(g), cap);
                for (size_t k = 0; k < cap; k++)
                        assert_open_block_sample(g, k, n - cap + k, l);
                history_free(g);
                history_free(h);
        }
}

/* A column added after some blocks were encoded: the older blocks have no
 * stream for it and read missing, in memory, in queries and after a reload. */
static void test_column_added_between_blocks(void **state) {
        struct history *h = new_history(4000), *g = new_history(4000);
        struct history_result r;
        size_t cols[2];
        char path[512];
        int a = history_column(h, "a", HISTORY_TEMP), b = -1;

        for (int i = 0; i < 3000; i++) {
                assert_int_equal(history_begin(h, 1000 * (int64_t) i), 0);
                history_set(h, (size_t) a, 40 + (i / 100) % 2);
                if (i == 1500)
                        b = history_column(h, "b", HISTORY_FREQ);
                if (b >= 0)
                        history_set(h, (size_t) b, 1.2e9);
        }
        for (size_t i = 0; i < 3000; i += 250) {
                assert_near(history_get(h, i, (size_t) a), 40 + (double) ((i / 100) % 2));
                if (i < 1500)
                        assert_nan(history_get(h, i, (size_t) b));
                else
                        assert_near(history_get(h, i, (size_t) b), 1.2e9);
        }
        cols[0] = (size_t) a;
        cols[1] = (size_t) b;
        assert_int_equal(history_query(h, 0, 2999999, cols, 2, 3, &r), 0);
        assert_int_equal(r.n_buckets, 3);
        assert_nan(r.buckets[0].mean[1]);               /* 0 .. 999 s: before b */
        assert_near(r.buckets[1].min[1], 1.2e9);        /* 1000 .. 1999 s: b from 1500 s */
        assert_int_equal(r.buckets[1].n_samples, 1000);
        assert_near(r.buckets[2].max[0], 41);
        history_result_free(&r);

        path_in_tmp(path, sizeof path, "added.bin");
        assert_int_equal(history_save(h, path), 0);
        assert_int_equal(history_load(g, path), 0);
        assert_int_equal(history_count(g), 3000);
        b = history_find_column(g, "b");
        assert_true(b >= 0);
        assert_nan(history_get(g, 1499, (size_t) b));
        assert_near(history_get(g, 1500, (size_t) b), 1.2e9);
        assert_near(history_get(g, 2999, (size_t) b), 1.2e9);
        history_free(g);
        history_free(h);
}

/* A hand-made file, byte by byte and bit by bit: the format is little-endian
 * on every host, and the bit streams are the documented symbols. */
struct builder {
        uint8_t data[512];
        size_t len;
};

static void put(struct builder *b, uint64_t v, size_t bytes) {
        for (size_t i = 0; i < bytes; i++)
                b->data[b->len++] = (uint8_t) (v >> (8 * i));
}

static void put_id(struct builder *b, uint8_t kind, const char *id) {
        put(b, kind, 1);
        put(b, strlen(id), 1);
        memcpy(b->data + b->len, id, strlen(id));
        b->len += strlen(id);
}

/* "0"/"1" characters (blanks ignored) to bytes, most significant bit first. */
static size_t bits(uint8_t *out, const char *text) {
        size_t n = 0;

        for (; *text; text++) {
                if (*text == ' ')
                        continue;
                if (n % 8 == 0)
                        out[n / 8] = 0;
                if (*text == '1')
                        out[n / 8] |= (uint8_t) (0x80 >> (n % 8));
                n++;
        }
        return (n + 7) / 8;
}

/* Two columns, three samples at t0, t0 + 1000, t0 + 1500 ms:
 * thermal_zone0 43.21, -12.34, missing; cpufreq:policy0 1536 MHz, missing, 32767 MHz.
 * In the symbols of versions 2 and 3: */
static const char *const STREAMS[3] = {
        /* dod +1000: 111 w=11 zigzag+1=2001; dod -500: 110, 1000 in the kept width 11 */
        "111 0001011 11111010001  110 01111101000",
        /* step 1 (16 bits; 4321 and -1234 share no divisor);
         * +4321: 111 w=14 8643; -5555: 110 (same width) 11110; missing: 111 w=0 */
        "0000000000000001  111 0001110 10000111000011  110 10101101100110  111 0000000",
        /* step 1; +1536: 111 w=12 3073; missing; +31231 after it: 111 w=16 62463 */
        "0000000000000001  111 0001100 110000000001  111 0000000  111 0010000 1111001111111111",
};

/* The same samples in the symbols of version 4, as the encoder writes them. */
static const char *const STREAMS_V4[3] = {
        /* dod +1000: 1111 w=11 2001; dod -500: 1110, 1000 in the kept width 11 */
        "1111 0001011 11111010001  1110 01111101000",
        /* step 1; +4321: 1111 w=14 8643; -5555, neither +-last nor r2 (none yet):
         * 1110 (same width) 11110; missing: 1111 w=0 */
        "0000000000000001  1111 0001110 10000111000011  1110 10101101100110  1111 0000000",
        /* step 1; +1536: 1111 w=12 3073; missing; +31231 after it: 1111 w=16 62463 */
        "0000000000000001  1111 0001100 110000000001  1111 0000000  1111 0010000 1111001111111111",
};

/* Appends one block record: n samples from first_ms to last_ms in the
 * streams given as bit texts (the times first); crc_xor spoils its CRC. */
static void put_record(struct builder *b, const char *const *texts, size_t n_streams,
                       int64_t first_ms, int64_t last_ms, uint32_t n, uint32_t crc_xor) {
        struct builder r = { .len = 0 };
        uint8_t streams[64];
        size_t ends[4], size = 0;

        for (size_t k = 0; k < n_streams; k++) {
                size += bits(streams + size, texts[k]);
                ends[k] = size;
        }
        put(&r, 0, 4);                                          /* skip */
        put(&r, (uint64_t) first_ms, 8);
        put(&r, (uint64_t) last_ms, 8);
        put(&r, n, 4);
        put(&r, n_streams, 4);
        put(&r, size, 4);
        put(&r, 0, 4);                                          /* reserved */
        for (size_t k = 0; k < n_streams; k++)
                put(&r, ends[k], 4);
        memcpy(r.data + r.len, streams, size);
        r.len += size;
        put(b, r.len, 4);
        put(b, crc32_bitwise(r.data, r.len) ^ crc_xor, 4);
        memcpy(b->data + b->len, r.data, r.len);
        b->len += r.len;
}

/* `variant` breaks one thing: 1-6 and 12 the header (CRC kept right), 7-9
 * the block; 10 is the same file as version 4, as the encoder writes it,
 * 11 as version 3. */
static size_t build_file(struct builder *b, int variant) {
        static const unsigned version[13] = { 2, 1, 2, 2, 2, 2, 2, 2, 2, 2, 4, 3, 5 };

        b->len = 0;
        memcpy(b->data, "HCHIST", 6);
        b->len = 6;
        put(b, version[variant], 2);
        put(b, variant == 3 ? 5000 : 2, 4);                     /* columns */
        put_id(b, variant == 4 ? HISTORY_POWER + 1 : HISTORY_TEMP, "thermal_zone0");  /* 4: no kind */
        if (variant == 5)
                put_id(b, HISTORY_FREQ, "thermal_zone0");
        else if (variant == 6)
                put(b, 0, 2);                                   /* empty id */
        else
                put_id(b, HISTORY_FREQ, "cpufreq:policy0");
        put(b, crc32_bitwise(b->data, b->len), 4);
        put_record(b, variant == 10 ? STREAMS_V4 : STREAMS, 3, INT64_C(1700000000000),
                   INT64_C(1700000001500) + (variant == 8), 3, variant == 7);
        if (variant != 9) {
                put(b, 0, 4);                                   /* end */
                put(b, 0, 4);
        }
        return b->len;
}

/* history_save() writes exactly these bytes. */
static void assert_saves_as(const struct history *h, const char *name, const uint8_t *data, size_t len) {
        char path[512];
        uint8_t *saved;
        size_t size;

        path_in_tmp(path, sizeof path, name);
        assert_int_equal(history_save(h, path), 0);
        saved = read_file(path, &size);
        assert_int_equal(size, len);
        assert_memory_equal(saved, data, len);
        free(saved);
}

static void test_load_handmade(void **state) {
        struct history *g = new_history(8), *h;
        struct builder b;
        char path[512];
        size_t len;

        path_in_tmp(path, sizeof path, "handmade.bin");
        len = build_file(&b, 0);
        write_file(path, b.data, len);
        assert_int_equal(history_load(g, path), 0);
        assert_int_equal(history_count(g), 3);
        assert_int_equal(history_oldest_ms(g), INT64_C(1700000000000));
        assert_int_equal(history_time_ms(g, 1), INT64_C(1700000001000));
        assert_int_equal(history_newest_ms(g), INT64_C(1700000001500));
        assert_near(history_get(g, 0, 0), 43.21);
        assert_near(history_get(g, 1, 0), -12.34);
        assert_nan(history_get(g, 2, 0));
        assert_near(history_get(g, 0, 1), 1536e6);
        assert_nan(history_get(g, 1, 1));
        assert_near(history_get(g, 2, 1), 32767e6);

        /* The encoder writes exactly these bytes for the same samples, as
         * version 4: version 2, above, is still read, and 3 below. */
        len = build_file(&b, 10);
        h = new_history(8);
        history_column(h, "thermal_zone0", HISTORY_TEMP);
        history_column(h, "cpufreq:policy0", HISTORY_FREQ);
        assert_int_equal(history_begin(h, INT64_C(1700000000000)), 0);
        history_set(h, 0, 43.21);
        history_set(h, 1, 1536e6);
        assert_int_equal(history_begin(h, INT64_C(1700000001000)), 0);
        history_set(h, 0, -12.34);
        assert_int_equal(history_begin(h, INT64_C(1700000001500)), 0);
        history_set(h, 1, 32767e6);
        assert_saves_as(h, "encoded.bin", b.data, len);
        history_free(h);

        /* Versions 4 and 3 read the same. */
        for (int v = 10; v <= 11; v++) {
                path_in_tmp(path, sizeof path, "handmade.bin");
                write_file(path, b.data, build_file(&b, v));
                assert_int_equal(history_load(g, path), 0);
                assert_int_equal(history_count(g), 3);
                assert_near(history_get(g, 0, 0), 43.21);
                assert_near(history_get(g, 1, 0), -12.34);
                assert_nan(history_get(g, 2, 0));
                assert_nan(history_get(g, 1, 1));
                assert_near(history_get(g, 2, 1), 32767e6);
        }

        /* Header variants with a right CRC but a wrong structure: nothing changes. */
        path_in_tmp(path, sizeof path, "handmade.bin");
        write_file(path, b.data, build_file(&b, 1));
        assert_int_equal(history_load(g, path), -EPROTONOSUPPORT);
        write_file(path, b.data, build_file(&b, 12));
        assert_int_equal(history_load(g, path), -EPROTONOSUPPORT);
        for (int v = 3; v <= 6; v++) {
                write_file(path, b.data, build_file(&b, v));
                if (history_load(g, path) != -EBADMSG)
                        fail_msg("variant %d: not -EBADMSG", v);
        }
        assert_int_equal(history_count(g), 3);
        assert_near(history_get(g, 0, 0), 43.21);
        /* Block variants (bad CRC, last time that does not match, no end
         * marker): the block is rejected, the load goes on. */
        for (int v = 7; v <= 9; v++) {
                write_file(path, b.data, build_file(&b, v));
                if (history_load(g, path) != 1)
                        fail_msg("variant %d: not rejected", v);
        }
        history_free(g);
}

/* One column, four samples a second apart: 40, 43, 39 and 42 C, in steps
 * of 100 centidegrees: 40, +3, -4, +3, which the symbols code in 47 bits
 * and Rice with k = 4 in 25 (z = 80, 6, 7, 6), so the stream is Rice-coded. */
static const char *const RICE_STREAMS[3] = {
        /* dod +1000: 111 w=11 2001; then dod 0 twice (version 3 symbols) */
        "111 0001011 11111010001  0 0",
        /* RICE_FLAG | step 100, k = 4; z 80: q 5, low 0000; 6, 7, 6: q 0 */
        "1000000001100100 0100  000001 0000  1 0110  1 0111  1 0110",
        /* the times in version 4: 1111 w=11 2001, 0, 0 */
        "1111 0001011 11111010001  0 0",
};

/* version: 3 or 4, which differ in the times' symbols */
static size_t build_rice_file(struct builder *b, unsigned version) {
        const char *const v4[2] = { RICE_STREAMS[2], RICE_STREAMS[1] };

        b->len = 0;
        memcpy(b->data, "HCHIST", 6);
        b->len = 6;
        put(b, version, 2);
        put(b, 1, 4);                                           /* columns */
        put_id(b, HISTORY_TEMP, "thermal_zone0");
        put(b, crc32_bitwise(b->data, b->len), 4);
        put_record(b, version == 4 ? v4 : RICE_STREAMS, 2, INT64_C(1700000000000), INT64_C(1700000003000), 4, 0);
        put(b, 0, 4);                                           /* end */
        put(b, 0, 4);
        return b->len;
}

static void test_load_handmade_rice(void **state) {
        static const double want[4] = { 40, 43, 39, 42 };
        struct history *g = new_history(8), *h = new_history(8);
        struct builder b;
        char path[512];
        size_t len;

        for (unsigned version = 3; version <= 4; version++) {
                len = build_rice_file(&b, version);
                path_in_tmp(path, sizeof path, "rice.bin");
                write_file(path, b.data, len);
                assert_int_equal(history_load(g, path), 0);
                assert_int_equal(history_count(g), 4);
                for (size_t i = 0; i < 4; i++) {
                        assert_int_equal(history_time_ms(g, i), INT64_C(1700000000000) + 1000 * (int64_t) i);
                        assert_near(history_get(g, i, 0), want[i]);
                }
        }
        /* The encoder picks Rice for these samples and writes the same bytes. */
        history_column(h, "thermal_zone0", HISTORY_TEMP);
        for (size_t i = 0; i < 4; i++) {
                assert_int_equal(history_begin(h, INT64_C(1700000000000) + 1000 * (int64_t) i), 0);
                history_set(h, 0, want[i]);
        }
        assert_saves_as(h, "rice-encoded.bin", b.data, len);
        history_free(h);
        history_free(g);
}

/* A sensor quantised to 0.487 C, kept in hundredths: steps of 48 and 49,
 * and 97 for two. Every symbol of version 4: the flicker back (10), the
 * last step again (1100), the step size before it (1101 s). */
static const char *const QUANTISED_STREAMS[2] = {
        /* dod +1000: 1111 w=11 2001; then 0 eight times */
        "1111 0001011 11111010001  0 0 0 0 0 0 0 0",
        /* step 1; 4000: 1111 w=13 8001; +49: 1110 99 (kept width 13);
         * -49, +49: 10 10; +48: 1110 97; -97: 1110 194; +146: 1110 293;
         * -97 (r2 = 97): 1101 1; -97: 1100; the same: 0 */
        "0000000000000001  1111 0001101 1111101000001  1110 0000001100011  10 10  1110 0000001100001"
        "  1110 0000011000010  1110 0000100100101  11011  1100  0",
};

static void test_quantised_symbols(void **state) {
        static const double want[10] = { 40.00, 40.49, 40.00, 40.49, 40.97, 40.00, 41.46, 40.49, 39.52, 39.52 };
        struct history *g = new_history(16), *h = new_history(16);
        struct builder b = { .len = 0 };
        char path[512];

        memcpy(b.data, "HCHIST", 6);
        b.len = 6;
        put(&b, 4, 2);                                          /* version */
        put(&b, 1, 4);                                          /* columns */
        put_id(&b, HISTORY_TEMP, "thermal_zone0");
        put(&b, crc32_bitwise(b.data, b.len), 4);
        put_record(&b, QUANTISED_STREAMS, 2, INT64_C(1700000000000), INT64_C(1700000009000), 10, 0);
        put(&b, 0, 4);                                          /* end */
        put(&b, 0, 4);
        path_in_tmp(path, sizeof path, "quantised.bin");
        write_file(path, b.data, b.len);
        assert_int_equal(history_load(g, path), 0);
        assert_int_equal(history_count(g), 10);
        for (size_t i = 0; i < 10; i++)
                assert_near(history_get(g, i, 0), want[i]);
        /* the encoder writes these symbols for these values */
        history_column(h, "thermal_zone0", HISTORY_TEMP);
        for (size_t i = 0; i < 10; i++) {
                assert_int_equal(history_begin(h, INT64_C(1700000000000) + 1000 * (int64_t) i), 0);
                history_set(h, 0, want[i]);
        }
        assert_saves_as(h, "quantised-encoded.bin", b.data, b.len);
        history_free(h);
        history_free(g);
}

/* A column's step: whole stored units, for a load one that divides 10000,
 * never finer than the default; kept across a load from a file. */
static void test_column_step(void **state) {
        struct history *h = new_history(16), *g = new_history(16);
        int t = history_column(h, "t", HISTORY_TEMP);
        int l4 = history_column(h, "load:cpu", HISTORY_LOAD);
        int l6 = history_column(h, "load:six", HISTORY_LOAD);
        int l7 = history_column(h, "load:seven", HISTORY_LOAD);
        int fine = history_column(h, "load:fine", HISTORY_LOAD);
        char path[512];

        assert_int_equal(history_column_step(h, (size_t) t, 0.5), 0);
        assert_int_equal(history_column_step(h, (size_t) l4, cpu_load_step(1000, 4)), 0);      /* 25 */
        assert_int_equal(history_column_step(h, (size_t) l6, cpu_load_step(1000, 6)), 0);      /* 16.67: 16 */
        assert_int_equal(history_column_step(h, (size_t) l7, cpu_load_step(1000, 7)), 0);      /* 14.29: 10 */
        assert_int_equal(history_column_step(h, (size_t) fine, 1e-6), 0);                      /* stays 10 */
        assert_int_equal(history_column_step(h, 5, 0.01), -EINVAL);
        assert_int_equal(history_column_step(h, (size_t) t, 0.0), -EINVAL);
        assert_int_equal(history_column_step(h, (size_t) t, NAN), -EINVAL);
        assert_int_equal(history_column_step(NULL, 0, 0.01), -EINVAL);

        assert_int_equal(history_begin(h, 1000), 0);
        history_set(h, (size_t) t, 41.3);
        history_set(h, (size_t) l4, 0.1234);
        history_set(h, (size_t) l6, 0.5);
        history_set(h, (size_t) l7, 0.1234);
        history_set(h, (size_t) fine, 0.12345);
        assert_near(history_get(h, 0, (size_t) t), 41.5);
        assert_near(history_get(h, 0, (size_t) l4), 0.1225);
        assert_near(history_get(h, 0, (size_t) l6), 0.5008);
        assert_near(history_get(h, 0, (size_t) l7), 0.123);
        assert_near(history_get(h, 0, (size_t) fine), 0.123);
        assert_int_equal(history_begin(h, 2000), 0);
        history_set(h, (size_t) l4, 1.0);
        history_set(h, (size_t) l6, 1.0);
        history_set(h, (size_t) l7, 1.0);
        for (int c = l4; c <= l7; c++)
                assert_near(history_get(h, 1, (size_t) c), 1.0);

        path_in_tmp(path, sizeof path, "step.bin");
        assert_int_equal(history_save(h, path), 0);
        assert_int_equal(history_load(h, path), 0);
        assert_int_equal(history_count(h), 2);
        assert_int_equal(history_begin(h, 3000), 0);
        history_set(h, (size_t) l4, 0.1234);
        assert_near(history_get(h, 2, (size_t) l4), 0.1225);
        /* a ring that had no step for the column reads the same values back */
        assert_int_equal(history_load(g, path), 0);
        assert_near(history_get(g, 0, (size_t) history_find_column(g, "load:cpu")), 0.1225);
        history_free(g);
        history_free(h);
}

/* A load that is noise of a few steps around its level, with jumps between
 * idle and full load and one missing sample in one block: read back exactly,
 * in memory, by queries and after a reload, in under 4 bits a sample more
 * than a constant load. A corrupt Rice stream is rejected. */
static void test_rice_noise(void **state) {
        enum { N = 8 * 1024 };
        static int want[N];
        struct history *h = new_history(N), *g = new_history(N), *flat = new_history(N);
        struct history_result r;
        size_t col0 = 0, n_block0, block_bytes;
        uint32_t seed = 11;
        char path[512];
        uint8_t *data;
        size_t size, pos;
        int64_t sum = 0;

        history_column(h, "load:cpu0", HISTORY_LOAD);
        for (size_t i = 0; i < N; i++) {
                int level = (i / 700) % 2 ? 10000 : 500, v = level, k;

                for (k = 0; k < 4; k++) {
                        seed = seed * 1103515245u + 12345u;
                        v += (int) ((seed >> 16) % 521) - 260;  /* sigma about 3 steps of 100 */
                }
                v = v < 0 ? 0 : v > 10000 ? 10000 : (v + 50) / 100 * 100;
                want[i] = i == 3000 ? -1 : v;
                assert_int_equal(history_begin(h, 1000 * (int64_t) i), 0);
                if (want[i] >= 0)
                        history_set(h, 0, v / 10000.0);
        }
        history_column(flat, "load:cpu0", HISTORY_LOAD);
        for (size_t i = 0; i < N; i++) {
                assert_int_equal(history_begin(flat, 1000 * (int64_t) i), 0);
                history_set(flat, 0, 0.05);
        }
        /* Rice: 2.9 bits a sample more than a constant load; the symbols alone: 5.1 */
        assert_true((history_memory_bytes(h) - history_memory_bytes(flat)) * 8 < 4 * (size_t) N);
        for (size_t i = 0; i < N; i++) {
                if (want[i] < 0)
                        assert_nan(history_get(h, i, 0));
                else
                        assert_near(history_get(h, i, 0), want[i] / 10000.0);
                if (want[i] > 0)
                        sum += want[i];
        }
        assert_int_equal(history_query(h, 0, 1000 * (int64_t) N, &col0, 1, 1, &r), 0);
        assert_near(r.buckets[0].mean[0], (double) sum / (N - 1) / 10000.0);
        history_result_free(&r);

        path_in_tmp(path, sizeof path, "noise.bin");
        assert_int_equal(history_save(h, path), 0);
        assert_int_equal(history_load(g, path), 0);
        assert_int_equal(history_count(g), N);
        for (size_t i = 0; i < N; i++)
                if (want[i] >= 0)
                        assert_near(history_get(g, i, 0), want[i] / 10000.0);

        /* Cut the first block's value stream short by flipping its last
         * bytes to zeros (the escape prefix): the block goes, the rest stay. */
        data = read_file(path, &size);
        pos = 12 + (2 + 9) + 4;                         /* header, "load:cpu0" */
        block_bytes = (size_t) (data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16);
        n_block0 = pos + 8 + block_bytes;
        for (size_t i = n_block0 - 6; i < n_block0; i++)
                data[i] = 0;
        {
                /* the record's CRC made right again, so the stream itself is judged */
                uint32_t crc = crc32_bitwise(data + pos + 8, block_bytes);

                for (int k = 0; k < 4; k++)
                        data[pos + 4 + k] = (uint8_t) (crc >> (8 * k));
        }
        write_file(path, data, size);
        free(data);
        history_free(g);
        g = new_history(N);
        assert_int_equal(history_load(g, path), 1);
        assert_int_equal(history_count(g), N - 1024);
        assert_near(history_get(g, 0, 0), want[1024] / 10000.0);
        history_free(g);
        history_free(flat);
        history_free(h);
}

static void test_load_kinds_and_columns(void **state) {
        struct history *g = new_history(8);
        struct builder b;
        char path[512];
        int f;

        /* "thermal_zone0" known here as a frequency: not the same series, skipped. */
        f = history_column(g, "thermal_zone0", HISTORY_FREQ);
        path_in_tmp(path, sizeof path, "kinds.bin");
        write_file(path, b.data, build_file(&b, 0));
        assert_int_equal(history_load(g, path), 0);
        assert_int_equal(history_n_columns(g), 2);
        assert_int_equal(history_column_kind(g, (size_t) f), HISTORY_FREQ);
        for (size_t i = 0; i < 3; i++)
                assert_nan(history_get(g, i, (size_t) f));
        assert_near(history_get(g, 0, 1), 1536e6);
        history_free(g);
}

static void test_load_errors(void **state) {
        struct history *h = new_history(4);
        char path[512];

        path_in_tmp(path, sizeof path, "missing.bin");
        assert_int_equal(history_load(h, path), -ENOENT);
        assert_int_equal(history_load(h, tmpdir), -EISDIR);
        assert_int_equal(history_load(NULL, path), -EINVAL);
        path_in_tmp(path, sizeof path, "no-such-dir/history.bin");
        assert_int_equal(history_save(h, path), -ENOENT);
        assert_int_equal(history_save(h, ""), -EINVAL);
        history_free(h);
}

/* A FIFO at history.bin (or at its temp file) must not block the daemon in
 * open(): load refuses it, save replaces the temp file. alarm() turns a hang
 * into a failure. */
static void test_fifo_refused(void **state) {
        struct history *h = new_history(4);
        char path[512], tmp[600];

        path_in_tmp(path, sizeof path, "fifo.bin");
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        unlink(path);
        unlink(tmp);
        assert_int_equal(mkfifo(path, 0644), 0);
        assert_int_equal(mkfifo(tmp, 0644), 0);
        assert_int_equal(history_begin(h, 1000), 0);

        alarm(10);
        assert_int_equal(history_load(h, path), -EBADMSG);
        assert_int_equal(history_count(h), 1);
        assert_int_equal(history_save(h, path), 0);      /* the FIFO is replaced */
        alarm(0);
        assert_int_equal(history_load(h, path), 0);
        assert_int_equal(history_count(h), 1);
        unlink(path);
        history_free(h);
}

/* A column that only ever read missing is not added from a file. */
static void test_load_skips_empty_columns(void **state) {
        struct history *h = new_history(4), *g = new_history(4);
        char path[512];

        history_column(h, "a", HISTORY_TEMP);
        history_column(h, "never", HISTORY_TEMP);
        assert_int_equal(history_begin(h, 1), 0);
        history_set(h, 0, 20);
        path_in_tmp(path, sizeof path, "sparse.bin");
        assert_int_equal(history_save(h, path), 0);
        assert_int_equal(history_load(g, path), 0);
        assert_int_equal(history_n_columns(g), 1);
        assert_string_equal(history_column_id(g, 0), "a");
        history_free(g);
        history_free(h);
}

static int setup(void **state) {
        return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state) {
        char cmd[128];

        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_save_load_roundtrip),
                cmocka_unit_test(test_load_smaller_capacity),
                cmocka_unit_test(test_load_empty_ring),
                cmocka_unit_test(test_load_truncated_corrupt),
                cmocka_unit_test(test_blocks),
                cmocka_unit_test(test_open_block),
                cmocka_unit_test(test_column_added_between_blocks),
                cmocka_unit_test(test_load_handmade),
                cmocka_unit_test(test_load_handmade_rice),
                cmocka_unit_test(test_quantised_symbols),
                cmocka_unit_test(test_rice_noise),
                cmocka_unit_test(test_column_step),
                cmocka_unit_test(test_load_kinds_and_columns),
                cmocka_unit_test(test_load_errors),
                cmocka_unit_test(test_fifo_refused),
                cmocka_unit_test(test_load_skips_empty_columns),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
