/* test-analysis.c — curve fits recover known parameters from synthetic noisy, quantised curves; stop rules; run metrics. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "analysis.h"
#include "analysis-corpus.h"

#define MAX_N 54000

/* Deterministic PRNG (splitmix64) and Gaussian noise (Box-Muller). */
struct rng {
        uint64_t s;
};

static uint64_t rng_next(struct rng *r) {
        uint64_t z = (r->s += UINT64_C(0x9e3779b97f4a7c15));
        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

static double rng_uniform(struct rng *r) {
        return ((double) (rng_next(r) >> 11) + 0.5) / 9007199254740992.0;
}

static double rng_gauss(struct rng *r) {
        double u1 = rng_uniform(r), u2 = rng_uniform(r);
        return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

/* A synthetic curve T(t) = T_inf - a1 e^{-t/tau1} - a2 e^{-t/tau2} at 1 s
 * sampling, with Gaussian noise of sd `noise` and optionally rounded to
 * whole degrees (as some sensors report). a2 = 0 gives a single exponential. */
struct curve {
        double tinf, a1, tau1, a2, tau2, noise;
        bool quantise;
};

static double curve_true(const struct curve *c, double t) {
        double v = c->tinf - c->a1 * exp(-t / c->tau1);
        if (c->a2 != 0)
                v -= c->a2 * exp(-t / c->tau2);
        return v;
}

static void curve_make(const struct curve *c, uint64_t seed, double *t, double *y, size_t n) {
        struct rng r = { seed * 7919 + 1 };

        for (size_t i = 0; i < n; i++) {
                t[i] = (double) i;
                y[i] = curve_true(c, t[i]) + c->noise * rng_gauss(&r);
                if (c->quantise)
                        y[i] = round(y[i]);
        }
}

static double t_buf[MAX_N], y_buf[MAX_N];

static int compare_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

/* Percentile of |values| (sorts in place), nearest rank. */
static double percentile_abs(double *v, size_t n, double p) {
        for (size_t i = 0; i < n; i++)
                v[i] = fabs(v[i]);
        qsort(v, n, sizeof(double), compare_double);
        size_t k = (size_t) ceil(p / 100.0 * (double) n);
        return v[k > 0 ? k - 1 : 0];
}

static double now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

typedef int (*fit_fn)(const double *, const double *, size_t, struct analysis_fit *);

static void test_exp1_clean_heating(void **state) {
        const struct curve c = { .tinf = 55, .a1 = 25, .tau1 = 60 };
        struct analysis_fit f;

        curve_make(&c, 1, t_buf, y_buf, 301);          /* 5 tau */
        assert_int_equal(analysis_fit_exp1(t_buf, y_buf, 301, &f), 0);
        printf("exp1 clean, 5 tau: plateau error %.2e C, tau error %.2e %%, ci95 %.2e C\n",
               f.t_inf_c - c.tinf, 100 * (f.tau_s / c.tau1 - 1), f.ci95_c);
        assert_int_equal(f.model, ANALYSIS_MODEL_EXP1);
        assert_true(fabs(f.t_inf_c - c.tinf) < 0.05);
        assert_true(fabs(f.tau_s / c.tau1 - 1) < 0.02);
        assert_true(fabs(f.t0_c - 30) < 0.05);
        assert_true(f.rms_c < 1e-6);
        assert_false(f.tau_at_bound);
        assert_true(fabs(analysis_fit_eval(&f, 60) - curve_true(&c, 60)) < 1e-4);
}

static void test_exp1_clean_cooling(void **state) {
        const struct curve c = { .tinf = 35, .a1 = -30, .tau1 = 90 };
        struct analysis_fit f;

        curve_make(&c, 1, t_buf, y_buf, 451);
        for (size_t i = 0; i < 451; i++)
                t_buf[i] += 1000;                       /* any time origin */
        assert_int_equal(analysis_fit_exp1(t_buf, y_buf, 451, &f), 0);
        assert_true(fabs(f.t_inf_c - c.tinf) < 0.05);
        assert_true(fabs(f.tau_s / c.tau1 - 1) < 0.02);
        assert_true(f.a_c < 0);
        assert_true(fabs(f.t0_c - 65) < 0.05);
        assert_true(fabs(f.t_origin_s - 1000) < 1e-9);
}

/* Short sampling origins and tiny spans still behave. */
static void test_exp1_fast_sampling(void **state) {
        const struct curve c = { .tinf = 50, .a1 = 10, .tau1 = 2 };
        struct analysis_fit f;

        curve_make(&c, 1, t_buf, y_buf, 201);
        for (size_t i = 0; i < 201; i++) {
                t_buf[i] *= 0.05;                       /* 20 Hz, 10 s */
                y_buf[i] = curve_true(&c, t_buf[i]);
        }
        assert_int_equal(analysis_fit_exp1(t_buf, y_buf, 201, &f), 0);
        assert_true(fabs(f.t_inf_c - 50) < 0.01);
        assert_true(fabs(f.tau_s / 2 - 1) < 0.01);
}

/* Noisy, quantised, 1.5 tau of data, 100 seeds. */
static void test_exp1_noisy_quantised(void **state) {
        const struct curve c = { .tinf = 55.3, .a1 = 25, .tau1 = 60, .noise = 0.3, .quantise = true };
        double err[100], tau_err[100];
        size_t covered = 0;

        for (unsigned seed = 0; seed < 100; seed++) {
                struct analysis_fit f;
                curve_make(&c, seed, t_buf, y_buf, 91);
                assert_int_equal(analysis_fit_exp1(t_buf, y_buf, 91, &f), 0);
                err[seed] = f.t_inf_c - c.tinf;
                tau_err[seed] = f.tau_s / c.tau1 - 1;
                covered += fabs(err[seed]) <= f.ci95_c;
        }
        double p90 = percentile_abs(err, 100, 90), tau90 = percentile_abs(tau_err, 100, 90);
        printf("exp1 tau=60 s, 1.5 tau, noise 0.3 C + 1 C quantisation, 100 seeds: "
               "plateau |error| p90 %.3f C, tau |error| p90 %.1f %%, ci95 coverage %zu %%\n",
               p90, 100 * tau90, covered);
        assert_true(p90 <= 1.1);
        assert_true(tau90 <= 0.09);
        assert_true(covered >= 85);
}

/* Cooling, noisy and quantised, 3 tau. */
static void test_exp1_noisy_cooling(void **state) {
        const struct curve c = { .tinf = 38.4, .a1 = -27, .tau1 = 120, .noise = 0.2, .quantise = true };
        double err[50], tau_err[50];

        for (unsigned seed = 0; seed < 50; seed++) {
                struct analysis_fit f;
                curve_make(&c, seed, t_buf, y_buf, 361);
                assert_int_equal(analysis_fit_auto(t_buf, y_buf, 361, &f), 0);
                err[seed] = f.t_inf_c - c.tinf;
                tau_err[seed] = f.tau_s / c.tau1 - 1;
        }
        double p90 = percentile_abs(err, 50, 90), tau90 = percentile_abs(tau_err, 50, 90);
        printf("cooling tau=120 s, 3 tau, noise 0.2 C + quantisation, 50 seeds: "
               "asymptote |error| p90 %.3f C, tau |error| p90 %.1f %%\n", p90, 100 * tau90);
        assert_true(p90 <= 0.25);
        assert_true(tau90 <= 0.05);
}

/* A board in a case: 20 s / 900 s time constants (die, then case and air), 30 % / 70 % of a 30 C rise. */
static const struct curve two_tau = {
        .tinf = 70.2, .a1 = 9, .tau1 = 20, .a2 = 21, .tau2 = 900, .noise = 0.3, .quantise = true,
};

static void test_exp2_clean(void **state) {
        struct curve c = two_tau;
        struct analysis_fit f;

        c.noise = 0;
        c.quantise = false;
        curve_make(&c, 1, t_buf, y_buf, 1801);
        assert_int_equal(analysis_fit_exp2(t_buf, y_buf, 1801, &f), 0);
        printf("exp2 clean 20/900 s, 1800 s: plateau error %.2e C, tau_fast %.3f s, tau %.3f s\n",
               f.t_inf_c - c.tinf, f.tau_fast_s, f.tau_s);
        assert_int_equal(f.model, ANALYSIS_MODEL_EXP2);
        assert_true(fabs(f.t_inf_c - c.tinf) < 0.01);
        assert_true(fabs(f.tau_s / c.tau2 - 1) < 0.01);
        assert_true(fabs(f.tau_fast_s / c.tau1 - 1) < 0.01);
        assert_true(fabs(f.a_fast_c - c.a1) < 0.01);
        assert_true(fabs(f.a_c - c.a2) < 0.01);
}

static void test_exp2_noisy(void **state) {
        double e1[20], e2[20], ea[20], es[20];

        for (unsigned seed = 0; seed < 20; seed++) {
                struct analysis_fit f1, f2, fa, fs;
                curve_make(&two_tau, seed, t_buf, y_buf, 1801);
                assert_int_equal(analysis_fit_exp1(t_buf, y_buf, 1801, &f1), 0);
                assert_int_equal(analysis_fit_exp2(t_buf, y_buf, 1801, &f2), 0);
                assert_int_equal(analysis_fit_auto(t_buf, y_buf, 1801, &fa), 0);
                assert_int_equal(analysis_fit_exp1_after(t_buf, y_buf, 1801, f2.tau_fast_s, 5, &fs), 0);
                assert_int_equal(fa.model, ANALYSIS_MODEL_EXP2);
                e1[seed] = f1.t_inf_c - two_tau.tinf;
                e2[seed] = f2.t_inf_c - two_tau.tinf;
                ea[seed] = fa.t_inf_c - two_tau.tinf;
                es[seed] = fs.t_inf_c - two_tau.tinf;
                assert_true(fabs(e2[seed]) <= f2.ci95_c * 2);
        }
        double p1 = percentile_abs(e1, 20, 90), p2 = percentile_abs(e2, 20, 90);
        double pa = percentile_abs(ea, 20, 90), ps = percentile_abs(es, 20, 90);
        printf("20/900 s curve, 1800 s, noise 0.3 + quantisation, 20 seeds, plateau |error| p90: "
               "exp1 %.2f C, exp1 after 5 tau_fast %.2f C, exp2 %.2f C, auto %.2f C\n", p1, ps, p2, pa);
        assert_true(p2 <= 0.3);
        assert_true(pa <= 0.3);
        assert_true(ps <= 0.5);
        assert_true(p1 > 0.5);          /* a single exponential from the load start is biased on it */
}

static void test_model_selection(void **state) {
        const struct curve one[] = {
                { .tinf = 55.3, .a1 = 25, .tau1 = 60, .noise = 0.3, .quantise = true },
                { .tinf = 55.3, .a1 = 25, .tau1 = 60, .noise = 0.1, .quantise = true },
                { .tinf = 48.7, .a1 = 20, .tau1 = 300, .noise = 0.2, .quantise = true },
                { .tinf = 48.7, .a1 = -20, .tau1 = 150, .noise = 0.05, .quantise = false },
        };
        const size_t len[] = { 300, 300, 1200, 600 };
        unsigned exp2_picked = 0, exp1_picked = 0, total = 0;

        for (size_t k = 0; k < 4; k++)
                for (unsigned seed = 0; seed < 10; seed++) {
                        struct analysis_fit f;
                        curve_make(&one[k], seed, t_buf, y_buf, len[k]);
                        assert_int_equal(analysis_fit_auto(t_buf, y_buf, len[k], &f), 0);
                        exp1_picked += f.model == ANALYSIS_MODEL_EXP1;
                        total++;
                }
        for (unsigned seed = 0; seed < 10; seed++) {
                struct analysis_fit f;
                curve_make(&two_tau, seed, t_buf, y_buf, 900);
                assert_int_equal(analysis_fit_auto(t_buf, y_buf, 900, &f), 0);
                exp2_picked += f.model == ANALYSIS_MODEL_EXP2;
        }
        printf("model selection: exp1 picked for %u/%u single-exponential curves, "
               "exp2 for %u/10 two-time-constant curves (900 s)\n", exp1_picked, total, exp2_picked);
        assert_int_equal(exp1_picked, total);
        assert_int_equal(exp2_picked, 10);
}

static void test_plateau_not_early(void **state) {
        const struct curve rising = { .tinf = 55.3, .a1 = 25, .tau1 = 60, .noise = 0.3, .quantise = true };
        const struct curve slow = { .tinf = 45.3, .a1 = 5, .tau1 = 3000, .noise = 0.3, .quantise = true };
        struct analysis_plateau p;

        curve_make(&rising, 1, t_buf, y_buf, 301);
        assert_int_equal(analysis_check_plateau(t_buf, y_buf, 200, &p), 0);
        assert_false(p.reached);
        assert_true(isnan(p.slope_c_per_s));   /* 5 min window not covered yet */
        assert_int_equal(analysis_check_plateau(t_buf, y_buf, 301, &p), 0);
        assert_false(p.reached);
        assert_true(p.slope_c_per_s > ANALYSIS_PLATEAU_SLOPE_C_PER_S);

        /* Slope already below 0.1 C/min while 4 C are still to come and
         * only 0.9 C of rise seen: the interval of the predicted plateau
         * must stop it. Without quantisation it always does; with whole
         * degrees the readings' systematic error can mimic curvature, and
         * a 95 % interval may rarely mislead. */
        unsigned fired = 0, fired_q = 0;
        for (unsigned seed = 0; seed < 100; seed++) {
                struct curve c = slow;
                curve_make(&c, seed, t_buf, y_buf, 601);
                assert_int_equal(analysis_check_plateau(t_buf, y_buf, 601, &p), 0);
                fired_q += p.reached;
                c.quantise = false;
                curve_make(&c, seed, t_buf, y_buf, 601);
                assert_int_equal(analysis_check_plateau(t_buf, y_buf, 601, &p), 0);
                fired += p.reached;
        }
        printf("plateau rule on a curve 0.2 tau into a 5 C rise: fired early %u/100 (quantised), %u/100 (not)\n",
               fired_q, fired);
        assert_true(fired_q <= 5);
        assert_int_equal(fired, 0);

        /* A straight ramp of 0.05 C/min has no plateau at all. */
        for (size_t i = 0; i < 901; i++) {
                t_buf[i] = (double) i;
                y_buf[i] = round(40 + 0.05 / 60 * (double) i);
        }
        assert_int_equal(analysis_check_plateau(t_buf, y_buf, 901, &p), 0);
        assert_false(p.reached);
}

/* Calls the rule the way a run does, every `every` s; when it fires the
 * temperature must be within `tol` of the true plateau and the prediction
 * within 0.5 C. Returns the time it fired. */
static double plateau_first_fire(const struct curve *c, unsigned seed, size_t n, size_t every, double tol) {
        struct analysis_plateau p;

        curve_make(c, seed, t_buf, y_buf, n);
        for (size_t m = 60; m <= n; m += every) {
                int r = analysis_check_plateau(t_buf, y_buf, m, &p);
                assert_int_equal(r, 0);
                if (!p.reached)
                        continue;
                double t = t_buf[m - 1];
                assert_true(fabs(p.plateau_c - c->tinf) <= 0.5);
                assert_true(c->tinf - curve_true(c, t) <= tol);
                return t;
        }
        return NAN;
}

static void test_plateau_fires(void **state) {
        const struct curve one = { .tinf = 55.3, .a1 = 25, .tau1 = 60, .noise = 0.3, .quantise = true };
        double t1 = 0, t2 = 0;

        for (unsigned seed = 0; seed < 5; seed++) {
                double t = plateau_first_fire(&one, seed, 1200, 10, 0.3);
                assert_false(isnan(t));
                t1 = fmax(t1, t);
                t = plateau_first_fire(&two_tau, seed, 5400, 60, 2.5);
                assert_false(isnan(t));
                t2 = fmax(t2, t);
        }
        printf("until plateau fired by %.0f s on tau=60 s curves, by %.0f s on 20/900 s curves\n", t1, t2);
}

/* The plateau interval on the generated corpus (analysis-corpus.h): two and
 * three exponentials, four reading steps, cut from a quarter of the slow
 * time constant to three. A small sample of what bench/analysis-corpus
 * measures at scale; the targets are the issue's: 90 % per class, 95 %
 * overall, and intervals that claim +-0.5 C must be right. */
#define CORPUS_N 10000

static double corpus_t[CORPUS_N], corpus_y[CORPUS_N];

static void test_corpus_coverage(void **state) {
        size_t all = 0, all_cov = 0, tight = 0, tight_cov = 0;

        for (unsigned n_exp = 2; n_exp <= 3; n_exp++)
                for (size_t qi = 0; qi < CORPUS_QUANTA; qi++) {
                        size_t fits = 0, cov = 0;
                        for (unsigned seed = 500; seed < 506; seed++) {
                                struct corpus_curve c;
                                corpus_curve_make(&c, n_exp, corpus_quanta[qi], seed);
                                size_t n = (size_t) (3 * corpus_slow_tau(&c)) + 1;
                                assert_true(n <= CORPUS_N);
                                corpus_samples(&c, corpus_t, corpus_y, n);
                                for (size_t k = 0; k < CORPUS_CUTS; k++) {
                                        struct analysis_fit f;
                                        size_t m = (size_t) (corpus_cuts[k] * corpus_slow_tau(&c)) + 1;
                                        assert_int_equal(analysis_fit_plateau(corpus_t, corpus_y, m < 30 ? 30 : m, &f), 0);
                                        bool ok = !(fabs(f.t_inf_c - corpus_plateau(&c)) > f.ci95_c);
                                        fits++;
                                        cov += ok;
                                        if (f.ci95_c <= ANALYSIS_PLATEAU_CI95_C) {
                                                tight++;
                                                tight_cov += ok;
                                        }
                                }
                        }
                        printf("corpus exp%u step %g C: coverage %zu/%zu\n", n_exp, corpus_quanta[qi], cov, fits);
                        assert_true(cov * 10 >= fits * 9);
                        all += fits;
                        all_cov += cov;
                }
        printf("corpus: coverage %zu/%zu; intervals within +-%.1f C: %zu, covering %zu\n", all_cov, all,
               ANALYSIS_PLATEAU_CI95_C, tight, tight_cov);
        assert_true(all_cov * 100 >= all * 95);
        assert_true(tight_cov * 10 >= tight * 9);
}

/* The plateau check fits a bounded number of bins; its plateau and time
 * constant stay within 0.05 C and 1 % of the full-resolution fit, at 1 Hz
 * and at 10 Hz over 90 minutes. */
static void test_plateau_bounded(void **state) {
        static double t[54000], y[54000];
        const struct {
                struct curve c;
                size_t n;
                double dt;
        } cases[] = {
                { { .tinf = 55.3, .a1 = 25, .tau1 = 60, .noise = 0.3, .quantise = true }, 600, 1 },
                { { .tinf = 55.3, .a1 = 25, .tau1 = 300, .noise = 0.2, .quantise = true }, 5400, 1 },
                { two_tau, 1800, 1 },
                { two_tau, 5400, 1 },
                { two_tau, 54000, 0.1 },
        };

        for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
                struct rng r = { 40 + k };
                struct analysis_fit full, bounded;
                for (size_t i = 0; i < cases[k].n; i++) {
                        t[i] = (double) i * cases[k].dt;
                        y[i] = round(curve_true(&cases[k].c, t[i]) + cases[k].c.noise * rng_gauss(&r));
                }
                assert_int_equal(analysis_fit_auto(t, y, cases[k].n, &full), 0);
                assert_int_equal(analysis_fit_plateau(t, y, cases[k].n, &bounded), 0);
                printf("bounded vs full fit, n = %zu: plateau %+.4f C, tau %+.3f %% (%s/%s)\n", cases[k].n,
                       bounded.t_inf_c - full.t_inf_c, 100 * (bounded.tau_s / full.tau_s - 1),
                       analysis_model_to_string(bounded.model), analysis_model_to_string(full.model));
                assert_int_equal(bounded.model, full.model);
                assert_true(fabs(bounded.t_inf_c - full.t_inf_c) <= 0.05);
                assert_true(fabs(bounded.tau_s / full.tau_s - 1) <= 0.01);
                assert_int_equal(bounded.n, full.n);
        }
}

static void test_degenerate(void **state) {
        struct analysis_fit f;
        double t[10] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 }, y[10];

        for (size_t i = 0; i < 10; i++)
                y[i] = 42;
        assert_int_equal(analysis_fit_exp1(t, y, 3, &f), -ENODATA);
        assert_int_equal(analysis_fit_exp1(t, y, 10, &f), -EDOM);
        assert_int_equal(analysis_fit_exp2(t, y, 7, &f), -ENODATA);
        assert_int_equal(analysis_fit_auto(t, y, 10, &f), -EDOM);
        for (size_t i = 0; i < 10; i++)
                y[i] = NAN;
        assert_int_equal(analysis_fit_exp1(t, y, 10, &f), -ENODATA);
        assert_int_equal(analysis_fit_auto(t, y, 10, &f), -ENODATA);
        for (size_t i = 0; i < 10; i++)
                y[i] = 40 + (double) i;
        t[5] = 3.5;
        assert_int_equal(analysis_fit_exp1(t, y, 10, &f), -EINVAL);
        assert_int_equal(analysis_fit_exp2(t, y, 10, &f), -EINVAL);
        t[5] = 4;
        assert_int_equal(analysis_fit_exp1(t, y, 10, &f), -EINVAL);
        t[5] = NAN;
        assert_int_equal(analysis_fit_exp1(t, y, 10, &f), -EINVAL);
        t[5] = 5;
        y[2] = INFINITY;
        assert_int_equal(analysis_fit_exp1(t, y, 10, &f), -EINVAL);
        assert_int_equal(analysis_fit_exp1(NULL, y, 10, &f), -EINVAL);
        assert_int_equal(analysis_fit_exp1(t, y, 10, NULL), -EINVAL);
        assert_null(analysis_model_to_string(ANALYSIS_MODEL_NONE));
        assert_string_equal(analysis_model_to_string(ANALYSIS_MODEL_EXP2), "exp2");
}

