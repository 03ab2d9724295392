/* show.c — heatcurvectl runs and show, and the metrics table compare shares: run documents as tables of phases and metrics. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis.h"
#include "cli.h"
#include "json-metrics.h"
#include "table.h"
#include "util.h"

static const struct metric metrics[] = {
        { "baseline_c", "baseline °C", 1, 1 },
        { "ambient_c", "ambient °C", 1, 1 },
        { "peak_c", "peak °C", 1, 1 },
        { "temp_step_c", "sensor step °C", 1, 3, true },
        { "plateau_c", "plateau °C", 1, 1 },
        { "plateau_ci95_c", "plateau ±95% °C", 1, 2, true },   /* two widths subtracted */
        { "plateau_low_c", "plateau low °C", 1, 2 },
        { "plateau_high_c", "plateau high °C", 1, 2 },
        { "rise_c", "rise °C", 1, 1 },
        { "rise_over_ambient_c", "rise over ambient °C", 1, 1 },
        { "tau_heat_s", "tau heat s", 1, 0 },
        { "tau_heat_fast_s", "tau heat fast s", 1, 1 },
        { "heat_fast_fraction", "heat fast part %", 100, 0 },
        { "t90_heat_s", "t90 heat s", 1, 0 },
        { "tau_cool_s", "tau cool s", 1, 0 },
        { "tau_cool_fast_s", "tau cool fast s", 1, 1 },
        { "t_back_to_baseline_s", "back to baseline s", 1, 0 },
        { "throttled_fraction", "throttled %", 100, 1 },
        { "freq_mean_hz", "freq mean MHz", 1e-6, 0 },
        { "freq_min_hz", "freq min MHz", 1e-6, 0 },
        { "work_rate_start", "work rate start", 0, 0 },         /* scale 0: a rate in work_unit/s */
        { "work_rate_end", "work rate end", 0, 0 },
        { "work_rate_drop_pct", "work rate drop %", 1, 1 },
        { "regulated_c", "held by throttling at °C", 1, 1, true },
        { "power_mean_w", "power under load W", 1, 2 },
        { "thermal_resistance_c_per_w", "thermal resistance °C/W", 1, 2 },
        { "fit_residual_c", "fit residual °C", 1, 3 },
        { "fit_model", "fit model", -1, 0 },                    /* scale -1: text */
        { "cool_fit_residual_c", "cool fit residual °C", 1, 3 },
        { "cool_fit_model", "cool fit model", -1, 0 },
        { "work_unit", NULL, 0, 0 },                            /* shown with the work rates */
};

const struct metric *metric_find(const char *key) {
        for (size_t i = 0; i < ELEMENTSOF(metrics); i++)
                if (strcmp(metrics[i].key, key) == 0)
                        return &metrics[i];
        return NULL;
}

/* The rise so far of a run's metrics: peak less baseline; NaN unknown. */
static double metrics_rise_so_far(json_object *ms) {
        json_object *peak = json_get(ms, "peak_c"), *base = json_get(ms, "baseline_c");

        if (json_is_null(peak) || json_is_null(base))
                return NAN;
        return json_object_get_double(peak) - json_object_get_double(base);
}

/* What a run held by throttling reports instead of a plateau
 * (analysis_regulated_text()); "" for any other run. */
static const char *metrics_regulated(char *buf, size_t size, json_object *ms) {
        struct run_metrics m;

        buf[0] = '\0';
        if (!ms || json_is_null(json_get(ms, "regulated_c")))
                return buf;
        analysis_metrics_init(&m, NAN);
        json_run_metrics_parse(ms, &m, NULL, 0);
        analysis_regulated_text(&m, "°C", buf, size);
        return buf;
}

/* The plateau with its interval, or what a run held by throttling has instead. */
static const char *metrics_plateau(char *buf, size_t size, json_object *ms) {
        if (*metrics_regulated(buf, size, ms))
                return buf;
        return fmt_plateau(buf, size, json_get(ms, "plateau_c"), json_get(ms, "plateau_low_c"),
                           json_get(ms, "plateau_high_c"), metrics_rise_so_far(ms));
}

static void metric_cell(struct table *t, const struct metric *m, json_object *ms) {
        json_object *v = json_get(ms, m->key);
        const char *unit = fmt_string(ms, "work_unit");
        char buf[128];

        if (strcmp(m->key, "plateau_c") == 0 && (json_get(ms, "plateau_low_c") || !json_is_null(json_get(ms, "regulated_c"))))
                table_cell(t, metrics_plateau(buf, sizeof buf, ms));
        else if (json_is_null(v))
                table_cell(t, "-");
        else if (m->scale < 0 || (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int)))
                table_cell(t, json_object_get_string(v));
        else if (m->scale == 0)
                table_cellf(t, "%s %s/s", fmt_rate(buf, sizeof buf, v), unit);
        else
                table_cell(t, fmt_number(buf, sizeof buf, v, m->scale, m->decimals));
}

