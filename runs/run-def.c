/* run-def.c — a run's definition: parse and validate the POSTed JSON, and write a run back as JSON. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "duration.h"
#include "run.h"
#include "text.h"
#include "util.h"

/* "until" without "max" gets these, so no run can go on for ever. */
#define RUN_IDLE_MAX_DEFAULT_MS (30u * 60u * 1000u)
#define RUN_STRESS_MAX_DEFAULT_MS (90u * 60u * 1000u)
#define RUN_COOLDOWN_MAX_DEFAULT_MS (30u * 60u * 1000u)
#define RUN_WINDOW_DEFAULT_MS (5u * 60u * 1000u)

/* Every key of o must be in the NULL-terminated list. */
static int check_keys(json_object *o, const char *const *known, const char *where, char *err, size_t errlen) {
        json_object_object_foreach(o, key, val) {
                (void) val;
                size_t i = 0;
                while (known[i] && strcmp(known[i], key) != 0)
                        i++;
                if (!known[i])
                        return util_errorf(err, errlen, -EINVAL, "%s%s: unknown field", where, key);
        }
        return 0;
}

/* Characters of a UTF-8 string, or -1 when it is not valid UTF-8 (a stray
 * continuation byte, a sequence cut short, an overlong or surrogate form). */
static ssize_t utf8_chars(const char *s) {
        size_t len = strlen(s), n;
        ssize_t chars = 0;

        for (size_t i = 0; i < len; i += n, chars++)
                if ((n = text_utf8_char_len(s + i, len - i)) == 0)
                        return -1;
        return chars;
}

/* A JSON string as a C string: one that holds a NUL (\u0000) would be cut
 * there, one that is not UTF-8 would go into run.json and the logs as is. */
static int check_text(json_object *v, const char *where, const char *key, char *err, size_t errlen) {
        const char *text = json_object_get_string(v);

        if (strlen(text) != (size_t) json_object_get_string_len(v))
                return util_errorf(err, errlen, -EINVAL, "%s%s: must not contain a NUL character", where, key);
        if (utf8_chars(text) < 0)
                return util_errorf(err, errlen, -EINVAL, "%s%s: is not valid UTF-8", where, key);
        return 0;
}

static int get_string(json_object *o, const char *key, const char *where, const char **ret,
                      char *err, size_t errlen) {
        json_object *v;
        int r;

        *ret = NULL;
        if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
                return 0;
        if (!json_object_is_type(v, json_type_string))
                return util_errorf(err, errlen, -EINVAL, "%s%s: must be a string", where, key);
        if ((r = check_text(v, where, key, err, errlen)) < 0)
                return r;
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
                return util_errorf(err, errlen, -EINVAL, "%s%s: must be a number", where, key);
        x = json_object_get_double(v);
        if (!(x >= lo && x <= hi))
                return util_errorf(err, errlen, -EINVAL, "%s%s: %g is outside %g..%g", where, key, x, lo, hi);
        *ret = x;
        return 1;
}

/* A count: a number without a fraction ("workers": 0.5 is no worker count). */
static int get_whole(json_object *o, const char *key, const char *where, double lo, double hi,
                     unsigned *ret, char *err, size_t errlen) {
        double x;
        int r = get_number(o, key, where, lo, hi, &x, err, errlen);

        if (r <= 0)
                return r;
        if (x != floor(x))
                return util_errorf(err, errlen, -EINVAL, "%s%s: %g is not a whole number", where, key, x);
        *ret = (unsigned) x;
        return 1;
}

