/* api.c — the JSON API: the api object, the helpers its handlers share, status, sensors, history, alerts, metrics. */
#include "api.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alerts.h"
#include "api-internal.h"
#include "build-config.h"
#include "config.h"
#include "duration.h"
#include "events.h"
#include "history.h"
#include "json-sensors.h"
#include "json-util.h"
#include "prometheus.h"
#include "runs.h"
#include "samples-csv.h"
#include "simulate.h"
#include "util.h"

#define HISTORY_POINTS_DEFAULT 300
#define HISTORY_WINDOW_DEFAULT_MS (15 * 60 * 1000)
#define HISTORY_VALUES_MAX 200000       /* points x series in one answer (about 4 MB of JSON) */

static void api_status_simulator(const struct api *a, json_object *root, bool trusted) {
        const struct simulate_config *sc = &a->ctx.cfg->sim;
        const struct simulator *sim = a->ctx.sim;
        char buf[32];
        json_object *o;

        if (!sim) {
                json_object_object_add(root, "simulator", NULL);
                return;
        }
        o = json_object_new_object();
        json_object_object_add(o, "board", json_object_new_string(sc->board));
        json_object_object_add(o, "ambient", json_new_number(sc->ambient_c, 2));
        json_object_object_add(o, "tau", json_object_new_string(duration_format(sc->tau_ms, buf, sizeof buf)));
        json_object_object_add(o, "tau_s", json_new_number(sc->tau_ms / 1000.0, 3));
        json_object_object_add(o, "rise", json_new_number(sc->rise_c, 2));
        json_object_object_add(o, "quantize", json_object_new_boolean(sc->quantize));
        json_object_object_add(o, "load_source", json_object_new_string(sc->load_source));
        json_object_object_add(o, "model_celsius", json_new_number(simulator_temp_c(sim), 3));
        json_object_object_add(o, "host_load", json_new_number(simulator_load(sim), 4));
        json_object_object_add(o, "sysfs_root", trusted ? json_object_new_string(simulator_sysfs_root(sim)) : NULL);
        json_object_object_add(root, "simulator", o);
}

/* A history file found damaged at start and moved aside: null when none. */
static json_object *api_status_recovered(const struct api_daemon_status *st, bool trusted) {
        json_object *o;

        if (!st->history_damage[0])
                return NULL;
        o = json_object_new_object();
        json_object_object_add(o, "moved_to", trusted ? json_object_new_string(st->history_moved_to) : NULL);
        json_object_object_add(o, "reason", json_object_new_string(st->history_damage));
        return o;
}

/* Paths and the errors that name them are for trusted clients only. */
static json_object *api_status_storage(const struct api *a, bool trusted) {
        struct api_daemon_status st = { .storage_error = "", .history_moved_to = "", .history_damage = "" };
        json_object *o = json_object_new_object();

        a->ctx.status(a->ctx.userdata, &st);
        json_object_object_add(o, "state_dir", trusted ? json_object_new_string(a->ctx.cfg->state_dir) : NULL);
        json_object_object_add(o, "ok", json_object_new_boolean(st.storage_ok));
        json_object_object_add(o, "error", !st.storage_error[0] ? NULL : json_object_new_string(
                                       trusted ? st.storage_error : "the state directory is not usable "
                                       "(details from loopback or with the token)"));
        json_object_object_add(o, "history_saved_ms",
                               st.history_saved_ms ? json_object_new_int64(st.history_saved_ms) : NULL);
        json_object_object_add(o, "history_recovered", api_status_recovered(&st, trusted));
        return o;
}

static json_object *api_status_history(const struct history *h) {
        json_object *o = json_object_new_object();
        size_t n = history_count(h);

        json_object_object_add(o, "samples", json_object_new_int64((int64_t) n));
        json_object_object_add(o, "columns", json_object_new_int64((int64_t) history_n_columns(h)));
        json_object_object_add(o, "oldest_ms", n ? json_object_new_int64(history_oldest_ms(h)) : NULL);
        json_object_object_add(o, "newest_ms", n ? json_object_new_int64(history_newest_ms(h)) : NULL);
        return o;
}

