/* test-groups.c — Student t quantiles, runs grouped by label, the verdict between groups, on worked examples. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "analysis.h"

#define MAX_RUNS 32

static void assert_near(double got, double want, double tol) {
        if (!(fabs(got - want) <= tol))
                fail_msg("%.9g is not %.9g +- %g", got, want, tol);
}

/* Runs whose rise over ambient (and rise over baseline, 10 C more) are
 * values[i], under labels[i]; plateau_ci95 is each run's own interval. */
struct fixture {
        struct run_metrics m[MAX_RUNS];
        const struct run_metrics *p[MAX_RUNS];
        const char *labels[MAX_RUNS];
        struct analysis_group g[MAX_RUNS];
        size_t n;
};

static void add_runs(struct fixture *f, const char *label, const double *values, size_t n, double ci95) {
        for (size_t i = 0; i < n; i++) {
                struct run_metrics *m = &f->m[f->n];

                analysis_metrics_init(m, 20.0);
                m->rise_over_ambient_c = values[i];
                m->plateau_c = isnan(values[i]) ? NAN : 20.0 + values[i];
                m->rise_c = isnan(values[i]) ? NAN : values[i] - 10.0;
                m->plateau_ci95_c = ci95;
                m->tau_heat_s = 100.0 + (double) i;
                f->p[f->n] = m;
                f->labels[f->n] = label;
                f->n++;
        }
}

static int group(struct fixture *f) {
        return analysis_groups(f->p, f->labels, f->n, analysis_rise_over_ambient(f->p, f->n), f->g);
}

/* Textbook two-sided 95 % values (e.g. any statistics table), and the
 * normal quantile for very large df. */
static void test_t_quantiles(void **state) {
        static const struct {
                double df, t;
        } table[] = { { 1, 12.706 }, { 2, 4.303 }, { 3, 3.182 }, { 4, 2.776 }, { 5, 2.571 }, { 10, 2.228 },
                      { 20, 2.086 }, { 30, 2.042 }, { 60, 2.000 }, { 120, 1.980 }, { 1e6, 1.960 }, { 1e12, 1.960 },
                      { INFINITY, 1.960 } };

        (void) state;
        for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
                assert_near(analysis_t_quantile(0.975, table[i].df), table[i].t, 0.001);
                assert_near(analysis_t_quantile(0.025, table[i].df), -table[i].t, 0.001);
        }
        /* one-sided 95 %, 99.5 %; and fractional df between the whole ones */
        assert_near(analysis_t_quantile(0.95, 1), 6.314, 0.001);
        assert_near(analysis_t_quantile(0.95, 10), 1.812, 0.001);
        assert_near(analysis_t_quantile(0.995, 5), 4.032, 0.001);
        assert_near(analysis_t_quantile(0.975, 4.5), 2.6589, 0.0001);
        assert_near(analysis_t_quantile(0.975, 17.776473516), 2.1028, 0.0001);
        assert_near(analysis_t_quantile(0.5, 3), 0, 1e-12);
        /* the quantile inverts the CDF: df = 1 is Cauchy, atan in closed form */
        assert_near(analysis_t_cdf(1.0, 1), 0.75, 1e-12);
        assert_near(analysis_t_cdf(analysis_t_quantile(0.9, 2.3), 2.3), 0.9, 1e-10);
        assert_near(analysis_t_cdf(-2.0, 7.5) + analysis_t_cdf(2.0, 7.5), 1.0, 1e-12);
        assert_true(isnan(analysis_t_quantile(0.975, 0)));
        assert_true(isnan(analysis_t_quantile(1.0, 3)));
        assert_true(isnan(analysis_t_quantile(NAN, 3)));
}

/*
 * Student's sleep data (Cushny and Peebles, 1905), the example of R's
 * t.test(): t.test(extra ~ group, data = sleep) prints "Welch Two Sample
 * t-test, t = -1.8608, df = 17.776, 95 percent confidence interval:
 * -3.3654832 0.2054832" for group 1 - group 2. Here a is group 2, b group 1.
 * The interval holds 0: not conclusive, nor inside +-1.
 */
