/* run-json.c — run.json, the one declaration of a run's document: written from a run, read back into one. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "json-metrics.h"
#include "json-sensors.h"
#include "json-util.h"
#include "run.h"
#include "text.h"
#include "util.h"

static const char *const phase_kinds[] = { "idle", "stress", "cooldown" };
static const char *const untils[_UNTIL_MAX] = { "duration", "stable", "plateau", "baseline" };
static const char *const states[_RUN_STATE_MAX] = { "running", "finished", "aborted", "interrupted" };

static int lookup(const char *const *names, size_t n, const char *s) {
        for (size_t i = 0; s && i < n; i++)
                if (strcmp(names[i], s) == 0)
                        return (int) i;
        return -EINVAL;
}

const char *run_phase_kind_to_string(enum analysis_phase k) {
        return phase_kinds[k];
}

const char *run_until_to_string(enum phase_until u) {
        return untils[u];
}

const char *run_state_to_string(enum run_state s) {
        return states[s];
}

const char *run_state_name(const struct run *r) {
        return r->waiting ? "waiting" : states[r->state];
}

int run_phase_kind_from_string(const char *s) {
        return lookup(phase_kinds, ELEMENTSOF(phase_kinds), s);
}

int run_until_from_string(const char *s) {
        return lookup(untils, ELEMENTSOF(untils), s);
}

static json_object *json_duration(uint64_t ms) {
        char buf[DURATION_FORMAT_MAX];

        return ms ? json_object_new_string(duration_format(ms, buf, sizeof buf)) : NULL;
}

static json_object *json_ms(int64_t ms) {
        return ms ? json_object_new_int64(ms) : NULL;
}

static json_object *stress_to_json(const struct run_phase *p) {
        const struct stress_spec *st = &p->stress;
        json_object *o = json_object_new_object();

        json_object_object_add(o, "type", json_object_new_string(stress_type_to_string(st->type)));
        if (stress_type_runs_program(st->type)) {
                json_object *a = json_object_new_array();
                for (size_t i = 0; p->command && p->command[i]; i++)
                        json_object_array_add(a, json_object_new_string(p->command[i]));
                json_object_object_add(o, "argv", a);
                return o;
        }
        json_object_object_add(o, "workers", json_object_new_int((int) st->workers));
        json_object_object_add(o, "duty", json_object_new_int((int) st->duty_pct));
        if (st->type == STRESS_CPU)
                json_object_object_add(o, "method", json_object_new_string(cpu_method_to_string(st->method)));
        if (st->type == STRESS_MEMORY)
                json_object_object_add(o, "size", json_object_new_int64((int64_t) st->memory_bytes));
        if (st->type == STRESS_IO)
                json_object_object_add(o, "size", json_object_new_int64((int64_t) st->io_file_bytes));
        return o;
}

static json_object *phase_to_json(const struct run_phase *p) {
        json_object *o = json_object_new_object();
        bool until = p->until != UNTIL_DURATION;

        json_object_object_add(o, "kind", json_object_new_string(phase_kinds[p->kind]));
        json_object_object_add(o, "until", until ? json_object_new_string(untils[p->until]) : NULL);
        json_object_object_add(o, "duration", json_duration(p->duration_ms));
        json_object_object_add(o, "min", json_duration(p->min_ms));
        json_object_object_add(o, "max", json_duration(p->max_ms));
        json_object_object_add(o, "window", json_duration(p->window_ms));
        if (p->until == UNTIL_PLATEAU)
                json_object_object_add(o, "tolerance", json_new_number(run_phase_tolerance_c(p), 2));
        json_object_object_add(o, "load", p->has_stress ? stress_to_json(p) : NULL);
        json_object_object_add(o, "started_ms", json_ms(p->started_ms));
        json_object_object_add(o, "ended_ms", json_ms(p->ended_ms));
        json_object_object_add(o, "end_reason", json_new_string_or_null(p->end_reason));
        return o;
}

json_object *run_forecast_to_json(const struct run *r) {
        json_object *o;

        if (r->phases[r->phase_index].kind != ANALYSIS_PHASE_STRESS)
                return NULL;
        o = json_object_new_object();
        json_object_object_add(o, "plateau_c", json_new_number(r->forecast_plateau_c, 2));
        json_object_object_add(o, "eta_s", isinf(r->forecast_eta_s) ? NULL : json_new_number(r->forecast_eta_s, 0));
        json_object_object_add(o, "tolerance_c", json_new_number(run_phase_tolerance_c(&r->phases[r->phase_index]), 2));
        return o;
}

static json_object *run_live_to_json(const struct run *r) {
        const struct run_sample *x = r->sampled ? &r->last : NULL;
        const struct run_phase *p = &r->phases[r->phase_index];
        const struct sensors *sn = r->host->sensors;
        const struct temp_sensor *hot = sensors_hottest(sn);
        json_object *o = json_object_new_object();
        int64_t last_mono_ms = r->created_mono_ms + (x ? (int64_t) (x->t_s * 1000.0) : 0);

        json_object_object_add(o, "elapsed_s", json_new_number(x ? x->t_s : 0.0, 1));
        json_object_object_add(o, "phase_elapsed_s",
                               json_new_number((double) (last_mono_ms - p->started_mono_ms) / 1000.0, 1));
        json_object_object_add(o, "temp_c", x ? json_new_number(x->temp_c, 3) : NULL);
        json_object_object_add(o, "freq_hz", x ? json_new_number(x->freq_hz, 0) : NULL);
        json_object_object_add(o, "hottest_c", hot ? json_new_millis(hot->temp_mc) : NULL);
        json_object_object_add(o, "load", sn->load.ok ? json_new_number(sn->load.total, 4) : NULL);
        json_object_object_add(o, "work_rate", json_new_number(r->work_rate, 1));
        json_object_object_add(o, "work_unit", json_new_string_or_null(r->work_unit));
        json_object_object_add(o, "predicted_plateau_c", json_new_number(r->predicted_plateau_c, 2));
        json_object_object_add(o, "predicted_plateau_ci95_c", json_new_number(r->plateau_ci95_c, 2));
        json_object_object_add(o, "predicted_plateau_low_c", json_new_number(r->plateau_low_c, 2));
        json_object_object_add(o, "predicted_plateau_high_c", json_new_number(r->plateau_high_c, 2));
        json_object_object_add(o, "forecast", run_forecast_to_json(r));
        /* as the throttled_fraction metric counts it: under load only */
        json_object_object_add(o, "throttled", x && p->has_stress ?
                               json_object_new_boolean(analysis_sample_throttled(x->freq_hz, x->max_hz, x->cooling,
                                                                                 x->firmware_throttled)) : NULL);
        return o;
}

