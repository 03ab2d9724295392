/* test-plateau-interval.c — the plateau's [low, high] interval and until: plateau on noisy, quantised, drifting sums of exponentials. */
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
 * A heated body under constant load: baseline + rise (1 - sum_k share_k
 * e^{-t/tau_k}), two or three time constants (fast 5-20 s, slow 2-10 min,
 * a middle one between them for three), plus a slow ambient drift (a sine
 * of 0.1-0.2 C over 2 h), Gaussian noise of 0.05-0.3 C, read in steps of
 * 0.538 C (a Pi 3's sensor) on a lattice offset by 0.138 C. The truth is
 * where the curve is at the horizon (30 min, the phase's max: every time
 * constant matters within it) plus the drift at the cut; cuts go up to
 * the horizon, where the phase would end.
 */
#define SEEDS           100
#define HORIZON_S       1800.0
#define QUANTUM_C       0.538
#define MAX_N           2401
#define N_CUTS          8

struct curve {
        unsigned n_exp;
        double base, rise, tau[3], share[3], noise, drift, drift_phase;
};

static void curve_make(struct curve *c, unsigned n_exp, uint64_t seed) {
        uint64_t s = seed * 7919 + n_exp;
        double slow = 0.3 + 0.5 * corpus_uniform(&s);

        *c = (struct curve) { .n_exp = n_exp };
        c->base = 35 + 10 * corpus_uniform(&s);
        c->rise = 10 + 25 * corpus_uniform(&s);
        c->noise = 0.05 + 0.25 * corpus_uniform(&s);
        c->drift = 0.1 + 0.1 * corpus_uniform(&s);
        c->drift_phase = 2 * M_PI * corpus_uniform(&s);
        c->tau[0] = corpus_loguniform(&s, 5, 20);
        c->tau[n_exp - 1] = corpus_loguniform(&s, 300, 600);
        c->share[n_exp - 1] = slow;
        if (n_exp == 3) {
                c->tau[1] = corpus_loguniform(&s, 3 * c->tau[0], c->tau[2] / 3);
                c->share[0] = (1 - slow) * (0.2 + 0.6 * corpus_uniform(&s));
                c->share[1] = 1 - slow - c->share[0];
        } else
                c->share[0] = 1 - slow;
}

static double curve_drift(const struct curve *c, double t) {
        return c->drift * sin(2 * M_PI * t / 7200 + c->drift_phase);
}

static double curve_at(const struct curve *c, double t) {
        double v = 1;

        for (unsigned k = 0; k < c->n_exp; k++)
                v -= c->share[k] * exp(-t / c->tau[k]);
        return c->base + c->rise * v + curve_drift(c, t);
}

static void curve_samples(const struct curve *c, uint64_t seed, double *t, double *y, size_t n) {
        uint64_t s = seed * 104729 + 5;

        for (size_t i = 0; i < n; i++) {
                t[i] = (double) i;
                y[i] = QUANTUM_C * round((curve_at(c, t[i]) + c->noise * corpus_gauss(&s) - 0.138) / QUANTUM_C) + 0.138;
        }
}

static int compare_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

static double median(double *v, size_t n) {
        qsort(v, n, sizeof(double), compare_double);
        return n == 0 ? NAN : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Cuts: 1, 2 and 5 fast time constants, then 0.5 to 4 slow ones. */
static double cut_at(const struct curve *c, size_t k) {
        static const double fast[] = { 1, 2, 5 }, slow[] = { 0.5, 1, 2, 3, 4 };
        return k < 3 ? fast[k] * c->tau[0] : slow[k - 3] * c->tau[c->n_exp - 1];
}

static double t_buf[MAX_N], y_buf[MAX_N];

static void check_class(unsigned n_exp) {
        static double width_late[SEEDS * 2], width_cut[N_CUTS][SEEDS];
        size_t fits = 0, covered = 0, n_late = 0, cov_cut[N_CUTS] = {}, n_cut[N_CUTS] = {};

        for (unsigned seed = 0; seed < SEEDS; seed++) {
                struct curve c;
                curve_make(&c, n_exp, seed);
                curve_samples(&c, seed, t_buf, y_buf, MAX_N);
                for (size_t k = 0; k < N_CUTS; k++) {
                        struct analysis_plateau p;
                        size_t m = (size_t) cut_at(&c, k) + 1;
                        if (m < 10)
                                m = 10;
                        if ((double) m > HORIZON_S)
                                continue;       /* the phase would have ended at its max */
                        assert_true(m <= MAX_N);
                        assert_int_equal(analysis_check_plateau_horizon(t_buf, y_buf, m, 300, HORIZON_S, 0.5, &p), 0);
                        double truth = curve_at(&c, HORIZON_S) - curve_drift(&c, HORIZON_S) +
                                       curve_drift(&c, t_buf[m - 1]);
                        bool ok = !(truth < p.low_c) && !(truth > p.high_c);
                        assert_true(p.low_c <= p.plateau_c && p.plateau_c <= p.high_c);
                        fits++;
                        covered += ok;
                        cov_cut[k] += ok;
                        width_cut[k][n_cut[k]++] = p.high_c - p.low_c;
                        if (k >= 6)
                                width_late[n_late++] = p.high_c - p.low_c;
                        if (p.reached)
                                assert_true(fabs(p.plateau_c - truth) <= 1.0);
                }
        }
        printf("%u exponentials + drift, 0.538 C steps, %u seeds, horizon %.0f s: [low, high] covers the plateau in "
               "%zu/%zu cuts (%.1f %%)\n", n_exp, SEEDS, HORIZON_S, covered, fits, 100.0 * (double) covered / (double) fits);
        printf("| cut | 1 tau_fast | 2 | 5 | 0.5 tau_slow | 1 | 2 | 3 | 4 |\n|---|---|---|---|---|---|---|---|---|\n| coverage %% |");
        for (size_t k = 0; k < N_CUTS; k++)
                printf(" %.0f |", 100.0 * (double) cov_cut[k] / (double) n_cut[k]);
        printf("\n| median width C |");
        for (size_t k = 0; k < N_CUTS; k++)
                printf(" %.2f |", median(width_cut[k], n_cut[k]));
        double w = median(width_late, n_late);
        printf("\nmedian width (high - low) from 3 slow time constants on: %.2f C\n", w);
        assert_true(covered * 10 >= fits * 9);
        assert_true(w <= 1.0);
}

static void test_interval_two(void **state) {
        check_class(2);
}

static void test_interval_three(void **state) {
        check_class(3);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_interval_two),
                cmocka_unit_test(test_interval_three),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