static void test_welch_sleep_data(void **state) {
        static const double g1[] = { 0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0 };
        static const double g2[] = { 1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4 };
        struct fixture f = {};
        struct analysis_verdict v;
        char text[256];

        (void) state;
        add_runs(&f, "group 2", g2, 10, 0.5);
        add_runs(&f, "group 1", g1, 10, 0.5);
        assert_int_equal(group(&f), 2);
        assert_int_equal(analysis_verdict(&f.g[0], &f.g[1], ANALYSIS_METRIC_RISE, true, 0, &v), 0);
        assert_near(v.difference, -1.58, 1e-9);
        assert_near(v.df, 17.776, 0.001);
        assert_near(v.low, -3.3654832, 1e-6);
        assert_near(v.high, 0.2054832, 1e-6);
        assert_false(v.conclusive);
        assert_false(v.equivalent);
        assert_null(v.cooler);
        analysis_verdict_text(&v, text, sizeof text);
        assert_string_equal(text, "group 2 and group 1: not conclusive: repeat for confidence "
                            "(group 1 - group 2: -3.4 to 0.2 °C, 95 %; 10 runs each)");
}

/*
 * Worked by hand. A: 30.2, 29.8, 30.6: mean 30.2, s^2 = (0 + 0.16 + 0.16) / 2
 * = 0.16, va = s^2 / 3 = 0.053333. B: 26.1, 25.5, 26.4, 25.6: mean 25.9,
 * s^2 = (0.04 + 0.16 + 0.25 + 0.09) / 3 = 0.18, vb = 0.045. se^2 = 0.098333,
 * se = 0.313581. df = 0.098333^2 / (0.053333^2 / 2 + 0.045^2 / 3)
 * = 0.0096694 / 0.0020972 = 4.6106; t(0.975; 4.6106) = 2.63728 (between
 * 2.776 at df 4 and 2.571 at df 5); half-width 0.82700. b - a = -4.3,
 * interval -5.1270 to -3.4730: B is cooler, conclusive.
 */
static void test_welch_by_hand(void **state) {
        static const double a[] = { 30.2, 29.8, 30.6 }, b[] = { 26.1, 25.5, 26.4, 25.6 };
        struct fixture f = {};
        struct analysis_verdict v;
        char text[256];

        (void) state;
        add_runs(&f, "A", a, 3, 2.0);
        add_runs(&f, "B", b, 4, 2.0);
        assert_int_equal(group(&f), 2);
        assert_near(f.g[0].stat[ANALYSIS_METRIC_RISE].sd, 0.4, 1e-9);
        /* A's own interval: 30.2 +- 4.303 * 0.4 / sqrt 3 */
        assert_near(f.g[0].stat[ANALYSIS_METRIC_RISE].high - 30.2, 4.302653 * 0.4 / sqrt(3), 1e-5);
        assert_int_equal(analysis_verdict(&f.g[0], &f.g[1], ANALYSIS_METRIC_RISE, true, 0, &v), 0);
        assert_near(v.difference, -4.3, 1e-9);
        assert_near(v.df, 4.6106, 0.0001);
        assert_near(v.low, -5.1270, 0.0001);
        assert_near(v.high, -3.4730, 0.0001);
        assert_true(v.conclusive);
        assert_false(v.equivalent || v.single_runs);
        assert_ptr_equal(v.cooler, &f.g[1]);
        analysis_verdict_text(&v, text, sizeof text);
        assert_string_equal(text, "B runs 4.3 °C cooler over ambient than A (95 %: 3.5 to 5.1 °C; 3 and 4 runs)");
        /* the other way round: the same interval mirrored, the same sentence */
        assert_int_equal(analysis_verdict(&f.g[1], &f.g[0], ANALYSIS_METRIC_RISE, true, 0, &v), 0);
        assert_near(v.low, 3.4730, 0.0001);
        assert_ptr_equal(v.cooler, &f.g[1]);
        analysis_verdict_text(&v, text, sizeof text);
        assert_string_equal(text, "B runs 4.3 °C cooler over ambient than A (95 %: 3.5 to 5.1 °C; 4 and 3 runs)");
}