/* Missing samples are skipped, not read as zero. */
static void test_missing_samples(void **state) {
        const struct curve c = { .tinf = 55, .a1 = 25, .tau1 = 60 };
        struct analysis_fit f;

        curve_make(&c, 1, t_buf, y_buf, 301);
        for (size_t i = 0; i < 301; i += 7)
                y_buf[i] = NAN;
        t_buf[14] = NAN;        /* a sample without a value may lack a time too */
        assert_int_equal(analysis_fit_auto(t_buf, y_buf, 301, &f), 0);
        assert_true(fabs(f.t_inf_c - 55) < 0.01);
        assert_true(fabs(f.tau_s - 60) < 0.1);
        assert_int_equal(f.n, 301 - 43);
        assert_true(fabs(f.t_origin_s - 1) < 1e-12);
}

static void test_slope_median(void **state) {
        double t[600], y[600], v;

        for (size_t i = 0; i < 600; i++) {
                t[i] = 0.5 * (double) i;
                y[i] = 30 + 0.01 * t[i] + (i == 599 ? 50 : 0);
        }
        assert_int_equal(analysis_slope(t, y, 599, 100, &v), 0);
        assert_true(fabs(v - 0.01) < 1e-12);
        assert_int_equal(analysis_median(t, y, 600, 10, &v), 0);        /* 21 samples, one outlier */
        assert_true(fabs(v - (30 + 0.01 * 294.5)) < 1e-9);
        assert_int_equal(analysis_slope(t, y, 2, 100, &v), -ENODATA);
        y[598] = NAN;
        assert_int_equal(analysis_median(t, y, 599, 1.0, &v), 0);       /* t = 297.5, 298, 298.5 */
        assert_true(fabs(v - (30 + 0.01 * 298)) < 1e-9);
        t[3] = t[2];
        assert_int_equal(analysis_slope(t, y, 600, 1000, &v), -EINVAL);
}

