/* run-def.c — a run's definition: parse and validate the POSTed JSON, and write a run back as JSON. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "duration.h"
#include "json-sensors.h"
#include "json-util.h"
#include "util.h"
#include "run.h"

/* "until" without "max" gets these, so no run can go on for ever. */
#define RUN_IDLE_MAX_DEFAULT_MS (30u * 60u * 1000u)
#define RUN_STRESS_MAX_DEFAULT_MS (90u * 60u * 1000u)
#define RUN_COOLDOWN_MAX_DEFAULT_MS (30u * 60u * 1000u)
#define RUN_WINDOW_DEFAULT_MS (5u * 60u * 1000u)

static int fail(char *err, size_t errlen, const char *format, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        vsnprintf(err, errlen, format, ap);
        va_end(ap);
        return -EINVAL;
}

static const char *const phase_kinds[] = { "idle", "stress", "cooldown" };
static const char *const untils[] = { "duration", "stable", "plateau", "baseline" };

const char *run_phase_kind_to_string(enum analysis_phase k) {
        return phase_kinds[k];
}

const char *run_state_to_string(enum run_state s) {
        static const char *const names[] = { "running", "finished", "aborted", "interrupted" };
        return names[s];
}

static int lookup(const char *const *names, size_t n, const char *s) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(names[i], s) == 0)
                        return (int) i;
        return -1;
}

/* Every key of o must be in the NULL-terminated list. */
static int check_keys(json_object *o, const char *const *known, const char *where, char *err, size_t errlen) {
        json_object_object_foreach(o, key, val) {
                (void) val;
                size_t i = 0;
                while (known[i] && strcmp(known[i], key) != 0)
                        i++;
                if (!known[i])
                        return fail(err, errlen, "%s%s: unknown field", where, key);
        }
        return 0;
}

static int get_string(json_object *o, const char *key, const char *where, const char **ret,
                      char *err, size_t errlen) {
        json_object *v;

        *ret = NULL;
        if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
                return 0;
        if (!json_object_is_type(v, json_type_string))
                return fail(err, errlen, "%s%s: must be a string", where, key);
        *ret = json_object_get_string(v);
        return 1;
}

static int get_number(json_object *o, const char *key, const char *where, double lo, double hi,
                      double *ret, char *err, size_t errlen) {
        json_object *v;
        double x;

        if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
                return 0;
        if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
                return fail(err, errlen, "%s%s: must be a number", where, key);
        x = json_object_get_double(v);
        if (!(x >= lo && x <= hi))
                return fail(err, errlen, "%s%s: %g is outside %g..%g", where, key, x, lo, hi);
        *ret = x;
        return 1;
}

static int get_duration(json_object *o, const char *key, const char *where, uint64_t *ret,
                        char *err, size_t errlen) {
        const char *text;
        int r = get_string(o, key, where, &text, err, errlen);

        if (r <= 0)
                return r;
        if (duration_parse(text, ret) < 0 || *ret == 0)
                return fail(err, errlen, "%s%s: \"%s\" is not a duration (e.g. 30s, 5m, 1h30m)", where, key, text);
        return 1;
}

