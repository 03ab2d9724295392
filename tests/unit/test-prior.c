/* test-prior.c — the time constant learned from earlier runs: its median and spread, and the plateau interval it narrows. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "analysis.h"
#include "analysis-corpus.h"

/*
 * A heated body under constant load: baseline + rise (1 - s e^{-t/tau_f}
 * - (1 - s) e^{-t/tau}), the slow tau 60-240 s, a fast part of up to a
 * fifth of the rise 5-15 times faster, Gaussian noise of 0.05-0.3 C, read
 * at 1 Hz in steps of 0.538 C (a Pi 3's sensor) on a lattice offset by
 * 0.138 C. The truth is where the curve is at the horizon (an hour, many
 * time constants). The prior comes from three earlier runs whose time
 * constants scatter by 5 % around the truth; a wrong one is off by 3x.
 */
#define SEEDS           100
#define HORIZON_S       3600.0
#define QUANTUM_C       0.538
#define MAX_N           2048            /* 8 of the slowest time constants */
#define N_CUTS          4

static const double cuts_tau[N_CUTS] = { 1.0, 1.5, 2.0, 2.5 };

struct curve {
        double base, rise, tau, tau_fast, share_fast, noise;
};

static void curve_make(struct curve *c, uint64_t *s) {
        c->base = 35 + 10 * corpus_uniform(s);
        c->rise = 10 + 20 * corpus_uniform(s);
        c->tau = 60 * exp(corpus_uniform(s) * log(4.0));
        c->tau_fast = c->tau / (5 + 10 * corpus_uniform(s));
        c->share_fast = 0.2 * corpus_uniform(s);
        c->noise = 0.05 + 0.25 * corpus_uniform(s);
}

static double curve_at(const struct curve *c, double t) {
        return c->base + c->rise * (1 - c->share_fast * exp(-t / c->tau_fast) - (1 - c->share_fast) * exp(-t / c->tau));
}

/* n samples at 1 Hz from t = 0, noisy and quantised. */
static size_t curve_sample(const struct curve *c, uint64_t *s, double *t, double *y, double span) {
        size_t n = 0;

        for (double x = 0; x <= span && n < MAX_N; x += 1.0, n++) {
                double v = curve_at(c, x) + c->noise * corpus_gauss(s);
                t[n] = x;
                y[n] = 0.138 + QUANTUM_C * round((v - 0.138) / QUANTUM_C);
        }
        return n;
}

static void prior_make(double tau, uint64_t *s, struct analysis_prior *ret) {
        double taus[3];

        for (int k = 0; k < 3; k++)
                taus[k] = tau * exp(0.05 * corpus_gauss(s));
        assert_int_equal(analysis_prior_from_taus(taus, 3, 3, ret), 0);
}

static int double_cmp(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return (x > y) - (x < y);
}