/* Whether a metric value is a number (not null, not text). */
static bool metric_is_number(json_object *v) {
        return v && (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int));
}

/* The difference of run i from the first: in the metric's unit with its
 * decimals, or in per cent for work rates (whose unit may differ). "-"
 * when either is not a number. */
static void metric_diff_cell(struct table *t, const struct metric *m, json_object *first, json_object *other) {
        char buf[48];
        double a, b, d;

        if (m && m->no_diff) {
                table_cell(t, "");
                return;
        }
        if (!metric_is_number(first) || !metric_is_number(other) || (m && m->scale < 0)) {
                table_cell(t, "-");
                return;
        }
        a = json_object_get_double(first);
        b = json_object_get_double(other);
        if (!m) {
                table_cellf(t, "%+g", b - a);
                return;
        }
        if (m->scale == 0 && a == 0) {
                table_cell(t, "-");
                return;
        }
        d = m->scale == 0 ? 100.0 * (b - a) / a : (b - a) * m->scale;
        /* the sign of the number shown: "+0.0", never "-0.0" */
        util_fixed_text(d, m->scale == 0 ? 1 : m->decimals, buf, sizeof buf);
        table_cellf(t, "%s%s%s", buf[0] == '-' ? "" : "+", buf, m->scale == 0 ? " %" : "");
}

/* A run's quality in a word: "ok", else the worst of its metrics' flags
 * ("disturbed" before "uncertain"); "-" for a document without any. The
 * metrics not ok go into why (", "-separated keys), "" when none. */
static const char *run_quality(json_object *run, char *why, size_t size) {
        json_object *q = json_get(run, "quality"), *ms = json_get(q, "metrics");
        const char *worst = "disturbed";
        bool disturbed = false, uncertain = false;
        size_t len = 0;

        if (why && size)
                why[0] = '\0';
        if (!q || !json_object_is_type(q, json_type_object))
                return "-";
        if (json_object_get_boolean(json_get(q, "ok")))
                return "ok";
        if (ms && json_object_is_type(ms, json_type_object)) {
                json_object_object_foreach(ms, key, v) {
                        const char *s = json_object_get_string(v);
                        /* a server's keys go to a terminal: metric names only */
                        if (!s || strcmp(s, "ok") == 0 || strcmp(s, "unknown") == 0 ||
                            key[strspn(key, "abcdefghijklmnopqrstuvwxyz0123456789_")] != '\0')
                                continue;
                        disturbed |= strcmp(s, "disturbed") == 0;
                        uncertain |= strcmp(s, "uncertain") == 0;
                        if (why && len < size)
                                len += (size_t) snprintf(why + len, size - len, "%s%s %s", len ? ", " : "", key, s);
                }
        }
        /* not ok and no metric disturbed: uncertain if one says so, else a
         * phase was disturbed */
        if (!disturbed && uncertain)
                worst = "uncertain";
        return worst;
}

/* One metric across the runs: run 1, then each other run and its
 * difference from run 1. m is NULL for a metric this client does not know
 * yet, shown by its key as sent. */
static void metric_row(struct table *t, json_object *runs, size_t n, const struct metric *m, const char *key) {
        json_object *first = json_get(json_get(json_object_array_get_idx(runs, 0), "metrics"), key);

        table_cell(t, m ? m->label : key);
        for (size_t i = 0; i < n; i++) {
                json_object *ms = json_get(json_object_array_get_idx(runs, i), "metrics");
                json_object *v = json_get(ms, key);
                if (m)
                        metric_cell(t, m, ms);
                else
                        table_cell(t, json_is_null(v) ? "-" : json_object_get_string(v));
                if (i > 0)
                        metric_diff_cell(t, m, first, v);
        }
}

/* Whether key appears in an earlier run's metrics (so its row exists). */
static bool metric_seen_before(json_object *runs, size_t i, const char *key) {
        for (size_t j = 0; j < i; j++)
                if (json_get(json_get(json_object_array_get_idx(runs, j), "metrics"), key))
                        return true;
        return false;
}

/* Rows are metrics, columns runs; with several runs a header row names
 * them and each run after the first has a column of its difference from
 * the first ("Δ vs 1st"). */
