/* json-metrics.h — a run's metrics as JSON (run.json, the API, heatcurvectl analyse), and back. */
#pragma once

#include <json-c/json.h>
#include <stddef.h>

#include "analysis.h"

/* Every field of struct run_metrics under its own name, NaN as null, plus
 * "work_unit" (null for none or ""). */
json_object *json_run_metrics(const struct run_metrics *m, const char *work_unit);

/* The reverse, for documents json_run_metrics() wrote: a missing or null
 * field is NaN, an unknown model is none. unit gets "work_unit", "" for none. */
void json_run_metrics_parse(json_object *o, struct run_metrics *ret, char *unit, size_t unitlen);

/* m as a reader of its document gets it: written with each field's
 * decimals and parsed back, so that statistics made here from a run in
 * memory agree to the digit with those made from its document (the plots,
 * heatcurvectl). -ENOMEM. */
int json_run_metrics_as_shown(const struct run_metrics *m, struct run_metrics *ret);
