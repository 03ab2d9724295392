/* json-compare.c — runs compared as groups and verdicts in JSON: GET /api/v1/compare and heatcurvectl compare. */
#include "json-compare.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "json-util.h"

/* Decimals of each metric, as the run's metrics are written (json-metrics.c). */
static const int metric_decimals[ANALYSIS_METRIC_MAX] = {
        [ANALYSIS_METRIC_RISE] = 2,
        [ANALYSIS_METRIC_PLATEAU] = 2,
        [ANALYSIS_METRIC_TAU_HEAT] = 1,
        [ANALYSIS_METRIC_T90_HEAT] = 1,
        [ANALYSIS_METRIC_TAU_COOL] = 1,
        [ANALYSIS_METRIC_THROTTLED] = 4,
        [ANALYSIS_METRIC_FREQ_MEAN] = 0,
        [ANALYSIS_METRIC_WORK_RATE] = 1,
        [ANALYSIS_METRIC_THERMAL_RESISTANCE] = 3,
};

/* The longest sentence: four labels and the numbers. */
#define VERDICT_TEXT_MAX (4 * 512 + 256)

static json_object *json_stat(const struct analysis_stat *s, int decimals) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "mean", json_new_number(s->mean, decimals));
        json_object_object_add(o, "low", json_new_number(s->low, decimals));
        json_object_object_add(o, "high", json_new_number(s->high, decimals));
        json_object_object_add(o, "sd", json_new_number(s->sd, decimals));
        json_object_object_add(o, "n", json_object_new_int64((int64_t) s->n));
        return o;
}

static json_object *json_group(const struct analysis_group *g, bool over_ambient) {
        json_object *o = json_object_new_object(), *metrics = json_object_new_object();

        json_object_object_add(o, "label", json_object_new_string(g->label));
        json_object_object_add(o, "n", json_object_new_int64((int64_t) g->n));
        json_object_object_add(o, "single_run", json_object_new_boolean(g->n == 1));
        json_object_object_add(o, "regulated", json_object_new_boolean(analysis_group_regulated(g)));
        for (enum analysis_metric m = 0; m < ANALYSIS_METRIC_MAX; m++)
                json_object_object_add(metrics, analysis_metric_name(m, over_ambient),
                                       json_stat(&g->stat[m], metric_decimals[m]));
        json_object_object_add(o, "metrics", metrics);
        return o;
}

static json_object *json_verdict(const struct analysis_verdict *v, char *text) {
        json_object *o = json_object_new_object();
        int dec = metric_decimals[v->metric];

        analysis_verdict_text(v, text, VERDICT_TEXT_MAX);
        json_object_object_add(o, "a", json_object_new_string(v->a->label));
        json_object_object_add(o, "b", json_object_new_string(v->b->label));
        json_object_object_add(o, "metric", json_object_new_string(analysis_metric_name(v->metric, v->over_ambient)));
        json_object_object_add(o, "difference_c", json_new_number(v->difference, dec));
        json_object_object_add(o, "low_c", json_new_number(v->low, dec));
        json_object_object_add(o, "high_c", json_new_number(v->high, dec));
        json_object_object_add(o, "df", json_new_number(v->df, 1));
        json_object_object_add(o, "margin_c", json_new_number(v->margin, dec));
        json_object_object_add(o, "conclusive", json_object_new_boolean(v->conclusive));
        json_object_object_add(o, "cooler", v->cooler ? json_object_new_string(v->cooler->label) : NULL);
        json_object_object_add(o, "equivalent", json_object_new_boolean(v->equivalent));
        json_object_object_add(o, "single_runs", json_object_new_boolean(v->single_runs));
        json_object_object_add(o, "regulated", json_object_new_boolean(v->regulated));
        json_object_object_add(o, "better", v->better ? json_object_new_string(v->better->label) : NULL);
        json_object_object_add(o, "text", json_object_new_string(text));
        return o;
}

int json_compare_add(json_object *root, const struct run_metrics *const *runs, const char *const *labels, size_t n) {
        bool over_ambient = analysis_rise_over_ambient(runs, n);
        json_object *groups, *verdicts;
        struct analysis_group *g;
        char *text;
        int ng;

        if (!root || (n > 0 && (!runs || !labels)))
                return -EINVAL;
        g = calloc(n ? n : 1, sizeof *g);
        text = malloc(VERDICT_TEXT_MAX);
        if (!g || !text) {
                free(g);
                free(text);
                return -ENOMEM;
        }
        ng = analysis_groups(runs, labels, n, over_ambient, g);
        if (ng < 0) {
                free(g);
                free(text);
                return ng;
        }
        groups = json_object_new_array();
        verdicts = json_object_new_array();
        for (int i = 0; i < ng; i++) {
                json_object_array_add(groups, json_group(&g[i], over_ambient));
                for (int j = i + 1; j < ng; j++) {
                        struct analysis_verdict v;
                        analysis_verdict(&g[i], &g[j], analysis_verdict_metric(&g[i], &g[j]), over_ambient, 0,
                                         &v);
                        json_object_array_add(verdicts, json_verdict(&v, text));
                }
        }
        json_object_object_add(root, "groups", groups);
        json_object_object_add(root, "verdicts", verdicts);
        free(g);
        free(text);
        return 0;
}
