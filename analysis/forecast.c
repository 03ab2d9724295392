/* forecast.c — where a curve goes under the present load: its plateau, when that is known, when it crosses a level. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "analysis.h"

#define FORECAST_POINTS_MAX     512     /* longer series are averaged down to this many points first */
#define FORECAST_BISECT_STEPS   60
#define FORECAST_SCAN_STEPS     64      /* points of the horizon looked at for a first crossing */
#define FORECAST_TAU_REACH      60.0    /* the plateau search looks this many slow taus ahead at most */

/* Averages consecutive valid samples in groups, so the fit's cost stays
 * bounded on long phases. Returns the points written. */
static size_t forecast_decimate(const double *t_s, const double *temp_c, size_t n, double *t, double *y) {
        size_t valid = 0, k, m = 0, in = 0;
        double st = 0, sy = 0;

        for (size_t i = 0; i < n; i++)
                valid += !isnan(temp_c[i]);
        k = (valid + FORECAST_POINTS_MAX - 1) / FORECAST_POINTS_MAX;
        if (k < 1)
                k = 1;
        for (size_t i = 0; i < n; i++) {
                if (isnan(temp_c[i]))
                        continue;
                st += t_s[i];
                sy += temp_c[i];
                if (++in == k) {
                        t[m] = st / (double) in;
                        y[m++] = sy / (double) in;
                        st = sy = 0;
                        in = 0;
                }
        }
        if (in > 0) {
                t[m] = st / (double) in;
                y[m++] = sy / (double) in;
        }
        return m;
}

/* |plateau - curve| at t. */
static double forecast_remaining(const struct analysis_forecast *f, double t) {
        return fabs(f->plateau_c - analysis_fit_eval(&f->fit, t));
}

/* s after the last sample until the approach is within tolerance_c. */
static double forecast_eta_known(const struct analysis_forecast *f, double tolerance_c) {
        double lo = f->t_last_s, hi = lo + f->tau_s, reach = lo + FORECAST_TAU_REACH * f->tau_s;

        if (forecast_remaining(f, lo) <= tolerance_c)
                return 0;
        while (forecast_remaining(f, hi) > tolerance_c) {
                if (hi >= reach)
                        return INFINITY;
                lo = hi;
                hi += f->tau_s;
        }
        for (int i = 0; i < FORECAST_BISECT_STEPS && hi - lo > 1e-3; i++) {
                double mid = 0.5 * (lo + hi);
                *(forecast_remaining(f, mid) > tolerance_c ? &lo : &hi) = mid;
        }
        return hi - f->t_last_s;
}

/* Early in a rise the fitted time constant, and so the plateau, jumps from
 * one fit to the next: a forecast needs samples over ANALYSIS_FORECAST_MIN_TAUS of it. */
static bool forecast_fit_usable(const struct analysis_fit *f, double span_s) {
        return f->model != ANALYSIS_MODEL_NONE && !f->tau_at_bound && isfinite(f->t_inf_c) &&
               isfinite(f->tau_s) && f->tau_s > 0 && span_s >= ANALYSIS_FORECAST_MIN_TAUS * f->tau_s;
}

int analysis_forecast(const double *t_s, const double *temp_c, size_t n, double tolerance_c,
                      struct analysis_forecast *ret) {
        double *t, *y;
        size_t m;
        int r;

        if (!ret || !t_s || !temp_c || !(tolerance_c > 0))
                return -EINVAL;
        *ret = (struct analysis_forecast) { .plateau_c = NAN, .now_c = NAN, .eta_s = NAN, .tau_s = NAN,
                                            .t_last_s = NAN };
        if (n < ANALYSIS_FORECAST_MIN_SAMPLES)
                return -ENODATA;
        t = malloc(2 * (n < FORECAST_POINTS_MAX ? n : FORECAST_POINTS_MAX + 1) * sizeof *t);
        if (!t)
                return -ENOMEM;
        y = t + (n < FORECAST_POINTS_MAX ? n : FORECAST_POINTS_MAX + 1);
        m = forecast_decimate(t_s, temp_c, n, t, y);
        r = m < ANALYSIS_FORECAST_MIN_SAMPLES ? -ENODATA : analysis_fit_auto(t, y, m, &ret->fit);
        if (r >= 0 && !forecast_fit_usable(&ret->fit, t[m - 1] - t[0]))
                r = -EDOM;
        if (r >= 0) {
                ret->t_last_s = t[m - 1];
                ret->plateau_c = ret->fit.t_inf_c;
                ret->tau_s = ret->fit.tau_s;
                ret->now_c = analysis_fit_eval(&ret->fit, ret->t_last_s);
                ret->eta_s = forecast_eta_known(ret, tolerance_c);
        }
        free(t);
        return r;
}

double analysis_forecast_eta_to(const struct analysis_forecast *f, double threshold_c, double horizon_s) {
        double lo, hi = NAN, step;

        if (!f || isnan(f->now_c) || isnan(threshold_c) || !(horizon_s >= 0))
                return NAN;
        if (f->now_c >= threshold_c)
                return 0;
        step = horizon_s / FORECAST_SCAN_STEPS;
        lo = f->t_last_s;
        for (int k = 1; k <= FORECAST_SCAN_STEPS; k++) {
                hi = f->t_last_s + step * k;
                if (analysis_fit_eval(&f->fit, hi) >= threshold_c)
                        break;
                lo = hi;
        }
        if (!(step > 0) || !(analysis_fit_eval(&f->fit, hi) >= threshold_c))
                return INFINITY;
        for (int i = 0; i < FORECAST_BISECT_STEPS && hi - lo > 1e-3; i++) {
                double mid = 0.5 * (lo + hi);
                *(analysis_fit_eval(&f->fit, mid) >= threshold_c ? &hi : &lo) = mid;
        }
        return hi - f->t_last_s;
}

size_t analysis_forecast_start(const double *temp_c, size_t n, double band_c) {
        double low = INFINITY;
        size_t from = 0, start = 0;

        /* back to where a value stands above a later one by more than band_c: a fall */
        for (size_t i = n; i-- > 0; ) {
                if (isnan(temp_c[i]))
                        continue;
                if (temp_c[i] > low + band_c) {
                        from = i + 1;
                        break;
                }
                if (temp_c[i] < low)
                        low = temp_c[i];
        }
        start = from;
        for (size_t i = from; i < n; i++)
                if (temp_c[i] <= low + band_c)
                        start = i;
        return start;
}
