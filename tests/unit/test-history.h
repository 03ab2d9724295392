/* test-history.h — what the test-history-* programs share: a new ring, comparisons of values read back. */
#pragma once

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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
