/* analysis.h — curve analysis of runs: exponential fits, stop rules (stable, plateau, baseline), run metrics, group statistics and verdicts. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/*
 * Pure functions: no I/O, no logging, no global state. Times are seconds
 * (double, any origin, strictly increasing over the samples that carry a
 * value), temperatures degrees C. A NaN temperature marks a missing sample
 * and is skipped. Errors are returned as -errno:
 *   -EINVAL   bad arguments, non-finite or non-increasing times
 *   -ENODATA  too few valid samples (or too short a span) for the question
 *   -EDOM     degenerate data: a flat line, or no fit could be made
 *   -ENOMEM   out of memory (the fits allocate O(n) scratch once per call)
 */

/* Stop rule defaults (README.md, "Runs"). */
#define ANALYSIS_STABLE_WINDOW_S        300.0
#define ANALYSIS_STABLE_SLOPE_C_PER_S   (0.1 / 60.0)    /* 0.1 C/min */
#define ANALYSIS_PLATEAU_CI95_C         0.5             /* predicted plateau known within +-0.5 C */
#define ANALYSIS_PLATEAU_WINDOW_S       300.0           /* the slope shown: over the last 5 min (the old guard ... */
#define ANALYSIS_PLATEAU_SLOPE_C_PER_S  (0.1 / 60.0)    /* ... was below 0.1 C/min) */
#define ANALYSIS_PLATEAU_TOLERANCE_C    0.5             /* until: plateau's default tolerance */
#define ANALYSIS_PLATEAU_HORIZON_S      5400.0          /* default horizon: a stress phase's default max */
#define ANALYSIS_BASELINE_TOLERANCE_C   1.0             /* "back within 1 C of the baseline" */
#define ANALYSIS_BASELINE_WINDOW_S      10.0            /* median over this trailing window */
#define ANALYSIS_BASELINE_IDLE_S        60.0            /* baseline: median of the last 60 s of idle */
#define ANALYSIS_WORK_RATE_WINDOW_S     30.0            /* work rate: median of first/last 30 s of load */
#define ANALYSIS_REGULATED_SHARE        0.5             /* throttled for at least half the load, or of its
                                                         * last minute: held by throttling */
#define ANALYSIS_REGULATED_NEAR_C       2.0             /* without a clock: a flat top this near a firmware limit */
#define ANALYSIS_REGULATED_WINDOW_S     60.0            /* the top: the last minute of the load */
#define ANALYSIS_REGULATED_MIN_C        60.0            /* no board throttles for heat below this (the Pi 3B+'s
                                                         * soft limit): a clock held lower is the governor's */

enum analysis_model {
        ANALYSIS_MODEL_NONE,
        ANALYSIS_MODEL_EXP1,    /* T(t) = T_inf - a e^{-t/tau} */
        ANALYSIS_MODEL_EXP2,    /* T(t) = T_inf - a_fast e^{-t/tau_fast} - a e^{-t/tau} */
};

/* "exp1", "exp2"; NULL for ANALYSIS_MODEL_NONE. */
const char *analysis_model_to_string(enum analysis_model m);

/* What the time constant learned from earlier runs did to a fit. */
enum analysis_prior_use {
        ANALYSIS_PRIOR_NONE,            /* no prior given */
        ANALYSIS_PRIOR_USED,            /* it bounded the time constant: the interval is the prior model's */
        ANALYSIS_PRIOR_NOT_NEEDED,      /* the data span enough time constants, or it did not narrow */
        ANALYSIS_PRIOR_CONTRADICTED,    /* the data disagree with it: dropped */
};