/* A group of one has its run's own interval (the plateau's) where the
 * metric has one, and none where not. Two single runs are combined by
 * adding their half-widths, and marked; a single run against a group is
 * never conclusive. */
static void test_group_of_one(void **state) {
        static const double a = 30.0, b = 25.0, c[] = { 29.0, 29.5, 30.0 };
        struct fixture f = {};
        struct analysis_verdict v;
        char text[256];

        (void) state;
        add_runs(&f, "A", &a, 1, 1.5);
        add_runs(&f, "B", &b, 1, 2.0);
        add_runs(&f, "C", c, 3, 0.1);
        assert_int_equal(group(&f), 3);
        const struct analysis_stat *s = &f.g[0].stat[ANALYSIS_METRIC_PLATEAU];
        assert_int_equal(s->n, 1);
        assert_true(s->single_run && isnan(s->sd));
        assert_near(s->low, 48.5, 1e-9);
        assert_near(s->high, 51.5, 1e-9);
        s = &f.g[0].stat[ANALYSIS_METRIC_TAU_HEAT];
        assert_int_equal(s->n, 1);
        assert_false(s->single_run);
        assert_true(isnan(s->low) && isnan(s->high));
        assert_near(s->mean, 100.0, 1e-9);

        assert_int_equal(analysis_verdict(&f.g[0], &f.g[1], ANALYSIS_METRIC_RISE, true, 0, &v), 0);
        assert_true(v.single_runs && v.conclusive);
        assert_true(isnan(v.df));
        assert_near(v.low, -5.0 - 3.5, 1e-9);
        assert_near(v.high, -5.0 + 3.5, 1e-9);
        assert_ptr_equal(v.cooler, &f.g[1]);
        analysis_verdict_text(&v, text, sizeof text);
        assert_string_equal(text, "B runs 5.0 °C cooler over ambient than A (95 %: 1.5 to 8.5 °C; "
                            "1 run each, their fits' intervals only)");

        assert_int_equal(analysis_verdict(&f.g[2], &f.g[1], ANALYSIS_METRIC_RISE, true, 0, &v), 0);
        assert_near(v.difference, -4.5, 1e-9);
        assert_true(isnan(v.low) && isnan(v.high));
        assert_false(v.conclusive || v.equivalent || v.single_runs);
        analysis_verdict_text(&v, text, sizeof text);
        assert_string_equal(text, "C and B: not conclusive: repeat for confidence (3 and 1 runs)");
}

/* A single run's own interval is not symmetric (a rising curve's plateau
 * is known better from below): the group keeps its ends, and two single
 * runs' difference reaches from one's lowest against the other's highest. */
static void test_group_of_one_asymmetric(void **state) {
        static const double a = 30.0, b = 25.0;
        struct fixture f = {};
        struct analysis_verdict v;

        (void) state;
        add_runs(&f, "A", &a, 1, 6.0);
        add_runs(&f, "B", &b, 1, 2.0);
        f.m[0].plateau_low_c = 49.5;            /* 50 C: 0.5 below, 6 above */
        f.m[0].plateau_high_c = 56.0;
        f.m[1].plateau_low_c = 44.0;            /* 45 C: 1 below, 2 above */
        f.m[1].plateau_high_c = 47.0;
        assert_int_equal(group(&f), 2);
        assert_near(f.g[0].stat[ANALYSIS_METRIC_PLATEAU].low, 49.5, 1e-9);
        assert_near(f.g[0].stat[ANALYSIS_METRIC_PLATEAU].high, 56.0, 1e-9);
        assert_near(f.g[0].stat[ANALYSIS_METRIC_RISE].low, 29.5, 1e-9);
        assert_near(f.g[0].stat[ANALYSIS_METRIC_RISE].high, 36.0, 1e-9);
        assert_int_equal(analysis_verdict(&f.g[0], &f.g[1], ANALYSIS_METRIC_RISE, true, 0, &v), 0);
        /* B - A from 24 - 36 to 27 - 29.5: symmetric half-widths (6 and 2) would give -13 to 3 */
        assert_near(v.low, -12.0, 1e-9);
        assert_near(v.high, -2.5, 1e-9);
        assert_true(v.single_runs && v.conclusive);
        assert_ptr_equal(v.cooler, &f.g[1]);
}