static json_object *api_status_sensors(const struct sensors *s) {
        const struct temp_sensor *hot = sensors_hottest(s);
        json_object *o = json_object_new_object(), *h = NULL;
        size_t failing = 0;

        for (size_t i = 0; i < s->n_temps; i++)
                failing += !s->temps[i].ok;
        json_object_object_add(o, "temperatures", json_object_new_int64((int64_t) s->n_temps));
        json_object_object_add(o, "failing", json_object_new_int64((int64_t) failing));
        json_object_object_add(o, "cooling_devices", json_object_new_int64((int64_t) s->n_cooling));
        json_object_object_add(o, "cpufreq_policies", json_object_new_int64((int64_t) s->n_policies));
        if (hot) {
                h = json_object_new_object();
                json_object_object_add(h, "id", json_object_new_string(hot->id));
                json_object_object_add(h, "celsius", json_new_millis(hot->temp_mc));
        }
        json_object_object_add(o, "hottest", h);
        return o;
}

static json_object *api_status_run(const struct runs *rs) {
        const struct run *r = runs_live(rs);
        json_object *o;

        if (!r)
                return NULL;
        o = json_object_new_object();
        json_object_object_add(o, "id", json_object_new_int64(r->id));
        json_object_object_add(o, "label", json_object_new_string(r->label));
        json_object_object_add(o, "phase", json_object_new_string(run_phase_kind_to_string(r->phases[r->phase_index].kind)));
        json_object_object_add(o, "phase_index", json_object_new_int64((int64_t) r->phase_index));
        json_object_object_add(o, "started_ms", json_object_new_int64(r->created_ms));
        json_object_object_add(o, "forecast", run_forecast_to_json(r));
        return o;
}

static json_object *api_status_events(const struct api *a) {
        struct events_stats st;
        json_object *o = json_object_new_object();

        events_stats(a->events, &st);
        json_object_object_add(o, "clients", json_object_new_int64(st.clients));
        json_object_object_add(o, "clients_max", json_object_new_int64(a->ctx.cfg->event_clients));
        json_object_object_add(o, "last_id", json_object_new_int64((int64_t) st.last_id));
        json_object_object_add(o, "dropped", json_object_new_int64((int64_t) st.dropped));
        json_object_object_add(o, "refused", json_object_new_int64((int64_t) st.refused));
        json_object_object_add(o, "not_published", json_object_new_int64((int64_t) a->events_failed));
        return o;
}

void api_get_status(struct api *a, struct http_request *r, unsigned id) {
        json_object *root = json_object_new_object();
        int64_t now = util_now_ms();
        char buf[32];

        json_object_object_add(root, "version", json_object_new_string(HEATCURVE_VERSION));
        json_object_object_add(root, "time_ms", json_object_new_int64(now));
        json_object_object_add(root, "board", json_board(&a->sensors->board));
        json_object_object_add(root, "started_ms", json_object_new_int64(a->ctx.started_ms));
        json_object_object_add(root, "uptime_s", json_new_number((double) (now - a->ctx.started_ms) / 1000.0, 3));
        json_object_object_add(root, "interval", json_object_new_string(duration_format(a->ctx.cfg->interval_ms, buf, sizeof buf)));
        json_object_object_add(root, "interval_ms", json_object_new_int64((int64_t) a->ctx.cfg->interval_ms));
        json_object_object_add(root, "ticks", json_object_new_int64((int64_t) a->ticks));
        json_object_object_add(root, "sensors", api_status_sensors(a->sensors));
        json_object_object_add(root, "current_run", api_status_run(a->ctx.runs));
        json_object_object_add(root, "active_alerts", alerts_active_to_json(a->ctx.alerts));
        json_object_object_add(root, "storage", api_status_storage(a, api_trusted(a, r)));
        json_object_object_add(root, "history", api_status_history(a->ctx.hist));
        api_status_simulator(a, root, api_trusted(a, r));
        json_object_object_add(root, "events", api_status_events(a));
        http_reply_json(r, 200, root);
}