static json_object *recording_to_json(const struct run *r) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "ok", json_object_new_boolean(r->recording_ok));
        json_object_object_add(o, "error", json_new_string_or_null(r->recording_error));
        json_object_object_add(o, "samples", json_object_new_int64((int64_t) r->n_samples));
        return o;
}

/* Where an imported run came from: its id there (the board says which one). */
static json_object *run_imported_to_json(const struct run *r) {
        json_object *o;

        if (!r->imported_id)
                return NULL;
        o = json_object_new_object();
        json_object_object_add(o, "id", json_object_new_int64(r->imported_id));
        json_object_object_add(o, "imported_ms", json_ms(r->imported_ms));
        return o;
}

/* The metrics, and the prior time constant the heating fit was offered:
 * tau_prior_s with its range, the runs it came from, and whether the
 * plateau used it (null without a prior). */
static json_object *run_metrics_to_json(const struct run *r) {
        json_object *o = json_run_metrics(&r->metrics, r->work_unit), *ids = NULL;
        const struct analysis_prior *p = run_prior(r);
        bool used;

        if (p) {
                ids = json_object_new_array();
                for (size_t i = 0; i < r->n_prior_ids; i++)
                        json_object_array_add(ids, json_object_new_int64(r->prior_ids[i]));
        }
        json_object_object_add(o, "tau_prior_s", json_new_number(r->prior.tau_s, 1));
        json_object_object_add(o, "tau_prior_low_s", json_new_number(r->prior.low_s, 1));
        json_object_object_add(o, "tau_prior_high_s", json_new_number(r->prior.high_s, 1));
        json_object_object_add(o, "tau_prior_runs", ids);
        /* used: it bounds the reported interval, or it bounded the one until: plateau stopped on */
        used = r->metrics.prior_use == ANALYSIS_PRIOR_USED || r->prior_stopped;
        json_object_object_add(o, "prior_used", p ? json_object_new_boolean(used) : NULL);
        return o;
}

