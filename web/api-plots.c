/* api-plots.c — the plots over HTTP: a run, runs compared and the history as SVG, drawn by core/plot.c. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alerts.h"
#include "api-internal.h"
#include "history.h"
#include "json-sensors.h"
#include "plot-data.h"
#include "plot.h"
#include "runs.h"
#include "svg.h"
#include "util.h"

#define SVG_TYPE "image/svg+xml"

/* width / height: PLOT_SIZE_MIN..PLOT_SIZE_MAX px. */
static int arg_size(struct http_request *r, const char *name, unsigned def, unsigned *ret, char *err, size_t errlen) {
        const char *v = http_arg(r, name);
        char *end;
        long n;

        *ret = def;
        if (!v)
                return 0;
        errno = 0;
        n = strtol(v, &end, 10);
        if (errno || end == v || *end || n < PLOT_SIZE_MIN || n > PLOT_SIZE_MAX) {
                snprintf(err, errlen, "%s: \"%s\" is not a number of pixels from %d to %d", name, v, PLOT_SIZE_MIN,
                         PLOT_SIZE_MAX);
                return -EINVAL;
        }
        *ret = (unsigned) n;
        return 0;
}

/* Unknown parameters, width, height and theme (light, the default, or
 * dark); answers 400 and returns false on any. */
static bool plot_args(struct http_request *r, const char *const *known, const char *known_text,
                      unsigned *width, unsigned *height, bool *dark) {
        const char *unknown = http_unknown_arg(r, known), *theme = http_arg(r, "theme");
        char err[256];

        if (unknown) {
                http_reply_error(r, 400, "bad_parameter", "%s: unknown parameter (known: %s)", unknown, known_text);
                return false;
        }
        if (arg_size(r, "width", PLOT_WIDTH_DEFAULT, width, err, sizeof err) < 0 ||
            arg_size(r, "height", PLOT_HEIGHT_DEFAULT, height, err, sizeof err) < 0) {
                http_reply_error(r, 400, "bad_parameter", "%s", err);
                return false;
        }
        if (theme && strcmp(theme, "light") != 0 && strcmp(theme, "dark") != 0) {
                http_reply_error(r, 400, "bad_parameter", "theme: \"%s\" is neither light nor dark", theme);
                return false;
        }
        *dark = theme && strcmp(theme, "dark") == 0;
        return true;
}

static void reply_svg(struct http_request *r, int e, char *svg, size_t len, bool dark, const char *what) {
        if (e >= 0 && dark)
                svg_theme_dark(svg, len);
        if (e == -ENOMEM)
                http_reply_error(r, 500, "internal", "out of memory drawing %s", what);
        else if (e < 0)
                http_reply_error(r, 500, "internal", "cannot draw %s: %s", what, strerror(-e));
        else
                http_reply(r, 200, SVG_TYPE, svg, len);
        free(svg);
}

/* What heatcurvectl would get over HTTP, parsed back: the run document and
 * the trip points now, on the loop; the samples later, off it
 * (plot_data_samples()), so the daemon's plot and heatcurvectl's are the
 * same bytes. */
static int plot_data_doc(struct api *a, const struct run *run, struct plot_data *d, char *err, size_t errlen) {
        json_object *doc = runs_document(a->ctx.runs, run), *parsed, *sensors;
        int e;

        parsed = json_tokener_parse(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN));
        json_object_put(doc);
        e = plot_data_from_doc(d, parsed, err, errlen);
        json_object_put(parsed);
        if (e >= 0 && a->sensors) {
                sensors = json_sensors_document(a->sensors);
                plot_data_levels_from_sensors(d, sensors);
                json_object_put(sensors);
        }
        return e;
}