void metrics_print(json_object *runs) {
        size_t n = json_len(runs);
        struct table t;

        table_init(&t, n > 1 ? 2 * n : 2);
        if (n > 1) {
                table_cell(&t, "");
                for (size_t i = 0; i < n; i++) {
                        json_object *r = json_object_array_get_idx(runs, i);
                        table_cellf(&t, "%s (%s, #%s)", fmt_string(r, "label"),
                                    fmt_string(json_get(r, "board"), "hostname"), fmt_string(r, "id"));
                        if (i > 0)
                                table_cell(&t, "Δ vs 1st");
                }
                table_cell(&t, "state");
                for (size_t i = 0; i < n; i++) {
                        table_cell(&t, fmt_string(json_object_array_get_idx(runs, i), "state"));
                        if (i > 0)
                                table_cell(&t, "");
                }
                table_cell(&t, "quality");
                for (size_t i = 0; i < n; i++) {
                        table_cell(&t, run_quality(json_object_array_get_idx(runs, i), NULL, 0));
                        if (i > 0)
                                table_cell(&t, "");
                }
        }
        for (size_t k = 0; k < ELEMENTSOF(metrics); k++)
                if (metrics[k].label)
                        metric_row(&t, runs, n, &metrics[k], metrics[k].key);
        for (size_t i = 0; i < n; i++) {
                json_object *ms = json_get(json_object_array_get_idx(runs, i), "metrics");
                if (!ms || !json_object_is_type(ms, json_type_object))
                        continue;
                json_object_object_foreach(ms, key, v) {
                        (void) v;
                        if (!metric_find(key) && !metric_seen_before(runs, i, key))
                                metric_row(&t, runs, n, NULL, key);
                }
        }
        table_print(&t, stdout);
        table_free(&t);
}

static double run_duration_s(json_object *run) {
        json_object *start = json_get(run, "started_ms"), *end = json_get(run, "ended_ms");
        int64_t e;

        if (json_is_null(start))
                return 0;
        e = !json_is_null(end) ? json_object_get_int64(end) : (int64_t) time(NULL) * 1000;
        return (double) (e - json_object_get_int64(start)) / 1000.0;
}

static void runs_row(struct table *t, json_object *r) {
        json_object *m = json_get(r, "metrics");
        char a[32], b[32], c[32], d[64], e[32], f[32], g[32];

        table_cell(t, fmt_string(r, "id"));
        table_cell(t, fmt_string(r, "label"));
        table_cell(t, fmt_string(r, "state"));
        table_cell(t, run_quality(r, NULL, 0));
        table_cell(t, fmt_time(a, sizeof a, json_get(r, "started_ms")));
        table_cell(t, json_is_null(json_get(r, "started_ms")) ? "-" : fmt_seconds(b, sizeof b, run_duration_s(r)));
        table_cell(t, fmt_number(c, sizeof c, json_get(m, "baseline_c"), 1, 1));
        if (!json_is_null(json_get(m, "regulated_c")))        /* the table's short form: the temperature */
                table_cellf(t, "%sregulated at %s °C", json_is_null(json_get(m, "throttled_fraction")) ?
                            "possibly " : "", fmt_number(d, sizeof d, json_get(m, "regulated_c"), 1, 1));
        else
                table_cell(t, json_get(m, "plateau_low_c") ? metrics_plateau(d, sizeof d, m) :
                              fmt_number(d, sizeof d, json_get(m, "plateau_c"), 1, 1));
        table_cell(t, fmt_number(e, sizeof e, json_get(m, "rise_c"), 1, 1));
        table_cell(t, fmt_number(f, sizeof f, json_get(m, "tau_heat_s"), 1, 0));
        table_cell(t, fmt_number(g, sizeof g, json_get(m, "throttled_fraction"), 100, 1));
}

int cmd_runs(struct client *c, int argc, char **argv) {
        json_object *doc, *runs;
        struct table t;
        int first, r;

        if ((first = cli_parse(c, argc, argv, NULL, NULL, NULL, false, &r)) < 0)
                return r;
        if (first < argc)
                return usage("runs: unexpected argument \"%s\"", argv[first]);
        if (client_get_json(c->url, c, "/api/v1/runs", &doc) < 0)
                return 1;
        r = 0;
        runs = json_get(doc, "runs");
        if (c->json)
                print_json(doc);
        else if (!runs || !json_object_is_type(runs, json_type_array))
                r = cli_fail("GET %s/api/v1/runs: the answer has no \"runs\" list", c->url);
        else {
                table_init(&t, 11);
                table_header(&t, "ID\0LABEL\0STATE\0QUALITY\0STARTED\0DURATION\0BASELINE °C\0PLATEAU °C\0"
                                 "RISE °C\0TAU HEAT s\0THROTTLED %\0");
                for (size_t i = 0; i < json_len(runs); i++)
                        runs_row(&t, json_object_array_get_idx(runs, i));
                table_print(&t, stdout);
                table_free(&t);
        }
        json_object_put(doc);
        return r < 0 ? 1 : 0;
}

