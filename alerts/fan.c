/* fan.c — fans the daemon switches: [fan NAME] sections, on and off with hysteresis and a minimum on time. */
#include "fan.h"

#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json-util.h"

void fan_init(struct fan *f, const struct fan_config *cfg, int64_t now_ms) {
        *f = (struct fan) { .cfg = *cfg, .since_ms = now_ms, .value_c = NAN };
}

static bool fan_matches(const struct fan *f, const struct temp_sensor *t) {
        return fnmatch(f->cfg.sensor, t->id, 0) == 0;
}

void fan_bind(const struct fan *f, const struct sensors *s, bool *matches) {
        for (size_t i = 0; i < s->n_temps; i++)
                matches[i] = fan_matches(f, &s->temps[i]);
}

/* The hottest answering sensor the fan goes by, or NULL. */
static const struct temp_sensor *fan_sensor(const struct fan *f, const struct sensors *s, const bool *matches) {
        const struct temp_sensor *best = NULL;

        if (strcmp(f->cfg.sensor, "hottest") == 0)
                return sensors_hottest(s);
        for (size_t i = 0; i < s->n_temps; i++) {
                const struct temp_sensor *t = &s->temps[i];
                if (t->ok && (matches ? matches[i] : fan_matches(f, t)) && (!best || t->temp_mc > best->temp_mc))
                        best = t;
        }
        return best;
}

bool fan_eval(struct fan *f, const struct sensors *s, const bool *matches, int64_t now_ms, int64_t mono_ms) {
        const struct temp_sensor *t = fan_sensor(f, s, matches);
        bool want = f->on;

        f->value_c = t ? t->temp_mc / 1000.0 : NAN;
        if (strncmp(f->value_sensor, t ? t->id : "", sizeof f->value_sensor) != 0)    /* seldom: no snprintf a sample */
                snprintf(f->value_sensor, sizeof f->value_sensor, "%s", t ? t->id : "");
        if (!t)
                want = true;
        else if (!f->on && f->value_c >= f->cfg.on_c)
                want = true;
        else if (f->on && f->value_c <= f->cfg.off_c && mono_ms - f->on_since_mono_ms >= (int64_t) f->cfg.min_on_ms)
                want = false;
        if (want == f->on)
                return false;
        f->on = want;
        f->since_ms = now_ms;
        if (want)
                f->on_since_mono_ms = mono_ms;
        f->switches++;
        return true;
}

json_object *fan_to_json(const struct fan *f) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "name", json_object_new_string(f->cfg.name));
        json_object_object_add(o, "sensor", json_object_new_string(f->cfg.sensor));
        json_object_object_add(o, "on", json_object_new_boolean(f->on));
        json_object_object_add(o, "since_ms", json_object_new_int64(f->since_ms));
        json_object_object_add(o, "value_c", json_new_number(f->value_c, 3));
        json_object_object_add(o, "value_sensor", json_new_string_or_null(f->value_sensor));
        json_object_object_add(o, "on_c", json_new_number(f->cfg.on_c, 2));
        json_object_object_add(o, "off_c", json_new_number(f->cfg.off_c, 2));
        json_object_object_add(o, "min_on_s", json_new_number((double) f->cfg.min_on_ms / 1000.0, 3));
        json_object_object_add(o, "switches", json_object_new_int64(f->switches));
        json_object_object_add(o, "gpio", json_new_string_or_null(f->cfg.gpio));
        return o;
}
