/* groups.c — runs grouped by label: each group's statistics, and the verdict between two groups. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis-internal.h"

/* Each metric's name, and the step its values are written with (run.json,
 * the API): the finest difference between two runs read back. */
static const struct {
        const char *name;
        double written_step;
} metric_info[ANALYSIS_METRIC_MAX] = {
        [ANALYSIS_METRIC_RISE] = { "rise_over_ambient_c", 0.01 },
        [ANALYSIS_METRIC_PLATEAU] = { "plateau_c", 0.01 },
        [ANALYSIS_METRIC_TAU_HEAT] = { "tau_heat_s", 0.1 },
        [ANALYSIS_METRIC_T90_HEAT] = { "t90_heat_s", 0.1 },
        [ANALYSIS_METRIC_TAU_COOL] = { "tau_cool_s", 0.1 },
        [ANALYSIS_METRIC_THROTTLED] = { "throttled_fraction", 1e-4 },
        [ANALYSIS_METRIC_FREQ_MEAN] = { "freq_mean_hz", 1 },
        [ANALYSIS_METRIC_WORK_RATE] = { "work_rate_end", 0.1 },
        [ANALYSIS_METRIC_THERMAL_RESISTANCE] = { "thermal_resistance_c_per_w", 1e-3 },
};

const char *analysis_metric_name(enum analysis_metric m, bool over_ambient) {
        if ((unsigned) m >= ANALYSIS_METRIC_MAX)
                return NULL;
        if (m == ANALYSIS_METRIC_RISE && !over_ambient)
                return "rise_c";
        return metric_info[m].name;
}

bool analysis_rise_over_ambient(const struct run_metrics *const *runs, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (runs[i] && isfinite(runs[i]->rise_c) && !isfinite(runs[i]->rise_over_ambient_c))
                        return false;
        return true;
}

/* How far a run's own 95 % interval of its plateau reaches below and above
 * it: the interval's ends when the run has them (it is not symmetric), else
 * its larger half-width both ways; NaN for none. */
static void plateau_reach(const struct run_metrics *r, double *below, double *above) {
        if (isfinite(r->plateau_low_c) && isfinite(r->plateau_high_c) && r->plateau_low_c <= r->plateau_c &&
            r->plateau_c <= r->plateau_high_c) {
                *below = r->plateau_c - r->plateau_low_c;
                *above = r->plateau_high_c - r->plateau_c;
        } else
                *below = *above = r->plateau_ci95_c;
}

/* A run's value of metric m; how far its own 95 % interval reaches
 * below and above it (NaN for none) into own[0] and own[1]; the step it
 * is resolved to into *step: the digits it is written with, for a
 * temperature the sensor's step when coarser. */
static double metric_value(const struct run_metrics *r, enum analysis_metric m, bool over_ambient, double own[2],
                           double *step) {
        own[0] = own[1] = NAN;
        *step = metric_info[m].written_step;
        switch (m) {
        case ANALYSIS_METRIC_RISE:
                plateau_reach(r, &own[0], &own[1]);
                *step = fmax(*step, isfinite(r->temp_step_c) ? r->temp_step_c : 0);
                return over_ambient ? r->rise_over_ambient_c : r->rise_c;
        case ANALYSIS_METRIC_PLATEAU:
                plateau_reach(r, &own[0], &own[1]);
                *step = fmax(*step, isfinite(r->temp_step_c) ? r->temp_step_c : 0);
                return r->plateau_c;
        case ANALYSIS_METRIC_TAU_HEAT:
                return r->tau_heat_s;
        case ANALYSIS_METRIC_T90_HEAT:
                return r->t90_heat_s;
        case ANALYSIS_METRIC_TAU_COOL:
                return r->tau_cool_s;
        case ANALYSIS_METRIC_THROTTLED:
                return r->throttled_fraction;
        case ANALYSIS_METRIC_FREQ_MEAN:
                return r->freq_mean_hz;
        case ANALYSIS_METRIC_WORK_RATE:
                return r->work_rate_end;
        case ANALYSIS_METRIC_THERMAL_RESISTANCE:
                return r->thermal_resistance_c_per_w;
        default:
                return NAN;
        }
}