/*
 * One fitted curve. t is measured from t_origin_s, the time of the first
 * fitted sample. Heating has a > 0, cooling a < 0 (T_inf is then the
 * asymptote below). For exp2, tau_s is the slow time constant (the one that
 * decides the plateau) and tau_fast_s the fast one.
 *
 * ci95_c is the half-width of a 95 % interval for t_inf_c, the widest of:
 *  - the linearised covariance of (T_inf, amplitudes, log time constants)
 *    at the optimum, Student t quantile;
 *  - the profile-likelihood interval over the search grid of time
 *    constants (at fixed taus the model is linear, so this is exact up to
 *    the grid step); it matters with little data, where T_inf depends on
 *    tau far from linearly;
 * both with the residual variance widened by (1 + rho) / (1 - rho) for the
 * lag-1 autocorrelation rho of the residuals (misfit makes them
 * correlated), made symmetric around t_inf_c, plus quant_bias_c, a bound on
 * the systematic error of whole-degree (or 0.5, 0.25 C) readings. It is
 * +infinity when the plateau is not bounded by the data (the slow tau of the
 * best fit, or of any fit within the interval, reaches the upper search
 * bound: no curvature yet). Coverage is measured by tests/unit/test-analysis.c.
 *
 * low_c and high_c are the interval itself, not necessarily symmetric
 * around t_inf_c (ci95_c is the larger of the two half-widths): NaN when
 * there is no fit, high_c (low_c when cooling) infinite when unbounded.
 */
struct analysis_fit {
        enum analysis_model model;
        size_t n;               /* samples used */
        double t_origin_s;      /* s, model time 0 */
        double t_inf_c;         /* C, asymptote (plateau) */
        double t0_c;            /* C, model value at t_origin_s */
        double a_c;             /* C, amplitude of the (slow) exponential */
        double tau_s;           /* s, (slow) time constant */
        double a_fast_c;        /* C, exp2 only, else 0 */
        double tau_fast_s;      /* s, exp2 only, else NaN */
        double ci95_c;          /* C, half-width of the 95 % interval of t_inf_c, or +inf */
        double low_c, high_c;   /* C, the 95 % interval of t_inf_c (see above) */
        double quant_bias_c;    /* C, bound on the bias from quantised readings, included in ci95_c */
        double rms_c;           /* C, RMS residual */
        double rho;             /* lag-1 autocorrelation of the residuals */
        double runs_z;          /* runs test on residual signs; below -3: structured residuals */
        bool tau_at_bound;      /* a time constant ended on the search bounds */
        enum analysis_prior_use prior_use;      /* what a prior time constant did (analysis_fit_plateau_prior()) */
        bool unbounded;         /* the model alone does not bound the plateau (no curvature yet): its
                                 * interval is infinite, or finite only by analysis_fit_plateau_horizon()'s cut */
};

/* Search range for the time constants: tau_min = min(0.5 s, span / 100),
 * tau_max = 20 * span, span = time from first to last valid sample. */
#define ANALYSIS_TAU_MIN_S      0.5
#define ANALYSIS_TAU_MAX_SPANS  20.0

/* Single exponential: for a fixed tau the model is linear in (T_inf, a) and
 * solved in closed form; tau is searched on a log grid (on geometrically
 * binned data), then refined by Brent's method on the raw samples. Needs at
 * least 4 valid samples. */
int analysis_fit_exp1(const double *t_s, const double *temp_c, size_t n, struct analysis_fit *ret);

/* Same, ignoring samples earlier than t_s[0] + k * tau_fast_s: fits the slow
 * part after a fast transient of time constant tau_fast_s has died out
 * (k = 5 leaves 0.7 % of it). */
int analysis_fit_exp1_after(const double *t_s, const double *temp_c, size_t n,
                            double tau_fast_s, double k, struct analysis_fit *ret);

/* Two exponentials, tau_fast * 1.5 <= tau: 2-D log grid over (tau_fast, tau)
 * on binned data, then Nelder-Mead on the raw samples. Needs at least 8
 * valid samples. */
int analysis_fit_exp2(const double *t_s, const double *temp_c, size_t n, struct analysis_fit *ret);

/* exp1; when its residual signs are structured (runs test z < -3), also
 * exp2, kept when it wins on BIC computed with the effective sample size
 * n (1 - rho) / (1 + rho) of exp2's residuals by more than 6. */
int analysis_fit_auto(const double *t_s, const double *temp_c, size_t n, struct analysis_fit *ret);

/*
 * The plateau the stop rule and the run's plateau_ci95_c use: exp1 and
 * exp2 fitted on a bounded number of bins (older samples averaged, so the
 * cost does not grow with the phase), the point estimate from the model BIC
 * prefers, and a 95 % interval honest on curves with two or three time
 * constants: the union of the profile-likelihood regions of both models
 * (model uncertainty included), the exp2 profile running over the slow
 * time constant up to ANALYSIS_TAU_MAX_SPANS spans (a slow component the
 * data cannot pin down yet keeps it wide), the linearised interval of the
 * chosen model, the residual variance widened for correlated residuals,
 * plus the quantisation bias bound. +infinity when unbounded.
 */