/* Drawing an ended run means reading all of its samples.csv: 32-42 ms here
 * for 24 h at 1 Hz with 15 temperatures (21 MB). A live run's series is
 * copied from memory instead, the five columns a plot draws, 7 ms for a
 * day, on the loop (run_series_plot_data()). Either is then
 * drawn, 4.5 ms, with the fits, 1.7 ms (bench/plot-render), off the loop
 * with the read (struct plot_job below).
 * The dashboard asks for a live run's plot every 5 s, so the last few plots
 * are kept, about 40 KiB each: an ended run's until something changes, a
 * live run's while the run has grown by less than one bucket of the plot
 * (plot.h: at most one per pixel), which no pixel would show; a new phase
 * or state is drawn at once. Watching a run then costs a drawing every
 * n / buckets samples, each of a cost in n: bounded, however long the run.
 * The sensors pointer changes when they are re-probed, and with it the trip
 * points. */
#define PLOT_CACHE_SIZE 4

struct api_plot_cache {
        struct plot_cache_entry {
                unsigned id, width, height;
                size_t n_samples;       /* the run's when it was drawn */
                size_t shown;           /* samples the plot shows: the file's rows, or the live series' */
                enum run_state state;
                size_t phase_index;
                const struct sensors *sensors;
                char *svg;
                size_t len;
        } e[PLOT_CACHE_SIZE];
        size_t next;                    /* the entry replaced next */
};

bool api_plot_fresh(size_t drawn_samples, size_t run_samples, bool running, unsigned width) {
        size_t buckets = width < PLOT_BUCKETS_MAX ? width : PLOT_BUCKETS_MAX;
        size_t bucket = buckets ? drawn_samples / buckets : 0;

        if (run_samples < drawn_samples)
                return false;
        if (!running)
                return run_samples == drawn_samples;
        return run_samples - drawn_samples < (bucket > 1 ? bucket : 1);
}

static struct plot_cache_entry *plot_cache_slot(struct api *a, unsigned id, unsigned width, unsigned height) {
        for (size_t i = 0; a->plots && i < PLOT_CACHE_SIZE; i++) {
                struct plot_cache_entry *e = &a->plots->e[i];
                if (e->svg && e->id == id && e->width == width && e->height == height)
                        return e;
        }
        return NULL;
}

static struct plot_cache_entry *plot_cache_find(struct api *a, const struct run *run, unsigned width,
                                                unsigned height) {
        struct plot_cache_entry *e = plot_cache_slot(a, run->id, width, height);

        if (e && e->state == run->state && e->phase_index == run->phase_index && e->sensors == a->sensors &&
            api_plot_fresh(e->n_samples, run->n_samples, run->state == RUN_RUNNING, width))
                return e;
        return NULL;
}

/* What a drawing is of: the run as it was when its samples were taken. */
static struct plot_cache_entry plot_cache_key(struct api *a, const struct run *run, unsigned width, unsigned height) {
        return (struct plot_cache_entry) { .id = run->id, .width = width, .height = height,
                                           .n_samples = run->n_samples, .state = run->state,
                                           .phase_index = run->phase_index, .sensors = a->sensors };
}

/* Keeps a copy in the run's slot, or the oldest; a failure only means the
 * next request draws it again. */
static void plot_cache_add(struct api *a, const struct plot_cache_entry *key, size_t shown, const char *svg,
                           size_t len) {
        struct plot_cache_entry *e;
        char *copy;

        if (!a->plots && !(a->plots = calloc(1, sizeof *a->plots)))
                return;
        if (!(copy = malloc(len)))
                return;
        memcpy(copy, svg, len);
        e = plot_cache_slot(a, key->id, key->width, key->height);
        if (!e) {
                e = &a->plots->e[a->plots->next];
                a->plots->next = (a->plots->next + 1) % PLOT_CACHE_SIZE;
        }
        free(e->svg);
        *e = *key;
        e->shown = shown;
        e->svg = copy;
        e->len = len;
}

/* The plot with the number of the run's samples it was drawn from; the
 * cache keeps the light one, a dark one is recoloured from a copy. */
static void reply_run_svg(struct http_request *r, const char *svg, size_t len, size_t shown, bool dark) {
        char n[24], *copy = NULL;
        const char *const headers[] = { "Heatcurve-Run-Samples", n, NULL };

        if (dark) {
                if (!(copy = malloc(len ? len : 1))) {
                        http_reply_error(r, 500, "internal", "out of memory");
                        return;
                }
                memcpy(copy, svg, len);
                svg_theme_dark(copy, len);
        }
        snprintf(n, sizeof n, "%zu", shown);
        http_reply_with(r, 200, SVG_TYPE, copy ? copy : svg, len, headers);
        free(copy);
}