static void test_stable_baseline(void **state) {
        struct rng r = { 5 };
        double t[700], y[700];

        for (size_t i = 0; i < 700; i++) {
                t[i] = (double) i;
                y[i] = round(41.4 + 0.3 * rng_gauss(&r) + (i < 300 ? 5 * exp(-(double) i / 60) : 0));
        }
        assert_false(analysis_is_stable(t, y, 200, 300, ANALYSIS_STABLE_SLOPE_C_PER_S));  /* window not covered */
        assert_false(analysis_is_stable(t, y, 320, 300, ANALYSIS_STABLE_SLOPE_C_PER_S));  /* still falling */
        assert_true(analysis_is_stable(t, y, 700, 300, ANALYSIS_STABLE_SLOPE_C_PER_S));
        assert_false(analysis_is_at_baseline(t, y, 60, 41.4, 1.0));
        assert_true(analysis_is_at_baseline(t, y, 700, 41.4, 1.0));
        assert_false(analysis_is_at_baseline(t, y, 700, 39.0, 1.0));
        assert_false(analysis_is_at_baseline(t, y, 700, NAN, 1.0));
}

/* A whole run: 180 s idle at 40 C, 1200 s stress towards 70 C (tau 60 s,
 * capped to 1.2 GHz above 66 C, cooling device on above 68 C, work rate
 * following the frequency), 900 s cooldown (tau 80 s). Noise 0.3 C, whole
 * degrees. */
