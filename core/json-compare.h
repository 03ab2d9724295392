/* json-compare.h — runs compared as groups and verdicts in JSON: GET /api/v1/compare and heatcurvectl compare. */
#pragma once

#include <json-c/json.h>
#include <stddef.h>

#include "analysis.h"

/*
 * Groups runs[0..n) by labels[i] (analysis_groups(): give unlabelled runs
 * names of their own) and adds to root:
 *   "groups": [{"label", "n", "single_run",
 *               "metrics": {NAME: {"mean", "low", "high", "sd", "n"}}}],
 *     NAME as in the run's metrics, the rise first: "rise_over_ambient_c",
 *     or "rise_c" when a run has no ambient (analysis_rise_over_ambient());
 *   "verdicts": [{"a", "b", "metric", "difference_c", "low_c", "high_c",
 *                 "df", "margin_c", "conclusive", "cooler", "equivalent",
 *                 "single_runs", "text"}], one per pair of groups in the
 *     order given, a first, difference = b - a, on the rise.
 * Unknown numbers are null. -EINVAL for NULL arguments, -ENOMEM.
 */
int json_compare_add(json_object *root, const struct run_metrics *const *runs, const char *const *labels, size_t n);