json_object *run_to_json(const struct run *r, bool live) {
        json_object *o = json_object_new_object(), *phases = json_object_new_array();
        bool running = r->state == RUN_RUNNING;

        for (size_t i = 0; i < r->n_phases; i++)
                json_object_array_add(phases, phase_to_json(&r->phases[i]));
        json_object_object_add(o, "id", json_object_new_int64(r->id));
        json_object_object_add(o, "label", json_object_new_string(r->label));
        json_object_object_add(o, "notes", json_object_new_string(r->notes ? r->notes : ""));
        json_object_object_add(o, "state", json_object_new_string(run_state_name(r)));
        json_object_object_add(o, "phase", running ? json_object_new_string(phase_kinds[r->phases[r->phase_index].kind]) : NULL);
        json_object_object_add(o, "phase_index", running ? json_object_new_int64((int64_t) r->phase_index) : NULL);
        json_object_object_add(o, "abort_reason", json_new_string_or_null(r->abort_reason));
        json_object_object_add(o, "created_ms", json_ms(r->created_ms));
        json_object_object_add(o, "started_ms", json_ms(r->phases[0].started_ms));
        if (r->start_at_ms)
                json_object_object_add(o, "start_at_ms", json_ms(r->start_at_ms));
        json_object_object_add(o, "ended_ms", json_ms(r->ended_ms));
        json_object_object_add(o, "ambient_c", json_new_number(r->ambient_c, 2));
        json_object_object_add(o, "ambient_sensor", json_new_string_or_null(r->ambient_sensor));
        json_object_object_add(o, "safety_limit_c", json_new_number(r->safety_limit_c, 2));
        json_object_object_add(o, "sensor", json_object_new_string(r->sensor));
        json_object_object_add(o, "board", json_board(&r->board));
        json_object_object_add(o, "phases", phases);
        json_object_object_add(o, "metrics", run_metrics_to_json(r));
        json_object_object_add(o, "quality", run_quality_to_json(r));
        json_object_object_add(o, "recording", recording_to_json(r));
        json_object_object_add(o, "clock_steps", json_object_new_int64(r->clock_steps));
        json_object_object_add(o, "imported", run_imported_to_json(r));
        if (r->repeat_of) {
                json_object_object_add(o, "repeat_of", json_object_new_int64(r->repeat_of));
                json_object_object_add(o, "repeat_index", json_object_new_int64(r->repeat_index));
                json_object_object_add(o, "repeat_count", json_object_new_int64(r->repeat_count));
                json_object_object_add(o, "remount", json_object_new_boolean(r->remount));
        }
        json_object_object_add(o, "live", live && running && r->host ? run_live_to_json(r) : NULL);
        return o;
}

/* Reading back. Each helper takes the object and a key and tells what is
 * wrong with the path in err; a null or missing optional value is "unknown". */

static json_object *doc_get(json_object *o, const char *key) {
        json_object *v;

        return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static const char *doc_string(json_object *o, const char *key) {
        json_object *v = doc_get(o, key);

        return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static int64_t doc_int(json_object *o, const char *key) {
        json_object *v = doc_get(o, key);

        return json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : 0;
}

static double doc_number(json_object *o, const char *key) {
        json_object *v = doc_get(o, key);

        return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double) ?
                json_object_get_double(v) : NAN;
}

static void doc_copy(json_object *o, const char *key, char *buf, size_t size) {
        const char *s = doc_string(o, key);

        /* cut on a character boundary, and valid UTF-8 whatever came in */
        text_utf8_sanitize(s ? s : "", buf, size);
}

static int doc_duration(json_object *o, const char *key, uint64_t *ret) {
        const char *s = doc_string(o, key);

        *ret = 0;
        return s ? duration_parse(s, ret) : 0;
}

static int stress_from_json(json_object *o, struct run_phase *p, char *err, size_t errlen) {
        const char *name = doc_string(o, "type");
        int type = name ? stress_type_from_string(name) : -EINVAL;
        json_object *argv = doc_get(o, "argv");

        if (type < 0)
                return util_errorf(err, errlen, -EINVAL, "load.type: unknown");
        stress_spec_init(&p->stress, (enum stress_type) type);
        p->has_stress = true;
        if (stress_type_runs_program((enum stress_type) type)) {
                size_t n = json_object_is_type(argv, json_type_array) ? json_object_array_length(argv) : 0;
                p->command = calloc(n + 1, sizeof *p->command);
                if (!p->command)
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++) {
                        const char *s = json_object_get_string(json_object_array_get_idx(argv, i));
                        if (!(p->command[i] = strdup(s ? s : "")))
                                return -ENOMEM;
                }
                p->stress.argv = p->command;
                return 0;
        }
        p->stress.workers = (unsigned) doc_int(o, "workers");
        p->stress.duty_pct = (unsigned) doc_int(o, "duty");
        if (type == STRESS_CPU) {
                const char *method = doc_string(o, "method");
                int m = method ? cpu_method_from_string(method) : -EINVAL;
                if (m < 0)
                        return util_errorf(err, errlen, -EINVAL, "load.method: unknown");
                p->stress.method = (enum cpu_method) m;
        }
        if (type == STRESS_MEMORY)
                p->stress.memory_bytes = (uint64_t) doc_int(o, "size");
        if (type == STRESS_IO)
                p->stress.io_file_bytes = (uint64_t) doc_int(o, "size");
        return 0;
}