#define RUN_N 2280
static double run_t[RUN_N], run_y[RUN_N], run_f[RUN_N], run_max[RUN_N], run_w[RUN_N];
static bool run_cool[RUN_N];
static enum analysis_phase run_ph[RUN_N];

static void run_make(void) {
        struct rng r = { 11 };

        for (size_t i = 0; i < RUN_N; i++) {
                double t = (double) i, truth;
                run_t[i] = t;
                if (i < 180) {
                        run_ph[i] = ANALYSIS_PHASE_IDLE;
                        truth = 40;
                } else if (i < 1380) {
                        run_ph[i] = ANALYSIS_PHASE_STRESS;
                        truth = 70 - 30 * exp(-(t - 180) / 60);
                } else {
                        run_ph[i] = ANALYSIS_PHASE_COOLDOWN;
                        truth = 40 + (70 - 30 * exp(-1200.0 / 60) - 40) * exp(-(t - 1380) / 80);
                }
                run_y[i] = round(truth + 0.3 * rng_gauss(&r));
                run_max[i] = 1.5e9;
                run_f[i] = run_ph[i] == ANALYSIS_PHASE_STRESS && truth >= 66 ? 1.2e9 : 1.5e9;
                run_cool[i] = run_ph[i] == ANALYSIS_PHASE_STRESS && truth >= 68;
                run_w[i] = run_ph[i] == ANALYSIS_PHASE_STRESS ? 1000 * run_f[i] / 1.5e9 : 0;
        }
        run_w[180] = NAN;       /* no rate yet at the first sample of the load */
}

