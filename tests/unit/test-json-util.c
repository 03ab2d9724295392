/* test-json-util.c — unit tests for the JSON text writer: the same bytes json-c would print; run metrics read back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "json-metrics.h"
#include "json-util.h"

static const double values[] = {
        43.1, 43.0, 0.0, -0.001, -12.345, 0.5, 1500000000.0, 0.12345, NAN, INFINITY, 1e300, -2.5e-7,
};

static void test_number_text(void **state) {
        char buf[48];

        (void) state;
        assert_int_equal(json_number_text(43.1, 2, buf, sizeof buf), 4);
        assert_string_equal(buf, "43.1");
        json_number_text(43.0, 2, buf, sizeof buf);
        assert_string_equal(buf, "43.0");
        json_number_text(-0.001, 2, buf, sizeof buf);
        assert_string_equal(buf, "0.0");
        json_number_text(1500000000.0, 0, buf, sizeof buf);
        assert_string_equal(buf, "1500000000");
        json_number_text(NAN, 2, buf, sizeof buf);
        assert_string_equal(buf, "null");
        json_number_text(1e300, 2, buf, sizeof buf);
        assert_string_equal(buf, "1.0000000000000001e+300");
}

/* The text of v to `decimals`, the slow way: the number of units llround()
 * gives, printed by printf, the point put in, trailing zeros dropped. */
static void expected_text(double v, int decimals, char *buf, size_t size) {
        static const long long scale[] = { 1, 10, 100, 1000, 10000, 100000, 1000000 };
        long long x = llround(v * (double) scale[decimals]);
        unsigned long long a = x < 0 ? 0ULL - (unsigned long long) x : (unsigned long long) x;
        char frac[16];
        int keep = decimals;

        snprintf(frac, sizeof frac, "%0*llu", decimals, a % (unsigned long long) scale[decimals]);
        while (keep > 1 && frac[keep - 1] == '0')
                keep--;
        if (decimals == 0)
                snprintf(buf, size, "%s%llu", x < 0 ? "-" : "", a);
        else
                snprintf(buf, size, "%s%llu.%.*s", x < 0 ? "-" : "", a / (unsigned long long) scale[decimals], keep,
                         frac);
}

/* Any value to any number of decimals, the same text both ways, written
 * alone or in place by the writer; ties and tiny values included. */
static void test_number_text_matches_printf(void **state) {
        static const double edges[] = { 0.0, -0.0, 0.5, -0.5, 0.049999, 0.05, 0.125, 2.675, -2.675, 1e-7, -1e-7,
                                        99.995, 9.9999995, 8999999999999999.0, 899999999999.9999, 1234567.8901234 };
        struct json_writer w = { 0 };
        uint32_t seed = 7;
        char got[48], want[48];

        (void) state;
        for (size_t i = 0; i < 200000 + sizeof edges / sizeof edges[0]; i++) {
                double v;
                int decimals = (int) (i % 7);

                if (i < sizeof edges / sizeof edges[0]) {
                        v = edges[i];
                } else {
                        seed = seed * 1664525u + 1013904223u;
                        v = ((double) (seed >> 8) / 16777216.0 - 0.5) * 2e6;
                        seed = seed * 1664525u + 1013904223u;
                        v /= pow(10.0, (double) (seed >> 28));          /* 1e6 down to 1e-9 */
                }
                if (!(fabs(v) * pow(10.0, decimals) < 9e15))
                        continue;
                expected_text(v, decimals, want, sizeof want);
                json_number_text(v, decimals, got, sizeof got);
                assert_string_equal(got, want);
                w.len = 0;
                json_writer_lit(&w, "[");
                json_writer_number(&w, v, decimals);
                assert_int_equal(w.len, 1 + strlen(want));
                assert_memory_equal(w.buf + 1, want, strlen(want));
        }
        free(w.buf);
}

/* A document written piece by piece equals json-c's print of the same tree:
 * numbers (null for NaN), a string json-c escapes, integers, nesting. */
static void test_writer_equals_json_c(void **state) {
        static const char *const ids[] = { "hwmon:nvme/temp1", "a \"quoted\"\tid\\", "caf\xc3\xa9" };
        json_object *root = json_object_new_object(), *list = json_object_new_array();
        struct json_writer w = { 0 };
        const char *expect;

        (void) state;
        json_writer_lit(&w, "{\"t\":");
        json_writer_int(&w, INT64_MIN);
        json_object_object_add(root, "t", json_object_new_int64(INT64_MIN));
        json_writer_lit(&w, ",\"list\":[");
        for (size_t i = 0; i < 3; i++)
                for (int dec = 0; dec <= 4; dec++)
                        for (size_t k = 0; k < sizeof values / sizeof values[0]; k++) {
                                if (i || dec || k)
                                        json_writer_lit(&w, ",");
                                json_writer_number(&w, values[k], dec);
                                json_object_array_add(list, json_new_number(values[k], dec));
                        }
        json_object_object_add(root, "list", list);
        json_writer_lit(&w, "]");
        for (size_t i = 0; i < 3; i++) {
                char key[8] = { 'i', 'd', (char) ('0' + i), 0 };

                json_writer_lit(&w, ",");
                json_writer_string(&w, key);
                json_writer_lit(&w, ":");
                json_writer_string(&w, ids[i]);
                json_object_object_add(root, key, json_object_new_string(ids[i]));
        }
        json_writer_lit(&w, "}");
        expect = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
        assert_int_equal(w.error, 0);
        assert_int_equal(w.len, strlen(expect));
        assert_memory_equal(w.buf, expect, w.len);
        json_object_put(root);
        free(w.buf);
}

/* Past its first 4 KiB the buffer grows and keeps every byte. */
static void test_writer_grows(void **state) {
        struct json_writer w = { 0 };
        char expect[16];

        (void) state;
        for (int i = 0; i < 100000; i++) {
                json_writer_int(&w, i);
                json_writer_lit(&w, ",");
        }
        assert_int_equal(w.error, 0);
        assert_true(w.cap >= w.len && w.len > 500000);
        assert_memory_equal(w.buf, "0,1,2,", 6);
        snprintf(expect, sizeof expect, "%d,", 99999);
        assert_memory_equal(w.buf + w.len - strlen(expect), expect, strlen(expect));
        free(w.buf);
}

/* A run.json written before the plateau's interval was kept reads with
 * the interval unknown; one written now reads back whole. */
static void test_metrics_old_and_new(void **state) {
        json_object *old = json_tokener_parse("{\"plateau_c\": 61.5, \"plateau_ci95_c\": 0.8, \"fit_model\": \"exp1\"}");
        struct run_metrics m, back;
        char unit[32];

        assert_non_null(old);
        json_run_metrics_parse(old, &m, unit, sizeof unit);
        assert_true(m.plateau_c == 61.5 && m.plateau_ci95_c == 0.8);
        assert_true(isnan(m.plateau_low_c) && isnan(m.plateau_high_c));
        json_object_put(old);

        m.plateau_low_c = 60.9;
        m.plateau_high_c = 62.3;
        json_object *o = json_run_metrics(&m, NULL);
        json_run_metrics_parse(o, &back, unit, sizeof unit);
        assert_true(back.plateau_low_c == 60.9 && back.plateau_high_c == 62.3 && back.plateau_c == 61.5);
        json_object_put(o);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_number_text),
                cmocka_unit_test(test_number_text_matches_printf),
                cmocka_unit_test(test_writer_equals_json_c),
                cmocka_unit_test(test_writer_grows),
                cmocka_unit_test(test_metrics_old_and_new),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