static int phase_from_json(json_object *o, struct run_phase *p, char *err, size_t errlen) {
        int kind = run_phase_kind_from_string(doc_string(o, "kind"));
        const char *until = doc_string(o, "until");
        json_object *stress = doc_get(o, "load");

        if (kind < 0)
                return util_errorf(err, errlen, -EINVAL, "kind: unknown");
        p->kind = (enum analysis_phase) kind;
        p->until = UNTIL_DURATION;
        if (until && (kind = run_until_from_string(until)) < 0)
                return util_errorf(err, errlen, -EINVAL, "until: unknown");
        if (until)
                p->until = (enum phase_until) kind;
        if (doc_duration(o, "duration", &p->duration_ms) < 0 || doc_duration(o, "min", &p->min_ms) < 0 ||
            doc_duration(o, "max", &p->max_ms) < 0 || doc_duration(o, "window", &p->window_ms) < 0)
                return util_errorf(err, errlen, -EINVAL, "a duration is not one");
        p->tolerance_c = doc_number(o, "tolerance");
        if (!(p->tolerance_c > 0))
                p->tolerance_c = 0;
        p->started_ms = doc_int(o, "started_ms");
        p->ended_ms = doc_int(o, "ended_ms");
        doc_copy(o, "end_reason", p->end_reason, sizeof p->end_reason);
        return json_object_is_type(stress, json_type_object) ? stress_from_json(stress, p, err, errlen) : 0;
}

static void board_from_json(json_object *o, struct board_info *b) {
        doc_copy(o, "model", b->model, sizeof b->model);
        doc_copy(o, "kernel", b->kernel, sizeof b->kernel);
        doc_copy(o, "hostname", b->hostname, sizeof b->hostname);
        b->cpus = (int) doc_int(o, "cpus");
}

/* A run of a series (only those have "repeat_of"): which, of how many. */
static void repeat_from_json(json_object *doc, struct run *r) {
        int64_t of = doc_int(doc, "repeat_of"), index = doc_int(doc, "repeat_index"),
                count = doc_int(doc, "repeat_count");

        r->repeat_count = 1;
        if (of <= 0 || of > UINT32_MAX || count < 2 || count > RUN_REPEAT_MAX || index < 1 || index > count)
                return;
        r->repeat_of = (unsigned) of;
        r->repeat_index = (unsigned) index;
        r->repeat_count = (unsigned) count;
        r->remount = json_object_get_boolean(doc_get(doc, "remount"));
}

/* The prior of run_metrics_to_json(); a run.json from before has none. */
static void run_prior_from_json(json_object *metrics, struct run *r) {
        double tau = doc_number(metrics, "tau_prior_s"), lo = doc_number(metrics, "tau_prior_low_s");
        double hi = doc_number(metrics, "tau_prior_high_s");
        json_object *ids = doc_get(metrics, "tau_prior_runs"), *used = doc_get(metrics, "prior_used");

        run_prior_clear(r);
        if (!(tau > 0) || !(lo > 0 && lo <= tau) || !(hi >= tau && isfinite(hi)))
                return;
        for (size_t i = 0; json_object_is_type(ids, json_type_array) && i < json_object_array_length(ids) &&
                           r->n_prior_ids < RUN_PRIOR_RUNS_MAX; i++) {
                int64_t id = json_object_get_int64(json_object_array_get_idx(ids, i));
                if (id > 0 && id <= UINT32_MAX)
                        r->prior_ids[r->n_prior_ids++] = (unsigned) id;
        }
        r->prior = (struct analysis_prior) {
                .tau_s = tau, .low_s = lo, .high_s = hi, .spread = log(hi / lo) / (2 * ANALYSIS_PRIOR_RANGE),
                .runs = r->n_prior_ids,
        };
        if (json_object_is_type(used, json_type_boolean))
                r->metrics.prior_use = json_object_get_boolean(used) ? ANALYSIS_PRIOR_USED : ANALYSIS_PRIOR_NOT_NEEDED;
}

