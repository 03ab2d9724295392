/* compare.c — heatcurvectl compare: runs side by side, then grouped by label with the verdict between the groups. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyse.h"
#include "cli.h"
#include "json-compare.h"
#include "json-metrics.h"
#include "table.h"
#include "text.h"

#define COMPARE_API_MAX 16              /* runs one GET /api/v1/compare takes (API_SERIES_MAX) */
#define VERDICT_TEXT_MAX 2400           /* characters of a verdict shown: four labels and the numbers */

/* One operand: [LABEL=]SOURCE, a SOURCE being a run id on --url, a run on
 * a daemon (URL/ID or URL/api/v1/runs/ID), or a recording. */
struct operand {
        const char *text;               /* the SOURCE as given */
        char label[512];                /* LABEL= given, "" for none */
        enum { SOURCE_ID, SOURCE_URL, SOURCE_FILE } kind;
        char base[sizeof ((struct client *) 0)->url];   /* ID, URL: the daemon */
        unsigned id;
};

static bool is_file(const char *path) {
        struct stat st;

        return strcmp(path, "-") == 0 || (stat(path, &st) == 0 && !S_ISDIR(st.st_mode));
}

/* "http://host:port/3" or "http://host:port/api/v1/runs/3": the base URL and the id. */
static int operand_parse_url(const char *arg, struct operand *ret) {
        const char *api = strstr(arg, "/api/v1/runs/"), *slash = strrchr(arg, '/'), *end;

        end = api ? api : slash;
        if (!parse_id(api ? api + strlen("/api/v1/runs/") : slash + 1, &ret->id) || end <= strstr(arg, "://") + 2)
                return usage("compare: \"%s\" does not end in /ID or /api/v1/runs/ID (e.g. http://odroid2:8080/3)",
                             arg);
        if ((size_t) (end - arg) >= sizeof ret->base)
                return usage("compare: the URL \"%s\" is too long", arg);
        memcpy(ret->base, arg, (size_t) (end - arg));
        ret->base[end - arg] = '\0';
        ret->kind = SOURCE_URL;
        return 0;
}

/* "3" on --url, a URL, a file; each as LABEL=SOURCE too (a file whose name
 * holds a '=' is a file). */
static int operand_parse(const struct client *c, const char *arg, struct operand *ret) {
        const char *eq = strchr(arg, '=');

        ret->text = arg;
        if (eq && !strstr(arg, "://") == !strstr(eq, "://") && !is_file(arg)) {
                if (eq == arg)
                        return usage("compare: \"%s\": LABEL=SOURCE needs a label", arg);
                if ((size_t) (eq - arg) >= sizeof ret->label)
                        return usage("compare: the label of \"%s\" is too long", arg);
                memcpy(ret->label, arg, (size_t) (eq - arg));
                ret->label[eq - arg] = '\0';
                ret->text = eq + 1;
        }
        if (strstr(ret->text, "://"))
                return operand_parse_url(ret->text, ret);
        if (parse_id(ret->text, &ret->id)) {
                snprintf(ret->base, sizeof ret->base, "%s", c->url);
                ret->kind = SOURCE_ID;
                return 0;
        }
        if (is_file(ret->text)) {
                ret->kind = SOURCE_FILE;
                return 0;
        }
        return usage("compare: \"%s\" is neither a run id, a run's URL nor a file", ret->text);
}

static int operand_fetch(const struct client *c, const struct operand *o, const struct analyse_args *a,
                         json_object **ret) {
        char path[64];

        if (o->kind == SOURCE_FILE)
                return analyse_source(o->text, a, ret);
        snprintf(path, sizeof path, "/api/v1/runs/%u", o->id);
        return client_get_json(o->base, c, path, ret) < 0 ? 1 : 0;
}

/* The run's curve as its own daemon draws it for a comparison. */
static int operand_curve(const struct client *c, const struct operand *o, json_object **ret) {
        json_object *doc;
        char path[64];

        *ret = NULL;            /* a recording has none here */
        if (o->kind == SOURCE_FILE)
                return 0;
        snprintf(path, sizeof path, "/api/v1/compare?runs=%u", o->id);
        if (client_get_json(o->base, c, path, &doc) < 0)
                return 1;
        *ret = json_object_get(json_object_array_get_idx(json_get(doc, "curves"), 0));
        json_object_put(doc);
        return 0;
}

/* GET /api/v1/compare for ids all on --url: the daemon's own groups and
 * verdicts. points=1 when the curves are not shown. */
static int compare_from_daemon(const struct client *c, const struct operand *ops, size_t n, json_object **ret) {
        char path[64 + 11 * COMPARE_API_MAX];
        int k = snprintf(path, sizeof path, "/api/v1/compare?runs=");

        for (size_t i = 0; i < n; i++)
                k += snprintf(path + k, sizeof path - (size_t) k, "%s%u", i ? "," : "", ops[i].id);
        if (!c->json)
                snprintf(path + k, sizeof path - (size_t) k, "&points=1");
        return client_get_json(c->url, c, path, ret) < 0 ? 1 : 0;
}

