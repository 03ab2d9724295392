/* json-metrics.c — a run's metrics as JSON (run.json, the API, heatcurvectl analyse), and back. */
#include "json-metrics.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "json-util.h"
#include "util.h"

/* The numeric fields in document order, with the decimals they are written with. */
static const struct {
        const char *name;
        size_t offset;
        int decimals;
} metric_fields[] = {
#define F(name, dec) { #name, offsetof(struct run_metrics, name), dec }
        F(baseline_c, 2), F(ambient_c, 2), F(peak_c, 2), F(temp_step_c, 3), F(plateau_c, 2), F(plateau_ci95_c, 2),
        F(plateau_low_c, 2), F(plateau_high_c, 2),
        F(rise_c, 2), F(rise_over_ambient_c, 2), F(tau_heat_s, 1), F(tau_heat_fast_s, 1),
        F(heat_fast_fraction, 3), F(t90_heat_s, 1), F(tau_cool_s, 1), F(tau_cool_fast_s, 1),
        F(t_back_to_baseline_s, 1), F(throttled_fraction, 4), F(freq_mean_hz, 0), F(freq_min_hz, 0),
        F(work_rate_start, 1), F(work_rate_end, 1), F(work_rate_drop_pct, 2), F(regulated_c, 2),
        F(power_mean_w, 3), F(thermal_resistance_c_per_w, 3),
#undef F
};

static double *metric_at(struct run_metrics *m, size_t i) {
        return (double *) ((char *) m + metric_fields[i].offset);
}

static json_object *json_model(enum analysis_model model) {
        const char *s = analysis_model_to_string(model);

        return s ? json_object_new_string(s) : NULL;
}

json_object *json_run_metrics(const struct run_metrics *m, const char *work_unit) {
        json_object *o = json_object_new_object();

        for (size_t i = 0; i < ELEMENTSOF(metric_fields); i++) {
                double v = *(const double *) ((const char *) m + metric_fields[i].offset);
                json_object_object_add(o, metric_fields[i].name, json_new_number(v, metric_fields[i].decimals));
        }
        json_object_object_add(o, "work_unit", json_new_string_or_null(work_unit));
        json_object_object_add(o, "fit_residual_c", json_new_number(m->fit_residual_c, 3));
        json_object_object_add(o, "fit_model", json_model(m->fit_model));
        json_object_object_add(o, "cool_fit_residual_c", json_new_number(m->cool_fit_residual_c, 3));
        json_object_object_add(o, "cool_fit_model", json_model(m->cool_fit_model));
        return o;
}

static double json_number_or_nan(json_object *o, const char *key) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v) ||
            !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
                return NAN;
        return json_object_get_double(v);
}

static enum analysis_model model_parse(json_object *o, const char *key) {
        json_object *v;
        const char *s;

        if (!json_object_object_get_ex(o, key, &v) || !(s = json_object_get_string(v)))
                return ANALYSIS_MODEL_NONE;
        for (enum analysis_model m = ANALYSIS_MODEL_EXP1; m <= ANALYSIS_MODEL_EXP2; m++)
                if (strcmp(s, analysis_model_to_string(m)) == 0)
                        return m;
        return ANALYSIS_MODEL_NONE;
}

void json_run_metrics_parse(json_object *o, struct run_metrics *ret, char *unit, size_t unitlen) {
        json_object *v;

        for (size_t i = 0; i < ELEMENTSOF(metric_fields); i++)
                *metric_at(ret, i) = json_number_or_nan(o, metric_fields[i].name);
        ret->fit_residual_c = json_number_or_nan(o, "fit_residual_c");
        ret->fit_model = model_parse(o, "fit_model");
        ret->cool_fit_residual_c = json_number_or_nan(o, "cool_fit_residual_c");
        ret->cool_fit_model = model_parse(o, "cool_fit_model");
        snprintf(unit, unitlen, "%s", json_object_object_get_ex(o, "work_unit", &v) && json_object_get_string(v) ?
                 json_object_get_string(v) : "");
}

int json_run_metrics_as_shown(const struct run_metrics *m, struct run_metrics *ret) {
        json_object *o = json_run_metrics(m, NULL), *parsed;
        char unit[16];

        parsed = o ? json_tokener_parse(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN)) : NULL;
        json_object_put(o);
        if (!parsed)
                return -ENOMEM;
        analysis_metrics_init(ret, NAN);
        json_run_metrics_parse(parsed, ret, unit, sizeof unit);
        json_object_put(parsed);
        return 0;
}