int analysis_fit_plateau(const double *t_s, const double *temp_c, size_t n, struct analysis_fit *ret);

/*
 * The same under load, for a horizon of horizon_s seconds from the first
 * sample (the phase's max: the longest the user will wait; the interval
 * is of where the curve is by then). Time constants slower than the
 * horizon are not searched for, and the model's interval is cut by what
 * needs no model: a heated body's curve under constant power is a sum of
 * rising exponentials, concave and rising, so
 *  - it ends at least at the present temperature (the mean of the last
 *    readings, less its uncertainty), and
 *  - what it still rises before the horizon is at most the present slope
 *    times the time left: the slope of the last 1, 2, 5, 10, 20 and 40
 *    minutes (on a concave curve each is at least the present one) with
 *    its upper confidence bound, the residuals' lag-1 autocorrelation
 *    (ambient drift, quantisation) counted as fewer independent samples.
 * A falling fit is no heated body's: its model interval is dropped
 * (unbounded). The point estimate stays the fit's t_inf_c; low_c <= high_c,
 * and ci95_c is the larger half-width around it.
 */
int analysis_fit_plateau_horizon(const double *t_s, const double *temp_c, size_t n, double horizon_s,
                                 struct analysis_fit *ret);

/* ---- prior knowledge of a board's time constant (prior.c) ---- */

#define ANALYSIS_PRIOR_SPREAD_MIN       0.15    /* ln tau: runs of one board agree no better than this */
#define ANALYSIS_PRIOR_SPREAD_ONE       0.35    /* ln tau: the spread of a prior from a single run */
#define ANALYSIS_PRIOR_RANGE            2.0     /* the fit may use tau within e^{+-this x spread} */
#define ANALYSIS_PRIOR_SPANS            3.0     /* the prior is used while the data span fewer taus */

/*
 * A board's time constants do not change between runs: the slow time
 * constant of earlier heat-ups and cool-downs of the same board and label
 * (a cool-down shows the same ones as its heat-up), as prior knowledge.
 */
struct analysis_prior {
        double tau_s;           /* s, the median of the runs' time constants; NaN: no prior */
        double spread;          /* robust standard deviation of ln tau (1.4826 MAD), at least
                                 * ANALYSIS_PRIOR_SPREAD_MIN, or _ONE for a single run */
        double low_s, high_s;   /* s, the range a fit may use: tau_s e^{-+ANALYSIS_PRIOR_RANGE spread} */
        size_t runs;            /* runs it came from */
};

/* The prior of tau_s[0..n) (NaN and non-positive values skipped), taken
 * from `runs` runs: -ENODATA with no value (ret->tau_s NaN), -EINVAL. */
int analysis_prior_from_taus(const double *tau_s, size_t n, size_t runs, struct analysis_prior *ret);

/*
 * analysis_fit_plateau_horizon() with a prior (NULL: none). While the data
 * span fewer than ANALYSIS_PRIOR_SPANS prior time constants, the model's
 * part of the interval is the profile of T_inf over fits whose slow time
 * constant lies in the prior's range (one exponential, or a rising fast
 * one beside it), at the 95 % threshold of T_inf and tau jointly, when
 * that is narrower; the fit is then the best in the range. The prior is
 * dropped (ANALYSIS_PRIOR_CONTRADICTED) when the data contradict it: the
 * best fit in its range is worse than the free fit by more than the 95 %
 * profile threshold, or the time constant of one exponential fitted to
 * them has its 95 % region outside the range (widened downwards: a fast
 * part beside the slow one makes it look faster). The model-free bounds
 * are kept as they are. ret->prior_use says what happened. Coverage and
 * width are measured by tests/unit/test-prior.c.
 */
int analysis_fit_plateau_prior(const double *t_s, const double *temp_c, size_t n, double horizon_s,
                               const struct analysis_prior *prior, struct analysis_fit *ret);

/* The fitted curve at absolute time t_s, C. */
double analysis_fit_eval(const struct analysis_fit *f, double t_s);