static int get_duration(json_object *o, const char *key, const char *where, uint64_t *ret,
                        char *err, size_t errlen) {
        const char *text;
        int r = get_string(o, key, where, &text, err, errlen);

        if (r <= 0)
                return r;
        if (duration_parse(text, ret) < 0 || *ret == 0)
                return util_errorf(err, errlen, -EINVAL, "%s%s: \"%s\" is not a duration (e.g. 30s, 5m, 1h30m)", where, key, text);
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

static bool is_executable_file(const char *path) {
        struct stat st;

        return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* What execvp() would run: a path as given, a bare name looked up in PATH.
 * Known before the run starts, so a typo is a 400, not a run that aborts. */
static int check_program(const char *name, const char *where, char *err, size_t errlen) {
        const char *path = getenv("PATH");
        char buf[PATH_MAX];

        if (!*name)
                return util_errorf(err, errlen, -EINVAL, "%sargv[0]: must name a program", where);
        if (strchr(name, '/'))
                return is_executable_file(name) ? 0 :
                        util_errorf(err, errlen, -EINVAL, "%sargv[0]: \"%s\" is not an executable file", where, name);
        for (const char *dir = path && *path ? path : "/usr/local/bin:/usr/bin:/bin"; *dir; ) {
                size_t len = strcspn(dir, ":");
                if (snprintf(buf, sizeof buf, "%.*s/%s", (int) len, len ? dir : ".", name) < (int) sizeof buf &&
                    is_executable_file(buf))
                        return 0;
                dir += len + (dir[len] == ':');
        }
        return util_errorf(err, errlen, -EINVAL, "%sargv[0]: \"%s\" is not found in PATH", where, name);
}

static int parse_load_argv(json_object *o, const char *where, struct run_phase *p, char *err, size_t errlen) {
        json_object *a;
        size_t n;

        if (!json_object_object_get_ex(o, "argv", &a) || !json_object_is_type(a, json_type_array))
                return util_errorf(err, errlen, -EINVAL, "%sargv: a command load needs an array of strings", where);
        n = json_object_array_length(a);
        if (n == 0 || n > RUN_ARGV_MAX)
                return util_errorf(err, errlen, -EINVAL, "%sargv: 1 to %d strings", where, RUN_ARGV_MAX);
        p->command = calloc(n + 1, sizeof *p->command);
        if (!p->command)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *s = json_object_array_get_idx(a, i);
                char key[32];
                int r;
                snprintf(key, sizeof key, "argv[%zu]", i);
                if (!json_object_is_type(s, json_type_string))
                        return util_errorf(err, errlen, -EINVAL, "%s%s: must be a string", where, key);
                if ((r = check_text(s, where, key, err, errlen)) < 0)
                        return r;
                p->command[i] = strdup(json_object_get_string(s));
                if (!p->command[i])
                        return -ENOMEM;
        }
        p->stress.argv = p->command;
        return check_program(p->command[0], where, err, errlen);
}

static int parse_load_fields(json_object *o, const char *where, struct run_phase *p, char *err, size_t errlen) {
        const char *text;
        int r;

        if ((r = get_whole(o, "workers", where, 0, STRESS_WORKERS_MAX, &p->stress.workers, err, errlen)) < 0 ||
            (r = get_whole(o, "duty", where, 1, 100, &p->stress.duty_pct, err, errlen)) < 0)
                return r;
        if ((r = get_string(o, "method", where, &text, err, errlen)) < 0)
                return r;
        if (r > 0 && (r = cpu_method_from_string(text)) < 0)
                return util_errorf(err, errlen, -EINVAL, "%smethod: \"%s\" is not one of sqrt, fma, matrix", where, text);
        if (text)
                p->stress.method = (enum cpu_method) r;
        if ((r = get_string(o, "size", where, &text, err, errlen)) < 0)
                return r;
        if (r > 0) {
                uint64_t size;
                if (parse_size(text, &size) < 0)
                        return util_errorf(err, errlen, -EINVAL, "%ssize: \"%s\" is not a size (e.g. 64M, 1G)", where, text);
                p->stress.memory_bytes = p->stress.io_file_bytes = size;
        }
        return 0;
}

static int parse_load(json_object *o, const char *phase_where, struct run_phase *p, char *err, size_t errlen) {
        static const char *const known[] = { "type", "workers", "method", "duty", "size", "argv", NULL };
        char where[64];
        const char *type = "cpu", *verr;
        char vmsg[256], names[128];
        int r;

        snprintf(where, sizeof where, "%sload.", phase_where);
        if (!json_object_is_type(o, json_type_object))
                return util_errorf(err, errlen, -EINVAL, "%sload: must be an object", phase_where);
        if ((r = check_keys(o, known, where, err, errlen)) < 0 ||
            (r = get_string(o, "type", where, &type, err, errlen)) < 0)
                return r;
        if (!type)
                type = "cpu";
        if ((r = stress_type_from_string(type)) < 0) {
                stress_type_names(names, sizeof names, ", ");
                return util_errorf(err, errlen, -EINVAL, "%stype: \"%s\" is not one of %s", where, type, names);
        }
        stress_spec_init(&p->stress, (enum stress_type) r);
        p->has_stress = true;
        if ((r = parse_load_fields(o, where, p, err, errlen)) < 0)
                return r;
        if (stress_type_runs_program(p->stress.type) && (r = parse_load_argv(o, where, p, err, errlen)) < 0)
                return r;
        if (stress_type_needs_dir(p->stress.type))
                return 0;       /* its directory is known at start; validated there */
        if (stress_spec_validate(&p->stress, vmsg, sizeof vmsg) < 0) {
                verr = strncmp(vmsg, "load.", 5) == 0 ? vmsg + 5 : vmsg;
                return util_errorf(err, errlen, -EINVAL, "%s%s", where, verr);
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
        default:
                return false;
        }
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
            (r = get_duration(o, "window", where, &p->window_ms, err, errlen)) < 0 ||
            (r = get_number(o, "tolerance", where, 0.05, 20, &p->tolerance_c, err, errlen)) < 0)
                return r < 0 ? r : has_duration;
        if (has_duration && until)
                return util_errorf(err, errlen, -EINVAL, "%suntil: give either duration or until, not both", where);
        if (!has_duration && !until)
                return util_errorf(err, errlen, -EINVAL, "%sduration: a phase needs a duration or an until condition", where);
        if (has_duration) {
                if (p->min_ms || p->max_ms || p->window_ms)
                        return util_errorf(err, errlen, -EINVAL, "%sduration: min, max and window go with until, not duration", where);
                if (p->tolerance_c)
                        return util_errorf(err, errlen, -EINVAL, "%stolerance: goes with until: plateau", where);
                p->until = UNTIL_DURATION;
                return 0;
        }
        r = run_until_from_string(until);
        if (r <= 0 || !until_allowed(p->kind, (enum phase_until) r))
                return util_errorf(err, errlen, -EINVAL, "%suntil: \"%s\" is not valid for %s (%s)", where, until,
                            run_phase_kind_to_string(p->kind), p->kind == ANALYSIS_PHASE_STRESS ? "stable or plateau" :
                            p->kind == ANALYSIS_PHASE_IDLE ? "stable" : "stable or baseline");
        p->until = (enum phase_until) r;
        if (p->tolerance_c && p->until != UNTIL_PLATEAU)
                return util_errorf(err, errlen, -EINVAL, "%stolerance: goes with until: plateau", where);
        if (!p->max_ms)
                p->max_ms = default_max_ms(p->kind);
        if (!p->window_ms)
                p->window_ms = RUN_WINDOW_DEFAULT_MS;
        if (p->min_ms > p->max_ms)
                return util_errorf(err, errlen, -EINVAL, "%smin: longer than max", where);
        return 0;
}