void api_plots_free(struct api *a) {
        for (size_t i = 0; a->plots && i < PLOT_CACHE_SIZE; i++)
                free(a->plots->e[i].svg);
        free(a->plots);
        a->plots = NULL;
}

/* A plot being drawn (api_series_then()): the runs' documents are taken on
 * the loop, the samples added, the curves fitted and the SVG drawn on the
 * thread that reads them (several ms for a day at 1 Hz here, several times
 * that on a board), the answer sent on the loop. */
struct plot_job {
        struct plot_cache_entry key;    /* a run plot: the run as it was drawn */
        bool compare, rise;             /* a comparison (of the rises over ambient) */
        bool dark;                      /* theme=dark */
        unsigned width, height;
        size_t n;                       /* plot data started */
        struct plot_data d[PLOT_COMPARE_MAX];
        int e;                          /* the drawing's result */
        int read_e;                     /* a samples.csv could not be read: -errno, of run read_i */
        size_t read_i;
        char err[256];                  /* why, when the samples could not be taken */
        char *svg;
        size_t len, shown;
};

static void plot_job_free(void *arg) {
        struct plot_job *j = arg;

        for (size_t i = 0; i < j->n; i++)
                plot_data_free(&j->d[i]);
        free(j->svg);
        free(j);
}

/* An ended run's samples.csv straight into its plot data, as heatcurvectl
 * reads it: 36 bytes a sample where the series takes 62. */
static size_t plot_job_read(void *arg, size_t i, const char *path, size_t limit) {
        struct plot_job *j = arg;
        FILE *f = fopen(path, "re");
        int e;

        if (!f)
                return 0;       /* deleted meanwhile: the answer says so */
        e = plot_data_read_file(&j->d[i], f, limit);
        fclose(f);
        if (e < 0 && !j->read_e) {
                j->read_e = e;
                j->read_i = i;
        }
        return j->d[i].n;
}

/* A live run's series, on the loop, into its plot data: the samples the
 * file would give, five columns of the series' ten. */
static int plot_job_copy(void *arg, size_t i, const struct run_series *live, size_t limit) {
        struct plot_job *j = arg;
        int e = run_series_plot_data(live, limit, &j->d[i]);

        return e < 0 ? e : (int) j->d[i].n;
}

static void plot_job_draw(void *arg, const unsigned *ids, struct run_series *s, size_t n) {
        struct plot_job *j = arg;
        struct plot_curve c[PLOT_COMPARE_MAX];

        (void) s;       /* empty: the samples were read or copied into j->d */
        j->e = j->read_e;
        if (j->e < 0)
                snprintf(j->err, sizeof j->err, "cannot read the samples of run %u: %s", ids[j->read_i],
                         strerror(-j->e));
        for (size_t i = 0; i < n && j->e >= 0; i++)
                plot_data_finish(&j->d[i]);
        if (j->e >= 0 && !j->compare) {
                j->shown = j->d[0].n;
                j->e = plot_run_svg(&j->d[0].run, j->width, j->height, &j->svg, &j->len);
        } else if (j->e >= 0) {
                for (size_t i = 0; i < n; i++)
                        plot_data_curve(&j->d[i], NULL, &c[i]);
                j->e = plot_compare_svg(c, n, j->rise, j->width, j->height, &j->svg, &j->len);
        }
        /* the samples, megabytes for a day, are freed here, off the loop */
        for (size_t i = 0; i < j->n; i++)
                plot_data_free(&j->d[i]);
}

