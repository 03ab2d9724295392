/* plot-data.c — what a run plot is drawn from, built from the API's documents, so the daemon and heatcurvectl draw the same bytes. */
#include "plot-data.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json-metrics.h"
#include "samples-csv.h"
#include "util.h"

static json_object *get(json_object *o, const char *key) {
        json_object *v = NULL;

        return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* A number from its text, so a document built in memory and the same one
 * parsed from HTTP give the same double; NaN for null or missing. */
static double number(json_object *v) {
        const char *text;

        if (!v || !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
                return NAN;
        text = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
        return text ? strtod(text, NULL) : NAN;
}

static void copy_string(json_object *v, char *buf, size_t size) {
        snprintf(buf, size, "%s", v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "");
}

static enum analysis_phase phase_parse(const char *s) {
        if (s && strcmp(s, "stress") == 0)
                return ANALYSIS_PHASE_STRESS;
        if (s && strcmp(s, "cooldown") == 0)
                return ANALYSIS_PHASE_COOLDOWN;
        return ANALYSIS_PHASE_IDLE;
}

/* quality.phases[i] goes with phases[i]. */
static void phases_from_doc(struct plot_data *d, json_object *phases, json_object *quality, double created_ms) {
        size_t n = phases && json_object_is_type(phases, json_type_array) ? json_object_array_length(phases) : 0;
        json_object *qp = get(quality, "phases");

        for (size_t i = 0; i < n && d->n_phases < ELEMENTSOF(d->phases); i++) {
                json_object *p = json_object_array_get_idx(phases, i), *q = NULL;
                double start = number(get(p, "started_ms")), end = number(get(p, "ended_ms"));
                if (!isfinite(start))
                        break;          /* not reached yet */
                if (qp && json_object_is_type(qp, json_type_array) && i < json_object_array_length(qp))
                        q = get(json_object_array_get_idx(qp, i), "disturbed");
                d->phases[d->n_phases++] = (struct plot_phase) {
                        .kind = phase_parse(json_object_get_string(get(p, "kind"))),
                        .start_s = (start - created_ms) / 1000.0,
                        .end_s = isfinite(end) ? (end - created_ms) / 1000.0 : NAN,
                        .disturbed = q && json_object_is_type(q, json_type_boolean) && json_object_get_boolean(q),
                };
        }
}

const char *plot_data_quality(json_object *quality) {
        json_object *ok = get(quality, "ok"), *ms = get(quality, "metrics");
        bool uncertain = false;

        if (!ok || !json_object_is_type(ok, json_type_boolean) || json_object_get_boolean(ok))
                return "";
        if (ms && json_object_is_type(ms, json_type_object)) {
                json_object_object_foreach(ms, key, v) {
                        const char *word = json_object_get_string(v);
                        (void) key;
                        if (word && strcmp(word, "disturbed") == 0)
                                return "disturbed";
                        uncertain |= word && strcmp(word, "uncertain") == 0;
                }
        }
        return uncertain ? "uncertain" : "disturbed";
}

int plot_data_from_doc(struct plot_data *d, json_object *doc, char *err, size_t errlen) {
        double created = number(get(doc, "created_ms")), id = number(get(doc, "id"));
        json_object *metrics = get(doc, "metrics");

        *d = (struct plot_data) { .safety_limit_c = NAN };
        if (!doc || !json_object_is_type(doc, json_type_object) || !isfinite(created) || !metrics) {
                snprintf(err, errlen, "not a run document (no created_ms or metrics)");
                return -EINVAL;
        }
        d->id = isfinite(id) && id > 0 && id <= 4294967295.0 ? (unsigned) id : 0;
        copy_string(get(doc, "label"), d->label, sizeof d->label);
        copy_string(get(get(doc, "board"), "model"), d->board, sizeof d->board);
        copy_string(get(doc, "sensor"), d->sensor, sizeof d->sensor);
        plot_format_utc((int64_t) created, d->date, sizeof d->date);
        if (strlen(d->date) > 16)
                snprintf(d->date + 16, sizeof d->date - 16, " UTC");    /* minutes are enough in a title */
        d->safety_limit_c = number(get(doc, "safety_limit_c"));
        phases_from_doc(d, get(doc, "phases"), get(doc, "quality"), created);
        snprintf(d->quality, sizeof d->quality, "%s", plot_data_quality(get(doc, "quality")));
        analysis_metrics_init(&d->run.metrics, NAN);
        json_run_metrics_parse(metrics, &d->run.metrics, d->work_unit, sizeof d->work_unit);
        return 0;
}

static int grow(struct plot_data *d, size_t limit) {
        size_t cap = d->cap ? d->cap * 2 : 1024;

        if (limit && cap > limit)
                cap = limit;

#define GROW(field) do { \
                void *p = realloc(d->field, cap * sizeof *d->field); \
                if (!p) return -ENOMEM; \
                d->field = p; \
        } while (0)
        GROW(t_s); GROW(temp_c); GROW(freq_hz); GROW(work_rate); GROW(phase);
#undef GROW
        d->cap = cap;
        return 0;
}

/* Drops the samples whose time does not move forward (or is not known),
 * compacting d in place: the first of two at the same time stays. */
static void keep_forward(struct plot_data *d) {
        size_t k = 0;

        for (size_t i = 0; i < d->n; i++) {
                if (!isfinite(d->t_s[i]) || (k && d->t_s[i] <= d->t_s[k - 1]))
                        continue;
                d->t_s[k] = d->t_s[i];
                d->temp_c[k] = d->temp_c[i];
                d->freq_hz[k] = d->freq_hz[i];
                d->work_rate[k] = d->work_rate[i];
                d->phase[k] = d->phase[i];
                k++;
        }
        d->n = k;
}

/* Every other sample, from the first (SAMPLES_HALVE). */
static void halve(struct plot_data *d) {
#define HALVE(field) samples_halve(d->field, sizeof *d->field, d->n)
        HALVE(t_s); HALVE(temp_c); HALVE(freq_hz); HALVE(work_rate);
        d->n = HALVE(phase);
#undef HALVE
}

void plot_data_reader_init(struct plot_data_reader *rd, struct plot_data *d, size_t limit) {
        *rd = (struct plot_data_reader) { .d = d };
        samples_limit_init(&rd->lim, limit);
}

int plot_data_read_row(void *userdata, char *line, bool header) {
        struct plot_data_reader *rd = userdata;
        struct plot_data *d = rd->d;
        struct samples_row row;
        unsigned what;

        if (header) {
                rd->fixed = samples_header_fixed(line);
                return 0;
        }
        if (samples_parse_row(line, rd->fixed, &row) < 0)
                return 0;       /* a row with too few fields, as the daemon skips it */
        what = samples_limit_next(&rd->lim, d->n);
        if (what & SAMPLES_HALVE)
                halve(d);
        if (!(what & SAMPLES_TAKE))
                return 0;
        return plot_data_add(d, &row, phase_parse(row.phase), rd->lim.limit);
}

int plot_data_add(struct plot_data *d, const struct samples_row *row, enum analysis_phase phase, size_t limit) {
        if (d->n == d->cap && grow(d, limit) < 0)
                return -ENOMEM;
        d->t_s[d->n] = row->elapsed_s;
        d->temp_c[d->n] = row->temp_c;
        d->freq_hz[d->n] = row->freq_hz;
        d->work_rate[d->n] = row->work_rate;
        d->phase[d->n] = phase;
        d->n++;
        return 0;
}

int plot_data_read_file(struct plot_data *d, FILE *f, size_t limit) {
        struct plot_data_reader rd;

        plot_data_reader_init(&rd, d, limit);
        return samples_read(f, plot_data_read_row, &rd);
}

void plot_data_add_level(struct plot_data *d, double temp_c, const char *label) {
        struct plot_run *r = &d->run;

        if (!isfinite(temp_c) || temp_c <= 0 || r->n_levels == PLOT_LEVELS_MAX || !label)
                return;         /* 0 C and below: a disabled trip */
        for (size_t i = 0; i < r->n_levels; i++)
                if (r->levels[i].temp_c == temp_c)
                        return;
        r->levels[r->n_levels].temp_c = temp_c;
        snprintf(r->levels[r->n_levels].label, sizeof r->levels[r->n_levels].label, "%s", label);
        r->n_levels++;
}

void plot_data_finish(struct plot_data *d) {
        struct plot_run *r = &d->run;
        bool any_work = false;

        keep_forward(d);
        plot_data_add_level(d, d->safety_limit_c, "safety limit");
        for (size_t i = 0; i < d->n && !any_work; i++)
                any_work = isfinite(d->work_rate[i]);
        plot_run_fits(d->t_s, d->temp_c, d->phase, d->n, &r->heat, &r->cool);
        r->label = d->label;
        r->board = d->board;
        r->date = d->date;
        r->sensor = d->sensor;
        r->quality = d->quality;
        r->n = d->n;
        r->t_s = d->t_s;
        r->temp_c = d->temp_c;
        r->freq_hz = d->freq_hz;
        r->work_rate = any_work ? d->work_rate : NULL;
        r->work_unit = d->work_unit;
        r->n_phases = d->n_phases;
        r->phases = d->phases;
}

void plot_data_free(struct plot_data *d) {
        free(d->t_s);
        free(d->temp_c);
        free(d->freq_hz);
        free(d->work_rate);
        free(d->phase);
        *d = (struct plot_data) { .safety_limit_c = NAN };
}

void plot_data_curve(struct plot_data *d, const char *origin, struct plot_curve *ret) {
        size_t load = 0;
        double t0 = NAN;

        /* the load start as samples.csv's t_since_load_s counts it */
        for (size_t i = 0; i < d->n_phases && isnan(t0); i++)
                if (d->phases[i].kind == ANALYSIS_PHASE_STRESS)
                        t0 = d->phases[i].start_s;
        while (load < d->n && d->phase[load] != ANALYSIS_PHASE_STRESS)
                load++;
        if (isnan(t0))
                t0 = load < d->n ? d->t_s[load] : d->n ? d->t_s[0] : 0;
        for (size_t i = 0; i < d->n; i++)
                d->t_s[i] -= t0;
        *ret = (struct plot_curve) {
                .label = d->label, .id = d->id, .origin = origin, .quality = d->quality, .n = d->n, .t_s = d->t_s, .temp_c = d->temp_c,
                .metrics = d->run.metrics,
        };
}

void plot_data_levels_from_sensors(struct plot_data *d, json_object *sensors_doc) {
        json_object *temps = get(sensors_doc, "temperatures"), *t = NULL, *trips;
        size_t n = temps && json_object_is_type(temps, json_type_array) ? json_object_array_length(temps) : 0;

        for (size_t i = 0; i < n && !t; i++) {
                json_object *c = json_object_array_get_idx(temps, i);
                const char *id = json_object_get_string(get(c, "id"));
                if (id && strcmp(id, d->sensor) == 0)
                        t = c;
        }
        if (!t)
                return;
        trips = get(t, "trips");
        for (size_t i = 0; trips && i < json_object_array_length(trips); i++) {
                json_object *tp = json_object_array_get_idx(trips, i);
                plot_data_add_level(d, number(get(tp, "celsius")), json_object_get_string(get(tp, "type")));
        }
        plot_data_add_level(d, number(get(t, "max_celsius")), "max");
        plot_data_add_level(d, number(get(t, "crit_celsius")), "crit");
}
