/* alert-forecast.c — a rule's recent readings, and when their forecast crosses its level. */
#include "alert-forecast.h"

#include <math.h>
#include <string.h>

#include "analysis.h"

void alert_forecast_reset(struct alert_forecast *f) {
        f->start = f->n = 0;
        f->have = false;
}

/* The fit on the readings since the rise began: the last time they were
 * within ALERT_FORECAST_BAND_C of their lowest over the window. */
static void alert_forecast_fit(struct alert_forecast *f, int64_t mono_ms) {
        double t[ALERT_FORECAST_POINTS], y[ALERT_FORECAST_POINTS];
        size_t first;

        for (size_t i = 0; i < f->n; i++) {
                size_t k = (f->start + i) % ALERT_FORECAST_POINTS;
                t[i] = (double) (f->mono_ms[k] - mono_ms) / 1000.0;
                y[i] = f->value_c[k];
        }
        f->fitted_ms = mono_ms;
        first = analysis_forecast_start(y, f->n, ALERT_FORECAST_BAND_C);
        f->have = analysis_forecast(t + first, y + first, f->n - first, ANALYSIS_FORECAST_TOLERANCE_C, &f->fc) >= 0 &&
                  f->fc.plateau_c > f->fc.now_c;
        if (f->have)
                f->usable_ms = mono_ms;
}

void alert_forecast_add(struct alert_forecast *f, int64_t mono_ms, double value_c) {
        size_t last = (f->start + f->n + ALERT_FORECAST_POINTS - 1) % ALERT_FORECAST_POINTS;

        if (isnan(value_c))
                return;
        if (f->n > 0 && mono_ms - f->mono_ms[last] < ALERT_FORECAST_STEP_MS)
                return;
        while (f->n > 0 && mono_ms - f->mono_ms[f->start] > ALERT_FORECAST_WINDOW_MS) {
                f->start = (f->start + 1) % ALERT_FORECAST_POINTS;
                f->n--;
        }
        if (f->n == ALERT_FORECAST_POINTS) {
                f->start = (f->start + 1) % ALERT_FORECAST_POINTS;
                f->n--;
        }
        f->mono_ms[(f->start + f->n) % ALERT_FORECAST_POINTS] = mono_ms;
        f->value_c[(f->start + f->n) % ALERT_FORECAST_POINTS] = value_c;
        f->n++;
        if (mono_ms - f->fitted_ms >= ALERT_FORECAST_FIT_MS)
                alert_forecast_fit(f, mono_ms);
}

double alert_forecast_eta(const struct alert_forecast *f, double level_c, double horizon_s) {
        if (!f->have)
                return NAN;
        return analysis_forecast_eta_to(&f->fc, level_c, horizon_s);
}
