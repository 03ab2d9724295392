/* test-history.h — what the test-history-* programs share: a new ring, comparisons of values read back, whole files. */
#pragma once

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "history.h"

__attribute__((unused))
static struct history *new_history(size_t capacity) {
        struct history *h = NULL;

        assert_int_equal(history_new(capacity, &h), 0);
        assert_non_null(h);
        return h;
}

__attribute__((unused))
static void assert_nan(double x) {
        if (!isnan(x))
                fail_msg("expected NaN, got %g", x);
}

__attribute__((unused))
static void assert_near(double got, double want) {
        if (!(fabs(got - want) <= 1e-9 * (fabs(want) > 1 ? fabs(want) : 1)))
                fail_msg("got %.10g, want %.10g", got, want);
}

/* The whole file at path, malloc'ed (one byte more than its size). */
__attribute__((unused))
static uint8_t *read_file(const char *path, size_t *ret_size) {
        FILE *f = fopen(path, "rb");
        uint8_t *data;
        long n;

        assert_non_null(f);
        fseek(f, 0, SEEK_END);
        n = ftell(f);
        rewind(f);
        data = malloc((size_t) n + 1);
        assert_non_null(data);
        assert_int_equal(fread(data, 1, (size_t) n, f), (size_t) n);
        fclose(f);
        *ret_size = (size_t) n;
        return data;
}

__attribute__((unused))
static void write_file(const char *path, const uint8_t *data, size_t size) {
        FILE *f = fopen(path, "wb");

        assert_non_null(f);
        assert_int_equal(fwrite(data, 1, size, f), size);
        fclose(f);
}