/* Mean and centred sum of squares, one value at a time (Welford). */
struct stat_acc {
        size_t n;
        double mean, m2;
        double below, above;    /* how far the last value's own interval reaches */
        double step;            /* the coarsest step of the values */
};

static void acc_add(struct stat_acc *a, double x, double below, double above, double step) {
        double delta;

        if (!isfinite(x))
                return;
        a->n++;
        a->step = fmax(a->step, step);
        delta = x - a->mean;
        a->mean += delta / (double) a->n;
        a->m2 += delta * (x - a->mean);
        a->below = below;
        a->above = above;
}

static void acc_finish(const struct stat_acc *a, struct analysis_stat *ret) {
        double half;

        *ret = (struct analysis_stat) { .n = a->n, .mean = NAN, .sd = NAN, .sd_floor = 0, .low = NAN, .high = NAN };
        if (a->n == 0)
                return;
        ret->mean = a->mean;
        if (a->n == 1) {
                if (isfinite(a->below) && a->below >= 0 && isfinite(a->above) && a->above >= 0) {
                        ret->low = a->mean - a->below;
                        ret->high = a->mean + a->above;
                        ret->single_run = true;
                }
                return;
        }
        ret->sd = sqrt(fmax(a->m2, 0) / (double) (a->n - 1));
        ret->sd_floor = a->step / sqrt(12.0);
        half = analysis_t_quantile(0.975, (double) (a->n - 1)) * fmax(ret->sd, ret->sd_floor) / sqrt((double) a->n);
        ret->low = a->mean - half;
        ret->high = a->mean + half;
}

void analysis_stat_compute(const double *values, const double *own_ci95, size_t n, struct analysis_stat *ret) {
        struct stat_acc a = { .below = NAN, .above = NAN };

        for (size_t i = 0; i < n; i++)
                acc_add(&a, values[i], own_ci95 ? own_ci95[i] : NAN, own_ci95 ? own_ci95[i] : NAN, 0);
        acc_finish(&a, ret);
}

static void group_compute(struct analysis_group *g, const struct run_metrics *const *runs,
                          const char *const *labels, size_t n, bool over_ambient) {
        for (enum analysis_metric m = 0; m < ANALYSIS_METRIC_MAX; m++) {
                struct stat_acc a = { .below = NAN, .above = NAN };

                for (size_t i = 0; i < n; i++) {
                        double own[2], step, v;

                        if (strcmp(labels[i], g->label) != 0)
                                continue;
                        v = metric_value(runs[i], m, over_ambient, own, &step);
                        acc_add(&a, v, own[0], own[1], step);
                }
                acc_finish(&a, &g->stat[m]);
        }
}

int analysis_groups(const struct run_metrics *const *runs, const char *const *labels, size_t n, bool over_ambient,
                    struct analysis_group *groups) {
        size_t ng = 0;

        if ((n > 0 && (!runs || !labels || !groups)) || n > INT_MAX)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (!runs[i] || !labels[i])
                        return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                size_t g = 0;

                while (g < ng && strcmp(groups[g].label, labels[i]) != 0)
                        g++;
                if (g == ng)
                        groups[ng++] = (struct analysis_group) { .label = labels[i] };
                groups[g].n++;
                groups[g].regulated += analysis_regulated(runs[i]);
        }
        for (size_t g = 0; g < ng; g++)
                group_compute(&groups[g], runs, labels, n, over_ambient);
        return (int) ng;
}

