/* test-text.c — unit tests for the UTF-8 sanitizer and the terminal escaper. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "text.h"
#include "util.h"

/* The one rounding rule of every display: half away from zero, never "-0". */
static void test_fixed_text(void **state) {
        char buf[32];

        (void) state;
        assert_string_equal(util_fixed_text(12.5, 0, buf, sizeof buf), "13");     /* printf's "%.0f" says 12 */
        assert_string_equal(util_fixed_text(-12.5, 0, buf, sizeof buf), "-13");
        assert_string_equal(util_fixed_text(0.25, 1, buf, sizeof buf), "0.3");
        assert_string_equal(util_fixed_text(0.15, 1, buf, sizeof buf), "0.2");     /* as the text 0.15 reads */
        assert_string_equal(util_fixed_text(-0.04, 1, buf, sizeof buf), "0.0");
        assert_string_equal(util_fixed_text(4.2, 2, buf, sizeof buf), "4.20");
        assert_string_equal(util_fixed_text(1234.5, 0, buf, sizeof buf), "1235");
        assert_string_equal(util_fixed_text(NAN, 1, buf, sizeof buf), "0.0");
}

static void test_utf8_char_len(void **state) {
        assert_int_equal(text_utf8_char_len("a", 1), 1);
        assert_int_equal(text_utf8_char_len("\xc3\xa9", 2), 2);
        assert_int_equal(text_utf8_char_len("\xe2\x82\xac", 3), 3);
        assert_int_equal(text_utf8_char_len("\xf0\x9f\x94\xa5", 4), 4);
        assert_int_equal(text_utf8_char_len("\xc3", 1), 0);             /* cut short */
        assert_int_equal(text_utf8_char_len("\x80", 1), 0);             /* continuation */
        assert_int_equal(text_utf8_char_len("\xc0\xaf", 2), 0);         /* overlong */
        assert_int_equal(text_utf8_char_len("\xe0\x80\xaf", 3), 0);     /* overlong */
        assert_int_equal(text_utf8_char_len("\xed\xa0\x80", 3), 0);     /* surrogate */
        assert_int_equal(text_utf8_char_len("\xf4\x90\x80\x80", 4), 0); /* > U+10FFFF */
        assert_int_equal(text_utf8_char_len("\xff", 1), 0);
}

static void test_utf8_sanitize(void **state) {
        char buf[64];

        assert_string_equal(text_utf8_sanitize("caf\xc3\xa9", buf, sizeof buf), "caf\xc3\xa9");
        assert_string_equal(text_utf8_sanitize("/api/\xff\xfe", buf, sizeof buf),
                            "/api/\xef\xbf\xbd\xef\xbf\xbd");
        assert_string_equal(text_utf8_sanitize("a\xc3", buf, sizeof buf), "a\xef\xbf\xbd");
        /* cut at a character boundary, never inside a sequence */
        assert_string_equal(text_utf8_sanitize("ab\xe2\x82\xac", buf, 5), "ab");
        assert_string_equal(text_utf8_sanitize("ab\xe2\x82\xac", buf, 6), "ab\xe2\x82\xac");
}

static void test_escape_terminal(void **state) {
        char buf[256];

        assert_string_equal(text_escape_terminal("plain", 5, 100, buf, sizeof buf), "plain");
        assert_string_equal(text_escape_terminal("a\033[2Jb", 6, 100, buf, sizeof buf), "a\\e[2Jb");
        assert_string_equal(text_escape_terminal("l1\r\nl2\t", 7, 100, buf, sizeof buf), "l1\\r\\nl2\\t");
        assert_string_equal(text_escape_terminal("nul\0x", 5, 100, buf, sizeof buf), "nul\\x00x");
        assert_string_equal(text_escape_terminal("\x7f\xff", 2, 100, buf, sizeof buf), "\\x7f\\xff");
        assert_string_equal(text_escape_terminal("c1\xc2\x9b", 4, 100, buf, sizeof buf), "c1\\u009b");
        assert_string_equal(text_escape_terminal("caf\xc3\xa9", 5, 100, buf, sizeof buf), "caf\xc3\xa9");
        assert_string_equal(text_escape_terminal("abcdef", 6, 3, buf, sizeof buf), "abc...");
        /* a small buffer cuts between escapes, never inside one */
        assert_string_equal(text_escape_terminal("\033\033\033", 3, 100, buf, 9), "\\e\\e...");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fixed_text),
                cmocka_unit_test(test_utf8_char_len),
                cmocka_unit_test(test_utf8_sanitize),
                cmocka_unit_test(test_escape_terminal),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
