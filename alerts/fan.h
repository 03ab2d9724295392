/* fan.h — fans the daemon switches: [fan NAME] sections, on and off with hysteresis and a minimum on time. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "alert-config.h"
#include "snapshot.h"

struct fan {
        struct fan_config cfg;
        bool on;
        int64_t since_ms;               /* Unix ms of the last switch (or the start) */
        int64_t on_since_mono_ms;       /* CLOCK_MONOTONIC ms it was switched on: min_on counts from here */
        double value_c;                 /* C, the temperature it went by at the last sample, NaN when none */
        char value_sensor[ALERT_SENSOR_MAX];
        unsigned switches;              /* since the start */
};

void fan_init(struct fan *f, const struct fan_config *cfg, int64_t now_ms);
/* Which temperatures of s the fan goes by: matches[i] for s->temps[i]
 * (s->n_temps entries). Worked out when the sensors change, so that a
 * sample does not match the pattern against every sensor id. */
void fan_bind(const struct fan *f, const struct sensors *s, bool *matches);
/* One sample: returns true when the fan was switched (on or off). A fan
 * whose sensors all stop answering is switched on: the safe side.
 * matches: fan_bind() of these sensors, or NULL to match the pattern now. */
bool fan_eval(struct fan *f, const struct sensors *s, const bool *matches, int64_t now_ms, int64_t mono_ms);
json_object *fan_to_json(const struct fan *f);