/* Close means and little spread: the interval lies inside +-1 C. The
 * bound shown is rounded up. A narrower margin does not hold it. */
static void test_equivalence(void **state) {
        static const double a[] = { 40.1, 40.3, 40.2 }, b[] = { 40.4, 40.2, 40.3 };
        struct fixture f = {};
        struct analysis_verdict v;
        char text[256];

        (void) state;
        add_runs(&f, "A", a, 3, 1.0);
        add_runs(&f, "B", b, 3, 1.0);
        group(&f);
        assert_int_equal(analysis_verdict(&f.g[0], &f.g[1], ANALYSIS_METRIC_RISE, true, 0, &v), 0);
        assert_near(v.margin, ANALYSIS_EQUIVALENCE_MARGIN_C, 0);
        assert_near(v.df, 4.0, 1e-9);
        assert_near(v.low, -0.1266958, 1e-6);
        assert_near(v.high, 0.3266958, 1e-6);
        assert_true(v.equivalent);
        assert_false(v.conclusive);
        assert_null(v.cooler);
        analysis_verdict_text(&v, text, sizeof text);
        assert_string_equal(text, "A and B: no difference beyond ±0.4 °C over ambient (95 %; 3 runs each)");
        assert_int_equal(analysis_verdict(&f.g[0], &f.g[1], ANALYSIS_METRIC_RISE, true, 0.3, &v), 0);
        assert_false(v.equivalent || v.conclusive);
        assert_int_equal(analysis_verdict(&f.g[0], &f.g[1], ANALYSIS_METRIC_TAU_HEAT, true, 0, &v), -EINVAL);
}

/* Runs that repeat each other exactly (a simulator, a whole-degree sensor
 * whose curves land on the same steps): the SD is 0, and the intervals use
 * the step the values resolve, step / sqrt 12, instead. With the sensor's
 * 1 C step: t(4) = 2.7764 * sqrt(2 / 12 / 3) = 0.6544 either side of -4.
 * With no step known, the 0.01 C the rise is written with. */
static void test_identical_runs(void **state) {
        static const double a[] = { 30.12, 30.12, 30.12 }, b[] = { 26.12, 26.12, 26.12 };
        struct fixture f = {};
        struct analysis_verdict v;

        (void) state;
        add_runs(&f, "A", a, 3, 2.0);
        add_runs(&f, "B", b, 3, 2.0);
        for (size_t i = 0; i < f.n; i++)
                f.m[i].temp_step_c = 1.0;
        group(&f);
        assert_near(f.g[0].stat[ANALYSIS_METRIC_RISE].sd, 0, 1e-9);
        assert_near(f.g[0].stat[ANALYSIS_METRIC_RISE].sd_floor, 1 / sqrt(12), 1e-12);
        /* the group's own interval: t(2) = 4.303 * 0.2887 / sqrt 3 */
        assert_near(f.g[0].stat[ANALYSIS_METRIC_RISE].high - 30.12, 4.302653 / sqrt(12) / sqrt(3), 1e-5);
        assert_int_equal(analysis_verdict(&f.g[0], &f.g[1], ANALYSIS_METRIC_RISE, true, 0, &v), 0);
        assert_near(v.df, 4.0, 1e-9);
        assert_near(v.low, -4.0 - 0.654414, 1e-5);
        assert_near(v.high, -4.0 + 0.654414, 1e-5);
        assert_true(v.conclusive);
        assert_ptr_equal(v.cooler, &f.g[1]);
        /* tau_heat_s has its spread (100, 101, 102): the floor (0.1 s written) does not touch it */
        assert_near(f.g[0].stat[ANALYSIS_METRIC_TAU_HEAT].sd, 1.0, 1e-12);

        for (size_t i = 0; i < f.n; i++)
                f.m[i].temp_step_c = NAN;
        group(&f);
        assert_near(f.g[0].stat[ANALYSIS_METRIC_RISE].sd_floor, 0.01 / sqrt(12), 1e-12);
        assert_int_equal(analysis_verdict(&f.g[0], &f.g[1], ANALYSIS_METRIC_RISE, true, 0, &v), 0);
        assert_near(v.high - v.low, 2 * 0.00654414, 1e-7);
        assert_true(v.conclusive);
}