static void plot_job_answer(struct api *a, struct http_request *r, const unsigned *ids, struct run_series *s,
                            size_t n, void *arg) {
        struct plot_job *j = arg;
        char *svg = j->svg;

        j->svg = NULL;
        if (!api_runs_found(a, r, ids, n, j->compare))
                free(svg);
        else if (j->e < 0 && j->err[0]) {
                free(svg);
                http_reply_error(r, 500, "internal", "%s", j->err);
        } else if (j->compare && j->e == -ERANGE) {
                free(svg);
                http_reply_error(r, 400, "bad_parameter", "height: %u px is too small for %zu runs and their table",
                                 j->height, n);
        } else if (j->compare || j->e < 0)
                reply_svg(r, j->e, svg, j->len, j->dark, j->compare ? "the comparison" : "the run");
        else {
                plot_cache_add(a, &j->key, j->shown, svg, j->len);
                reply_run_svg(r, svg, j->len, j->shown, j->dark);
                free(svg);
        }
}

static const struct api_series_answer plot_how = {
        .read = plot_job_read, .copy = plot_job_copy, .work = plot_job_draw, .answer = plot_job_answer,
        .free_arg = plot_job_free,
};

/* Starts the job's plot data from the runs' documents, then hands it over. */
static void plot_job_start(struct api *a, struct http_request *r, struct plot_job *j, const unsigned *ids,
                           size_t n) {
        for (; j->n < n; j->n++)
                if (plot_data_doc(a, runs_find(a->ctx.runs, ids[j->n]), &j->d[j->n], j->err, sizeof j->err) < 0) {
                        http_reply_error(r, 500, "internal", "%s", j->err);
                        plot_job_free(j);
                        return;
                }
        api_series_then(a, r, ids, n, &plot_how, j);
}

void api_plot_run(struct api *a, struct http_request *r, unsigned id) {
        static const char *const known[] = { "width", "height", "theme", NULL };
        const struct run *run = runs_find(a->ctx.runs, id);
        const struct plot_cache_entry *cached;
        unsigned width, height;
        struct plot_job *j;
        bool dark;

        if (!plot_args(r, known, "width, height, theme", &width, &height, &dark))
                return;
        if (!run) {
                http_reply_error(r, 404, "not_found", "no run %u", id);
                return;
        }
        if ((cached = plot_cache_find(a, run, width, height))) {
                reply_run_svg(r, cached->svg, cached->len, cached->shown, dark);
                return;
        }
        if (!(j = calloc(1, sizeof *j))) {
                http_reply_error(r, 500, "internal", "out of memory");
                return;
        }
        j->key = plot_cache_key(a, run, width, height);
        j->dark = dark;
        j->width = width;
        j->height = height;
        plot_job_start(a, r, j, &id, 1);
}

void api_plot_compare(struct api *a, struct http_request *r, unsigned id) {
        static const char *const known[] = { "runs", "y", "width", "height", "theme", NULL };
        const char *y = http_arg(r, "y");
        unsigned ids[PLOT_COMPARE_MAX], width, height;
        struct plot_job *j;
        char err[256];
        size_t n = 0;
        bool dark;

        if (!plot_args(r, known, "runs, y, width, height, theme", &width, &height, &dark))
                return;
        if (y && strcmp(y, "temp") != 0 && strcmp(y, "rise") != 0) {
                http_reply_error(r, 400, "bad_parameter", "y: \"%s\" is neither temp nor rise", y);
                return;
        }
        if (api_arg_runs(r, ids, PLOT_COMPARE_MAX, &n, err, sizeof err) < 0) {
                http_reply_error(r, 400, "bad_parameter", "%s", err);
                return;
        }
        if (!api_runs_found(a, r, ids, n, true))
                return;
        if (!(j = calloc(1, sizeof *j))) {
                http_reply_error(r, 500, "internal", "out of memory");
                return;
        }
        j->compare = true;
        j->rise = y && strcmp(y, "rise") == 0;
        j->dark = dark;
        j->width = width;
        j->height = height;
        plot_job_start(a, r, j, ids, n);
}

static enum plot_kind plot_kind_of(enum history_kind k) {
        return k == HISTORY_FREQ ? PLOT_KIND_FREQ : k == HISTORY_LOAD ? PLOT_KIND_LOAD : PLOT_KIND_TEMP;
}

/* The plot has panels for degrees, MHz and load: a power draw is in the
 * JSON history only. */