static void test_metrics_run(void **state) {
        struct analysis_samples s = {
                .n = RUN_N, .t_s = run_t, .temp_c = run_y, .freq_hz = run_f, .max_allowed_hz = run_max,
                .cooling_active = run_cool, .work_rate = run_w, .phase = run_ph, .ambient_c = 21.5,
        };
        struct run_metrics m;

        run_make();
        assert_int_equal(analysis_compute_metrics(&s, &m), 0);
        printf("run metrics: baseline %.2f plateau %.2f +- %.2f tau_heat %.1f t90 %.1f tau_cool %.1f "
               "back %.0f s throttled %.3f freq mean %.3g min %.3g work %.0f -> %.0f (%.1f %%) "
               "residual %.2f %s/%s\n",
               m.baseline_c, m.plateau_c, m.plateau_ci95_c, m.tau_heat_s, m.t90_heat_s, m.tau_cool_s,
               m.t_back_to_baseline_s, m.throttled_fraction, m.freq_mean_hz, m.freq_min_hz,
               m.work_rate_start, m.work_rate_end, m.work_rate_drop_pct, m.fit_residual_c,
               analysis_model_to_string(m.fit_model), analysis_model_to_string(m.cool_fit_model));
        assert_true(m.baseline_c == 40);
        assert_true(m.ambient_c == 21.5);
        assert_true(m.peak_c >= 70 && m.peak_c <= 72);
        assert_true(fabs(m.plateau_c - 70) < 0.3);
        /* the interval also allows a slow part of up to 4 spans that 20 min
         * of whole-degree readings cannot rule out (analysis_fit_plateau) */
        assert_true(m.plateau_ci95_c > 0 && m.plateau_ci95_c < 1.0);
        assert_true(fabs(m.rise_c - 30) < 0.3);
        assert_true(fabs(m.rise_over_ambient_c - 48.5) < 0.3);
        assert_true(fabs(m.tau_heat_s / 60 - 1) < 0.05);
        assert_true(isnan(m.tau_heat_fast_s) && isnan(m.heat_fast_fraction));
        assert_true(fabs(m.t90_heat_s - 60 * log(10)) < 8);
        assert_true(fabs(m.tau_cool_s / 80 - 1) < 0.05);
        assert_true(m.t_back_to_baseline_s > 230 && m.t_back_to_baseline_s < 280);
        assert_true(fabs(m.throttled_fraction - (1200 - 60 * log(7.5)) / 1200) < 0.002);
        assert_true(fabs(m.freq_mean_hz - 1.5e9 + 0.3e9 * (1200 - 121) / 1200) < 1e6);
        assert_true(m.freq_min_hz == 1.2e9);
        assert_true(m.work_rate_start == 1000 && m.work_rate_end == 800);
        assert_true(fabs(m.work_rate_drop_pct - 20) < 1e-9);
        assert_true(m.fit_residual_c > 0.2 && m.fit_residual_c < 0.5);
        assert_int_equal(m.fit_model, ANALYSIS_MODEL_EXP1);
        assert_int_equal(m.cool_fit_model, ANALYSIS_MODEL_EXP1);
        assert_true(isnan(m.power_mean_w) && isnan(m.thermal_resistance_c_per_w));     /* no power read */
        /* capped for 95 % of the load: held by throttling, at its last 30 s */
        assert_true(analysis_regulated(&m) && !analysis_regulated_possibly(&m));
        assert_true(m.regulated_c >= 69 && m.regulated_c <= 71);
}

/* A Pi whose firmware throttles (under-voltage) while cpufreq shows the
 * full clock it asked for: the firmware's word counts, and unknown samples
 * (-1) fall back to cpufreq. */