static double median(double *v, size_t n) {
        qsort(v, n, sizeof *v, double_cmp);
        return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static bool covers(const struct analysis_fit *f, double truth) {
        return f->low_c <= truth && truth <= f->high_c;
}

/* Widths and coverage with no prior, the right one, and one off by 3x
 * (either way), over the seeds at each cut. */
static void test_prior_interval(void **state) {
        static double t[MAX_N], y[MAX_N], w_free[SEEDS], w_prior[SEEDS];
        (void) state;

        for (int c = 0; c < N_CUTS; c++) {
                size_t cov_free = 0, cov_prior = 0, used = 0, cov_wrong = 0, dropped = 0, right_dropped = 0, unused = 0, nw = 0;
                for (uint64_t seed = 0; seed < SEEDS; seed++) {
                        uint64_t s = seed * 104729 + 17;
                        struct analysis_prior right, wrong;
                        struct analysis_fit f0, f1, f2;
                        struct curve cv;

                        curve_make(&cv, &s);
                        size_t n = curve_sample(&cv, &s, t, y, cuts_tau[c] * cv.tau);
                        double truth = curve_at(&cv, HORIZON_S);
                        prior_make(cv.tau, &s, &right);
                        prior_make(seed % 2 ? cv.tau * 3 : cv.tau / 3, &s, &wrong);
                        assert_int_equal(analysis_fit_plateau_prior(t, y, n, HORIZON_S, NULL, &f0), 0);
                        assert_int_equal(analysis_fit_plateau_prior(t, y, n, HORIZON_S, &right, &f1), 0);
                        assert_int_equal(analysis_fit_plateau_prior(t, y, n, HORIZON_S, &wrong, &f2), 0);
                        assert_int_equal(f0.prior_use, ANALYSIS_PRIOR_NONE);
                        cov_free += covers(&f0, truth);
                        cov_prior += covers(&f1, truth);
                        cov_wrong += covers(&f2, truth);
                        used += f1.prior_use == ANALYSIS_PRIOR_USED;
                        right_dropped += f1.prior_use == ANALYSIS_PRIOR_CONTRADICTED;
                        dropped += f2.prior_use == ANALYSIS_PRIOR_CONTRADICTED;
                        unused += f2.prior_use != ANALYSIS_PRIOR_USED;
                        w_free[nw] = f0.high_c - f0.low_c;
                        w_prior[nw++] = f1.high_c - f1.low_c;
                }
                double m0 = median(w_free, nw), m1 = median(w_prior, nw);
                printf("at %.1f tau: without prior %zu%% cover, median width %.2f C; with the right prior %zu%% "
                       "cover, median width %.2f C, used in %zu%% (dropped in %zu%%); off by 3x: dropped as contradicted in %zu%%, not used in %zu%%, %zu%% cover\n",
                       cuts_tau[c], cov_free, m0, cov_prior, m1, used, right_dropped, dropped, unused, cov_wrong);
                assert_true(cov_prior >= 90);
                assert_true(cov_wrong >= 90);
                assert_true(m1 < 0.6 * m0);
                assert_true(used >= 70);
                assert_true(unused >= 80);
        }
}

/* With the data past ANALYSIS_PRIOR_SPANS time constants the prior is not needed. */
static void test_prior_not_needed(void **state) {
        static double t[MAX_N], y[MAX_N];
        uint64_t s = 5;
        struct analysis_prior p;
        struct analysis_fit f;
        struct curve cv;
        (void) state;

        curve_make(&cv, &s);
        size_t n = curve_sample(&cv, &s, t, y, (ANALYSIS_PRIOR_SPANS + 0.5) * cv.tau);
        prior_make(cv.tau, &s, &p);
        assert_int_equal(analysis_fit_plateau_prior(t, y, n, HORIZON_S, &p, &f), 0);
        assert_int_equal(f.prior_use, ANALYSIS_PRIOR_NOT_NEEDED);
}

static void test_prior_from_taus(void **state) {
        const double taus[] = { 100, NAN, 110, -1, 90, 400 };
        struct analysis_prior p;
        (void) state;

        assert_int_equal(analysis_prior_from_taus(taus, 6, 3, &p), 0);
        assert_float_equal(p.tau_s, sqrt(100.0 * 110), 1e-9);        /* the median of ln 90, ln 100, ln 110, ln 400 */
        assert_true(p.spread >= ANALYSIS_PRIOR_SPREAD_MIN);
        assert_float_equal(p.low_s, p.tau_s * exp(-ANALYSIS_PRIOR_RANGE * p.spread), 1e-9);
        assert_float_equal(p.high_s, p.tau_s * exp(ANALYSIS_PRIOR_RANGE * p.spread), 1e-9);
        assert_int_equal(p.runs, 3);
        /* agreeing runs: the floor; a single run: wider */
        assert_int_equal(analysis_prior_from_taus(taus, 1, 2, &p), 0);
        assert_float_equal(p.spread, ANALYSIS_PRIOR_SPREAD_MIN, 1e-12);
        assert_int_equal(analysis_prior_from_taus(taus, 1, 1, &p), 0);
        assert_float_equal(p.spread, ANALYSIS_PRIOR_SPREAD_ONE, 1e-12);
        assert_int_equal(analysis_prior_from_taus(taus + 1, 1, 1, &p), -ENODATA);
        assert_true(isnan(p.tau_s));
        assert_int_equal(analysis_prior_from_taus(NULL, 0, 0, &p), -ENODATA);
        assert_int_equal(analysis_prior_from_taus(NULL, 1, 0, &p), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_prior_from_taus),
                cmocka_unit_test(test_prior_not_needed),
                cmocka_unit_test(test_prior_interval),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