/* Least-squares slope of the samples with t >= t_last - window_s, C/s.
 * -ENODATA with fewer than 3 valid samples in the window. */
int analysis_slope(const double *t_s, const double *y, size_t n, double window_s, double *ret);

/* Median of the valid samples with t >= t_last - window_s. */
int analysis_median(const double *t_s, const double *y, size_t n, double window_s, double *ret);

/* until: stable. True when the samples cover window_s and the |slope| over
 * the window is at most max_slope_c_per_s. */
bool analysis_is_stable(const double *t_s, const double *temp_c, size_t n,
                        double window_s, double max_slope_c_per_s);

/* until: baseline. True when the median of the last
 * ANALYSIS_BASELINE_WINDOW_S is within tolerance_c of baseline_c. */
bool analysis_is_at_baseline(const double *t_s, const double *temp_c, size_t n,
                             double baseline_c, double tolerance_c);

/* until: plateau, on the samples of the stress phase so far: the plateau
 * and interval of analysis_fit_plateau_horizon() (bounded cost: call it
 * every second if you like), and the slope over the window, for display. */
struct analysis_plateau {
        bool reached;           /* high - low <= 2 tolerance */
        double plateau_c;       /* C, predicted plateau (inside [low_c, high_c]), NaN when no fit */
        double ci95_c;          /* C, the larger half-width, +inf when not identifiable, NaN when no fit */
        double low_c, high_c;   /* C, the 95 % interval; NaN when no fit, high_c +inf when unbounded */
        double slope_c_per_s;   /* C/s over the last ANALYSIS_PLATEAU_WINDOW_S, NaN when not covered yet */
        struct analysis_fit fit;        /* analysis_fit_plateau()'s */
};
int analysis_check_plateau(const double *t_s, const double *temp_c, size_t n, struct analysis_plateau *ret);
/* The same with the slope taken over window_s instead of ANALYSIS_PLATEAU_WINDOW_S
 * (a run phase's "window", for short experiments). */
int analysis_check_plateau_window(const double *t_s, const double *temp_c, size_t n, double window_s,
                                  struct analysis_plateau *ret);
/* The same over a horizon (analysis_fit_plateau_horizon(); <= 0: the
 * default ANALYSIS_PLATEAU_HORIZON_S) and a tolerance (<= 0: the default
 * ANALYSIS_PLATEAU_TOLERANCE_C): reached when the whole interval is within
 * +-tolerance, high_c - low_c <= 2 tolerance (its high end bounds what the
 * slope may still add: the old guard on the slope is not needed, and
 * would keep loads shorter than the window from ever stopping). */
int analysis_check_plateau_horizon(const double *t_s, const double *temp_c, size_t n, double window_s,
                                   double horizon_s, double tolerance_c, struct analysis_plateau *ret);
/* The same with a prior time constant (analysis_fit_plateau_prior(); NULL: none). */
int analysis_check_plateau_prior(const double *t_s, const double *temp_c, size_t n, double window_s,
                                 double horizon_s, double tolerance_c, const struct analysis_prior *prior,
                                 struct analysis_plateau *ret);

/* The rise so far: the median of the last ANALYSIS_BASELINE_WINDOW_S less
 * that of the first, C (negative when cooling); NaN with no valid sample.
 * Displays say the plateau is "not known yet" while its interval is wider. */
double analysis_rise_so_far(const double *t_s, const double *temp_c, size_t n);

enum analysis_phase {
        ANALYSIS_PHASE_IDLE,
        ANALYSIS_PHASE_STRESS,
        ANALYSIS_PHASE_COOLDOWN,
};

/*
 * A run's samples, parallel arrays of n. Consecutive samples of the same
 * phase kind form a segment. The metrics use the first stress segment (the
 * "load"), the idle segment just before it (baseline) and the first cooldown
 * segment after it. Optional arrays may be NULL; NaN marks a missing value.
 */