static void history_drop_power(const struct history *h, struct history_request *q) {
        size_t n = 0;

        for (size_t i = 0; i < q->n_cols; i++)
                if (history_column_kind(h, q->cols[i]) != HISTORY_POWER)
                        q->cols[n++] = q->cols[i];
        q->n_cols = n;
}

/* The buckets' per-column values as one array per series and statistic. */
static int history_bands(const struct api *a, const struct history *h, const struct history_request *q, const struct history_result *res,
                         struct plot_band *bands, int64_t *t_ms, double **ret_values) {
        size_t nb = res->n_buckets;
        double *v = malloc((nb ? nb : 1) * 3 * (q->n_cols ? q->n_cols : 1) * sizeof *v);

        if (!v)
                return -ENOMEM;
        for (size_t b = 0; b < nb; b++)
                t_ms[b] = res->buckets[b].t_ms;
        for (size_t i = 0; i < q->n_cols; i++) {
                double *mn = v + 3 * i * nb, *mx = mn + nb, *mean = mx + nb;
                for (size_t b = 0; b < nb; b++) {
                        mn[b] = res->buckets[b].min[i];
                        mx[b] = res->buckets[b].max[i];
                        mean[b] = res->buckets[b].mean[i];
                }
                bands[i] = (struct plot_band) { history_column_id(h, q->cols[i]),
                                                plot_kind_of(history_column_kind(h, q->cols[i])), mn, mx, mean };
        }
        for (size_t i = 0; a->sensors && i < q->n_cols; i++)
                for (size_t k = 0; bands[i].kind == PLOT_KIND_FREQ && k < a->sensors->n_policies; k++)
                        if (strcmp(a->sensors->policies[k].channel_id, bands[i].id) == 0)
                                bands[i].max_hz = 1e3 * (double) a->sensors->policies[k].max_khz;
        *ret_values = v;
        return 0;
}

/* A trip point once, whichever sensor has it. */
static void history_level(struct plot_history_marks *m, bool has, int32_t mc, const char *label) {
        double c = (double) mc / 1000.0;        /* millidegrees to C */

        for (size_t i = 0; i < m->n_levels; i++)
                if (m->levels[i].temp_c == c)
                        return;
        if (!has || m->n_levels >= PLOT_LEVELS_MAX)
                return;
        m->levels[m->n_levels].temp_c = c;
        snprintf(m->levels[m->n_levels++].label, sizeof m->levels[0].label, "%s", label);
}

/* The trip points (and hwmon max and crit) of the temperatures shown. */
static void history_levels(const struct api *a, const struct history *h, const struct history_request *q,
                           struct plot_history_marks *m) {
        for (size_t i = 0; a->sensors && i < q->n_cols; i++)
                for (size_t k = 0; k < a->sensors->n_temps; k++) {
                        const struct temp_sensor *t = &a->sensors->temps[k];
                        if (strcmp(t->id, history_column_id(h, q->cols[i])) != 0)
                                continue;
                        for (size_t j = 0; j < t->n_trips; j++)
                                history_level(m, t->trips[j].has_temp, t->trips[j].temp_mc, t->trips[j].type);
                        history_level(m, t->has_max, t->max_mc, "max");
                        history_level(m, t->has_crit, t->crit_mc, "crit");
                }
}

#define HISTORY_MARKS_MAX 64            /* runs, and alert changes, marked on one plot */

/* What the history plot marks: strings in labels, HISTORY_MARKS_MAX of each. */
struct history_marks {
        struct plot_history_marks m;
        struct plot_span runs[HISTORY_MARKS_MAX];
        struct plot_alert_mark alerts[HISTORY_MARKS_MAX];
        char run_labels[HISTORY_MARKS_MAX][RUN_LABEL_MAX * 4 + 16];
        char alert_labels[HISTORY_MARKS_MAX][ALERT_NAME_MAX + 48];
};