/* "64M", "1G", "4096" (bytes). */
static int parse_size(const char *text, uint64_t *ret) {
        char *end;
        unsigned long long v;

        if (text[0] < '0' || text[0] > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(text, &end, 10);
        if (errno)
                return -EINVAL;
        switch (*end) {
        case 'K': v <<= 10; end++; break;
        case 'M': v <<= 20; end++; break;
        case 'G': v <<= 30; end++; break;
        }
        if (*end || v > (UINT64_C(1) << 40))
                return -EINVAL;
        *ret = v;
        return 0;
}

static int parse_load_argv(json_object *o, const char *where, struct run_phase *p, char *err, size_t errlen) {
        json_object *a;
        size_t n;

        if (!json_object_object_get_ex(o, "argv", &a) || !json_object_is_type(a, json_type_array))
                return fail(err, errlen, "%sargv: a command load needs an array of strings", where);
        n = json_object_array_length(a);
        if (n == 0 || n >= ELEMENTSOF(p->command))
                return fail(err, errlen, "%sargv: 1 to %zu strings", where, ELEMENTSOF(p->command) - 1);
        for (size_t i = 0; i < n; i++) {
                json_object *s = json_object_array_get_idx(a, i);
                if (!json_object_is_type(s, json_type_string))
                        return fail(err, errlen, "%sargv[%zu]: must be a string", where, i);
                p->command[i] = strdup(json_object_get_string(s));
                if (!p->command[i])
                        return -ENOMEM;
        }
        p->load.argv = p->command;
        return 0;
}

static int parse_load_fields(json_object *o, const char *where, struct run_phase *p, char *err, size_t errlen) {
        const char *text;
        double x;
        int r;

        if ((r = get_number(o, "workers", where, 0, LOAD_WORKERS_MAX, &x, err, errlen)) < 0)
                return r;
        if (r > 0)
                p->load.workers = (unsigned) x;
        if ((r = get_number(o, "duty", where, 1, 100, &x, err, errlen)) < 0)
                return r;
        if (r > 0)
                p->load.duty_pct = (unsigned) x;
        if ((r = get_string(o, "method", where, &text, err, errlen)) < 0)
                return r;
        if (r > 0 && (r = cpu_method_from_string(text)) < 0)
                return fail(err, errlen, "%smethod: \"%s\" is not one of sqrt, fma, matrix", where, text);
        if (text)
                p->load.method = (enum cpu_method) r;
        if ((r = get_string(o, "size", where, &text, err, errlen)) < 0)
                return r;
        if (r > 0) {
                uint64_t size;
                if (parse_size(text, &size) < 0)
                        return fail(err, errlen, "%ssize: \"%s\" is not a size (e.g. 64M, 1G)", where, text);
                p->load.memory_bytes = p->load.io_file_bytes = size;
        }
        return 0;
}

static int parse_load(json_object *o, const char *phase_where, struct run_phase *p, char *err, size_t errlen) {
        static const char *const known[] = { "type", "workers", "method", "duty", "size", "argv", NULL };
        char where[64];
        const char *type = "cpu", *verr;
        char vmsg[256];
        int r;

        snprintf(where, sizeof where, "%sload.", phase_where);
        if (!json_object_is_type(o, json_type_object))
                return fail(err, errlen, "%sload: must be an object", phase_where);
        if ((r = check_keys(o, known, where, err, errlen)) < 0 ||
            (r = get_string(o, "type", where, &type, err, errlen)) < 0)
                return r;
        if (!type)
                type = "cpu";
        if ((r = load_type_from_string(type)) < 0)
                return fail(err, errlen, "%stype: \"%s\" is not one of cpu, memory, io, command", where, type);
        load_spec_init(&p->load, (enum load_type) r);
        p->has_load = true;
        if ((r = parse_load_fields(o, where, p, err, errlen)) < 0)
                return r;
        if (p->load.type == LOAD_COMMAND && (r = parse_load_argv(o, where, p, err, errlen)) < 0)
                return r;
        if (p->load.type == LOAD_IO)
                return 0;       /* its directory is known at start; validated there */
        if (load_spec_validate(&p->load, vmsg, sizeof vmsg) < 0) {
                verr = strncmp(vmsg, "load.", 5) == 0 ? vmsg + 5 : vmsg;
                return fail(err, errlen, "%s%s", where, verr);
        }
        return 0;
}

static bool until_allowed(enum analysis_phase kind, enum phase_until u) {
        switch (u) {
        case UNTIL_DURATION:
        case UNTIL_STABLE:
                return true;
        case UNTIL_PLATEAU:
                return kind == ANALYSIS_PHASE_STRESS;
        case UNTIL_BASELINE:
                return kind == ANALYSIS_PHASE_COOLDOWN;
        }
        return false;
}

static uint64_t default_max_ms(enum analysis_phase kind) {
        return kind == ANALYSIS_PHASE_STRESS ? RUN_STRESS_MAX_DEFAULT_MS :
               kind == ANALYSIS_PHASE_IDLE ? RUN_IDLE_MAX_DEFAULT_MS : RUN_COOLDOWN_MAX_DEFAULT_MS;
}

static int parse_phase_end(json_object *o, const char *where, struct run_phase *p, char *err, size_t errlen) {
        const char *until;
        int r = 0, has_duration;

        if ((has_duration = get_duration(o, "duration", where, &p->duration_ms, err, errlen)) < 0 ||
            (r = get_string(o, "until", where, &until, err, errlen)) < 0 ||
            (r = get_duration(o, "min", where, &p->min_ms, err, errlen)) < 0 ||
            (r = get_duration(o, "max", where, &p->max_ms, err, errlen)) < 0 ||
            (r = get_duration(o, "window", where, &p->window_ms, err, errlen)) < 0)
                return r < 0 ? r : has_duration;
        if (has_duration && until)
                return fail(err, errlen, "%suntil: give either duration or until, not both", where);
        if (!has_duration && !until)
                return fail(err, errlen, "%sduration: a phase needs a duration or an until condition", where);
        if (has_duration) {
                if (p->min_ms || p->max_ms || p->window_ms)
                        return fail(err, errlen, "%sduration: min, max and window go with until, not duration", where);
                p->until = UNTIL_DURATION;
                return 0;
        }
        r = lookup(untils, ELEMENTSOF(untils), until);
        if (r <= 0 || !until_allowed(p->kind, (enum phase_until) r))
                return fail(err, errlen, "%suntil: \"%s\" is not valid for %s (%s)", where, until,
                            phase_kinds[p->kind], p->kind == ANALYSIS_PHASE_STRESS ? "stable or plateau" :
                            p->kind == ANALYSIS_PHASE_IDLE ? "stable" : "stable or baseline");
        p->until = (enum phase_until) r;
        if (!p->max_ms)
                p->max_ms = default_max_ms(p->kind);
        if (!p->window_ms)
                p->window_ms = RUN_WINDOW_DEFAULT_MS;
        if (p->min_ms > p->max_ms)
                return fail(err, errlen, "%smin: longer than max", where);
        return 0;
}

static int parse_phase(json_object *o, size_t i, struct run_phase *p, char *err, size_t errlen) {
        static const char *const known[] = { "kind", "until", "duration", "min", "max", "window", "load", NULL };
        char where[32];
        const char *kind;
        json_object *load;
        int r;

        snprintf(where, sizeof where, "phases[%zu].", i);
        if (!json_object_is_type(o, json_type_object))
                return fail(err, errlen, "phases[%zu]: must be an object", i);
        if ((r = check_keys(o, known, where, err, errlen)) < 0 ||
            (r = get_string(o, "kind", where, &kind, err, errlen)) < 0)
                return r;
        if (!kind || (r = lookup(phase_kinds, ELEMENTSOF(phase_kinds), kind)) < 0)
                return fail(err, errlen, "%skind: must be idle, stress or cooldown", where);
        p->kind = (enum analysis_phase) r;
        if ((r = parse_phase_end(o, where, p, err, errlen)) < 0)
                return r;
        if (json_object_object_get_ex(o, "load", &load)) {
                if (p->kind != ANALYSIS_PHASE_STRESS)
                        return fail(err, errlen, "%sload: only a stress phase runs a load", where);
                return parse_load(load, where, p, err, errlen);
        }
        if (p->kind == ANALYSIS_PHASE_STRESS) {
                load_spec_init(&p->load, LOAD_CPU);
                p->has_load = true;
        }
        return 0;
}

static int parse_phases(json_object *def, struct run *r, char *err, size_t errlen) {
        json_object *a;
        int ret;

        if (!json_object_object_get_ex(def, "phases", &a) || !json_object_is_type(a, json_type_array))
                return fail(err, errlen, "phases: an array of 1 to %d phases is required", RUN_PHASES_MAX);
        if (json_object_array_length(a) == 0 || json_object_array_length(a) > RUN_PHASES_MAX)
                return fail(err, errlen, "phases: an array of 1 to %d phases is required", RUN_PHASES_MAX);
        r->n_phases = json_object_array_length(a);
        for (size_t i = 0; i < r->n_phases; i++)
                if ((ret = parse_phase(json_object_array_get_idx(a, i), i, &r->phases[i], err, errlen)) < 0)
                        return ret;
        return 0;
}

static int parse_top(json_object *def, const struct sensors *s, struct run *r, char *err, size_t errlen) {
        static const char *const known[] = { "label", "notes", "ambient_c", "safety_limit_c", "sensor", "phases", NULL };
        const char *label, *notes, *sensor;
        int ret;

        if (!json_object_is_type(def, json_type_object))
                return fail(err, errlen, "body: must be a JSON object");
        if ((ret = check_keys(def, known, "", err, errlen)) < 0 ||
            (ret = get_string(def, "label", "", &label, err, errlen)) < 0 ||
            (ret = get_string(def, "notes", "", &notes, err, errlen)) < 0 ||
            (ret = get_string(def, "sensor", "", &sensor, err, errlen)) < 0 ||
            (ret = get_number(def, "ambient_c", "", -40, 60, &r->ambient_c, err, errlen)) < 0 ||
            (ret = get_number(def, "safety_limit_c", "", 20, 150, &r->safety_limit_c, err, errlen)) < 0)
                return ret;
        if (label && strlen(label) >= sizeof r->label)
                return fail(err, errlen, "label: longer than %zu characters", sizeof r->label - 1);
        if (notes && strlen(notes) > RUN_NOTES_MAX)
                return fail(err, errlen, "notes: longer than %d characters", RUN_NOTES_MAX);
        snprintf(r->label, sizeof r->label, "%s", label ? label : "");
        r->notes = strdup(notes ? notes : "");
        if (!r->notes)
                return -ENOMEM;
        if (sensor) {
                size_t i = 0;
                while (i < s->n_temps && strcmp(s->temps[i].id, sensor) != 0)
                        i++;
                if (i == s->n_temps)
                        return fail(err, errlen, "sensor: unknown temperature sensor \"%s\"", sensor);
                snprintf(r->sensor, sizeof r->sensor, "%s", sensor);
        }
        return parse_phases(def, r, err, errlen);
}

int run_parse(json_object *def, const struct sensors *s, struct run **ret, char *err, size_t errlen) {
        struct run *r = calloc(1, sizeof *r);
        int e;

        if (!r)
                return -ENOMEM;
        r->ambient_c = r->safety_limit_c = r->baseline_c = NAN;
        r->predicted_plateau_c = r->plateau_ci95_c = NAN;
        e = parse_top(def, s, r, err, errlen);
        if (e < 0) {
                run_free(r);
                return e;
        }
        analysis_metrics_init(&r->metrics, r->ambient_c);      /* unknown until a phase ends */
        *ret = r;
        return 0;
}

static json_object *json_duration(uint64_t ms) {
        char buf[DURATION_FORMAT_MAX];

        return ms ? json_object_new_string(duration_format(ms, buf, sizeof buf)) : NULL;
}

static json_object *json_ms(int64_t ms) {
        return ms ? json_object_new_int64(ms) : NULL;
}

static json_object *load_to_json(const struct run_phase *p) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "type", json_object_new_string(load_type_to_string(p->load.type)));
        if (p->load.type == LOAD_COMMAND) {
                json_object *a = json_object_new_array();
                for (size_t i = 0; p->command[i]; i++)
                        json_object_array_add(a, json_object_new_string(p->command[i]));
                json_object_object_add(o, "argv", a);
                return o;
        }
        json_object_object_add(o, "workers", json_object_new_int((int) p->load.workers));
        json_object_object_add(o, "duty", json_object_new_int((int) p->load.duty_pct));
        if (p->load.type == LOAD_CPU)
                json_object_object_add(o, "method", json_object_new_string(cpu_method_to_string(p->load.method)));
        if (p->load.type == LOAD_MEMORY)
                json_object_object_add(o, "size", json_object_new_int64((int64_t) p->load.memory_bytes));
        if (p->load.type == LOAD_IO)
                json_object_object_add(o, "size", json_object_new_int64((int64_t) p->load.io_file_bytes));
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
        json_object_object_add(o, "load", p->has_load ? load_to_json(p) : NULL);
        json_object_object_add(o, "started_ms", json_ms(p->started_ms));
        json_object_object_add(o, "ended_ms", json_ms(p->ended_ms));
        json_object_object_add(o, "end_reason", p->end_reason ? json_object_new_string(p->end_reason) : NULL);
        return o;
}