/* "for 10m", "until plateau, min 5m, max 90m" */
static void phase_rule_cell(struct table *t, json_object *p) {
        char rule[160];
        size_t n;

        if (strcmp(fmt_string(p, "until"), "-") == 0) {
                table_cellf(t, "for %s", fmt_string(p, "duration"));
                return;
        }
        n = (size_t) snprintf(rule, sizeof rule, "until %s", fmt_string(p, "until"));
        if (n < sizeof rule && strcmp(fmt_string(p, "min"), "-"))
                n += (size_t) snprintf(rule + n, sizeof rule - n, ", min %s", fmt_string(p, "min"));
        if (n < sizeof rule && strcmp(fmt_string(p, "max"), "-"))
                snprintf(rule + n, sizeof rule - n, ", max %s", fmt_string(p, "max"));
        table_cell(t, rule);
}

static void phases_print(json_object *phases) {
        struct table t;
        char a[32], b[32];

        table_init(&t, 5);
        table_header(&t, "PHASE\0RULE\0STARTED\0DURATION\0ENDED BY\0");
        for (size_t i = 0; i < json_len(phases); i++) {
                json_object *p = json_object_array_get_idx(phases, i), *load = json_get(p, "load");
                json_object *s = json_get(p, "started_ms"), *e = json_get(p, "ended_ms");
                if (!json_is_null(load))
                        table_cellf(&t, "%s (%s)", fmt_string(p, "kind"), fmt_string(load, "type"));
                else
                        table_cell(&t, fmt_string(p, "kind"));
                phase_rule_cell(&t, p);
                table_cell(&t, fmt_clock(a, sizeof a, s));
                table_cell(&t, json_is_null(s) || json_is_null(e) ? "-" :
                           fmt_seconds(b, sizeof b, (double) (json_object_get_int64(e) - json_object_get_int64(s)) / 1000.0));
                table_cell(&t, fmt_string(p, "end_reason"));
        }
        table_print(&t, stdout);
        table_free(&t);
}

/* A run held by throttling: its plateau is the firmware's limit, what
 * differs is the clock and the work. */
static void show_held(json_object *m) {
        char held[128];

        if (*metrics_regulated(held, sizeof held, m))
                printf("held     %s: its plateau is the limit, not the case's\n", held);
}

static void show_header(json_object *run) {
        json_object *b = json_get(run, "board"), *rec = json_get(run, "recording");
        char when[32], took[32], limit[32];

        printf("run %s \"%s\": %s\n", fmt_string(run, "id"), fmt_string(run, "label"), fmt_string(run, "state"));
        if (strcmp(fmt_string(run, "abort_reason"), "-"))
                printf("reason   %s\n", fmt_string(run, "abort_reason"));
        printf("board    %s (%s, %s CPUs, kernel %s)\n", fmt_string(b, "model"), fmt_string(b, "hostname"),
               fmt_string(b, "cpus"), fmt_string(b, "kernel"));
        printf("started  %s, %s%s\n", fmt_time(when, sizeof when, json_get(run, "started_ms")),
               fmt_seconds(took, sizeof took, run_duration_s(run)),
               json_is_null(json_get(run, "ended_ms")) ? " so far" : "");
        printf("sensor   %s, safety limit %s °C\n", fmt_string(run, "sensor"),
               fmt_number(limit, sizeof limit, json_get(run, "safety_limit_c"), 1, 1));
        printf("samples  %s%s%s\n", fmt_string(rec, "samples"),
               json_object_get_boolean(json_get(rec, "ok")) ? "" : ", recording failed: ",
               json_object_get_boolean(json_get(rec, "ok")) ? "" : fmt_string(rec, "error"));
        if (strcmp(fmt_string(run, "notes"), "-") && *fmt_string(run, "notes"))
                printf("notes    %s\n", fmt_string(run, "notes"));
        char why[512];
        const char *quality = run_quality(run, why, sizeof why);
        printf("quality  %s%s%s\n", quality, why[0] ? ": " : "", why);
        if (!json_is_null(json_get(run, "repeat_of")))
                printf("series   run %s of %s, the first is run %s\n", fmt_string(run, "repeat_index"),
                       fmt_string(run, "repeat_count"), fmt_string(run, "repeat_of"));
        show_held(json_get(run, "metrics"));
}

int cmd_show(struct client *c, int argc, char **argv) {
        json_object *run, *one;
        char path[64];
        unsigned id;
        int first, r;

        if ((first = cli_parse(c, argc, argv, NULL, NULL, NULL, false, &r)) < 0)
                return r;
        if (argc - first != 1 || !parse_id(argv[first], &id))
                return usage("show needs one run id");
        snprintf(path, sizeof path, "/api/v1/runs/%u", id);
        if (client_get_json(c->url, c, path, &run) < 0)
                return 1;
        if (c->json) {
                print_json(run);
                json_object_put(run);
                return 0;
        }
        show_header(run);
        putchar('\n');
        phases_print(json_get(run, "phases"));
        putchar('\n');
        one = json_object_new_array();
        json_object_array_add(one, run);
        metrics_print(one);
        json_object_put(one);
        return 0;
}
