/* json-sensors.c — the sensors document (GET /api/v1/sensors, heatcurved --once). */
#include "json-sensors.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json-util.h"
#include "util.h"

static json_object *json_error_or_null(bool ok, int error) {
        char buf[160];

        if (ok)
                return NULL;
        snprintf(buf, sizeof buf, "%s: %s", util_errno_name(error), strerror(error));
        return json_object_new_string(buf);
}

json_object *json_board(const struct board_info *b) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "model", json_new_text(b->model));
        json_object_object_add(o, "kernel", json_new_text(b->kernel));
        json_object_object_add(o, "hostname", json_new_text(b->hostname));
        json_object_object_add(o, "cpus", json_object_new_int(b->cpus));
        return o;
}

static json_object *json_trips(const struct temp_sensor *t) {
        json_object *a = json_object_new_array();

        for (size_t i = 0; i < t->n_trips; i++) {
                const struct trip_point *tp = &t->trips[i];
                json_object *o = json_object_new_object();

                json_object_object_add(o, "index", json_object_new_int(tp->index));
                json_object_object_add(o, "type", json_new_text(tp->type));
                json_object_object_add(o, "celsius", tp->has_temp ? json_new_millis(tp->temp_mc) : NULL);
                json_object_object_add(o, "hyst_celsius", tp->has_hyst ? json_new_millis(tp->hyst_mc) : NULL);
                json_object_array_add(a, o);
        }
        return a;
}

static json_object *json_temp(const struct temp_sensor *t) {
        json_object *o = json_object_new_object();
        bool hwmon = t->source == TEMP_SOURCE_HWMON;

        json_object_object_add(o, "id", json_new_text(t->id));
        json_object_object_add(o, "source", json_object_new_string(hwmon ? "hwmon" : "thermal"));
        if (hwmon) {
                json_object_object_add(o, "chip", json_new_text(t->chip));
                json_object_object_add(o, "sensor", json_new_text(t->sensor));
        } else {
                json_object_object_add(o, "type", json_new_text(t->type));
                json_object_object_add(o, "mode", json_new_string_or_null(t->mode));
        }
        json_object_object_add(o, "label", json_new_string_or_null(t->label));
        json_object_object_add(o, "celsius", t->last_good_ms > 0 ? json_new_millis(t->temp_mc) : NULL);
        json_object_object_add(o, "ok", json_object_new_boolean(t->ok));
        json_object_object_add(o, "error", json_error_or_null(t->ok, t->error));
        json_object_object_add(o, "last_good_ms",
                               t->last_good_ms > 0 ? json_object_new_int64(t->last_good_ms) : NULL);
        json_object_object_add(o, "unit_quirk", t->unit_quirk ? json_object_new_string("whole-degrees") : NULL);
        json_object_object_add(o, "trips", json_trips(t));
        json_object_object_add(o, "max_celsius", t->has_max ? json_new_millis(t->max_mc) : NULL);
        json_object_object_add(o, "crit_celsius", t->has_crit ? json_new_millis(t->crit_mc) : NULL);
        json_object_object_add(o, "mirror_of", json_new_string_or_null(t->mirror_of));
        json_object_object_add(o, "read_us", json_object_new_int64(t->read_us));
        return o;
}

static json_object *json_cooling(const struct cooling_device *c) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "id", json_new_text(c->id));
        json_object_object_add(o, "type", json_new_text(c->type));
        json_object_object_add(o, "cur_state", json_object_new_int64(c->cur_state));
        json_object_object_add(o, "max_state", json_object_new_int64(c->max_state));
        json_object_object_add(o, "ok", json_object_new_boolean(c->ok));
        json_object_object_add(o, "error", json_error_or_null(c->ok, c->error));
        return o;
}

/* kHz from sysfs to Hz in the API; 0 means "not known". */
static json_object *json_hz(uint32_t khz) {
        return khz ? json_object_new_int64((int64_t) khz * 1000) : NULL;
}

static json_object *json_policy_lists(const struct cpufreq_policy *p, json_object *o) {
        json_object *cpus = json_object_new_array(), *avail = json_object_new_array();
        json_object *tis = json_object_new_object();

        for (size_t i = 0; i < p->n_cpus; i++)
                json_object_array_add(cpus, json_object_new_int(p->cpus[i]));
        for (size_t i = 0; i < p->n_available; i++)
                json_object_array_add(avail, json_object_new_int64((int64_t) p->available_khz[i] * 1000));
        for (size_t i = 0; i < p->n_tis; i++) {
                char key[24];

                snprintf(key, sizeof key, "%lld", (long long) p->tis_khz[i] * 1000);
                /* the kernel counts time_in_state in 10 ms units */
                json_object_object_add(tis, key, json_new_number((double) p->tis_10ms[i] / 100.0, 2));
        }
        json_object_object_add(o, "cpus", cpus);
        json_object_object_add(o, "available_hz", avail);
        json_object_object_add(o, "time_in_state_s", tis);
        return o;
}