#define METRIC(o, m, name, dec) json_object_object_add(o, #name, json_new_number((m)->name, dec))

json_object *run_metrics_to_json(const struct run_metrics *m, const char *work_unit) {
        json_object *o = json_object_new_object();
        const char *model = analysis_model_to_string(m->fit_model);
        const char *cool = analysis_model_to_string(m->cool_fit_model);

        METRIC(o, m, baseline_c, 2);
        METRIC(o, m, ambient_c, 2);
        METRIC(o, m, peak_c, 2);
        METRIC(o, m, plateau_c, 2);
        METRIC(o, m, plateau_ci95_c, 2);
        METRIC(o, m, rise_c, 2);
        METRIC(o, m, rise_over_ambient_c, 2);
        METRIC(o, m, tau_heat_s, 1);
        METRIC(o, m, tau_heat_fast_s, 1);
        METRIC(o, m, heat_fast_fraction, 3);
        METRIC(o, m, t90_heat_s, 1);
        METRIC(o, m, tau_cool_s, 1);
        METRIC(o, m, tau_cool_fast_s, 1);
        METRIC(o, m, t_back_to_baseline_s, 1);
        METRIC(o, m, throttled_fraction, 4);
        METRIC(o, m, freq_mean_hz, 0);
        METRIC(o, m, freq_min_hz, 0);
        METRIC(o, m, work_rate_start, 1);
        METRIC(o, m, work_rate_end, 1);
        METRIC(o, m, work_rate_drop_pct, 2);
        json_object_object_add(o, "work_unit", work_unit && *work_unit ? json_object_new_string(work_unit) : NULL);
        METRIC(o, m, fit_residual_c, 3);
        json_object_object_add(o, "fit_model", model ? json_object_new_string(model) : NULL);
        METRIC(o, m, cool_fit_residual_c, 3);
        json_object_object_add(o, "cool_fit_model", cool ? json_object_new_string(cool) : NULL);
        return o;
}