/*
 * Welch's interval of mean_b - mean_a: the standard error from each group's
 * own variance (the cases need not scatter alike), with the
 * Welch-Satterthwaite degrees of freedom
 *   df = (va + vb)^2 / (va^2 / (na - 1) + vb^2 / (nb - 1)),  v = sd^2 / n,
 * a fraction in general. Each SD is at least its group's sd_floor: runs
 * that agree to the last step their values resolve (a whole-degree sensor,
 * a simulator that repeats itself exactly) still differ by up to that
 * step, unseen. Without a floor either (values given by hand) two groups
 * that agree exactly give no interval: there is no spread to judge by.
 */
static void verdict_welch(const struct analysis_stat *sa, const struct analysis_stat *sb,
                          struct analysis_verdict *v) {
        double sda = fmax(sa->sd, sa->sd_floor), sdb = fmax(sb->sd, sb->sd_floor);
        double va = sda * sda / (double) sa->n, vb = sdb * sdb / (double) sb->n, half;

        if (!(va + vb > 0))
                return;
        v->df = (va + vb) * (va + vb) / (va * va / (double) (sa->n - 1) + vb * vb / (double) (sb->n - 1));
        half = analysis_t_quantile(0.975, v->df) * sqrt(va + vb);
        v->low = v->difference - half;
        v->high = v->difference + half;
}

/*
 * Two single runs, each with its own 95 % interval (the plateau's, not
 * symmetric): the difference reaches from one's lowest against the other's
 * highest to the other way round, the reaches added, not added in
 * quadrature as independent errors would be. The sum covers the difference
 * whenever both intervals cover their runs (at least 90 % of the time
 * whatever their shapes, by Bonferroni; about 99 % for two normal errors of
 * similar size), where the quadrature sum would claim 95 % from intervals
 * that are themselves only approximate. Even so a run's interval knows the error of its fit, not the
 * spread between runs (remounting the case, the room): only repeats
 * measure that, so the verdict says it came from single runs.
 */
static void verdict_single_runs(const struct analysis_stat *sa, const struct analysis_stat *sb,
                                struct analysis_verdict *v) {
        /* b - a: from b's lowest against a's highest to b's highest against a's lowest */
        v->low = sb->low - sa->high;
        v->high = sb->high - sa->low;
        v->single_runs = true;
}

bool analysis_group_regulated(const struct analysis_group *g) {
        return g && g->regulated > 0 && 2 * g->regulated >= g->n;
}

enum analysis_metric analysis_verdict_metric(const struct analysis_group *a, const struct analysis_group *b) {
        if (!analysis_group_regulated(a) || !analysis_group_regulated(b))
                return ANALYSIS_METRIC_RISE;
        if (a->stat[ANALYSIS_METRIC_WORK_RATE].n > 0 && b->stat[ANALYSIS_METRIC_WORK_RATE].n > 0)
                return ANALYSIS_METRIC_WORK_RATE;
        if (a->stat[ANALYSIS_METRIC_FREQ_MEAN].n > 0 && b->stat[ANALYSIS_METRIC_FREQ_MEAN].n > 0)
                return ANALYSIS_METRIC_FREQ_MEAN;
        return ANALYSIS_METRIC_RISE;
}