/* Building the document costs far more than the reads, so it is built once
 * per tick, on the first request: a daemon nobody asks pays nothing for it. */
const char *api_sensors_json(struct api *a, size_t *ret_len) {
        json_object *doc;
        size_t len;
        const char *text;
        char *copy;

        if (a->sensors_json && !a->sensors_json_stale) {
                *ret_len = a->sensors_json_len;
                return a->sensors_json;
        }
        doc = json_sensors_document(a->sensors);
        /* the fans the daemon itself switches are cooling devices too */
        json_object_object_add(doc, "daemon_fans", alerts_fans_to_json(a->ctx.alerts));
        text = json_object_to_json_string_length(doc, JSON_C_TO_STRING_PLAIN, &len);
        copy = malloc(len + 1);
        if (copy) {
                memcpy(copy, text, len + 1);
                free(a->sensors_json);
                a->sensors_json = copy;
                a->sensors_json_len = len;
                a->sensors_json_stale = false;
        }
        json_object_put(doc);
        *ret_len = a->sensors_json_len;
        return copy;
}

void api_get_sensors(struct api *a, struct http_request *r, unsigned id) {
        size_t len;
        const char *json = api_sensors_json(a, &len);

        if (!json)
                http_reply_error(r, 500, "internal", "out of memory building the sensors document");
        else
                http_reply(r, 200, "application/json", json, len);
}

/* Unix ms, "now", or "-15m" for a moment before now. */
static int api_parse_time(const char *text, int64_t now, int64_t *ret) {
        uint64_t ago;
        char *end;

        if (strcmp(text, "now") == 0) {
                *ret = now;
                return 0;
        }
        if (text[0] == '-') {
                if (duration_parse(text + 1, &ago) < 0 || ago > (uint64_t) now)
                        return -EINVAL;
                *ret = now - (int64_t) ago;
                return 0;
        }
        if (text[0] < '0' || text[0] > '9')
                return -EINVAL;
        errno = 0;
        long long v = strtoll(text, &end, 10);
        if (errno || *end || v < 0)
                return -EINVAL;
        *ret = v;
        return 0;
}

static bool api_history_default_column(const char *id) {
        /* per-CPU load is there when asked for; by default the overview */
        return sensors_id_kind(id) != SENSOR_KIND_CPU_LOAD;
}

static int api_history_add_column(const struct history *h, const char *id, const char *list,
                                  struct history_request *q, char *err, size_t errlen) {
        int col;

        if (!id[0] || strlen(id) >= SENSORS_CHANNEL_ID_MAX) {
                snprintf(err, errlen, "sensors: empty or overlong sensor id in \"%s\"", list);
                return -EINVAL;
        }
        col = history_find_column(h, id);
        if (col < 0) {
                snprintf(err, errlen, "sensors: unknown sensor id \"%s\"", id);
                return -EINVAL;
        }
        if (q->n_cols == ELEMENTSOF(q->cols)) {
                snprintf(err, errlen, "sensors: more than %zu ids", ELEMENTSOF(q->cols));
                return -EINVAL;
        }
        for (size_t i = 0; i < q->n_cols; i++)
                if (q->cols[i] == (size_t) col) {
                        snprintf(err, errlen, "sensors: \"%s\" is listed twice", id);
                        return -EINVAL;
                }
        q->cols[q->n_cols++] = (size_t) col;
        return 0;
}

/* sensors= is one CSV record, as samples.csv's header: an id that holds a
 * comma or a quote is written in double quotes, a quote in it doubled
 * (sensors="hwmon:a,b/temp1",thermal_zone0, percent-encoded in the URL). */