static json_object *json_policy(const struct sensors *s, const struct cpufreq_policy *p) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "id", json_new_text(p->id));
        json_object_object_add(o, "driver", json_new_string_or_null(p->driver));
        json_object_object_add(o, "governor", json_new_string_or_null(p->governor));
        json_object_object_add(o, "cur_hz", json_hz(p->cur_khz));
        json_object_object_add(o, "cpuinfo_cur_hz", p->has_cpuinfo_cur ? json_hz(p->cpuinfo_cur_khz) : NULL);
        json_object_object_add(o, "min_hz", json_hz(p->min_khz));
        json_object_object_add(o, "max_hz", json_hz(p->max_khz));
        json_object_object_add(o, "scaling_min_hz", json_hz(p->scaling_min_khz));
        json_object_object_add(o, "scaling_max_hz", json_hz(p->scaling_max_khz));
        /* as /metrics' heatcurve_cpu_throttled: a cooling device of its CPUs acts */
        json_object_object_add(o, "throttled", json_object_new_boolean(sensors_policy_throttled(s, p)));
        json_object_object_add(o, "ok", json_object_new_boolean(p->ok));
        json_object_object_add(o, "error", json_error_or_null(p->ok, p->error));
        return json_policy_lists(p, o);
}

static json_object *json_load(const struct cpu_load *l) {
        json_object *o = json_object_new_object(), *per = json_object_new_array();

        for (size_t i = 0; i < l->n_cpus; i++)
                json_object_array_add(per, json_new_number(l->per_cpu[i], 4));
        json_object_object_add(o, "total", json_new_number(l->total, 4));
        json_object_object_add(o, "per_cpu", per);
        json_object_object_add(o, "ok", json_object_new_boolean(l->ok));
        json_object_object_add(o, "error", json_error_or_null(l->ok, l->error));
        return o;
}

/* The supply and the Pi firmware's view: null where the board reports neither. */
static json_object *json_power(const struct sensors *s) {
        int low = sensors_undervoltage(s), throttled = sensors_firmware_throttled(s);
        json_object *o;

        if (!s->power.present && !s->firmware.present)
                return NULL;
        o = json_object_new_object();
        json_object_object_add(o, "undervoltage", low < 0 ? NULL : json_object_new_boolean(low));
        json_object_object_add(o, "source", json_new_string_or_null(s->power.present ? s->power.source : "firmware"));
        json_object_object_add(o, "error", json_error_or_null(!s->power.present || s->power.ok, s->power.error));
        if (s->firmware.present) {
                json_object_object_add(o, "firmware_arm_hz", s->firmware.ok ? json_object_new_int64(s->firmware.arm_hz) : NULL);
                json_object_object_add(o, "firmware_throttled", throttled < 0 ? NULL : json_object_new_boolean(throttled));
                json_object_object_add(o, "firmware_bits", s->firmware.ok ? json_object_new_int64(s->firmware.throttled) : NULL);
        }
        return o;
}

/* Decimals of a channel's value by its unit: millidegrees, the load's four,
 * whole steps, hertz and flags; a unit not listed gets six. */
static int json_unit_decimals(const char *unit) {
        static const struct {
                const char *unit;
                int decimals;
        } units[] = { { "celsius", 3 }, { "fraction", 4 }, { "hz", 0 }, { "state", 0 }, { "flag", 0 } };

        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
                if (strcmp(unit, units[i].unit) == 0)
                        return units[i].decimals;
        return 6;
}

/* Every channel in the library's order: what a client loops over without
 * knowing the sources. value is null without a reading to keep (failed, a
 * load's first read, a frequency of 0). */
static json_object *json_channels(const struct sensors *s) {
        struct sensors_iter it = SENSORS_ITER_INIT;
        json_object *a = json_object_new_array();
        struct sensor_channel ch;

        while (sensors_channel_next(s, &it, &ch)) {
                json_object *o = json_object_new_object();
                int decimals = json_unit_decimals(ch.unit);

                json_object_object_add(o, "id", json_new_text(ch.id));
                json_object_object_add(o, "kind", json_object_new_string(sensors_kind_name(ch.kind)));
                json_object_object_add(o, "unit", json_object_new_string(ch.unit));
                json_object_object_add(o, "value", !ch.has_value ? NULL : decimals == 0 ?
                                       json_object_new_int64((int64_t) llround(ch.value)) :
                                       json_new_number(ch.value, decimals));
                json_object_object_add(o, "ok", json_object_new_boolean(ch.ok));
                json_object_array_add(a, o);
        }
        return a;
}

json_object *json_sensors_document(const struct sensors *s) {
        json_object *root = json_object_new_object();
        json_object *temps = json_object_new_array(), *cool = json_object_new_array();
        json_object *freq = json_object_new_array();

        for (size_t i = 0; i < s->n_temps; i++)
                json_object_array_add(temps, json_temp(&s->temps[i]));
        for (size_t i = 0; i < s->n_cooling; i++)
                json_object_array_add(cool, json_cooling(&s->cooling[i]));
        for (size_t i = 0; i < s->n_policies; i++)
                json_object_array_add(freq, json_policy(s, &s->policies[i]));

        json_object_object_add(root, "time_ms", json_object_new_int64(s->time_ms));
        json_object_object_add(root, "board", json_board(&s->board));
        json_object_object_add(root, "temperatures", temps);
        json_object_object_add(root, "cooling_devices", cool);
        json_object_object_add(root, "cpufreq", freq);
        json_object_object_add(root, "load", json_load(&s->load));
        json_object_object_add(root, "power", json_power(s));
        json_object_object_add(root, "channels", json_channels(s));
        return root;
}