/* The runs that overlap [from, to] (a live one up to now) and the changes to warn or crit in it. */
static void history_marks(const struct api *a, int64_t from_ms, int64_t to_ms, struct history_marks *hm) {
        int64_t now = util_now_ms();

        for (size_t i = 0; i < runs_count(a->ctx.runs) && hm->m.n_runs < HISTORY_MARKS_MAX; i++) {
                const struct run *r = runs_newest(a->ctx.runs, i);
                int64_t end = r->state == RUN_RUNNING || r->ended_ms <= 0 ? now : r->ended_ms;
                if (end < from_ms || r->created_ms > to_ms)
                        continue;
                snprintf(hm->run_labels[hm->m.n_runs], sizeof hm->run_labels[0], "#%u%s%s", r->id,
                         r->label[0] ? " " : "", r->label);
                hm->runs[hm->m.n_runs] = (struct plot_span) { r->created_ms, end, hm->run_labels[hm->m.n_runs] };
                hm->m.n_runs++;
        }
        for (size_t i = 0; a->ctx.alerts && i < alerts_log_count(a->ctx.alerts); i++) {
                const struct alert_transition *t = alerts_log_at(a->ctx.alerts, i);
                size_t k = hm->m.n_alerts;
                if ((t->state != ALERT_WARN && t->state != ALERT_CRIT) || t->time_ms < from_ms ||
                    t->time_ms > to_ms || k >= HISTORY_MARKS_MAX)
                        continue;
                if (isfinite(t->value_c))
                        snprintf(hm->alert_labels[k], sizeof hm->alert_labels[0], "%s %s %s °C", t->rule,
                                 alert_state_to_string(t->state), svg_num(t->value_c, 1, (char[32]) {}, 32));
                else
                        snprintf(hm->alert_labels[k], sizeof hm->alert_labels[0], "%s %s", t->rule,
                                 alert_state_to_string(t->state));
                hm->alerts[k] = (struct plot_alert_mark) { t->time_ms, t->state == ALERT_CRIT, hm->alert_labels[k] };
                hm->m.n_alerts++;
        }
        hm->m.runs = hm->runs;
        hm->m.alerts = hm->alerts;
}

void api_plot_history(struct api *a, struct http_request *r, unsigned id) {
        static const char *const known[] = { "from", "to", "sensors", "width", "height", "theme", NULL };
        const struct history *h = a->ctx.hist;
        struct history_request q = {};
        struct history_result res = {};
        struct plot_band *bands = NULL;
        struct history_marks *marks = NULL;
        int64_t *t_ms = NULL;
        double *values = NULL;
        unsigned width, height;
        char err[256], *svg = NULL;
        size_t len = 0;
        bool dark;
        int e;

        if (!plot_args(r, known, "from, to, sensors, width, height, theme", &width, &height, &dark))
                return;
        if (api_history_parse(h, r, known, &q, err, sizeof err) < 0) {
                http_reply_error(r, 400, "bad_parameter", "%s", err);
                return;
        }
        history_drop_power(h, &q);
        /* about one bucket per pixel column of the plot area */
        q.points = width > 2 * PLOT_BUCKETS_MAX ? PLOT_BUCKETS_MAX : width / 2;
        e = history_query(h, q.from_ms, q.to_ms, q.cols, q.n_cols, q.points, &res);
        if (e >= 0) {
                bands = calloc(q.n_cols ? q.n_cols : 1, sizeof *bands);
                t_ms = calloc(res.n_buckets ? res.n_buckets : 1, sizeof *t_ms);
                e = bands && t_ms ? history_bands(a, h, &q, &res, bands, t_ms, &values) : -ENOMEM;
        }
        if (e >= 0 && !(marks = calloc(1, sizeof *marks)))
                e = -ENOMEM;
        if (e >= 0) {
                history_levels(a, h, &q, &marks->m);
                history_marks(a, q.from_ms, q.to_ms, marks);
                e = plot_history_svg(t_ms, res.n_buckets, res.bucket_ms, q.from_ms, q.to_ms, bands, q.n_cols,
                                     &marks->m, width, height, &svg, &len);
        }
        free(marks);
        history_result_free(&res);
        free(bands);
        free(t_ms);
        free(values);
        reply_svg(r, e, svg, len, dark, "the history");
}
