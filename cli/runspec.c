/* runspec.c — heatcurvectl run's phase options ("cpu,until=plateau,max=90m") to the POST body. */
#include "runspec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "duration.h"

static bool is_one_of(const char *s, const char *const *list) {
        for (size_t i = 0; list[i]; i++)
                if (strcmp(s, list[i]) == 0)
                        return true;
        return false;
}

/* cmd='stress-ng --cpu 4': split on spaces (no quoting inside). */
static json_object *split_command(const char *cmd) {
        json_object *a = json_object_new_array();
        char *copy = strdup(cmd), *save = NULL;
        size_t len;

        if (!copy)
                abort();
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

static int phase_key(json_object *phase, json_object *load, const char *kind, const char *key,
                     const char *value, unsigned index) {
        static const char *const durations[] = { "duration", "min", "max", "window", NULL };
        static const char *const load_keys[] = { "workers", "duty", NULL };
        uint64_t ms;
        char *end;

        if (is_one_of(key, durations)) {
                if (duration_parse(value, &ms) < 0)
                        return fail("--%s (phase %u): %s=%s is not a duration (e.g. 30s, 5m, 1h30m)",
                                    kind, index, key, value);
                json_object_object_add(phase, key, json_object_new_string(value));
        } else if (strcmp(key, "until") == 0)
                json_object_object_add(phase, key, json_object_new_string(value));
        else if (load && is_one_of(key, load_keys)) {
                long v = strtol(value, &end, 10);
                if (end == value || *end)
                        return fail("--%s (phase %u): %s=%s is not a number", kind, index, key, value);
                json_object_object_add(load, key, json_object_new_int64(v));
        } else if (load && (strcmp(key, "method") == 0 || strcmp(key, "size") == 0))
                json_object_object_add(load, key, json_object_new_string(value));
        else if (load && strcmp(key, "cmd") == 0)
                json_object_object_add(load, "argv", split_command(value));
        else
                return fail("--%s (phase %u): unknown key \"%s\" (known: duration, until, min, max, window%s)",
                            kind, index, key, load ? ", workers, method, duty, size, cmd" : "");
        return 0;
}

json_object *runspec_phase(const char *kind, const char *spec, unsigned index) {
        static const char *const load_types[] = { "cpu", "memory", "io", "command", NULL };
        json_object *phase = json_object_new_object(), *load = NULL;
        char *copy = strdup(spec), *save = NULL;
        bool stress = strcmp(kind, "stress") == 0;
        int r = 0;

        if (!copy)
                abort();
        json_object_object_add(phase, "kind", json_object_new_string(kind));
        if (stress) {
                load = json_object_new_object();
                json_object_object_add(phase, "load", load);
        }
        for (char *item = strtok_r(copy, ",", &save); item && r >= 0; item = strtok_r(NULL, ",", &save)) {
                char *eq = strchr(item, '=');
                if (!eq && load && is_one_of(item, load_types))
                        json_object_object_add(load, "type", json_object_new_string(item));
                else if (!eq)
                        r = fail("--%s (phase %u): \"%s\" is not key=value%s", kind, index, item,
                                 load ? " nor a load type (cpu, memory, io, command)" : "");
                else {
                        *eq = '\0';
                        r = phase_key(phase, load, kind, item, eq + 1, index);
                }
        }
        free(copy);
        if (r < 0) {
                json_object_put(phase);
                return NULL;
        }
        return phase;
}