static int record_from_json(json_object *doc, struct run *r, char *err, size_t errlen) {
        json_object *phases = doc_get(doc, "phases"), *rec = doc_get(doc, "recording");
        const char *name = doc_string(doc, "state");
        /* a run that waited for start_at when the daemon stopped is a running one */
        int state = lookup(states, ELEMENTSOF(states), name && strcmp(name, "waiting") == 0 ? "running" : name);
        char inner[256];
        int ret;

        if (!json_object_is_type(doc_get(doc, "id"), json_type_int) || doc_int(doc, "id") <= 0 ||
            doc_int(doc, "id") > UINT32_MAX)
                return util_errorf(err, errlen, -EINVAL, "id: missing or not a run id");
        if (state < 0)
                return util_errorf(err, errlen, -EINVAL, "state: missing or unknown");
        if (!json_object_is_type(phases, json_type_array) || json_object_array_length(phases) == 0 ||
            json_object_array_length(phases) > RUN_PHASES_MAX)
                return util_errorf(err, errlen, -EINVAL, "phases: not 1 to %d phases", RUN_PHASES_MAX);
        r->id = (unsigned) doc_int(doc, "id");
        r->state = (enum run_state) state;
        doc_copy(doc, "label", r->label, sizeof r->label);
        r->notes = strdup(doc_string(doc, "notes") ? doc_string(doc, "notes") : "");
        if (!r->notes)
                return -ENOMEM;
        r->phase_index = (size_t) doc_int(doc, "phase_index");
        doc_copy(doc, "abort_reason", r->abort_reason, sizeof r->abort_reason);
        r->created_ms = doc_int(doc, "created_ms");
        r->start_at_ms = doc_int(doc, "start_at_ms");   /* 0 when it had none */
        r->ended_ms = doc_int(doc, "ended_ms");
        r->ambient_c = doc_number(doc, "ambient_c");
        doc_copy(doc, "ambient_sensor", r->ambient_sensor, sizeof r->ambient_sensor);
        r->safety_limit_c = doc_number(doc, "safety_limit_c");
        doc_copy(doc, "sensor", r->sensor, sizeof r->sensor);
        board_from_json(doc_get(doc, "board"), &r->board);
        json_run_metrics_parse(doc_get(doc, "metrics"), &r->metrics, r->work_unit, sizeof r->work_unit);
        run_prior_from_json(doc_get(doc, "metrics"), r);
        r->recording_ok = json_object_get_boolean(doc_get(rec, "ok"));
        doc_copy(rec, "error", r->recording_error, sizeof r->recording_error);
        r->n_samples = (size_t) doc_int(rec, "samples");
        r->clock_steps = (unsigned) doc_int(doc, "clock_steps");
        json_object *imported = doc_get(doc, "imported");
        if (json_object_is_type(imported, json_type_object) && doc_int(imported, "id") > 0 &&
            doc_int(imported, "id") <= UINT32_MAX) {
                r->imported_id = (unsigned) doc_int(imported, "id");
                r->imported_ms = doc_int(imported, "imported_ms");
        }
        repeat_from_json(doc, r);
        r->n_phases = json_object_array_length(phases);
        if (r->phase_index >= r->n_phases)
                r->phase_index = 0;
        for (size_t i = 0; i < r->n_phases; i++) {
                ret = phase_from_json(json_object_array_get_idx(phases, i), &r->phases[i], inner, sizeof inner);
                if (ret < 0)
                        return ret == -EINVAL ? util_errorf(err, errlen, -EINVAL, "phases[%zu].%s", i, inner) : ret;
        }
        /* after the phases: the flags are read per phase, up to n_phases */
        run_quality_from_json(doc_get(doc, "quality"), r);
        return 0;
}

int run_from_json(json_object *doc, struct run **ret, char *err, size_t errlen) {
        struct run *r = run_alloc();
        int e;

        if (!r)
                return -ENOMEM;
        e = json_object_is_type(doc, json_type_object) ? record_from_json(doc, r, err, errlen) :
                util_errorf(err, errlen, -EINVAL, "not a JSON object");
        if (e < 0) {
                run_free(r);
                return e;
        }
        *ret = r;
        return 0;
}
