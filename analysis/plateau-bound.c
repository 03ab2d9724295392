/* plateau-bound.c — what a concave rising curve allows without a model: a plateau above the present level, below it plus slope x horizon. */
#include <errno.h>
#include <math.h>

#include "analysis-internal.h"

/*
 * Under constant power a heated body's temperature is a sum of rising
 * exponentials: rising and concave. So the plateau is at least the
 * present temperature, and the rise still to come within a horizon H is
 * at most the present slope times H (exactly so for every time constant
 * up to H: what a part still rises is its slope times its time constant).
 * The least-squares slope over a trailing window is a positively weighted
 * mean of the derivative over the window, at least the present slope on a
 * concave curve, and the line's value at the last sample at least the
 * present temperature: both err on the safe side. Each window gives a
 * bound; the tightest is kept. Ambient drift and quantisation correlate
 * the residuals: they count as n (1 - rho) / (1 + rho) independent samples.
 */
#define LEVEL_WINDOW_S  30.0            /* the present level: mean of the last 30 s ... */
#define LEVEL_MIN_N     10              /* ... or of the last 10 samples */
#define TREND_MIN_N     10
#define LATTICE_MIN_C   0.05            /* reading steps below this do not matter */
#define LATTICE_TOL_C   1.5e-3          /* CSV files round to 1 mC */

#define TREND_WINDOWS   6
static const double trend_windows_s[TREND_WINDOWS] = { 60, 120, 300, 600, 1200, 2400 };

struct trend {
        double mean, level, slope;      /* sign * C, sign * C, sign * C/s */
        double se_mean, se_level, se_slope;
        double bias_mean, bias_level, bias_slope;       /* bounds on the error quantised readings make */
        double tq;                      /* 97.5 % Student t at the effective degrees of freedom */
        double df;                      /* the effective degrees of freedom */
};

struct lattice {
        double q, off;                  /* C, reading step and its origin; q = 0: not quantised */
};

/*
 * Quantised readings of a slowly moving temperature err systematically
 * (fit.c, fit_quant_bias()): an estimate linear in the readings with
 * weights w_i errs by at most sum_j amp_j |sum_i w_i e^{2 pi i j T_i / q}|,
 * T_i the line through them; never more than q / 2 sum |w_i|.
 */
static double trend_quant_bias(const struct series *s, size_t i0, const struct lattice *l, double a, double b,
                               double s2, double xb, double sxx, int which) {
        double re[3] = {}, im[3] = {}, tl = s->t[s->n - 1], m = (double) (s->n - i0), wabs = 0, bias = 0;

        if (l->q == 0)
                return 0;
        for (size_t i = i0; i < s->n; i++) {
                double x = s->t[i] - tl, v = a + b * x;
                double w = which == 0 ? 1 / m : which == 1 ? 1 / m - (x - xb) * xb / sxx : (x - xb) / sxx;
                wabs += fabs(w);
                for (int j = 0; j < 3; j++) {
                        double th = 2 * M_PI * (j + 1) * (v - l->off) / l->q;
                        re[j] += w * cos(th);
                        im[j] += w * sin(th);
                }
        }
        double sigma2 = fmax(s2 - l->q * l->q / 12, 0);
        for (int j = 0; j < 3; j++) {
                double h = j + 1;
                bias += l->q / (M_PI * h) * exp(-2 * M_PI * M_PI * h * h * sigma2 / (l->q * l->q)) * hypot(re[j], im[j]);
        }
        /* a line across fewer than two steps may be the readings' artefact
         * (flat readings of a rising temperature): then the worst case */
        if (fabs(b) * (tl - s->t[i0]) < 2 * l->q)
                bias = fmax(bias, exp(-2 * M_PI * M_PI * sigma2 / (l->q * l->q)) * l->q / 2 * wabs);
        return fmin(bias, l->q / 2 * wabs);
}

/* Least-squares line over samples [i0, n) of s (y times sign), x = t - t_last. */
static bool trend_fit(const struct series *s, size_t i0, double sign, const struct lattice *l, struct trend *ret) {
        size_t m = s->n - i0;
        double tl = s->t[s->n - 1], xb = 0, yb = 0, sxx = 0, sxy = 0, sse = 0, lag = 0, prev = 0;

        if (m < TREND_MIN_N)
                return false;
        for (size_t i = i0; i < s->n; i++) {
                xb += s->t[i] - tl;
                yb += sign * s->y[i];
        }
        xb /= (double) m;
        yb /= (double) m;
        for (size_t i = i0; i < s->n; i++) {
                double dx = s->t[i] - tl - xb;
                sxx += dx * dx;
                sxy += dx * (sign * s->y[i] - yb);
        }
        if (!(sxx > 0))
                return false;
        double b = sxy / sxx, a = yb - b * xb;
        for (size_t i = i0; i < s->n; i++) {
                double r = sign * s->y[i] - a - b * (s->t[i] - tl);
                sse += r * r;
                if (i > i0)
                        lag += r * prev;
                prev = r;
        }
        double rho = sse > 0 ? fmin(fmax(lag / sse, 0.0), RHO_MAX) : 0.0, infl = (1 + rho) / (1 - rho);
        double neff = (double) m / infl, s2 = sse / (double) (m - 2);
        /* the lattice is in C: the line through the readings, back in C */
        double ca = sign * a, cb = sign * b;
        *ret = (struct trend) {
                .mean = yb, .level = a, .slope = b,
                .se_mean = sqrt(s2 * infl / (double) m),
                .se_level = sqrt(s2 * infl * (1 / (double) m + xb * xb / sxx)),
                .se_slope = sqrt(s2 * infl / sxx),
                .bias_mean = trend_quant_bias(s, i0, l, ca, cb, s2, xb, sxx, 0),
                .bias_level = trend_quant_bias(s, i0, l, ca, cb, s2, xb, sxx, 1),
                .bias_slope = trend_quant_bias(s, i0, l, ca, cb, s2, xb, sxx, 2),
                .tq = student_t975(fmax(neff - 2, 1)),
                .df = fmax(neff - 2, 1),
        };
        return true;
}