static void test_metrics_firmware_throttled(void **state) {
        static signed char fw[RUN_N];
        static double full[RUN_N];
        struct analysis_samples s = {
                .n = RUN_N, .t_s = run_t, .temp_c = run_y, .freq_hz = full, .max_allowed_hz = run_max,
                .firmware_throttled = fw, .phase = run_ph, .ambient_c = NAN,
        };
        struct run_metrics m;
        size_t load = 0, said = 0;

        run_make();
        for (size_t i = 0; i < RUN_N; i++) {
                full[i] = 1.5e9;
                fw[i] = run_ph[i] == ANALYSIS_PHASE_STRESS && i % 4 == 0 ? 1 : 0;
                load += run_ph[i] == ANALYSIS_PHASE_STRESS;
                said += fw[i] == 1;
        }
        assert_int_equal(analysis_compute_metrics(&s, &m), 0);
        assert_true(fabs(m.throttled_fraction - (double) said / (double) load) < 1e-12);
        assert_true(m.freq_min_hz == 1.5e9);            /* the frequencies stay cpufreq's */
        assert_false(analysis_regulated(&m));           /* a quarter of the load is not held */

        for (size_t i = 0; i < RUN_N; i++)
                fw[i] = -1;                             /* no firmware answer: cpufreq alone */
        assert_int_equal(analysis_compute_metrics(&s, &m), 0);
        assert_true(m.throttled_fraction == 0);
        s.freq_hz = NULL;
        assert_int_equal(analysis_compute_metrics(&s, &m), 0);
        assert_true(isnan(m.throttled_fraction));       /* nothing known: not "never throttled" */

        assert_true(analysis_sample_throttled(1.5e9, 1.5e9, false, 1));
        assert_false(analysis_sample_throttled(1.5e9, 1.5e9, false, 0));
        assert_false(analysis_sample_throttled(1.5e9, 1.5e9, false, -1));
        assert_true(analysis_sample_throttled(1.2e9, 1.5e9, false, -1));
}

/* A Pi 4 without a fan: 60 s idle at 50 C, then the load heads for 95 C
 * (tau 150 s) but the firmware holds it at 80 C from about 3 min on,
 * whole degrees with noise, 20 min in all. Without a clock column that is
 * "possibly regulated"; with cpufreq at its maximum all along it is not
 * (the clock says so); a board with the same curve topping out at 70 C
 * is left alone. */
static void test_metrics_regulated(void **state) {
        enum { N = 1260 };
        static double t[N], y[N], f[N], fmax[N], low[N];
        static enum analysis_phase ph[N];
        struct analysis_samples s = { .n = N, .t_s = t, .temp_c = y, .phase = ph, .ambient_c = 22 };
        struct rng r = { 5 };
        struct run_metrics m;

        for (size_t i = 0; i < N; i++) {
                double truth = i < 60 ? 50 : fmin(80, 95 - 45 * exp(-((double) i - 60) / 150));
                t[i] = (double) i;
                ph[i] = i < 60 ? ANALYSIS_PHASE_IDLE : ANALYSIS_PHASE_STRESS;
                y[i] = round(truth + 0.3 * rng_gauss(&r));
                low[i] = y[i] - 12;
                f[i] = fmax[i] = 1.5e9;
        }
        assert_int_equal(analysis_compute_metrics(&s, &m), 0);
        assert_true(analysis_regulated_possibly(&m));
        assert_true(m.regulated_c == 80);
        s.freq_hz = f;
        s.max_allowed_hz = fmax;
        assert_int_equal(analysis_compute_metrics(&s, &m), 0);
        assert_true(m.throttled_fraction == 0 && !analysis_regulated(&m));
        s.freq_hz = s.max_allowed_hz = NULL;
        s.temp_c = low;
        assert_int_equal(analysis_compute_metrics(&s, &m), 0);
        assert_false(analysis_regulated(&m));
        assert_true(isnan(m.regulated_c));
}

/* A short load on a Pi 4 without a heatsink, the shape of a real 2.0 GHz
 * one under sysbench: 20 s idle, then 220 s heading for 95 C (tau 80 s),
 * held at 80 C from about 108 s by the firmware clocking down two samples
 * in three. Throttled for 40 % of the load, which spent its first half
 * heating up, but for two thirds of its last minute: held by throttling.
 * The same samples throttled only one in four at the top are not. What
 * the run then says instead of a plateau, with and without a work count,
 * and without a clock. */
static void test_metrics_regulated_short_load(void **state) {
        enum { N = 240 };
        static double t[N], y[N], f[N], fmax[N], work[N];
        static enum analysis_phase ph[N];
        struct analysis_samples s = { .n = N, .t_s = t, .temp_c = y, .freq_hz = f, .max_allowed_hz = fmax,
                                      .phase = ph, .ambient_c = NAN };
        struct run_metrics m;
        char text[160];

        (void) state;
        for (size_t i = 0; i < N; i++) {
                double truth = i < 20 ? 50 : fmin(80, 95 - 45 * exp(-((double) i - 20) / 80));
                t[i] = (double) i;
                ph[i] = i < 20 ? ANALYSIS_PHASE_IDLE : ANALYSIS_PHASE_STRESS;
                y[i] = round(truth);
                fmax[i] = 2.0e9;
                f[i] = truth >= 80 && i % 3 != 0 ? 1.334e9 : 2.0e9;
                work[i] = i < 20 ? NAN : f[i] / 2e6;
        }
        assert_int_equal(analysis_compute_metrics(&s, &m), 0);
        assert_true(m.throttled_fraction > 0.35 && m.throttled_fraction < ANALYSIS_REGULATED_SHARE);
        assert_true(analysis_regulated(&m) && !analysis_regulated_possibly(&m));
        assert_true(m.regulated_c == 80);
        analysis_regulated_text(&m, "°C", text, sizeof text);
        assert_string_equal(text, "regulated at 80.0 °C, throttled 40 %");
        s.work_rate = work;
        assert_int_equal(analysis_compute_metrics(&s, &m), 0);
        /* the median of the first 30 s ran at 2000, of the last at 1334 MHz: -33.3 % */
        analysis_regulated_text(&m, "C", text, sizeof text);
        assert_string_equal(text, "regulated at 80.0 C, throttled 40 %, work -33.3 %");

        for (size_t i = 0; i < N; i++)
                f[i] = y[i] >= 80 && i % 4 == 0 ? 1.334e9 : 2.0e9;
        assert_int_equal(analysis_compute_metrics(&s, &m), 0);
        assert_false(analysis_regulated(&m));
        analysis_regulated_text(&m, "°C", text, sizeof text);
        assert_string_equal(text, "");

        s.freq_hz = s.max_allowed_hz = NULL;
        assert_int_equal(analysis_compute_metrics(&s, &m), 0);
        assert_true(analysis_regulated_possibly(&m));
        analysis_regulated_text(&m, "°C", text, sizeof text);
        assert_string_equal(text, "possibly regulated at 80.0 °C (flat at a firmware limit, no clock recorded)");
}