/* Two operands that name the same run (or file). */
static bool operand_same(const struct operand *a, const struct operand *b) {
        if ((a->kind == SOURCE_FILE) != (b->kind == SOURCE_FILE))
                return false;
        if (a->kind == SOURCE_FILE)
                return strcmp(a->text, b->text) == 0;
        return a->id == b->id && client_same_base(a->base, b->base);
}

/* The group of operand o's run: LABEL= when given, else the run's label,
 * else how it was named ("#3", "http://odroid2:8080/3", a file's path). */
static const char *operand_label(const struct operand *o, json_object *run, char *name, size_t size) {
        const char *label = json_object_get_string(json_get(run, "label"));

        if (o->label[0])
                return o->label;
        if (!json_is_null(json_get(run, "label")) && *label)
                return label;
        if (o->kind != SOURCE_ID)
                return o->text;
        snprintf(name, size, "#%u", o->id);
        return name;
}

/* The groups and verdicts of the run documents, computed here as the
 * daemon computes them (json_compare_add()): a run named twice counted once. */
static int compare_add_local(json_object *doc, json_object *runs, const struct operand *ops) {
        size_t n = json_len(runs), k = 0;
        struct run_metrics *m = calloc(n ? n : 1, sizeof *m);
        const struct run_metrics **pm = calloc(n ? n : 1, sizeof *pm);
        const char **labels = calloc(n ? n : 1, sizeof *labels);
        char (*names)[24] = calloc(n ? n : 1, sizeof *names);
        char unit[16];
        int e = -1;

        if (m && pm && labels && names) {
                for (size_t i = 0; i < n; i++) {
                        json_object *run = json_object_array_get_idx(runs, i);
                        bool seen = false;

                        for (size_t j = 0; j < i; j++)
                                seen = seen || operand_same(&ops[j], &ops[i]);
                        if (seen)
                                continue;
                        json_run_metrics_parse(json_get(run, "metrics"), &m[k], unit, sizeof unit);
                        labels[k] = operand_label(&ops[i], run, names[k], sizeof names[k]);
                        pm[k] = &m[k];
                        k++;
                }
                e = json_compare_add(doc, pm, labels, k);
        }
        free(m);
        free(pm);
        free(labels);
        free(names);
        return e < 0 ? cli_fail("compare: out of memory") : 0;
}

/* A group metric as show and compare show it, NULL for one shown as sent. */
static const struct metric *group_metric_find(const char *key) {
        const struct metric *m = metric_find(key);

        return m && m->label && m->scale >= 0 ? m : NULL;
}

/* Its row: the rise falls back to the baseline when a run has no ambient. */
static const char *group_metric_label(const struct metric *gm, const char *key) {
        if (strcmp(key, "rise_c") == 0)
                return "rise over baseline °C (no ambient)";
        return gm ? gm->label : key;
}

static const char *group_value(char *buf, size_t size, const struct metric *gm, json_object *v) {
        if (!gm) {
                snprintf(buf, size, "%s", json_object_get_string(v));
                return buf;
        }
        return gm->scale == 0 ? fmt_rate(buf, size, v) : fmt_number(buf, size, v, gm->scale, gm->decimals);
}

/* "30.1 ± 0.4", "30.1" without an interval, "(n=2)" when fewer runs of the
 * group have the metric, "-" when none has. */
static void group_cell(struct table *t, const struct metric *gm, json_object *s, json_object *group,
                       const char *unit) {
        json_object *mean = json_get(s, "mean"), *low = json_get(s, "low"), *high = json_get(s, "high"), *half;
        char mbuf[48], hbuf[48], count[32] = "", per[40] = "";
        const char *m, *h;

        if (json_is_null(mean)) {
                table_cell(t, "-");
                return;
        }
        if (json_object_get_int64(json_get(s, "n")) != json_object_get_int64(json_get(group, "n")))
                snprintf(count, sizeof count, " (n=%s)", fmt_string(s, "n"));
        if (gm && gm->scale == 0)
                snprintf(per, sizeof per, " %s/s", unit);
        m = group_value(mbuf, sizeof mbuf, gm, mean);
        if (json_is_null(low) || json_is_null(high)) {
                table_cellf(t, "%s%s%s", m, per, count);
                return;
        }
        half = json_object_new_double((json_object_get_double(high) - json_object_get_double(low)) / 2);
        h = group_value(hbuf, sizeof hbuf, gm, half);
        table_cellf(t, "%s ± %s%s%s", m, h, per, count);
        json_object_put(half);
}

