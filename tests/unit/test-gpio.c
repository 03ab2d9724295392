/* test-gpio.c — unit tests for gpio_spec_parse() and the errors of gpio_out_new() without a chip. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gpio.h"

struct spec_case {
        const char *text;
        int ret;                        /* expected return */
        const char *chip;               /* expected when ret == 0 */
        unsigned line;
};

static const struct spec_case spec_cases[] = {
        { "gpiochip0:17", 0, "gpiochip0", 17 },
        { "gpiochip12:0", 0, "gpiochip12", 0 },
        { "/dev/gpiochip0:3", 0, "/dev/gpiochip0", 3 },
        { "pinctrl-bcm2711:17", 0, "pinctrl-bcm2711", 17 },
        { "9030000.pl061:7", 0, "9030000.pl061", 7 },
        { "INT34C5:00:5", 0, "INT34C5:00", 5 },        /* a label with ':' in it: split at the last */
        { "gpiochip0:007", 0, "gpiochip0", 7 },
        { "gpiochip0:65535", 0, "gpiochip0", 65535 },
        { "gpiochip0:65536", -EINVAL, NULL, 0 },
        { "gpiochip0:99999999999999999999", -EINVAL, NULL, 0 },
        { "gpiochip0", -EINVAL, NULL, 0 },
        { "17", -EINVAL, NULL, 0 },
        { "", -EINVAL, NULL, 0 },
        { ":17", -EINVAL, NULL, 0 },
        { "gpiochip0:", -EINVAL, NULL, 0 },
        { "gpiochip0:-1", -EINVAL, NULL, 0 },
        { "gpiochip0:+1", -EINVAL, NULL, 0 },
        { "gpiochip0: 1", -EINVAL, NULL, 0 },
        { "gpiochip0:1 ", -EINVAL, NULL, 0 },
        { "gpiochip0:0x11", -EINVAL, NULL, 0 },
        { "gpiochip0:1.5", -EINVAL, NULL, 0 },
        { "gpio chip0:1", -EINVAL, NULL, 0 },
        { " gpiochip0:1", -EINVAL, NULL, 0 },
        { "gpiochip0\t:1", -EINVAL, NULL, 0 },
        { "gpiochip0:1\n", -EINVAL, NULL, 0 },
        { "a-chip-label-that-is-far-too-long-to-be-any-real-gpio-chip-label:1", -EINVAL, NULL, 0 },
};

static void test_spec_parse(void **state) {
        for (size_t i = 0; i < sizeof(spec_cases) / sizeof(spec_cases[0]); i++) {
                const struct spec_case *c = &spec_cases[i];
                struct gpio_spec spec = { .chip = "untouched", .line = 4242 };
                char err[256] = "";
                int r = gpio_spec_parse(c->text, &spec, err, sizeof(err));

                printf("\"%s\" -> %d %s\n", c->text, r, r == 0 ? spec.chip : err);
                assert_int_equal(r, c->ret);
                if (r == 0) {
                        assert_string_equal(spec.chip, c->chip);
                        assert_int_equal(spec.line, c->line);
                        assert_string_equal(err, "");
                } else {
                        /* a failed parse leaves the result alone and says why */
                        assert_string_equal(spec.chip, "untouched");
                        assert_int_equal(spec.line, 4242);
                        assert_true(strlen(err) > 0);
                }
        }
}

static void test_spec_parse_null_and_small_err(void **state) {
        struct gpio_spec spec;
        char err[8];

        assert_int_equal(gpio_spec_parse(NULL, &spec, NULL, 0), -EINVAL);
        /* a short buffer is cut, never overrun */
        assert_int_equal(gpio_spec_parse("nocolon", &spec, err, sizeof(err)), -EINVAL);
        assert_int_equal(strlen(err), sizeof(err) - 1);
}

/* gpio_out_new() on spec, expecting error r and err containing want. */
static void expect_open_error(const char *text, int r, const char *want) {
        struct gpio_spec spec;
        struct gpio_out *g = NULL;
        char err[256] = "";

        assert_int_equal(gpio_spec_parse(text, &spec, err, sizeof(err)), 0);
        assert_int_equal(gpio_out_new(&spec, "test", false, false, &g, err, sizeof(err)), r);
        printf("%s -> %s\n", text, err);
        assert_null(g);
        /* the message names the chip and the line as the user wrote them */
        assert_non_null(strstr(err, text));
        assert_non_null(strstr(err, want));
}

static void test_missing_chip_by_name(void **state) {
        expect_open_error("gpiochip999:17", -ENOENT, "no such GPIO chip");
}

static void test_missing_chip_by_path(void **state) {
        expect_open_error("/nonexistent/gpiochip0:3", -ENOENT, "no such GPIO chip");
}

static void test_missing_chip_by_label(void **state) {
        expect_open_error("no-such-gpio-label:3", -ENOENT, "no GPIO chip is labelled \"no-such-gpio-label\"");
}

static void test_not_a_chip(void **state) {
        /* a character device that is not a GPIO chip, and a regular file */
        expect_open_error("/dev/null:0", -ENODEV, "not a GPIO chip");
        expect_open_error("/proc/self/status:0", -ENODEV, "not a GPIO chip");
}

static void test_free_null(void **state) {
        gpio_out_free(NULL);
}

/* The build chose an API from the libgpiod it found; the library loaded at
 * run time must be that one (LD_LIBRARY_PATH for the 2.x build). */
static void test_library_version(void **state) {
        const char *want = getenv("GPIOD_API");
        const char *v = gpio_library_version();

        printf("libgpiod %s, built for the %s API\n", v, want ? want : "?");
        assert_non_null(v);
        if (want)
                assert_true(v[0] == want[0] && v[1] == '.');
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_spec_parse),
                cmocka_unit_test(test_spec_parse_null_and_small_err),
                cmocka_unit_test(test_missing_chip_by_name),
                cmocka_unit_test(test_missing_chip_by_path),
                cmocka_unit_test(test_missing_chip_by_label),
                cmocka_unit_test(test_not_a_chip),
                cmocka_unit_test(test_free_null),
                cmocka_unit_test(test_library_version),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