/* A power reading: 2 W idle, 6 W under load, one sample missing: °C/W is
 * the rise over ambient over the mean power under load. */
static void test_metrics_power(void **state) {
        static double w[RUN_N];
        struct analysis_samples s = { .n = RUN_N, .t_s = run_t, .temp_c = run_y, .power_w = w, .phase = run_ph,
                                      .ambient_c = 21.5 };
        struct run_metrics m;

        run_make();
        for (size_t i = 0; i < RUN_N; i++)
                w[i] = run_ph[i] == ANALYSIS_PHASE_STRESS ? 6.0 : 2.0;
        w[700] = NAN;
        assert_int_equal(analysis_compute_metrics(&s, &m), 0);
        assert_true(m.power_mean_w == 6.0);
        assert_true(fabs(m.thermal_resistance_c_per_w - m.rise_over_ambient_c / 6.0) < 1e-12);
        assert_true(fabs(m.thermal_resistance_c_per_w - 48.5 / 6.0) < 0.05);
        s.ambient_c = NAN;                      /* over ambient only */
        assert_int_equal(analysis_compute_metrics(&s, &m), 0);
        assert_true(m.power_mean_w == 6.0 && isnan(m.thermal_resistance_c_per_w));
}

static void test_metrics_partial(void **state) {
        struct analysis_samples s = {
                .n = 1200, .t_s = run_t + 180, .temp_c = run_y + 180, .phase = run_ph + 180, .ambient_c = NAN,
        };
        struct run_metrics m;

        run_make();
        assert_int_equal(analysis_compute_metrics(&s, &m), 0);  /* stress only, no optional arrays */
        assert_true(isnan(m.baseline_c) && isnan(m.rise_c) && isnan(m.rise_over_ambient_c));
        assert_true(fabs(m.plateau_c - 70) < 0.3);
        assert_true(fabs(m.t90_heat_s - 60 * log(10)) < 8);     /* from the fit's own start value */
        assert_true(isnan(m.tau_cool_s) && isnan(m.t_back_to_baseline_s));
        assert_true(isnan(m.throttled_fraction) && isnan(m.freq_mean_hz) && isnan(m.work_rate_start));
        assert_int_equal(m.cool_fit_model, ANALYSIS_MODEL_NONE);

        s = (struct analysis_samples) { .n = 180, .t_s = run_t, .temp_c = run_y, .phase = run_ph };
        assert_int_equal(analysis_compute_metrics(&s, &m), 0);  /* idle only */
        assert_true(m.baseline_c == 40);
        assert_true(isnan(m.plateau_c) && isnan(m.tau_heat_s));
        assert_int_equal(m.fit_model, ANALYSIS_MODEL_NONE);

        s.n = 0;
        assert_int_equal(analysis_compute_metrics(&s, &m), 0);
        assert_true(isnan(m.peak_c) && isnan(m.baseline_c));

        /* A load stopped long before any curvature: no plateau, no tau. */
        s = (struct analysis_samples) { .n = 200, .t_s = run_t + 100, .temp_c = run_y, .phase = run_ph + 100 };
        for (size_t i = 0; i < 200; i++)
                y_buf[i] = round(40 + 0.02 * (double) i);
        s.temp_c = y_buf;
        assert_int_equal(analysis_compute_metrics(&s, &m), 0);
        assert_true(isnan(m.plateau_c) && isnan(m.plateau_ci95_c) && isnan(m.tau_heat_s));

        s = (struct analysis_samples) { .n = 10, .t_s = run_t, .temp_c = run_y, .phase = run_ph };
        run_t[5] = 4;
        assert_int_equal(analysis_compute_metrics(&s, &m), -EINVAL);
        run_t[5] = 5;
        assert_int_equal(analysis_compute_metrics(NULL, &m), -EINVAL);
}

static double time_fit(fit_fn fn, const struct curve *c, size_t n, struct analysis_fit *f) {
        double best = INFINITY;

        curve_make(c, 3, t_buf, y_buf, n);
        for (int k = 0; k < 5; k++) {
                double t0 = now_ms();
                assert_int_equal(fn(t_buf, y_buf, n, f), 0);
                best = fmin(best, now_ms() - t0);
        }
        return best;
}

/* Informational: the budget is ~5 ms for n = 5400 on x86 (a fit per tick
 * during until: plateau). Only a gross regression fails, so that slow
 * emulators and valgrind still pass. */
static void test_timing(void **state) {
        const struct curve one = { .tinf = 60.2, .a1 = 20, .tau1 = 900, .noise = 0.3, .quantise = true };
        struct analysis_fit f;
        double t1 = time_fit(analysis_fit_exp1, &one, 5400, &f);
        double ta1 = time_fit(analysis_fit_auto, &one, 5400, &f);
        double t2 = time_fit(analysis_fit_exp2, &two_tau, 5400, &f);
        double ta2 = time_fit(analysis_fit_auto, &two_tau, 5400, &f);

        printf("fit time, n = 5400 (best of 5): exp1 %.2f ms, auto on exp1 data %.2f ms, "
               "exp2 %.2f ms, auto on 20/900 s data %.2f ms (%s)\n",
               t1, ta1, t2, ta2, analysis_model_to_string(f.model));
        assert_true(t1 < 1000 && t2 < 1000 && ta1 < 1000 && ta2 < 1000);

        /* the plateau check, once a second during until: plateau: bounded
         * whatever the phase length (bench/analysis-corpus has the table) */
        double tp[3];
        const size_t lengths[3] = { 600, 5400, 54000 };
        for (int k = 0; k < 3; k++)
                tp[k] = time_fit(analysis_fit_plateau, &two_tau, lengths[k], &f);
        printf("plateau check time (best of 5): n = 600 %.2f ms, 5400 %.2f ms, 54000 %.2f ms\n", tp[0], tp[1], tp[2]);
        assert_true(tp[2] < 1000);
}

