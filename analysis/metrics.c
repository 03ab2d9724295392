/* metrics.c — the metrics of a run from its samples: baseline, plateau, time constants, throttling, work rate. */
#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "analysis-internal.h"

#define FREQ_TOLERANCE  0.005   /* below max_allowed by more than 0.5 %: throttled */

/* Consecutive samples of one phase kind, [start, end). */
struct segment {
        size_t start, end;
};

static bool segment_find(const enum analysis_phase *ph, size_t n, enum analysis_phase kind,
                         size_t from, struct segment *ret) {
        size_t i = from;

        while (i < n && ph[i] != kind)
                i++;
        if (i >= n)
                return false;
        ret->start = i;
        while (i < n && ph[i] == kind)
                i++;
        ret->end = i;
        return true;
}

/* The segment of that kind ending last at or before index `before`. */
static bool segment_find_last(const enum analysis_phase *ph, size_t before, enum analysis_phase kind,
                              struct segment *ret) {
        size_t i = before;

        while (i > 0 && ph[i - 1] != kind)
                i--;
        if (i == 0)
                return false;
        ret->end = i;
        while (i > 0 && ph[i - 1] == kind)
                i--;
        ret->start = i;
        return true;
}

static int metrics_check_input(const struct analysis_samples *s) {
        if (!s || !s->t_s || !s->temp_c || !s->phase)
                return -EINVAL;
        for (size_t i = 0; i < s->n; i++) {
                if (!isfinite(s->t_s[i]) || (i > 0 && s->t_s[i] <= s->t_s[i - 1]))
                        return -EINVAL;
                if (s->phase[i] > ANALYSIS_PHASE_COOLDOWN)
                        return -EINVAL;
        }
        return 0;
}

/* First time from t_from at which the fitted curve reaches level, coming
 * from below when sign > 0: on the samples' span or beyond it (the curve
 * of a physical fit is monotonic); NaN when it does not within 50 time
 * constants. */
static double fit_time_to_level(const struct analysis_fit *f, double t_from, double level, double sign) {
        double lo = t_from, hi = t_from + 50 * f->tau_s;

        if ((analysis_fit_eval(f, lo) - level) * sign >= 0)
                return lo;
        if (!((analysis_fit_eval(f, hi) - level) * sign >= 0))
                return NAN;
        for (int k = 0; k < 100 && hi - lo > 1e-6; k++) {
                double mid = 0.5 * (lo + hi);
                if ((analysis_fit_eval(f, mid) - level) * sign >= 0)
                        hi = mid;
                else
                        lo = mid;
        }
        return hi;
}

/* One fit for the plateau, its interval, the time constants, t90 and the
 * residual: analysis_fit_plateau_horizon()'s, the numbers until: plateau
 * saw at the end of the load. */
static void metrics_heating(const struct analysis_samples *s, const struct segment *load, struct run_metrics *m) {
        const double *lt = s->t_s + load->start, *ly = s->temp_c + load->start;
        size_t n = load->end - load->start;
        double horizon = s->horizon_s > 0 ? s->horizon_s : ANALYSIS_PLATEAU_HORIZON_S;
        struct analysis_fit f;

        if (analysis_fit_plateau_prior(lt, ly, n, horizon, s->prior, &f) < 0)
                return;
        m->prior_use = f.prior_use;
        m->fit_model = f.model;
        m->fit_residual_c = f.rms_c;
        if (!f.tau_at_bound) {
                m->tau_heat_s = f.tau_s;
                if (f.model == ANALYSIS_MODEL_EXP2) {
                        m->tau_heat_fast_s = f.tau_fast_s;
                        m->heat_fast_fraction = f.a_fast_c / (f.a_fast_c + f.a_c);
                }
        }
        m->plateau_low_c = isfinite(f.low_c) ? f.low_c : NAN;
        m->plateau_high_c = isfinite(f.high_c) ? f.high_c : NAN;
        if (f.unbounded || !isfinite(f.low_c) || !isfinite(f.high_c))
                return;
        m->plateau_c = fmin(fmax(f.t_inf_c, f.low_c), f.high_c);
        m->plateau_ci95_c = fmax(f.high_c - m->plateau_c, m->plateau_c - f.low_c);
        double base = isfinite(m->baseline_c) ? m->baseline_c : f.t0_c;
        double level = base + 0.9 * (f.t_inf_c - base);
        m->t90_heat_s = fit_time_to_level(&f, s->t_s[load->start], level, f.t_inf_c >= base ? 1.0 : -1.0) -
                        s->t_s[load->start];
}