int analysis_verdict(const struct analysis_group *a, const struct analysis_group *b, enum analysis_metric metric,
                     bool over_ambient, double margin, struct analysis_verdict *ret) {
        bool perf = metric == ANALYSIS_METRIC_WORK_RATE || metric == ANALYSIS_METRIC_FREQ_MEAN;
        const struct analysis_stat *sa, *sb;

        if (!a || !b || !ret || (metric != ANALYSIS_METRIC_RISE && metric != ANALYSIS_METRIC_PLATEAU && !perf))
                return -EINVAL;
        sa = &a->stat[metric];
        sb = &b->stat[metric];
        *ret = (struct analysis_verdict) {
                .a = a, .b = b, .metric = metric, .over_ambient = over_ambient,
                .difference = NAN, .low = NAN, .high = NAN, .df = NAN, .regulated = perf,
                .margin = margin > 0 ? margin : perf ? ANALYSIS_EQUIVALENCE_SHARE * fabs(sa->mean) :
                          ANALYSIS_EQUIVALENCE_MARGIN_C,
        };
        if (sa->n == 0 || sb->n == 0)
                return 0;
        ret->difference = sb->mean - sa->mean;
        if (sa->n >= 2 && sb->n >= 2)
                verdict_welch(sa, sb, ret);
        else if (sa->single_run && sb->single_run)
                verdict_single_runs(sa, sb, ret);
        if (isnan(ret->low))
                return 0;
        ret->conclusive = ret->low > 0 || ret->high < 0;
        ret->equivalent = ret->low >= -ret->margin && ret->high <= ret->margin;
        if (ret->conclusive && perf)
                ret->better = ret->difference > 0 ? b : a;
        else if (ret->conclusive)
                ret->cooler = ret->difference < 0 ? b : a;
        return 0;
}

/* x rounded to the tenth shown, without a "-0.0". */
static double tenth(double x) {
        return round(x * 10) / 10 + 0.0;
}

static const char *verdict_phrase(const struct analysis_verdict *v) {
        if (v->metric == ANALYSIS_METRIC_PLATEAU)
                return "at the plateau";
        return v->over_ambient ? "over ambient" : "over the idle baseline";
}

/* "3 runs each", "1 and 3 runs", then what qualifies the interval. */
static void verdict_counts(const struct analysis_verdict *v, char *buf, size_t size) {
        size_t na = v->a->stat[v->metric].n, nb = v->b->stat[v->metric].n;
        int k;

        if (na == nb)
                k = snprintf(buf, size, "%zu run%s each", na, na == 1 ? "" : "s");
        else
                k = snprintf(buf, size, "%zu and %zu runs", na, nb);
        if (k >= 0 && (size_t) k < size && v->single_runs)
                k += snprintf(buf + k, size - (size_t) k, ", their fits' intervals only");
        if (k >= 0 && (size_t) k < size && v->metric == ANALYSIS_METRIC_RISE && !v->over_ambient)
                snprintf(buf + k, size - (size_t) k, "; no ambient known");
}

/* Why there is no interval, or the interval that does not decide. */
static int verdict_text_open(const struct analysis_verdict *v, const char *counts, char *buf, size_t size) {
        const struct analysis_stat *sa = &v->a->stat[v->metric], *sb = &v->b->stat[v->metric];
        const char *a = v->a->label, *b = v->b->label;

        if (sa->n == 0 || sb->n == 0)
                return snprintf(buf, size, "%s and %s: not conclusive: repeat for confidence (%s has no %s)", a, b,
                                sa->n == 0 ? a : b, v->metric == ANALYSIS_METRIC_PLATEAU ? "plateau" : "rise");
        if (isnan(v->low) && sa->n >= 2 && sb->n >= 2)
                return snprintf(buf, size, "%s and %s: not conclusive: repeat for confidence "
                                "(the runs agree exactly: no spread to judge by; %s)", a, b, counts);
        if (isnan(v->low))
                return snprintf(buf, size, "%s and %s: not conclusive: repeat for confidence (%s)", a, b, counts);
        return snprintf(buf, size, "%s and %s: not conclusive: repeat for confidence "
                        "(%s - %s: %.1f to %.1f °C, 95 %%; %s)", a, b, b, a, tenth(v->low), tenth(v->high), counts);
}

/* Both held by throttling: the sustained work (or clock), in per cent of
 * the lesser group's mean. */
