/* test-forecast.c — the forecast of a rising curve: its plateau, when that is known, and when it crosses a level, on synthetic noisy, quantised curves. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "analysis.h"

#define SEEDS 40
#define N_MAX 2000

/* splitmix64 and Box-Muller: the same curves on every machine. */
static uint64_t rng_next(uint64_t *s) {
        uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

static double rng_gauss(uint64_t *s) {
        double u1 = ((double) (rng_next(s) >> 11) + 0.5) / 9007199254740992.0;
        double u2 = ((double) (rng_next(s) >> 11) + 0.5) / 9007199254740992.0;
        return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

/* T = base + rise (1 - e^{-t/tau}) at 1 s, noise of sd noise, readings in
 * steps of q (0: not quantised). */
struct curve {
        double base, rise, tau, noise, q;
};

static double curve_true(const struct curve *c, double t) {
        return c->base + c->rise * (1 - exp(-t / c->tau));
}

static void curve_make(const struct curve *c, uint64_t seed, double *t, double *y, size_t n) {
        uint64_t s = seed * 7919 + 1;

        for (size_t i = 0; i < n; i++) {
                t[i] = (double) i;
                y[i] = curve_true(c, t[i]) + c->noise * rng_gauss(&s);
                if (c->q > 0)
                        y[i] = c->q * round(y[i] / c->q);
        }
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return x < y ? -1 : x > y;
}

static double median(double *v, size_t n) {
        qsort(v, n, sizeof *v, cmp_double);
        return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Cut at 2 tau: the plateau within 1 C, eta_s (when the remaining rise is
 * below 0.5 C) within 25 % of the truth, in the median over the seeds. */
static void check_plateau_eta(const struct curve *c, double cut_s) {
        double *t = malloc(N_MAX * sizeof *t), *y = malloc(N_MAX * sizeof *y);
        double err_p[SEEDS], err_eta[SEEDS];
        double true_eta = c->tau * log(c->rise / ANALYSIS_FORECAST_TOLERANCE_C) - (cut_s - 1);
        size_t n = (size_t) cut_s;

        assert_non_null(t);
        assert_non_null(y);
        for (uint64_t seed = 0; seed < SEEDS; seed++) {
                struct analysis_forecast f;
                curve_make(c, seed, t, y, n);
                assert_int_equal(analysis_forecast(t, y, n, ANALYSIS_FORECAST_TOLERANCE_C, &f), 0);
                err_p[seed] = fabs(f.plateau_c - (c->base + c->rise));
                err_eta[seed] = fabs(f.eta_s - true_eta) / true_eta;
        }
        double mp = median(err_p, SEEDS), me = median(err_eta, SEEDS);
        printf("# rise %.0f tau %.0f noise %.2f q %.2f cut %.0f s: median |plateau error| %.2f C, "
               "median eta error %.0f %% of %.0f s\n", c->rise, c->tau, c->noise, c->q, cut_s, mp, 100 * me, true_eta);
        assert_true(mp <= 1.0);
        assert_true(me <= 0.25);
        free(t);
        free(y);
}

static void test_plateau_and_eta(void **state) {
        (void) state;
        check_plateau_eta(&(struct curve) { 40, 25, 60, 0.2, 0 }, 120);
        check_plateau_eta(&(struct curve) { 40, 25, 60, 0.2, 0.5 }, 120);
        check_plateau_eta(&(struct curve) { 40, 25, 60, 0.1, 1.0 }, 150);
        check_plateau_eta(&(struct curve) { 45, 20, 200, 0.2, 0.538 }, 400);
}

/* Cut at tau: the time until 60 C (80 % of the rise) within 25 %. */
static void test_eta_to_threshold(void **state) {
        struct curve c = { 40, 25, 60, 0.2, 0.5 };
        double t[N_MAX], y[N_MAX], err[SEEDS], level = 60;
        double cut = 60, truth = -c.tau * log(1 - (level - c.base) / c.rise) - (cut - 1);

        (void) state;
        for (uint64_t seed = 0; seed < SEEDS; seed++) {
                struct analysis_forecast f;
                curve_make(&c, seed, t, y, (size_t) cut);
                assert_int_equal(analysis_forecast(t, y, (size_t) cut, 0.5, &f), 0);
                double eta = analysis_forecast_eta_to(&f, level, 300);
                assert_true(isfinite(eta));
                err[seed] = fabs(eta - truth) / truth;
                /* above the plateau: never; within the horizon only */
                assert_true(isinf(analysis_forecast_eta_to(&f, 80, 3600)));
                assert_true(isinf(analysis_forecast_eta_to(&f, level, 5)));
                assert_true(analysis_forecast_eta_to(&f, 30, 300) == 0);
        }
        double me = median(err, SEEDS);
        printf("# time to %.0f C from a cut at %.0f s: median error %.0f %% of %.0f s\n", level, cut, 100 * me, truth);
        assert_true(me <= 0.25);
}

/* Without a bend there is no forecast: a straight line, a flat one, too few samples. */
static void test_no_forecast(void **state) {
        double t[100], y[100];
        struct analysis_forecast f;

        (void) state;
        for (int i = 0; i < 100; i++) {
                t[i] = i;
                y[i] = 40 + 0.1 * i;
        }
        assert_true(analysis_forecast(t, y, 100, 0.5, &f) < 0);
        assert_true(isnan(f.plateau_c) && isnan(f.eta_s));
        assert_true(isnan(analysis_forecast_eta_to(&f, 60, 300)));
        for (int i = 0; i < 100; i++)
                y[i] = 40;
        assert_true(analysis_forecast(t, y, 100, 0.5, &f) < 0);
        assert_int_equal(analysis_forecast(t, y, 5, 0.5, &f), -ENODATA);
        assert_int_equal(analysis_forecast(t, y, 100, 0, &f), -EINVAL);
}

/* At the plateau the answer is known now; a long series is averaged down. */
static void test_settled_and_long(void **state) {
        struct curve c = { 40, 20, 30, 0.1, 0 };
        double *t = malloc(N_MAX * sizeof *t), *y = malloc(N_MAX * sizeof *y);
        struct analysis_forecast f;

        (void) state;
        curve_make(&c, 3, t, y, N_MAX);
        assert_int_equal(analysis_forecast(t, y, N_MAX, 0.5, &f), 0);
        assert_true(f.eta_s == 0);
        assert_true(fabs(f.plateau_c - 60) < 0.2);
        assert_true(fabs(f.tau_s - 30) < 3);
        free(t);
        free(y);
}

/* The rise starts where the values last were near their lowest. */
static void test_start(void **state) {
        double y[] = { 41, 40, 40.2, 39.9, 40.1, 40, 42, 45, 47, 48, 49 };
        double fall[] = { 40, 45, 50, 52, 50, 48, 46, 47, 49, 51 };

        (void) state;
        assert_int_equal(analysis_forecast_start(y, 11, 0.5), 5);
        assert_int_equal(analysis_forecast_start(y, 0, 0.5), 0);
        /* after a fall: from its bottom */
        assert_int_equal(analysis_forecast_start(fall, 10, 0.5), 6);
        assert_int_equal(analysis_forecast_start(fall, 7, 0.5), 6);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_plateau_and_eta),
                cmocka_unit_test(test_eta_to_threshold),
                cmocka_unit_test(test_no_forecast),
                cmocka_unit_test(test_settled_and_long),
                cmocka_unit_test(test_start),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