/* The step of the sensor's readings over the whole run (series_quantum()). */
static void metrics_temp_step(const struct analysis_samples *s, struct run_metrics *m) {
        struct series ser;
        double off;

        if (series_init_stats(&ser, s->t_s, s->temp_c, s->n, 2, false) < 0)
                return;
        m->temp_step_c = series_quantum(&ser, &off);
        series_done(&ser);
}

static void metrics_cooling(const struct analysis_samples *s, const struct segment *cool, struct run_metrics *m) {
        const double *t = s->t_s + cool->start, *y = s->temp_c + cool->start;
        size_t len = cool->end - cool->start;
        struct analysis_fit f;

        if (analysis_fit_auto(t, y, len, &f) >= 0) {
                m->cool_fit_model = f.model;
                m->cool_fit_residual_c = f.rms_c;
                if (!f.tau_at_bound) {
                        m->tau_cool_s = f.tau_s;
                        if (f.model == ANALYSIS_MODEL_EXP2)
                                m->tau_cool_fast_s = f.tau_fast_s;
                }
        }
        for (size_t i = 0; isfinite(m->baseline_c) && i < len; i++)
                if (!isnan(y[i]) &&
                    analysis_is_at_baseline(t, y, i + 1, m->baseline_c, ANALYSIS_BASELINE_TOLERANCE_C)) {
                        m->t_back_to_baseline_s = t[i] - t[0];
                        break;
                }
}

bool analysis_sample_throttled(double freq_hz, double max_allowed_hz, bool cooling_active, int firmware_throttled) {
        return cooling_active || firmware_throttled > 0 ||
               (isfinite(freq_hz) && isfinite(max_allowed_hz) && freq_hz < max_allowed_hz * (1 - FREQ_TOLERANCE));
}

void analysis_load_freq_add(struct analysis_load_freq *a, double freq_hz, double max_allowed_hz, bool cooling_known,
                            bool cooling_active, int firmware_throttled) {
        if (isfinite(freq_hz)) {
                a->sum += freq_hz;
                a->min = a->nf ? fmin(a->min, freq_hz) : freq_hz;
                a->nf++;
        }
        /* the firmware knows better than cpufreq: the kernel's clock may be the one it asked for */
        if (cooling_known || firmware_throttled >= 0 || (isfinite(freq_hz) && isfinite(max_allowed_hz))) {
                a->known++;
                a->throttled += analysis_sample_throttled(freq_hz, max_allowed_hz, cooling_active, firmware_throttled);
        }
}

void analysis_load_freq_metrics(const struct analysis_load_freq *a, struct run_metrics *m) {
        if (a->nf > 0) {
                m->freq_mean_hz = a->sum / (double) a->nf;
                m->freq_min_hz = a->min;
        }
        if (a->known > 0)
                m->throttled_fraction = (double) a->throttled / (double) a->known;
}

/* Throttled share and frequencies of samples [a, b) into m. */
static void freq_over(const struct analysis_samples *s, size_t a, size_t b, struct run_metrics *m) {
        struct analysis_load_freq f = {};

        for (size_t i = a; i < b; i++)
                analysis_load_freq_add(&f, s->freq_hz ? s->freq_hz[i] : NAN,
                                       s->max_allowed_hz ? s->max_allowed_hz[i] : NAN, s->cooling_active != NULL,
                                       s->cooling_active && s->cooling_active[i],
                                       s->firmware_throttled ? s->firmware_throttled[i] : -1);
        analysis_load_freq_metrics(&f, m);
}