struct analysis_load_freq;
struct analysis_samples {
        size_t n;
        const double *t_s;                      /* s, strictly increasing */
        const double *temp_c;                   /* C, the run's reference temperature (hottest sensor) */
        const double *freq_hz;                  /* Hz, current CPU frequency, optional */
        const double *max_allowed_hz;           /* Hz, highest frequency the policy allows without thermal capping, optional */
        const bool *cooling_active;             /* a cooling device is in a state > 0, optional */
        const signed char *firmware_throttled; /* the Pi firmware throttles or caps the clock: 1, 0,
                                                 * -1 unknown; optional */
        const double *work_rate;                /* ops/s (or IOPS), optional */
        const double *power_w;                  /* W, the board's power draw, optional */
        const enum analysis_phase *phase;       /* phase kind of each sample */
        double ambient_c;                       /* C, given by the user or a sensor, NaN when unknown */
        double horizon_s;                       /* s, the plateau's horizon (the load phase's max); 0: the default */
        const struct analysis_prior *prior;     /* the board's time constant from earlier runs; NULL: none */
        /* Taken over every sample of a run that keeps only some of them, in
         * place of what the samples given would show; NULL for those: */
        const struct analysis_load_freq *load_freq;     /* the load's frequency and throttling */
        const double *baseline_c;                       /* analysis_idle_baseline() before the load */
};

/* Every metric of a run (README.md, "Runs"); NaN when it cannot be computed. */
struct run_metrics {
        double baseline_c;              /* C, median of the last 60 s of idle before the load */
        double ambient_c;               /* C, as given */
        double peak_c;                  /* C, highest temperature of the run */
        double temp_step_c;             /* C, the step of the sensor's readings (1 on whole-degree sensors,
                                         * 0.538 on the Pi 3's), 0 when finer than 0.05 C; NaN for none */
        double plateau_c;               /* C, analysis_fit_plateau_horizon() on the load: what until: plateau saw at
                                         * its end; NaN when the model does not bound it */
        double plateau_ci95_c;          /* C, the larger half-width of its 95 % interval (NaN, and plateau_c too,
                                         * when unbounded) */
        double plateau_low_c;           /* C, its 95 % interval: low end ... */
        double plateau_high_c;          /* C, ... and high end (NaN when unbounded); given with no plateau too,
                                         * to show how far it is */
        double rise_c;                  /* C, plateau - baseline */
        double rise_over_ambient_c;     /* C, plateau - ambient */
        double tau_heat_s;              /* s, heating time constant (the slow one for exp2), of the plateau's fit */
        double tau_heat_fast_s;         /* s, exp2 only */
        double heat_fast_fraction;      /* share of the rise carried by the fast exponential, exp2 only */
        double t90_heat_s;              /* s from load start until the fitted curve reaches 90 % of the rise */
        double tau_cool_s;              /* s, cooling time constant (the slow one for exp2) */
        double tau_cool_fast_s;         /* s, exp2 only */
        double t_back_to_baseline_s;    /* s from load end until back within 1 C of baseline */
        double throttled_fraction;      /* share of load samples below the allowed max freq or with cooling active */
        double freq_mean_hz;            /* Hz, under load */
        double freq_min_hz;             /* Hz, under load */
        double work_rate_start;         /* ops/s, median of the first 30 s of load */
        double work_rate_end;           /* ops/s, median of the last 30 s of load */
        double work_rate_drop_pct;      /* %, 100 (start - end) / start */
        double regulated_c;             /* C, the temperature throttling held the load at (median of its last
                                         * 30 s); NaN when not held (analysis_regulated()) */
        double power_mean_w;            /* W, mean power draw under load; NaN without a power reading */
        double thermal_resistance_c_per_w;      /* C/W, rise over ambient / power_mean_w: the case's thermal
                                                 * resistance, whatever the load drew */
        double fit_residual_c;          /* C, RMS residual of the heating fit */
        enum analysis_model fit_model;  /* heating fit */
        double cool_fit_residual_c;     /* C, RMS residual of the cooling fit */
        enum analysis_model cool_fit_model;
        enum analysis_prior_use prior_use;      /* what the prior did to the heating fit (NONE without one) */
};

/*
 * Whether throttling, not the case, held the run's temperature: throttled
 * for at least ANALYSIS_REGULATED_SHARE of the load, or of its last
 * ANALYSIS_REGULATED_WINDOW_S (a short load spends most of its time
 * heating up to the limit), and held at ANALYSIS_REGULATED_MIN_C or more;
 * or, when the samples
 * say nothing of throttling (a recording without a clock column), the last
 * minute of the load flat (within ANALYSIS_REGULATED_NEAR_C) and its last
 * 30 s within ANALYSIS_REGULATED_NEAR_C of a firmware limit (the Raspberry Pi's 80 and 85 C): "possibly
 * regulated". Such a run's plateau is the limit, not its cooling.
 */
