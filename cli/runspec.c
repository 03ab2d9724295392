/* runspec.c — heatcurvectl run's phase options ("cpu,until=plateau,max=90m") to the POST body. */
#include "runspec.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "duration.h"

/* Where a problem is: "--stress (phases[1])". */
struct spec_where {
        const char *kind;
        size_t index;
};

static bool is_one_of(const char *s, const char *const *list) {
        for (size_t i = 0; list[i]; i++)
                if (strcmp(s, list[i]) == 0)
                        return true;
        return false;
}

static int spec_fail(const struct spec_where *w, const char *format, ...) __attribute__((format(printf, 2, 3)));
static int spec_fail(const struct spec_where *w, const char *format, ...) {
        char what[512];
        va_list ap;

        va_start(ap, format);
        vsnprintf(what, sizeof what, format, ap);
        va_end(ap);
        return cli_fail("--%s (phases[%zu]): %s", w->kind, w->index, what);
}

/* cmd='stress-ng --cpu 4': split on spaces; quotes only around the whole value. */
static json_object *split_command(const char *cmd) {
        json_object *a = json_object_new_array();
        char *copy = strdup(cmd), *save = NULL;
        size_t len;

        if (!copy)
                abort();        /* a command-line client: out of memory is not recoverable */
        len = strlen(copy);
        if (len >= 2 && (copy[0] == '\'' || copy[0] == '"') && copy[len - 1] == copy[0]) {
                copy[len - 1] = '\0';
                memmove(copy, copy + 1, len - 1);
        }
        for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save))
                json_object_array_add(a, json_object_new_string(w));
        free(copy);
        return a;
}

static int spec_add(const struct spec_where *w, json_object *o, const char *key, const char *shown, json_object *v) {
        if (json_object_object_get_ex(o, key, NULL)) {
                json_object_put(v);
                return spec_fail(w, "\"%s\" given twice", shown);
        }
        json_object_object_add(o, key, v);
        return 0;
}

static int spec_load_key(const struct spec_where *w, json_object *load, const char *key, const char *value) {
        char *end;
        long long v;

        if (strcmp(key, "workers") == 0 || strcmp(key, "duty") == 0) {
                errno = 0;
                v = strtoll(value, &end, 10);
                if (end == value || *end || errno)
                        return spec_fail(w, "%s=%s is not a whole number", key, value);
                return spec_add(w, load, key, key, json_object_new_int64(v));
        }
        if (strcmp(key, "cmd") == 0)
                return spec_add(w, load, "argv", key, split_command(value));
        return spec_add(w, load, key, key, json_object_new_string(value));     /* method, size */
}

static int spec_key(const struct spec_where *w, json_object *phase, json_object *load, const char *key,
                    const char *value) {
        static const char *const durations[] = { "duration", "min", "max", "window", NULL };
        static const char *const load_keys[] = { "workers", "method", "duty", "size", "cmd", NULL };
        uint64_t ms;

        if (is_one_of(key, durations)) {
                if (duration_parse(value, &ms) < 0)
                        return spec_fail(w, "%s=%s is not a duration (e.g. 30s, 5m, 1h30m)", key, value);
                return spec_add(w, phase, key, key, json_object_new_string(value));
        }
        if (strcmp(key, "until") == 0)
                return spec_add(w, phase, key, key, json_object_new_string(value));
        if (strcmp(key, "tolerance") == 0) {
                char *end;
                errno = 0;
                double v = strtod(value, &end);
                if (end == value || *end || errno)
                        return spec_fail(w, "tolerance=%s is not a number (°C)", value);
                return spec_add(w, phase, key, key, json_object_new_double(v));
        }
        if (load && is_one_of(key, load_keys))
                return spec_load_key(w, load, key, value);
        return spec_fail(w, "unknown key \"%s\" (known: duration, until, min, max, window, tolerance%s)", key,
                         load ? ", workers, method, duty, size, cmd" : "");
}

/* One comma-separated item: a load type or key=value. */
static int spec_item(const struct spec_where *w, json_object *phase, json_object *load, char *item, bool first) {
        static const char *const load_types[] = { "cpu", "memory", "io", "command", NULL };
        char *eq = strchr(item, '=');

        if (eq) {
                *eq = '\0';
                return spec_key(w, phase, load, item, eq + 1);
        }
        if (load && first && is_one_of(item, load_types))
                return spec_add(w, load, "type", item, json_object_new_string(item));
        if (load && is_one_of(item, load_types))
                return spec_fail(w, json_object_object_get_ex(load, "type", NULL) ?
                                 "a second load type \"%s\"" : "the load type \"%s\" must come first", item);
        if (load && first)
                return spec_fail(w, "\"%s\" is neither key=value nor a load type (cpu, memory, io, command)",
                                 item);
        return spec_fail(w, "\"%s\" is not key=value%s", item,
                         load ? " (the load type comes first: cpu, memory, io, command)" : "");
}

json_object *runspec_phase(const char *kind, const char *spec, size_t index) {
        const struct spec_where w = { .kind = kind, .index = index };
        json_object *phase = json_object_new_object(), *load = NULL;
        char *copy = strdup(spec), *save = NULL;
        bool first = true;
        int r = 0;

        if (!copy)
                abort();
        json_object_object_add(phase, "kind", json_object_new_string(kind));
        if (strcmp(kind, "stress") == 0) {
                load = json_object_new_object();
                json_object_object_add(phase, "load", load);
        }
        for (char *item = strtok_r(copy, ",", &save); item && r >= 0; item = strtok_r(NULL, ",", &save)) {
                r = spec_item(&w, phase, load, item, first);
                first = false;
        }
        free(copy);
        if (r < 0) {
                json_object_put(phase);
                return NULL;
        }
        return phase;
}