static void metrics_work(const struct analysis_samples *s, const struct segment *load, struct run_metrics *m) {
        const double *t = s->t_s;
        size_t first = load->start, last = load->end;

        if (!s->work_rate)
                return;
        while (first < load->end && t[first] < t[load->start] + ANALYSIS_WORK_RATE_WINDOW_S)
                first++;
        while (last > load->start && t[last - 1] > t[load->end - 1] - ANALYSIS_WORK_RATE_WINDOW_S)
                last--;
        if (median_range(s->work_rate, load->start, first, &m->work_rate_start) < 0)
                m->work_rate_start = NAN;
        if (median_range(s->work_rate, last, load->end, &m->work_rate_end) < 0)
                m->work_rate_end = NAN;
        if (m->work_rate_start > 0 && isfinite(m->work_rate_end))
                m->work_rate_drop_pct = 100 * (m->work_rate_start - m->work_rate_end) / m->work_rate_start;
}

/* The Raspberry Pi firmware's limits: it throttles at 80 C (the soft
 * limit) and caps harder at 85 C. */
static const double firmware_limits_c[] = { 80.0, 85.0 };

/* The share of samples [a, b) that say they were throttled, of those that
 * say either way; NaN for none. */
static double top_throttled_share(const struct analysis_samples *s, size_t a, size_t b) {
        struct run_metrics m = { .throttled_fraction = NAN };

        freq_over(s, a, b, &m);
        return m.throttled_fraction;
}

/* The load's last ANALYSIS_REGULATED_WINDOW_S: regulated_c when throttling
 * held it (analysis_regulated() says when). */
static void metrics_regulated(const struct analysis_samples *s, const struct segment *load, struct run_metrics *m) {
        const double *t = s->t_s, *y = s->temp_c;
        size_t top = load->end, last = load->end;
        double lo = INFINITY, hi = -INFINITY, held;

        while (top > load->start && t[top - 1] > t[load->end - 1] - ANALYSIS_REGULATED_WINDOW_S)
                top--;
        while (last > load->start && t[last - 1] > t[load->end - 1] - ANALYSIS_WORK_RATE_WINDOW_S)
                last--;
        if (median_range(y, last, load->end, &held) < 0 || !isfinite(held))
                return;
        if (isfinite(m->throttled_fraction)) {
                if ((m->throttled_fraction >= ANALYSIS_REGULATED_SHARE ||
                     top_throttled_share(s, top, load->end) >= ANALYSIS_REGULATED_SHARE) &&
                    held >= ANALYSIS_REGULATED_MIN_C)
                        m->regulated_c = held;
                return;
        }
        for (size_t i = top; i < load->end; i++)
                if (isfinite(y[i])) {
                        lo = fmin(lo, y[i]);
                        hi = fmax(hi, y[i]);
                }
        /* a top too short to be flat for a while says nothing */
        if (top == load->start || !(hi - lo <= ANALYSIS_REGULATED_NEAR_C))
                return;
        for (size_t k = 0; k < sizeof firmware_limits_c / sizeof firmware_limits_c[0]; k++)
                if (fabs(held - firmware_limits_c[k]) <= ANALYSIS_REGULATED_NEAR_C)
                        m->regulated_c = held;
}

/* Mean power under load and the thermal resistance it gives. */
static void metrics_power(const struct analysis_samples *s, const struct segment *load, struct run_metrics *m) {
        double sum = 0;
        size_t n = 0;

        if (!s->power_w)
                return;
        for (size_t i = load->start; i < load->end; i++)
                if (isfinite(s->power_w[i])) {
                        sum += s->power_w[i];
                        n++;
                }
        if (n == 0)
                return;
        m->power_mean_w = sum / (double) n;
        if (m->power_mean_w > 0)
                m->thermal_resistance_c_per_w = m->rise_over_ambient_c / m->power_mean_w;
}

bool analysis_regulated(const struct run_metrics *m) {
        return m && isfinite(m->regulated_c);
}

bool analysis_regulated_possibly(const struct run_metrics *m) {
        return analysis_regulated(m) && !isfinite(m->throttled_fraction);
}