bool analysis_regulated(const struct run_metrics *m);
bool analysis_regulated_possibly(const struct run_metrics *m);

/* What a run held by throttling reports instead of a plateau, into buf
 * (truncated to size), with deg the degree sign to use ("°C", or "C" for
 * the journal): "regulated at 80.0 °C, throttled 82 %, work -12.0 %" (the
 * work part only with a work count), or "possibly regulated at 80.6 °C
 * (flat at a firmware limit, no clock recorded)"; "" for a run not held.
 * Returns what snprintf does. */
int analysis_regulated_text(const struct run_metrics *m, const char *deg, char *buf, size_t size);

/* Every metric unknown (NaN, ANALYSIS_MODEL_NONE) but ambient_c. */
void analysis_metrics_init(struct run_metrics *m, double ambient_c);

/* Fills every field (NaN / ANALYSIS_MODEL_NONE where not computable).
 * -EINVAL on bad input (NULL t_s/temp_c/phase, non-increasing times). */
int analysis_compute_metrics(const struct analysis_samples *s, struct run_metrics *ret);

/* The baseline of samples [0, n): the median of the last
 * ANALYSIS_BASELINE_IDLE_S of their last idle phase; NaN when they have
 * none (or no valid temperature in it). */
double analysis_idle_baseline(const double *t_s, const double *temp_c, const enum analysis_phase *phase, size_t n);

/* Whether one sample under load counts as throttled: its frequency more
 * than 0.5 % below the allowed maximum, a cooling device active, or the
 * firmware saying it throttles (firmware_throttled > 0; < 0 unknown). */
bool analysis_sample_throttled(double freq_hz, double max_allowed_hz, bool cooling_active, int firmware_throttled);

/* The frequency and throttling metrics of the load, taken one sample at a
 * time (analysis_compute_metrics() takes them so): a run that keeps only
 * some of its samples adds every one here, so a short dip between two
 * kept samples still counts. Zeroed to start. cooling_known: the sample
 * says whether a cooling device is active. */
struct analysis_load_freq {
        double sum, min;                /* Hz, of nf samples with a frequency */
        size_t nf, known, throttled;    /* samples whose throttling is known; of them throttled */
};
void analysis_load_freq_add(struct analysis_load_freq *a, double freq_hz, double max_allowed_hz, bool cooling_known,
                            bool cooling_active, int firmware_throttled);
/* freq_mean_hz, freq_min_hz and throttled_fraction of m, those known. */
void analysis_load_freq_metrics(const struct analysis_load_freq *a, struct run_metrics *m);

/* ---- groups of runs and the verdict between them (student-t.c, groups.c) ---- */

/* Student's t distribution with df > 0 degrees of freedom, df not
 * necessarily whole (Welch-Satterthwaite's are not); df = +inf is the
 * normal distribution. P(T <= t), and the t with P(T <= t) = p for
 * 0 < p < 1. NaN for arguments outside those ranges. */
double analysis_t_cdf(double t, double df);
double analysis_t_quantile(double p, double df);

#define ANALYSIS_EQUIVALENCE_SHARE      0.02    /* of the first group's mean: the same margin for the sustained
                                                 * work or clock of runs held by throttling */
#define ANALYSIS_EQUIVALENCE_MARGIN_C   1.0     /* C: "no difference" when the 95 % interval stays inside +-1 C,
                                                 * the margin of error hardware reviewers state */

/* What a group of runs is summarised by; the verdict is on the rise. */
enum analysis_metric {
        ANALYSIS_METRIC_RISE,           /* C, rise over ambient, or over the idle baseline when a run has no
                                         * ambient (analysis_rise_over_ambient()) */
        ANALYSIS_METRIC_PLATEAU,        /* C */
        ANALYSIS_METRIC_TAU_HEAT,       /* s */
        ANALYSIS_METRIC_T90_HEAT,       /* s */
        ANALYSIS_METRIC_TAU_COOL,       /* s */
        ANALYSIS_METRIC_THROTTLED,      /* share of the load, 0..1 */
        ANALYSIS_METRIC_FREQ_MEAN,      /* Hz, under load */
        ANALYSIS_METRIC_WORK_RATE,      /* work unit/s, sustained: the median of the last 30 s of load */
        ANALYSIS_METRIC_THERMAL_RESISTANCE,     /* C/W, where the power is known */
        ANALYSIS_METRIC_MAX,
};

