/* alert-forecast.h — for alerts/ only: a rule's recent readings, and when their forecast crosses its level. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis.h"

#define ALERT_FORECAST_WINDOW_MS (10 * 60 * 1000)      /* readings looked back over */
#define ALERT_FORECAST_STEP_MS 500                      /* one reading kept per step at most */
#define ALERT_FORECAST_POINTS (ALERT_FORECAST_WINDOW_MS / ALERT_FORECAST_STEP_MS)
#define ALERT_FORECAST_BAND_C 1.0                       /* the rise starts where readings were last this near their lowest */
#define ALERT_FORECAST_FIT_MS 1000                      /* fitted again at most this often */
#define ALERT_FORECAST_GRACE_MS 60000                   /* no forecast for this long: the state is left */

/* A ring of the readings the rule goes by, on the monotonic clock, and the
 * forecast made of them. */
struct alert_forecast {
        int64_t mono_ms[ALERT_FORECAST_POINTS];
        double value_c[ALERT_FORECAST_POINTS];          /* C */
        size_t start, n;
        int64_t fitted_ms;              /* monotonic ms of the last fit, 0 for none */
        int64_t usable_ms;              /* monotonic ms of the last fit that made a forecast, 0 for none */
        bool have;                      /* the last fit made a forecast */
        struct analysis_forecast fc;    /* the last forecast; times in s from fitted_ms */
};

/* Forgets every reading (the sensor stopped answering). */
void alert_forecast_reset(struct alert_forecast *f);
/* One reading; NaN is skipped. Fits again when ALERT_FORECAST_FIT_MS passed. */
void alert_forecast_add(struct alert_forecast *f, int64_t mono_ms, double value_c);
/* s until the forecast reaches level_c (0 when it is there), +inf when not
 * within horizon_s, NaN without a forecast. */
double alert_forecast_eta(const struct alert_forecast *f, double level_c, double horizon_s);