static json_object *run_live_to_json(const struct run *r) {
        const struct run_series *s = &r->series;
        const struct run_phase *p = &r->phases[r->phase_index];
        const struct sensors *sn = r->daemon->sensors;
        const struct temp_sensor *hot = sensors_hottest(sn);
        json_object *o = json_object_new_object();
        int64_t last_ms = s->n ? r->created_ms + (int64_t) (s->t_s[s->n - 1] * 1000.0) : r->created_ms;

        json_object_object_add(o, "elapsed_s", json_new_number(s->n ? s->t_s[s->n - 1] : 0.0, 1));
        json_object_object_add(o, "phase_elapsed_s", json_new_number((double) (last_ms - p->started_ms) / 1000.0, 1));
        json_object_object_add(o, "temp_c", s->n ? json_new_number(s->temp_c[s->n - 1], 3) : NULL);
        json_object_object_add(o, "freq_hz", s->n ? json_new_number(s->freq_hz[s->n - 1], 0) : NULL);
        json_object_object_add(o, "hottest_c", hot ? json_new_millis(hot->temp_mc) : NULL);
        json_object_object_add(o, "load", sn->load.ok ? json_new_number(sn->load.total, 4) : NULL);
        json_object_object_add(o, "work_rate", json_new_number(r->work_rate, 1));
        json_object_object_add(o, "work_unit", r->work_unit[0] ? json_object_new_string(r->work_unit) : NULL);
        json_object_object_add(o, "predicted_plateau_c", json_new_number(r->predicted_plateau_c, 2));
        json_object_object_add(o, "predicted_plateau_ci95_c", json_new_number(r->plateau_ci95_c, 2));
        return o;
}