/* The struct run_metrics field a metric is, by its name there
 * ("rise_over_ambient_c", "plateau_c", ...): the rise is "rise_c" when
 * over_ambient is false. NULL for no such metric. */
const char *analysis_metric_name(enum analysis_metric m, bool over_ambient);

/* Whether the runs' rises are compared over ambient: every run with a
 * rise over its baseline also has one over ambient. When one has not, the
 * rise of every run is taken over its idle baseline (and said so). */
bool analysis_rise_over_ambient(const struct run_metrics *const *runs, size_t n);

/* One metric over the runs of a group. */
struct analysis_stat {
        size_t n;               /* runs with the metric; a run without it (NaN) does not count */
        double mean;            /* in the metric's unit; NaN when n is 0 */
        double sd;              /* sample standard deviation; NaN when n < 2 */
        double sd_floor;        /* the least SD the intervals use: runs that agree more closely than
                                 * their values resolve (the sensor's step, the digits written) tell
                                 * nothing finer; step / sqrt(12), the SD of a rounding */
        double low, high;       /* 95 % interval of the mean: Student t for n >= 2 with an SD of at
                                 * least sd_floor, the run's own interval for n = 1 when it has one;
                                 * NaN when there is none */
        bool single_run;        /* n = 1, and low/high are that run's own interval */
};

/* The statistics of the non-NaN values[0..n). own_ci95, when not NULL, is
 * each run's own 95 % half-width, used when a single value counts. */
void analysis_stat_compute(const double *values, const double *own_ci95, size_t n, struct analysis_stat *ret);

/* The runs with one label: one case. */
struct analysis_group {
        const char *label;      /* the caller's string, of the group's first run */
        size_t n;               /* runs with this label, with the metrics or not */
        size_t regulated;       /* of them held by throttling (analysis_regulated()) */
        struct analysis_stat stat[ANALYSIS_METRIC_MAX];
};

/* Whether a group was held by throttling: at least half its runs were. */
bool analysis_group_regulated(const struct analysis_group *g);

/* The metric two groups are judged on: the rise; when both were held by
 * throttling, what differs is the work they sustained
 * (ANALYSIS_METRIC_WORK_RATE), or without a work count the clock
 * (ANALYSIS_METRIC_FREQ_MEAN). */
enum analysis_metric analysis_verdict_metric(const struct analysis_group *a, const struct analysis_group *b);

/*
 * Groups runs[0..n) by labels[i] (compared as strings; give unlabelled runs
 * distinct names): one group per label, in the order the labels first
 * appear, into groups (room for n). The rise is taken over ambient or the
 * baseline as over_ambient says. A run's own interval, for a group of one,
 * is the plateau's, for the plateau and for the rise (the baseline, a
 * median of a minute of idle, and the ambient given are taken as exact).
 * Returns the number of groups, -EINVAL for NULL arguments.
 */
int analysis_groups(const struct run_metrics *const *runs, const char *const *labels, size_t n, bool over_ambient,
                    struct analysis_group *groups);

/* Which of two groups runs cooler, by how much and how sure. */
struct analysis_verdict {
        const struct analysis_group *a, *b;     /* a given first */
        enum analysis_metric metric;            /* a temperature: lower is cooler; or, regulated, the
                                                 * work rate or clock: higher is better */
        bool over_ambient;                      /* for the rise: over ambient, else over the idle baseline */
        double difference;                      /* C (or the metric's unit), mean of b - mean of a; NaN when
                                                 * either has none */
        double low, high;                       /* the same, its 95 % interval; NaN when there is none */
        double df;                              /* Welch-Satterthwaite degrees of freedom; NaN when not Welch */
        double margin;                          /* C, the equivalence margin */
        bool conclusive;                        /* the interval excludes 0 */
        bool equivalent;                        /* the interval lies inside +-margin */
        bool single_runs;                       /* two single runs: their own intervals, combined */
        const struct analysis_group *cooler;    /* the group with the lower mean when conclusive, else NULL */
        bool regulated;                         /* both held by throttling: on the work rate or clock */
        const struct analysis_group *better;    /* regulated: the one sustaining more when conclusive */
};