static int verdict_text_regulated(const struct analysis_verdict *v, const char *counts, char *buf, size_t size) {
        bool work = v->metric == ANALYSIS_METRIC_WORK_RATE;
        const char *what = work ? "work" : "clock", *a = v->a->label, *b = v->b->label;
        double ma = v->a->stat[v->metric].mean, mb = v->b->stat[v->metric].mean, base = fmin(ma, mb);

        if (!(base > 0) || isnan(v->low))
                return snprintf(buf, size, "%s and %s: both held by throttling: not conclusive: repeat for "
                                "confidence (%s)", a, b, counts);
        if (v->conclusive) {
                const struct analysis_group *worse = v->better == v->a ? v->b : v->a;
                double lo = v->better == v->b ? v->low : -v->high, hi = v->better == v->b ? v->high : -v->low;
                return snprintf(buf, size, "%s sustains %.1f %% more %s than %s, both held by throttling (95 %%: "
                                "%.1f to %.1f %%; %s)", v->better->label, tenth(100 * fabs(v->difference) / base),
                                what, worse->label, tenth(100 * lo / base), tenth(100 * hi / base), counts);
        }
        if (v->equivalent)
                return snprintf(buf, size, "%s and %s: both held by throttling, no difference in %s beyond ±%.1f %% "
                                "(95 %%; %s)", a, b, what,
                                ceil(100 * fmax(fabs(v->low), fabs(v->high)) / base * 10 - 1e-9) / 10, counts);
        return snprintf(buf, size, "%s and %s: both held by throttling: not conclusive: repeat for confidence "
                        "(%s - %s: %.1f to %.1f %% %s; %s)", a, b, b, a, tenth(100 * v->low / base),
                        tenth(100 * v->high / base), what, counts);
}

int analysis_verdict_text(const struct analysis_verdict *v, char *buf, size_t size) {
        char counts[96];

        verdict_counts(v, counts, sizeof counts);
        if (v->regulated)
                return verdict_text_regulated(v, counts, buf, size);
        if (v->conclusive) {
                const struct analysis_group *warm = v->cooler == v->a ? v->b : v->a;
                double lo = v->cooler == v->a ? v->low : -v->high, hi = v->cooler == v->a ? v->high : -v->low;

                if (v->equivalent)
                        return snprintf(buf, size, "%s runs %.1f °C cooler %s than %s (95 %%: %.1f to %.1f °C, "
                                        "inside the ±%.1f °C margin; %s)", v->cooler->label,
                                        tenth(fabs(v->difference)), verdict_phrase(v), warm->label, tenth(lo),
                                        tenth(hi), v->margin, counts);
                return snprintf(buf, size, "%s runs %.1f °C cooler %s than %s (95 %%: %.1f to %.1f °C; %s)",
                                v->cooler->label, tenth(fabs(v->difference)), verdict_phrase(v), warm->label,
                                tenth(lo), tenth(hi), counts);
        }
        if (v->equivalent) {
                /* the bound shown is rounded up: the interval lies inside it */
                double bound = ceil(fmax(fabs(v->low), fabs(v->high)) * 10 - 1e-9) / 10;
                return snprintf(buf, size, "%s and %s: no difference beyond ±%.1f °C %s (95 %%; %s)", v->a->label,
                                v->b->label, bound, verdict_phrase(v), counts);
        }
        return verdict_text_open(v, counts, buf, size);
}

int analysis_first_verdict_text(const struct run_metrics *const *runs, const char *const *labels, size_t n,
                                char *buf, size_t size) {
        bool over_ambient = analysis_rise_over_ambient(runs, n);
        struct analysis_verdict v;
        struct analysis_group *g;
        int ng;

        if (!buf || size == 0)
                return -EINVAL;
        buf[0] = '\0';
        if (n < 2)
                return 0;
        if (!(g = calloc(n, sizeof *g)))
                return -ENOMEM;
        ng = analysis_groups(runs, labels, n, over_ambient, g);
        if (ng >= 2) {
                analysis_verdict(&g[0], &g[1], analysis_verdict_metric(&g[0], &g[1]), over_ambient, 0, &v);
                analysis_verdict_text(&v, buf, size);
        }
        free(g);
        return ng < 0 ? ng : ng >= 2;
}