/* A run without the metric does not count in n; the others are the group. */
static void test_nan_skipped(void **state) {
        static const double a[] = { 30.0, NAN, 31.0, 32.0 }, b[] = { NAN };
        struct fixture f = {};
        struct analysis_verdict v;
        char text[256];

        (void) state;
        add_runs(&f, "A", a, 4, 0.5);
        add_runs(&f, "B", b, 1, 0.5);
        assert_int_equal(group(&f), 2);
        assert_int_equal(f.g[0].n, 4);
        assert_int_equal(f.g[0].stat[ANALYSIS_METRIC_RISE].n, 3);
        assert_near(f.g[0].stat[ANALYSIS_METRIC_RISE].mean, 31.0, 1e-12);
        assert_near(f.g[0].stat[ANALYSIS_METRIC_RISE].sd, 1.0, 1e-12);
        assert_int_equal(f.g[0].stat[ANALYSIS_METRIC_TAU_HEAT].n, 4);
        assert_int_equal(f.g[1].n, 1);
        assert_int_equal(f.g[1].stat[ANALYSIS_METRIC_RISE].n, 0);
        assert_true(isnan(f.g[1].stat[ANALYSIS_METRIC_RISE].mean));
        assert_int_equal(analysis_verdict(&f.g[0], &f.g[1], ANALYSIS_METRIC_RISE, true, 0, &v), 0);
        assert_true(isnan(v.difference) && !v.conclusive && !v.equivalent);
        analysis_verdict_text(&v, text, sizeof text);
        assert_string_equal(text, "A and B: not conclusive: repeat for confidence (B has no rise)");

        double values[] = { NAN, 2.0, INFINITY, 4.0 };
        struct analysis_stat s;
        analysis_stat_compute(values, NULL, 4, &s);
        assert_int_equal(s.n, 2);
        assert_near(s.mean, 3.0, 1e-12);
        assert_near(s.high - s.mean, 12.706205 * sqrt(2) / sqrt(2), 1e-5);
}

/* Groups in the order their labels first come; with a run that has a rise
 * over its baseline and no ambient, every rise is taken over the baseline,
 * and the sentence says so. */
/* Both cases held at the firmware's limit by throttling: their rises differ
 * by noise; the verdict is on the work they sustain, higher is better, in
 * per cent. One case held and the other not: on the rise, as ever. */