/*
 * The verdict on metric (ANALYSIS_METRIC_RISE or _PLATEAU; _WORK_RATE or
 * _FREQ_MEAN for groups held by throttling, regulated) between groups a
 * and b: Welch's interval when both have n >= 2; when both are single runs
 * with their own intervals, those combined (groups.c says how, and
 * single_runs marks it); otherwise no interval, and not conclusive.
 * margin <= 0 means ANALYSIS_EQUIVALENCE_MARGIN_C (for the work rate and
 * clock: ANALYSIS_EQUIVALENCE_SHARE of a's mean). -EINVAL for another metric.
 */
int analysis_verdict(const struct analysis_group *a, const struct analysis_group *b, enum analysis_metric metric,
                     bool over_ambient, double margin, struct analysis_verdict *ret);

/* The verdict as a sentence, into buf (truncated to size): "B runs 4.2 °C
 * cooler over ambient than A (95 %: 3.6 to 4.8 °C; 3 runs each)", "A and B:
 * no difference beyond ±0.8 °C over ambient (95 %; 3 runs each)", "A and B:
 * not conclusive: repeat for confidence (...)". Returns what snprintf does. */
int analysis_verdict_text(const struct analysis_verdict *v, char *buf, size_t size);

/* The sentence of the first verdict GET /api/v1/compare gives for runs[0..n)
 * labelled labels[i]: the first two groups in the order given, on the rise
 * (over ambient when analysis_rise_over_ambient() says so). The line under
 * compare.svg's title. Returns 1 when written, 0 with buf "" when the runs
 * make fewer than two groups, -EINVAL, -ENOMEM. */
int analysis_first_verdict_text(const struct run_metrics *const *runs, const char *const *labels, size_t n,
                                char *buf, size_t size);

/* ---- forecast under the present load (forecast.c) ---- */

#define ANALYSIS_FORECAST_TOLERANCE_C   0.5     /* the plateau counts as known within this */
#define ANALYSIS_FORECAST_MIN_SAMPLES   8
#define ANALYSIS_FORECAST_MIN_TAUS      0.5     /* samples over half the fitted time constant first */

/*
 * Where samples taken since the last change of load are heading: the
 * approach fitted by analysis_fit_auto() (series longer than 512 points are
 * averaged down first, so the cost stays bounded). Only a fit whose time
 * constants are identified (not on the search bound: the curve shows its
 * bend), on samples over ANALYSIS_FORECAST_MIN_TAUS of its slow time
 * constant (earlier fits jump from one sample to the next), makes a
 * forecast; otherwise -EDOM, -ENODATA with fewer than
 * ANALYSIS_FORECAST_MIN_SAMPLES, and every field NaN.
 */
struct analysis_forecast {
        double plateau_c;       /* C, where the fitted curve settles */
        double now_c;           /* C, the fitted curve at the last sample */
        double eta_s;           /* s after the last sample until the fitted curve is within the tolerance
                                 * of its plateau: when the plateau is known; 0 when it is already,
                                 * +inf when not within 60 slow time constants */
        double tau_s;           /* s, the (slow) time constant */
        double t_last_s;        /* s, time of the last sample used */
        struct analysis_fit fit;
};
int analysis_forecast(const double *t_s, const double *temp_c, size_t n, double tolerance_c,
                      struct analysis_forecast *ret);

/* s after the last sample until the forecast curve is at or above
 * threshold_c: 0 when it is already, +inf when it does not get there within
 * horizon_s (the first crossing on a scan of 64 steps, then bisected), NaN
 * without a forecast. */
double analysis_forecast_eta_to(const struct analysis_forecast *f, double threshold_c, double horizon_s);

/* Where the present rise began in a trailing window of n values: back from
 * the last value as long as none stands above a later one by more than
 * band_c (that was a fall), then the last one within band_c of the lowest
 * of those (NaN skipped). A load that heats the sensor starts there;
 * earlier values belong to what came before. */
size_t analysis_forecast_start(const double *temp_c, size_t n, double band_c);