/* The reading step: the smallest change between consecutive readings,
 * when every change is a multiple of it. */
static void lattice_find(const struct series *s, struct lattice *ret) {
        double q = INFINITY;

        *ret = (struct lattice) {};
        for (size_t i = 1; i < s->n; i++) {
                double d = fabs(s->y[i] - s->y[i - 1]);
                if (d > LATTICE_TOL_C && d < q)
                        q = d;
        }
        if (!isfinite(q) || q < LATTICE_MIN_C)
                return;
        for (size_t i = 1; i < s->n; i++) {
                double x = (s->y[i] - s->y[0]) / q;
                if (fabs(x - round(x)) * q > LATTICE_TOL_C)
                        return;
        }
        ret->q = q;
        ret->off = s->y[0] - q * floor(s->y[0] / q);
}

/* First sample of the trailing window; n when the data do not cover it. */
static size_t trend_start(const struct series *s, double window_s) {
        double tl = s->t[s->n - 1];
        size_t i = s->n;

        if (tl - s->t[0] < 0.98 * window_s)
                return s->n;
        while (i > 0 && s->t[i - 1] >= tl - window_s)
                i--;
        return i;
}

/* The model-free bounds of a rising curve, C: *lo at least the present
 * level, *hi the tightest level + slope x the time left to the horizon. */
static void plateau_bounds(const struct series *s, double left_s, double *lo, double *hi) {
        struct lattice l;
        struct trend tr;
        size_t i0 = s->n;

        *lo = -INFINITY;
        *hi = INFINITY;
        lattice_find(s, &l);
        while (i0 > 0 && s->t[i0 - 1] >= s->t[s->n - 1] - LEVEL_WINDOW_S)
                i0--;
        if (s->n - i0 < LEVEL_MIN_N)
                i0 = s->n > LEVEL_MIN_N ? s->n - LEVEL_MIN_N : 0;
        if (trend_fit(s, i0, 1, &l, &tr))
                *lo = tr.mean - tr.tq * tr.se_mean - tr.bias_mean;
        for (size_t k = 0; k < TREND_WINDOWS; k++) {
                size_t start = trend_start(s, trend_windows_s[k]);
                if (start >= s->n || !trend_fit(s, start, 1, &l, &tr))
                        continue;
                /* the tightest of the windows is kept: each at 1 - 2.5 % / windows */
                double tq = analysis_t_quantile(1 - 0.025 / (double) TREND_WINDOWS, tr.df);
                double rise = fmax(tr.slope + tq * tr.se_slope + tr.bias_slope, 0.0) * left_s;
                *hi = fmin(*hi, tr.level + tq * tr.se_level + tr.bias_level + rise);
        }
}

int analysis_fit_plateau_horizon(const double *t_s, const double *temp_c, size_t n, double horizon_s,
                                 struct analysis_fit *ret) {
        return analysis_fit_plateau_prior(t_s, temp_c, n, horizon_s, NULL, ret);
}

int analysis_fit_plateau_prior(const double *t_s, const double *temp_c, size_t n, double horizon_s,
                               const struct analysis_prior *prior, struct analysis_fit *ret) {
        struct series s;
        double lo, hi;
        int r;

        if (!ret || !(horizon_s > 0))
                return -EINVAL;
        r = series_init_stats(&s, t_s, temp_c, n, 4, false);
        if (r >= 0)
                r = honest_fit(&s, horizon_s, prior && isfinite(prior->tau_s) ? prior : NULL, ret);
        if (r >= 0 && isfinite(horizon_s)) {
                /* under load the curve rises: a falling fit is no heated body's */
                if (!(ret->a_c > 0) || (ret->model == ANALYSIS_MODEL_EXP2 && !(ret->a_fast_c > 0))) {
                        ret->unbounded = true;
                        ret->low_c = -INFINITY;
                        ret->high_c = INFINITY;
                }
                double end = s.t0 + horizon_s, d = ret->t_inf_c - analysis_fit_eval(ret, end);
                plateau_bounds(&s, fmax(end - s.t[s.n - 1], 0.0), &lo, &hi);
                /* the model's interval is of T_inf: its low end less what the fit
                 * itself still rises after the horizon */
                double a = fmax(ret->low_c - (d > 0 ? d : 0), lo), b = fmin(ret->high_c, hi);
                if (a > b) {            /* the bounds disagree: keep both */
                        double t = a;
                        a = b, b = t;
                }
                ret->low_c = a;
                ret->high_c = b;
                ret->ci95_c = fmax(ret->high_c - ret->t_inf_c, ret->t_inf_c - ret->low_c);
                if (!isfinite(ret->ci95_c))
                        ret->ci95_c = INFINITY;
        }
        series_done(&s);
        return r;
}