static int parse_phase(json_object *o, size_t i, struct run_phase *p, char *err, size_t errlen) {
        static const char *const known[] = { "kind", "until", "duration", "min", "max", "window", "tolerance", "load",
                                             NULL };
        char where[32];
        const char *kind;
        json_object *load;
        int r;

        snprintf(where, sizeof where, "phases[%zu].", i);
        if (!json_object_is_type(o, json_type_object))
                return util_errorf(err, errlen, -EINVAL, "phases[%zu]: must be an object", i);
        if ((r = check_keys(o, known, where, err, errlen)) < 0 ||
            (r = get_string(o, "kind", where, &kind, err, errlen)) < 0)
                return r;
        if (!kind || (r = run_phase_kind_from_string(kind)) < 0)
                return util_errorf(err, errlen, -EINVAL, "%skind: must be idle, stress or cooldown", where);
        p->kind = (enum analysis_phase) r;
        if ((r = parse_phase_end(o, where, p, err, errlen)) < 0)
                return r;
        if (json_object_object_get_ex(o, "load", &load)) {
                if (p->kind != ANALYSIS_PHASE_STRESS)
                        return util_errorf(err, errlen, -EINVAL, "%sload: only a stress phase runs a load", where);
                return parse_load(load, where, p, err, errlen);
        }
        if (p->kind == ANALYSIS_PHASE_STRESS) {
                stress_spec_init(&p->stress, STRESS_CPU);
                p->has_stress = true;
        }
        return 0;
}