static json_object *run_recording_to_json(const struct run *r) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "ok", json_object_new_boolean(r->recording_ok));
        json_object_object_add(o, "error", r->recording_error[0] ? json_object_new_string(r->recording_error) : NULL);
        json_object_object_add(o, "samples", json_object_new_int64((int64_t) r->n_samples));
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
        json_object_object_add(o, "state", json_object_new_string(run_state_to_string(r->state)));
        json_object_object_add(o, "phase", running ? json_object_new_string(phase_kinds[r->phases[r->phase_index].kind]) : NULL);
        json_object_object_add(o, "phase_index", running ? json_object_new_int64((int64_t) r->phase_index) : NULL);
        json_object_object_add(o, "abort_reason", r->abort_reason[0] ? json_object_new_string(r->abort_reason) : NULL);
        json_object_object_add(o, "created_ms", json_ms(r->created_ms));
        json_object_object_add(o, "started_ms", json_ms(r->phases[0].started_ms));
        json_object_object_add(o, "ended_ms", json_ms(r->ended_ms));
        json_object_object_add(o, "ambient_c", json_new_number(r->ambient_c, 2));
        json_object_object_add(o, "safety_limit_c", json_new_number(r->safety_limit_c, 2));
        json_object_object_add(o, "sensor", json_object_new_string(r->sensor));
        json_object_object_add(o, "board", json_board(&r->board));
        json_object_object_add(o, "phases", phases);
        json_object_object_add(o, "metrics", run_metrics_to_json(&r->metrics, r->work_unit));
        json_object_object_add(o, "recording", run_recording_to_json(r));
        json_object_object_add(o, "live", live && running ? run_live_to_json(r) : NULL);
        return o;
}