static int api_history_columns(const struct history *h, const char *list, struct history_request *q,
                               char *err, size_t errlen) {
        char *copy, *rest;
        int r = 0;

        if (!list) {
                for (size_t c = 0; c < history_n_columns(h) && q->n_cols < ELEMENTSOF(q->cols); c++)
                        if (api_history_default_column(history_column_id(h, c)))
                                q->cols[q->n_cols++] = c;
                return 0;
        }
        copy = strdup(list);
        if (!copy) {
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        for (rest = copy; r >= 0 && rest; )
                r = api_history_add_column(h, samples_field_next(&rest), list, q, err, errlen);
        free(copy);
        return r;
}

int api_arg_points(struct http_request *r, size_t def, size_t *ret, char *err, size_t errlen) {
        const char *points = http_arg(r, "points");
        char *end;
        long v;

        *ret = def;
        if (!points)
                return 0;
        errno = 0;
        v = strtol(points, &end, 10);
        if (errno || *end || end == points || v < 1 || v > API_POINTS_MAX) {
                snprintf(err, errlen, "points: \"%s\" is not a number from 1 to %d", points, API_POINTS_MAX);
                return -EINVAL;
        }
        *ret = (size_t) v;
        return 0;
}

int api_arg_runs(struct http_request *r, unsigned *ids, size_t max, size_t *n, char *err, size_t errlen) {
        const char *list = http_arg(r, "runs");

        *n = 0;
        for (const char *p = list; p && *p; ) {
                char *end;
                unsigned long v = strtoul(p, &end, 10);
                if (end == p || (*end != ',' && *end != '\0') || v == 0 || v > UINT_MAX) {
                        snprintf(err, errlen, "runs: \"%s\" is not a comma-separated list of run ids", list);
                        return -EINVAL;
                }
                if (*n == max) {
                        snprintf(err, errlen, "runs: at most %zu runs", max);
                        return -EINVAL;
                }
                ids[(*n)++] = (unsigned) v;
                p = *end ? end + 1 : end;
        }
        if (*n == 0) {
                snprintf(err, errlen, "runs: give the ids to compare, e.g. runs=1,4");
                return -EINVAL;
        }
        return 0;
}

bool api_runs_found(struct api *a, struct http_request *r, const unsigned *ids, size_t n, bool listed) {
        for (size_t i = 0; i < n; i++)
                if (!runs_find(a->ctx.runs, ids[i])) {
                        if (listed)
                                http_reply_error(r, 400, "bad_parameter", "runs: no run %u", ids[i]);
                        else
                                http_reply_error(r, 404, "not_found", "no run %u", ids[i]);
                        return false;
                }
        return true;
}

int api_history_parse(const struct history *h, struct http_request *r, const char *const *known,
                      struct history_request *q, char *err, size_t errlen) {
        const char *from = http_arg(r, "from"), *to = http_arg(r, "to");
        const char *unknown = http_unknown_arg(r, known);
        int64_t now = util_now_ms();

        if (unknown) {
                int n = snprintf(err, errlen, "%s: unknown parameter (known:", unknown);
                for (size_t i = 0; known[i] && n > 0 && (size_t) n < errlen; i++)
                        n += snprintf(err + n, errlen - (size_t) n, "%s %s", i ? "," : "", known[i]);
                if (n > 0 && (size_t) n < errlen)
                        snprintf(err + n, errlen - (size_t) n, ")");
                return -EINVAL;
        }
        q->to_ms = now;
        if (to && api_parse_time(to, now, &q->to_ms) < 0) {
                snprintf(err, errlen, "to: \"%s\" is not a time (Unix milliseconds, \"now\", or \"-15m\")", to);
                return -EINVAL;
        }
        /* By default the last 15 minutes, but not before the first sample, so
         * the buckets cover data rather than the time before the start. */
        q->from_ms = q->to_ms - HISTORY_WINDOW_DEFAULT_MS;
        if (history_count(h) && history_oldest_ms(h) > q->from_ms)
                q->from_ms = history_oldest_ms(h) < q->to_ms ? history_oldest_ms(h) : q->to_ms;
        if (from && api_parse_time(from, now, &q->from_ms) < 0) {
                snprintf(err, errlen, "from: \"%s\" is not a time (Unix milliseconds, \"now\", or \"-15m\")", from);
                return -EINVAL;
        }
        if (q->to_ms < q->from_ms) {
                snprintf(err, errlen, "to: %" PRId64 " is before from (%" PRId64 ")", q->to_ms, q->from_ms);
                return -EINVAL;
        }
        if (api_arg_points(r, HISTORY_POINTS_DEFAULT, &q->points, err, errlen) < 0 ||
            api_history_columns(h, http_arg(r, "sensors"), q, err, errlen) < 0)
                return -EINVAL;
        /* one answer's size is bounded whatever is asked: three numbers per value */
        if (q->points * q->n_cols > HISTORY_VALUES_MAX) {
                snprintf(err, errlen, "points: %zu points of %zu series are more than %d values; ask for fewer "
                         "points or sensors", q->points, q->n_cols, HISTORY_VALUES_MAX);
                return -EINVAL;
        }
        return 0;
}

static const char *api_kind_name(enum history_kind k, const char **unit, int *decimals) {
        switch (k) {
        case HISTORY_TEMP:
                *unit = "celsius";
                *decimals = 2;
                return "temperature";
        case HISTORY_FREQ:
                *unit = "hz";
                *decimals = 0;
                return "frequency";
        case HISTORY_POWER:
                *unit = "watts";
                *decimals = 2;
                return "power_draw";
        default:
                *unit = "fraction";
                *decimals = 4;
                return "load";
        }
}

/* One series: {"id":..,"kind":..,"unit":..,"min":[..],"max":[..],"mean":[..]}. */
static void api_history_series(struct json_writer *w, const struct history *h, const struct history_request *q,
                               const struct history_result *res, size_t i) {
        static const char *const names[] = { ",\"min\":[", "],\"max\":[", "],\"mean\":[" };
        enum history_kind kind = history_column_kind(h, q->cols[i]);
        const char *unit;
        int dec;
        const char *kind_name = api_kind_name(kind, &unit, &dec);

        json_writer_lit(w, "{\"id\":");
        json_writer_string(w, history_column_id(h, q->cols[i]));
        json_writer_lit(w, ",\"kind\":");
        json_writer_string(w, kind_name);
        json_writer_lit(w, ",\"unit\":");
        json_writer_string(w, unit);
        for (size_t k = 0; k < 3; k++) {
                json_writer_raw(w, names[k], strlen(names[k]));
                for (size_t b = 0; b < res->n_buckets; b++) {
                        const struct history_bucket *x = &res->buckets[b];
                        double v = k == 0 ? x->min[i] : k == 1 ? x->max[i] : x->mean[i];

                        if (b)
                                json_writer_lit(w, ",");
                        json_writer_number(w, v, dec);
                }
        }
        json_writer_lit(w, "]}");
}

/* The answer is written as text, not built as a json-c tree: 1000 points of
 * 24 series are 72,000 numbers, a tree of about 7 MB for 400 KB of JSON. */
void api_get_history(struct api *a, struct http_request *r, unsigned id) {
        const struct history *h = a->ctx.hist;
        struct history_request q = {};
        struct history_result res = {};
        struct json_writer w = {};
        char err[256];
        int ret;

        static const char *const known[] = { "from", "to", "sensors", "points", NULL };

        if (api_history_parse(h, r, known, &q, err, sizeof err) < 0) {
                http_reply_error(r, 400, "bad_parameter", "%s", err);
                return;
        }
        ret = history_query(h, q.from_ms, q.to_ms, q.cols, q.n_cols, q.points, &res);
        if (ret < 0) {
                http_reply_error(r, 500, "internal", "history query failed: %s", strerror(-ret));
                return;
        }
        json_writer_lit(&w, "{\"from_ms\":");
        json_writer_int(&w, q.from_ms);
        json_writer_lit(&w, ",\"to_ms\":");
        json_writer_int(&w, q.to_ms);
        json_writer_lit(&w, ",\"points\":");
        json_writer_int(&w, (int64_t) q.points);
        json_writer_lit(&w, ",\"bucket_ms\":");
        json_writer_int(&w, res.bucket_ms);
        json_writer_lit(&w, ",\"t_ms\":[");
        for (size_t b = 0; b < res.n_buckets; b++) {
                if (b)
                        json_writer_lit(&w, ",");
                json_writer_int(&w, res.buckets[b].t_ms);
        }
        json_writer_lit(&w, "],\"series\":[");
        for (size_t i = 0; i < q.n_cols; i++) {
                if (i)
                        json_writer_lit(&w, ",");
                api_history_series(&w, h, &q, &res, i);
        }
        json_writer_lit(&w, "]}");
        history_result_free(&res);
        if (w.error) {
                free(w.buf);
                http_reply_error(r, 500, "internal", "history answer: %s", strerror(-w.error));
                return;
        }
        http_reply_owned(r, 200, "application/json", w.buf, w.len);
}

void api_get_alerts(struct api *a, struct http_request *r, unsigned id) {
        http_reply_json(r, 200, alerts_to_json(a->ctx.alerts));
}

static const enum prom_alert_state prom_states[_ALERT_STATE_MAX] = {
        [ALERT_OK] = PROM_ALERT_OK, [ALERT_FORECAST] = PROM_ALERT_FORECAST, [ALERT_WARN] = PROM_ALERT_WARN,
        [ALERT_CRIT] = PROM_ALERT_CRIT, [ALERT_LOST] = PROM_ALERT_LOST,
};

/* The tick's snapshot, the live run and the alert states; no file is read. */
void api_get_metrics(struct api *a, struct http_request *r, unsigned id) {
        const struct run *run = runs_live(a->ctx.runs);
        size_t n_alerts = alerts_count(a->ctx.alerts);
        struct prom_alert *pa = calloc(n_alerts + 1, sizeof *pa);
        struct prom_run pr;
        struct prom_info info = {
                .version = HEATCURVE_VERSION, .started_ms = a->ctx.started_ms,
                .interval_ms = a->ctx.cfg->interval_ms, .ticks = a->ticks, .tick_ns = a->tick_ns,
                .alerts = pa, .n_alerts = pa ? n_alerts : 0, .size_hint = a->metrics_len,
        };
        char *text;
        size_t len;

        for (size_t i = 0; pa && i < n_alerts; i++) {
                struct alert_status st;
                alerts_status(a->ctx.alerts, i, &st);
                pa[i] = (struct prom_alert) { st.name, st.sensor, prom_states[st.state], st.eta_s };
        }
        if (run) {
                pr = (struct prom_run) {
                        .id = run->id, .label = run->label, .started_ms = run->created_ms,
                        .phase = run_phase_kind_to_string(run->phases[run->phase_index].kind),
                        .work_rate = run->work_rate, .work_unit = run->load ? run->work_unit : NULL,
                        .baseline_c = run->baseline_c, .predicted_plateau_c = run->predicted_plateau_c,
                        .forecast_plateau_c = run->forecast_plateau_c, .forecast_eta_s = run->forecast_eta_s,
                };
                info.run = &pr;
        }
        if (!pa || prom_render(a->sensors, &info, &text, &len) < 0)
                http_reply_error(r, 500, "internal", "out of memory building /metrics");
        else {
                a->metrics_len = len;
                http_reply_owned(r, 200, PROM_CONTENT_TYPE, text, len);    /* sent without a copy */
        }
        free(pa);
}

int api_new(const struct api_context *ctx, struct api **ret) {
        struct api *a = calloc(1, sizeof *a);
        int r;

        if (!a)
                return -ENOMEM;
        a->ctx = *ctx;
        r = events_new(ctx->event, &a->events);
        if (r < 0) {
                free(a);
                return r;
        }
        *ret = a;
        return 0;
}

void api_free(struct api *a) {
        if (!a)
                return;
        free(a->sensors_json);
        api_plots_free(a);
        events_free(a->events);
        free(a->events_alerts);
        free(a->events_forecast);
        free(a);
}

void api_on_sample(void *userdata, const struct snapshot *snap) {
        struct api *a = userdata;

        a->sensors = snap->sensors;
        a->ticks = snap->tick;
        a->tick_ns = snap->tick_ns;
        a->sensors_json_stale = true;
        api_events_tick(a);
}

void api_on_sensors(void *userdata, const struct sensors *s) {
        struct api *a = userdata;

        a->sensors = s;
        a->sensors_json_stale = true;
}