/* Rows are the group metrics, columns the groups; then each verdict. */
static void groups_print(json_object *doc, json_object *runs) {
        json_object *groups = json_get(doc, "groups"), *verdicts = json_get(doc, "verdicts");
        json_object *first = json_get(json_object_array_get_idx(groups, 0), "metrics");
        const char *unit = fmt_string(json_get(json_object_array_get_idx(runs, 0), "metrics"), "work_unit");
        size_t n = json_len(groups);
        struct table t;

        if (n == 0 || !first || !json_object_is_type(first, json_type_object))
                return;
        table_init(&t, n + 1);
        table_cell(&t, "group");
        for (size_t i = 0; i < n; i++)
                table_cell(&t, fmt_string(json_object_array_get_idx(groups, i), "label"));
        table_cell(&t, "runs");
        for (size_t i = 0; i < n; i++)
                table_cell(&t, fmt_string(json_object_array_get_idx(groups, i), "n"));
        json_object_object_foreach(first, key, v) {
                const struct metric *gm = group_metric_find(key);
                (void) v;
                table_cell(&t, group_metric_label(gm, key));
                for (size_t i = 0; i < n; i++) {
                        json_object *g = json_object_array_get_idx(groups, i);
                        group_cell(&t, gm, json_get(json_get(g, "metrics"), key), g, unit);
                }
        }
        printf("\n");
        table_print(&t, stdout);
        table_free(&t);
        if (json_len(verdicts))
                printf("\n");
        for (size_t i = 0; i < json_len(verdicts); i++) {
                json_object *text = json_get(json_object_array_get_idx(verdicts, i), "text");
                char buf[6 * VERDICT_TEXT_MAX + 4];

                if (json_object_is_type(text, json_type_string))
                        printf("%s\n", text_escape_terminal(json_object_get_string(text),
                                                            (size_t) json_object_get_string_len(text),
                                                            VERDICT_TEXT_MAX, buf, sizeof buf));
        }
}

/* The document --json prints, as GET /api/v1/compare answers it: from the
 * daemon itself when every run is an id on --url, else (or when the daemon
 * predates groups) built here the same way, each run's curve from its own
 * daemon. */
static int compare_document(const struct client *c, json_object *runs, const struct operand *ops,
                            json_object **ret) {
        size_t n = json_len(runs);
        bool plain = n <= COMPARE_API_MAX;
        json_object *doc = NULL, *curves;
        int r;

        for (size_t i = 0; i < n; i++)
                plain = plain && ops[i].kind == SOURCE_ID && !ops[i].label[0];
        if (plain && (r = compare_from_daemon(c, ops, n, &doc)) != 0)
                return r;
        if (doc && json_get(doc, "groups")) {
                *ret = doc;
                return 0;
        }
        if (!doc) {
                doc = json_object_new_object();
                json_object_object_add(doc, "runs", json_object_get(runs));
                if (c->json) {
                        curves = json_object_new_array();
                        json_object_object_add(doc, "curves", curves);
                        for (size_t i = 0; i < n; i++) {
                                json_object *curve = NULL;
                                if (operand_curve(c, &ops[i], &curve) != 0) {
                                        json_object_put(doc);
                                        return 1;
                                }
                                json_object_array_add(curves, curve);
                        }
                }
        }
        if (compare_add_local(doc, runs, ops) != 0) {
                json_object_put(doc);
                return 1;
        }
        *ret = doc;
        return 0;
}

int cmd_compare(struct client *c, int argc, char **argv) {
        struct analyse_args a = { .load_start = NAN, .load_end = NAN, .ambient_c = NAN };
        json_object *runs, *run, *doc = NULL;
        struct operand *ops;
        int first, r;

        if ((first = cli_parse(c, argc, argv, analyse_options, analyse_on_option, &a, false, &r)) < 0)
                return r;
        if (first >= argc)
                return usage("compare needs run ids, runs' URLs or recordings");
        if ((r = analyse_check_args(&a, "compare")) != 0)
                return r;
        if (!(ops = calloc((size_t) (argc - first), sizeof *ops))) {
                cli_fail("compare: out of memory");
                return 1;
        }
        runs = json_object_new_array();
        r = 0;
        for (int i = first; r == 0 && i < argc; i++)
                r = operand_parse(c, argv[i], &ops[i - first]);
        for (int i = first; r == 0 && i < argc; i++)
                if ((r = operand_fetch(c, &ops[i - first], &a, &run)) == 0)
                        json_object_array_add(runs, run);
        if (r == 0)
                r = compare_document(c, runs, ops, &doc);
        if (r == 0 && c->json) {
                print_json(doc);
        } else if (r == 0) {
                metrics_print(runs);
                groups_print(doc, runs);
        }
        json_object_put(doc);
        json_object_put(runs);
        free(ops);
        return r;
}