static int parse_phases(json_object *def, struct run *r, char *err, size_t errlen) {
        json_object *a;
        int ret;

        if (!json_object_object_get_ex(def, "phases", &a) || !json_object_is_type(a, json_type_array))
                return util_errorf(err, errlen, -EINVAL, "phases: an array of 1 to %d phases is required", RUN_PHASES_MAX);
        if (json_object_array_length(a) == 0 || json_object_array_length(a) > RUN_PHASES_MAX)
                return util_errorf(err, errlen, -EINVAL, "phases: an array of 1 to %d phases is required", RUN_PHASES_MAX);
        r->n_phases = json_object_array_length(a);
        for (size_t i = 0; i < r->n_phases; i++)
                if ((ret = parse_phase(json_object_array_get_idx(a, i), i, &r->phases[i], err, errlen)) < 0)
                        return ret;
        return 0;
}

int run_check_texts(json_object *o, const char *where, const char **label, const char **notes,
                    char *err, size_t errlen) {
        int ret;

        if ((ret = get_string(o, "label", where, label, err, errlen)) < 0 ||
            (ret = get_string(o, "notes", where, notes, err, errlen)) < 0)
                return ret;
        if (*label && utf8_chars(*label) >= RUN_LABEL_MAX)
                return util_errorf(err, errlen, -EINVAL, "%slabel: longer than %d characters", where, RUN_LABEL_MAX - 1);
        if (*notes && utf8_chars(*notes) > RUN_NOTES_MAX)
                return util_errorf(err, errlen, -EINVAL, "%snotes: longer than %d characters", where, RUN_NOTES_MAX);
        return 0;
}

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar
 * (H. Hinnant's days_from_civil): no time_t, so 32-bit boards agree. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
        y -= m <= 2;
        int64_t era = (y >= 0 ? y : y - 399) / 400;
        unsigned yoe = (unsigned) (y - era * 400);
        unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
        unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

        return era * 146097 + (int64_t) doe - 719468;
}

/* "2026-12-05T08:00:00Z", "...:00.250Z" or "...:00+01:00": Unix ms. */
static int parse_iso8601_ms(const char *text, int64_t *ret) {
        unsigned y, mo, d, h, mi, s, oh = 0, om = 0;
        int n = 0, ms = 0, sign = 0;
        const char *p;

        if (sscanf(text, "%4u-%2u-%2u%*1[Tt ]%2u:%2u:%2u%n", &y, &mo, &d, &h, &mi, &s, &n) != 6 || n != 19)
                return -EINVAL;
        p = text + n;
        if (*p == '.') {
                int scale = 100;
                for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
                        ms += (*p - '0') * scale;
        }
        if (*p == '+' || *p == '-') {
                sign = *p == '-' ? -1 : 1;
                if (sscanf(p + 1, "%2u:%2u%n", &oh, &om, &n) != 2 || n != 5 || p[6] != '\0' || oh > 23 || om > 59)
                        return -EINVAL;
        } else if ((*p != 'Z' && *p != 'z') || p[1] != '\0')
                return -EINVAL;
        if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
                return -EINVAL;
        *ret = ((days_from_civil(y, mo, d) * 24 + h) * 3600 + mi * 60 + s - sign * (int64_t) (oh * 3600 + om * 60)) *
               1000 + ms;
        return 0;
}