int analysis_regulated_text(const struct run_metrics *m, const char *deg, char *buf, size_t size) {
        int k;

        if (!analysis_regulated(m))
                return snprintf(buf, size, "%s", "");
        if (analysis_regulated_possibly(m))
                return snprintf(buf, size, "possibly regulated at %.1f %s (flat at a firmware limit, no clock "
                                "recorded)", round(m->regulated_c * 10) / 10, deg);
        k = snprintf(buf, size, "regulated at %.1f %s, throttled %.0f %%", round(m->regulated_c * 10) / 10, deg,
                     round(m->throttled_fraction * 100) + 0.0);
        if (k >= 0 && (size_t) k < size && isfinite(m->work_rate_drop_pct))
                k += snprintf(buf + k, size - (size_t) k, ", work %+.1f %%",
                              round(-m->work_rate_drop_pct * 10) / 10 + 0.0);
        return k;
}

double analysis_idle_baseline(const double *t_s, const double *temp_c, const enum analysis_phase *phase, size_t n) {
        struct segment idle;
        double median = NAN;

        if (segment_find_last(phase, n, ANALYSIS_PHASE_IDLE, &idle) &&
            analysis_median(t_s + idle.start, temp_c + idle.start, idle.end - idle.start, ANALYSIS_BASELINE_IDLE_S,
                            &median) < 0)
                median = NAN;
        return median;
}

void analysis_metrics_init(struct run_metrics *m, double ambient_c) {
        *m = (struct run_metrics) {
                .baseline_c = NAN, .ambient_c = ambient_c, .peak_c = NAN, .temp_step_c = NAN,
                .plateau_c = NAN, .plateau_ci95_c = NAN, .plateau_low_c = NAN, .plateau_high_c = NAN, .rise_c = NAN, .rise_over_ambient_c = NAN,
                .tau_heat_s = NAN, .tau_heat_fast_s = NAN, .heat_fast_fraction = NAN, .t90_heat_s = NAN,
                .tau_cool_s = NAN, .tau_cool_fast_s = NAN, .t_back_to_baseline_s = NAN,
                .throttled_fraction = NAN, .freq_mean_hz = NAN, .freq_min_hz = NAN,
                .work_rate_start = NAN, .work_rate_end = NAN, .work_rate_drop_pct = NAN, .regulated_c = NAN,
                .power_mean_w = NAN, .thermal_resistance_c_per_w = NAN,
                .fit_residual_c = NAN, .fit_model = ANALYSIS_MODEL_NONE,
                .cool_fit_residual_c = NAN, .cool_fit_model = ANALYSIS_MODEL_NONE,
        };
}

int analysis_compute_metrics(const struct analysis_samples *s, struct run_metrics *ret) {
        struct segment load = {}, cool;
        bool has_load;
        int r;

        if (!ret)
                return -EINVAL;
        r = metrics_check_input(s);
        if (r < 0)
                return r;
        analysis_metrics_init(ret, s->ambient_c);
        for (size_t i = 0; i < s->n; i++)
                if (isfinite(s->temp_c[i]) && (isnan(ret->peak_c) || s->temp_c[i] > ret->peak_c))
                        ret->peak_c = s->temp_c[i];
        metrics_temp_step(s, ret);
        has_load = segment_find(s->phase, s->n, ANALYSIS_PHASE_STRESS, 0, &load);
        ret->baseline_c = s->baseline_c ? *s->baseline_c :
                          analysis_idle_baseline(s->t_s, s->temp_c, s->phase, has_load ? load.start : s->n);
        if (!has_load)
                return 0;
        metrics_heating(s, &load, ret);
        ret->rise_c = ret->plateau_c - ret->baseline_c;
        ret->rise_over_ambient_c = ret->plateau_c - ret->ambient_c;
        if (s->load_freq)
                analysis_load_freq_metrics(s->load_freq, ret);
        else
                freq_over(s, load.start, load.end, ret);
        metrics_work(s, &load, ret);
        metrics_regulated(s, &load, ret);
        metrics_power(s, &load, ret);
        if (segment_find(s->phase, s->n, ANALYSIS_PHASE_COOLDOWN, load.end, &cool))
                metrics_cooling(s, &cool, ret);
        return 0;
}