static void test_regulated_groups(void **state) {
        static const double rise[] = { 58.0, 58.1, 57.9 }, work_a[] = { 800, 810, 790 }, work_b[] = { 900, 905, 895 };
        struct fixture f = {};
        struct analysis_verdict v;
        char text[320];

        (void) state;
        add_runs(&f, "A", rise, 3, 0.2);
        add_runs(&f, "B", rise, 3, 0.2);
        for (size_t i = 0; i < 6; i++) {
                f.m[i].regulated_c = 80.0;
                f.m[i].throttled_fraction = 0.8;
                f.m[i].work_rate_end = i < 3 ? work_a[i] : work_b[i - 3];
        }
        assert_int_equal(group(&f), 2);
        assert_true(analysis_group_regulated(&f.g[0]) && analysis_group_regulated(&f.g[1]));
        assert_int_equal(analysis_verdict_metric(&f.g[0], &f.g[1]), ANALYSIS_METRIC_WORK_RATE);
        assert_int_equal(analysis_verdict(&f.g[0], &f.g[1], ANALYSIS_METRIC_WORK_RATE, true, 0, &v), 0);
        assert_true(v.regulated && v.conclusive && !v.equivalent);
        assert_null(v.cooler);
        assert_ptr_equal(v.better, &f.g[1]);
        assert_near(v.difference, 100.0, 1e-9);
        assert_near(v.margin, 0.02 * 800, 1e-9);
        analysis_verdict_text(&v, text, sizeof text);
        assert_non_null(strstr(text, "B sustains 12.5 % more work than A, both held by throttling (95 %: "));
        assert_non_null(strstr(text, "; 3 runs each)"));
        /* without work counts: the clock */
        for (size_t i = 0; i < 6; i++) {
                f.m[i].work_rate_end = NAN;
                f.m[i].freq_mean_hz = 1.2e9;
        }
        group(&f);
        assert_int_equal(analysis_verdict_metric(&f.g[0], &f.g[1]), ANALYSIS_METRIC_FREQ_MEAN);
        /* one held, one not: the rise */
        for (size_t i = 3; i < 6; i++)
                f.m[i].regulated_c = NAN;
        group(&f);
        assert_false(analysis_group_regulated(&f.g[1]));
        assert_int_equal(analysis_verdict_metric(&f.g[0], &f.g[1]), ANALYSIS_METRIC_RISE);
}

static void test_order_and_baseline_rise(void **state) {
        static const double hot[] = { 35.0, 35.4 }, cool[] = { 30.0, 30.2, 29.8 };
        struct fixture f = {};
        struct analysis_verdict v;
        char text[300];

        (void) state;
        add_runs(&f, "hot", hot, 1, 1.0);
        add_runs(&f, "cool", cool, 3, 1.0);
        add_runs(&f, "hot", hot + 1, 1, 1.0);
        assert_true(analysis_rise_over_ambient(f.p, f.n));
        f.m[1].rise_over_ambient_c = NAN;       /* no ambient known for one run */
        assert_false(analysis_rise_over_ambient(f.p, f.n));
        assert_int_equal(group(&f), 2);
        assert_string_equal(f.g[0].label, "hot");
        assert_int_equal(f.g[0].n, 2);
        assert_string_equal(f.g[1].label, "cool");
        assert_near(f.g[1].stat[ANALYSIS_METRIC_RISE].mean, 20.0, 1e-9);
        assert_string_equal(analysis_metric_name(ANALYSIS_METRIC_RISE, false), "rise_c");
        assert_string_equal(analysis_metric_name(ANALYSIS_METRIC_RISE, true), "rise_over_ambient_c");
        assert_string_equal(analysis_metric_name(ANALYSIS_METRIC_WORK_RATE, true), "work_rate_end");
        assert_null(analysis_metric_name(ANALYSIS_METRIC_MAX, true));
        assert_int_equal(analysis_verdict(&f.g[0], &f.g[1], ANALYSIS_METRIC_RISE, false, 0, &v), 0);
        assert_true(v.conclusive);
        assert_ptr_equal(v.cooler, &f.g[1]);
        analysis_verdict_text(&v, text, sizeof text);
        assert_non_null(strstr(text, "cool runs 5.2 °C cooler over the idle baseline than hot (95 %: "));
        assert_non_null(strstr(text, "; 2 and 3 runs; no ambient known)"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_t_quantiles),
                cmocka_unit_test(test_welch_sleep_data),
                cmocka_unit_test(test_welch_by_hand),
                cmocka_unit_test(test_group_of_one),
                cmocka_unit_test(test_group_of_one_asymmetric),
                cmocka_unit_test(test_equivalence),
                cmocka_unit_test(test_identical_runs),
                cmocka_unit_test(test_nan_skipped),
                cmocka_unit_test(test_order_and_baseline_rise),
                cmocka_unit_test(test_regulated_groups),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