/* "start_at": when the first phase starts, Unix ms or ISO 8601 (the window
 * it must fall in is run_start()'s, which knows the time). */
static int parse_start_at(json_object *def, struct run *r, char *err, size_t errlen) {
        json_object *v;

        if (!json_object_object_get_ex(def, "start_at", &v) || json_object_is_type(v, json_type_null))
                return 0;
        if (json_object_is_type(v, json_type_int) && json_object_get_int64(v) > 0) {
                r->start_at_ms = json_object_get_int64(v);
                return 0;
        }
        if (json_object_is_type(v, json_type_string) &&
            parse_iso8601_ms(json_object_get_string(v), &r->start_at_ms) == 0 && r->start_at_ms > 0)
                return 0;
        return util_errorf(err, errlen, -EINVAL, "start_at: must be Unix ms or an ISO 8601 time "
                           "(\"2026-12-05T08:00:00Z\")");
}

/* "repeat": N runs of the same definition, one after the other, a series;
 * "remount": true waits for the user between them. */
static int parse_repeat(json_object *def, struct run *r, char *err, size_t errlen) {
        json_object *v;
        int ret;

        r->repeat_count = 1;
        if ((ret = get_whole(def, "repeat", "", 1, RUN_REPEAT_MAX, &r->repeat_count, err, errlen)) < 0)
                return ret;
        if (!json_object_object_get_ex(def, "remount", &v) || json_object_is_type(v, json_type_null))
                return 0;
        if (!json_object_is_type(v, json_type_boolean))
                return util_errorf(err, errlen, -EINVAL, "remount: must be true or false");
        r->remount = json_object_get_boolean(v);
        if (r->remount && r->repeat_count < 2)
                return util_errorf(err, errlen, -EINVAL, "remount: goes with a repeat of 2 or more");
        return 0;
}

static int parse_top(json_object *def, const struct sensors *s, struct run *r, char *err, size_t errlen) {
        static const char *const known[] = { "label", "notes", "ambient_c", "safety_limit_c", "sensor", "phases",
                                            "repeat", "remount", "start_at", NULL };
        const char *label, *notes, *sensor;
        int ret;

        if (!json_object_is_type(def, json_type_object))
                return util_errorf(err, errlen, -EINVAL, "body: must be a JSON object");
        if ((ret = check_keys(def, known, "", err, errlen)) < 0 ||
            (ret = run_check_texts(def, "", &label, &notes, err, errlen)) < 0 ||
            (ret = get_string(def, "sensor", "", &sensor, err, errlen)) < 0 ||
            (ret = get_number(def, "ambient_c", "", -40, 60, &r->ambient_c, err, errlen)) < 0 ||
            (ret = get_number(def, "safety_limit_c", "", 20, 150, &r->safety_limit_c, err, errlen)) < 0 ||
            (ret = parse_repeat(def, r, err, errlen)) < 0 || (ret = parse_start_at(def, r, err, errlen)) < 0)
                return ret;
        snprintf(r->label, sizeof r->label, "%s", label ? label : "");
        r->notes = strdup(notes ? notes : "");
        if (!r->notes)
                return -ENOMEM;
        if (sensor) {
                size_t i = 0;
                while (i < s->n_temps && strcmp(s->temps[i].id, sensor) != 0)
                        i++;
                if (i == s->n_temps)
                        return util_errorf(err, errlen, -EINVAL, "sensor: unknown temperature sensor \"%s\"", sensor);
                snprintf(r->sensor, sizeof r->sensor, "%s", sensor);
        }
        return parse_phases(def, r, err, errlen);
}

int run_parse(json_object *def, const struct sensors *s, struct run **ret, char *err, size_t errlen) {
        struct run *r = run_alloc();
        int e;

        if (!r)
                return -ENOMEM;
        e = parse_top(def, s, r, err, errlen);
        if (e < 0) {
                run_free(r);
                return e;
        }
        analysis_metrics_init(&r->metrics, r->ambient_c);      /* unknown until a phase ends */
        *ret = r;
        return 0;
}
