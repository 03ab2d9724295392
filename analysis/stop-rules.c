/* stop-rules.c — the until: conditions of a run phase: stable, at baseline, plateau reached. */
#include <errno.h>
#include <math.h>

#include "analysis-internal.h"

bool analysis_is_stable(const double *t_s, const double *temp_c, size_t n,
                        double window_s, double max_slope_c_per_s) {
        double slope;

        if (!window_covered(t_s, temp_c, n, window_s))
                return false;
        if (analysis_slope(t_s, temp_c, n, window_s, &slope) < 0)
                return false;
        return fabs(slope) <= max_slope_c_per_s;
}

bool analysis_is_at_baseline(const double *t_s, const double *temp_c, size_t n,
                             double baseline_c, double tolerance_c) {
        double m;

        if (!isfinite(baseline_c) || analysis_median(t_s, temp_c, n, ANALYSIS_BASELINE_WINDOW_S, &m) < 0)
                return false;
        return fabs(m - baseline_c) <= tolerance_c;
}

int analysis_check_plateau(const double *t_s, const double *temp_c, size_t n, struct analysis_plateau *ret) {
        return analysis_check_plateau_window(t_s, temp_c, n, ANALYSIS_PLATEAU_WINDOW_S, ret);
}

int analysis_check_plateau_window(const double *t_s, const double *temp_c, size_t n, double window_s,
                                  struct analysis_plateau *ret) {
        return analysis_check_plateau_horizon(t_s, temp_c, n, window_s, 0, 0, ret);
}

int analysis_check_plateau_horizon(const double *t_s, const double *temp_c, size_t n, double window_s,
                                   double horizon_s, double tolerance_c, struct analysis_plateau *ret) {
        return analysis_check_plateau_prior(t_s, temp_c, n, window_s, horizon_s, tolerance_c, NULL, ret);
}

int analysis_check_plateau_prior(const double *t_s, const double *temp_c, size_t n, double window_s,
                                 double horizon_s, double tolerance_c, const struct analysis_prior *prior,
                                 struct analysis_plateau *ret) {
        int r;

        if (!ret)
                return -EINVAL;
        *ret = (struct analysis_plateau) {
                .plateau_c = NAN,
                .ci95_c = NAN,
                .low_c = NAN,
                .high_c = NAN,
                .slope_c_per_s = NAN,
        };
        if (!(horizon_s > 0))
                horizon_s = ANALYSIS_PLATEAU_HORIZON_S;
        if (!(tolerance_c > 0))
                tolerance_c = ANALYSIS_PLATEAU_TOLERANCE_C;
        r = analysis_fit_plateau_prior(t_s, temp_c, n, horizon_s, prior, &ret->fit);
        if (r < 0)
                return r;
        ret->low_c = ret->fit.low_c;
        ret->high_c = ret->fit.high_c;
        ret->plateau_c = fmin(fmax(ret->fit.t_inf_c, ret->low_c), ret->high_c);
        ret->ci95_c = fmax(ret->high_c - ret->plateau_c, ret->plateau_c - ret->low_c);
        if (window_covered(t_s, temp_c, n, window_s) &&
            analysis_slope(t_s, temp_c, n, window_s, &ret->slope_c_per_s) < 0)
                ret->slope_c_per_s = NAN;
        /* the interval's high end already bounds what the slope may still add */
        ret->reached = ret->high_c - ret->low_c <= 2 * tolerance_c;
        return 0;
}