/* Plateau and tau error against data length, printed for the record. */
static void table_exp1_row(const struct curve *c, double spans, unsigned seeds) {
        double ep[100], et[100], ci[100];
        size_t n = (size_t) (spans * c->tau1) + 1, covered = 0;

        for (unsigned seed = 0; seed < seeds; seed++) {
                struct rng r = { 77 + seed };
                struct curve cs = *c;
                struct analysis_fit f;
                cs.tinf += rng_uniform(&r) - 0.5;       /* where the curve falls between whole degrees */
                curve_make(&cs, 1000 + seed, t_buf, y_buf, n);
                assert_int_equal(analysis_fit_auto(t_buf, y_buf, n, &f), 0);
                ep[seed] = f.t_inf_c - cs.tinf;
                et[seed] = f.tau_s / c->tau1 - 1;
                ci[seed] = f.ci95_c;
                covered += !(fabs(ep[seed]) > f.ci95_c);
        }
        double p50 = percentile_abs(ep, seeds, 50), p90 = percentile_abs(ep, seeds, 90);
        double pmax = percentile_abs(ep, seeds, 100);
        double t50 = percentile_abs(et, seeds, 50), t90 = percentile_abs(et, seeds, 90);
        double ci50 = percentile_abs(ci, seeds, 50);
        printf("| %4.1f | %5.2f | %5.2f | %5.2f | %5.1f | %5.1f | %5.2f | %3.0f |\n", spans, p50, p90, pmax,
               100 * t50, 100 * t90, ci50, 100.0 * (double) covered / seeds);
}

static void table_exp2_row(double length, unsigned seeds) {
        double e[4][30];
        size_t n = (size_t) length + 1;

        for (unsigned seed = 0; seed < seeds; seed++) {
                struct analysis_fit f;
                curve_make(&two_tau, 2000 + seed, t_buf, y_buf, n);
                assert_int_equal(analysis_fit_exp1(t_buf, y_buf, n, &f), 0);
                e[0][seed] = f.t_inf_c - two_tau.tinf;
                assert_int_equal(analysis_fit_exp1_after(t_buf, y_buf, n, two_tau.tau1, 5, &f), 0);
                e[1][seed] = f.t_inf_c - two_tau.tinf;
                assert_int_equal(analysis_fit_exp2(t_buf, y_buf, n, &f), 0);
                e[2][seed] = f.t_inf_c - two_tau.tinf;
                assert_int_equal(analysis_fit_auto(t_buf, y_buf, n, &f), 0);
                e[3][seed] = f.t_inf_c - two_tau.tinf;
        }
        printf("| %5.0f |", length);
        for (int k = 0; k < 4; k++) {
                double p50 = percentile_abs(e[k], seeds, 50), p90 = percentile_abs(e[k], seeds, 90);
                printf(" %5.2f / %5.2f |", p50, p90);
        }
        printf("\n");
}

static void test_accuracy_table(void **state) {
        const struct curve cases[] = {
                { .tinf = 55, .a1 = 25, .tau1 = 60, .noise = 0.3, .quantise = true },
                { .tinf = 55, .a1 = 25, .tau1 = 60, .noise = 0.1, .quantise = true },
                { .tinf = 55, .a1 = 25, .tau1 = 60, .noise = 0.0, .quantise = true },
                { .tinf = 55, .a1 = 25, .tau1 = 60, .noise = 0.3, .quantise = false },
        };
        const double spans[] = { 0.5, 1, 1.5, 2, 3, 5 };

        for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
                const struct curve *c = &cases[k];
                printf("\nFit accuracy, single exponential: rise 25 C, tau 60 s, 1 s sampling, noise %.1f C%s, "
                       "curve offset random within one degree, 100 seeds, auto model\n",
                       c->noise, c->quantise ? " then rounded to whole degrees" : ", not quantised");
                printf("| data (tau) | plateau err p50 (C) | p90 | max | tau err p50 (%%) | p90 "
                       "| ci95 half-width p50 (C) | ci95 coverage (%%) |\n");
                printf("|---|---|---|---|---|---|---|---|\n");
                for (size_t i = 0; i < sizeof(spans) / sizeof(spans[0]); i++)
                        table_exp1_row(c, spans[i], 100);
        }
        printf("\nTwo time constants 20 s / 900 s (30 %% / 70 %% of 30 C), noise 0.3 C + whole degrees, "
               "30 seeds: plateau |error| p50 / p90 (C)\n");
        printf("| data (s) | exp1 from start | exp1 after 5 tau_fast | exp2 | auto |\n");
        printf("|---|---|---|---|---|\n");
        table_exp2_row(900, 30);
        table_exp2_row(1800, 30);
        table_exp2_row(2700, 30);
        printf("\n");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_exp1_clean_heating),
                cmocka_unit_test(test_exp1_clean_cooling),
                cmocka_unit_test(test_exp1_fast_sampling),
                cmocka_unit_test(test_exp1_noisy_quantised),
                cmocka_unit_test(test_exp1_noisy_cooling),
                cmocka_unit_test(test_exp2_clean),
                cmocka_unit_test(test_exp2_noisy),
                cmocka_unit_test(test_model_selection),
                cmocka_unit_test(test_plateau_not_early),
                cmocka_unit_test(test_plateau_fires),
                cmocka_unit_test(test_corpus_coverage),
                cmocka_unit_test(test_plateau_bounded),
                cmocka_unit_test(test_degenerate),
                cmocka_unit_test(test_missing_samples),
                cmocka_unit_test(test_slope_median),
                cmocka_unit_test(test_stable_baseline),
                cmocka_unit_test(test_metrics_run),
                cmocka_unit_test(test_metrics_firmware_throttled),
                cmocka_unit_test(test_metrics_regulated),
                cmocka_unit_test(test_metrics_regulated_short_load),
                cmocka_unit_test(test_metrics_power),
                cmocka_unit_test(test_metrics_partial),
                cmocka_unit_test(test_timing),
                cmocka_unit_test(test_accuracy_table),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
