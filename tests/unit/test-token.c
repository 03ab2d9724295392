/* test-token.c — unit tests for token_parse(), token_read_file() and token_check_authorization(). */
#include <errno.h>
#include <fcntl.h>
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

#include "token.h"

static char tmpdir[64];

static int setup(void **state) {
        snprintf(tmpdir, sizeof tmpdir, "/tmp/test-token.XXXXXX");
        return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state) {
        char cmd[128];

        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        return system(cmd) == 0 ? 0 : -1;
}

static const char *write_file(const char *name, const char *data, size_t len) {
        static char path[128];
        FILE *f;

        snprintf(path, sizeof path, "%s/%s", tmpdir, name);
        f = fopen(path, "we");
        assert_non_null(f);
        assert_int_equal(fwrite(data, 1, len, f), len);
        assert_int_equal(fclose(f), 0);
        return path;
}

static void test_read_strips_trailing_whitespace(void **state) {
        char buf[TOKEN_BUF_SIZE];

        assert_int_equal(token_read_file(write_file("a", "s3cret\n", 7), buf, sizeof buf), 0);
        assert_string_equal(buf, "s3cret");
        assert_int_equal(token_read_file(write_file("b", "s3cret \t\r\n\n", 11), buf, sizeof buf), 0);
        assert_string_equal(buf, "s3cret");
        assert_int_equal(token_read_file(write_file("c", "s3cret", 6), buf, sizeof buf), 0);
        assert_string_equal(buf, "s3cret");
}

static void test_read_refuses_empty(void **state) {
        char buf[TOKEN_BUF_SIZE];

        assert_int_equal(token_read_file(write_file("e", "", 0), buf, sizeof buf), -ENODATA);
        assert_int_equal(token_read_file(write_file("f", " \n\n", 3), buf, sizeof buf), -ENODATA);
        assert_string_equal(buf, "");
}

static void test_read_refuses_long(void **state) {
        char data[TOKEN_MAX + 2], buf[TOKEN_BUF_SIZE];

        memset(data, 'x', sizeof data);
        /* exactly TOKEN_MAX bytes, with a newline: accepted whole */
        data[TOKEN_MAX] = '\n';
        assert_int_equal(token_read_file(write_file("g", data, TOKEN_MAX + 1), buf, sizeof buf), 0);
        assert_int_equal(strlen(buf), TOKEN_MAX);
        /* one byte more: refused, not truncated */
        data[TOKEN_MAX] = 'x';
        assert_int_equal(token_read_file(write_file("h", data, TOKEN_MAX + 1), buf, sizeof buf), -EFBIG);
        assert_string_equal(buf, "");
        assert_non_null(strstr(token_strerror(-EFBIG), "255"));

        /* a file far larger than any token */
        static char big[3 * 4096];
        memset(big, 'y', sizeof big);
        assert_int_equal(token_read_file(write_file("i", big, sizeof big), buf, sizeof buf), -EFBIG);
}

static void test_read_refuses_odd_bytes(void **state) {
        char buf[TOKEN_BUF_SIZE];

        assert_int_equal(token_read_file(write_file("j", "two words\n", 10), buf, sizeof buf), -EINVAL);
        assert_int_equal(token_read_file(write_file("k", "nul\0byte", 8), buf, sizeof buf), -EINVAL);
        assert_int_equal(token_read_file(write_file("l", "esc\033[1m", 7), buf, sizeof buf), -EINVAL);
        assert_int_equal(token_read_file(write_file("m", "caf\xc3\xa9", 5), buf, sizeof buf), -EINVAL);
        assert_int_equal(token_read_file(write_file("n", "line1\nline2\n", 12), buf, sizeof buf), -EINVAL);
}

static void test_read_refuses_fifo_and_missing(void **state) {
        char path[128], buf[TOKEN_BUF_SIZE];

        snprintf(path, sizeof path, "%s/fifo", tmpdir);
        assert_int_equal(mkfifo(path, 0600), 0);
        /* must return at once (O_NONBLOCK), not wait for a writer */
        assert_int_equal(token_read_file(path, buf, sizeof buf), -EINVAL);
        assert_int_equal(token_read_file(tmpdir, buf, sizeof buf), -EINVAL);
        snprintf(path, sizeof path, "%s/missing", tmpdir);
        assert_int_equal(token_read_file(path, buf, sizeof buf), -ENOENT);
}

static void test_parse_small_buffer(void **state) {
        char buf[4];

        assert_int_equal(token_parse("abcd", 4, buf, sizeof buf), -ENOBUFS);
        assert_int_equal(token_parse("abc\n", 4, buf, sizeof buf), 0);
        assert_string_equal(buf, "abc");
}

struct auth_case {
        const char *header;
        bool ok;
};

static void test_check_authorization(void **state) {
        static const struct auth_case cases[] = {
                { "Bearer s3cret", true },
                { "bearer s3cret", true },
                { "BEARER s3cret", true },
                { "BeArEr s3cret", true },
                { "Bearer   s3cret", true },
                { "Bearer s3cret  ", true },
                { "Bearer s3cret\t", true },
                { "Bearer s3cre", false },
                { "Bearer s3cret1", false },
                { "Bearer S3CRET", false },
                { "Bearer s3cret x", false },
                { "Bearers3cret", false },
                { "Bearer\ts3cret", false },
                { "Bearer", false },
                { "Bearer ", false },
                { "Basic s3cret", false },
                { " Bearer s3cret", false },
                { "Bear s3cret", false },
                { "s3cret", false },
                { "", false },
                { NULL, false },
        };

        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                if (token_check_authorization(cases[i].header, "s3cret") != cases[i].ok)
                        fail_msg("\"%s\": expected %s", cases[i].header ? cases[i].header : "(null)",
                                 cases[i].ok ? "accepted" : "refused");
        }
        assert_false(token_check_authorization("Bearer ", ""));
        assert_false(token_check_authorization("Bearer x", ""));
        assert_false(token_check_authorization("Bearer x", NULL));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_read_strips_trailing_whitespace),
                cmocka_unit_test(test_read_refuses_empty),
                cmocka_unit_test(test_read_refuses_long),
                cmocka_unit_test(test_read_refuses_odd_bytes),
                cmocka_unit_test(test_read_refuses_fifo_and_missing),
                cmocka_unit_test(test_parse_small_buffer),
                cmocka_unit_test(test_check_authorization),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
