/* alerts.h — thermal alert rules: their states, confirmed changes, and the actions a change takes. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "alert-config.h"
#include "snapshot.h"

#define ALERTS_LOG_MAX 64               /* transitions kept (and saved in the state directory) */

enum alert_state {
        ALERT_OK,
        ALERT_FORECAST,                 /* the forecast says it crosses warn (or crit) soon (with forecast = DURATION) */
        ALERT_WARN,
        ALERT_CRIT,
        ALERT_LOST,                     /* the rule's sensors stopped answering (with lost = yes) */
        _ALERT_STATE_MAX,
};

/* One change of state, as logged, kept and handed to the host. */
struct alert_transition {
        char rule[ALERT_NAME_MAX];
        char sensor[ALERT_SENSOR_MAX];  /* the sensor that decided it, "" when none answered */
        enum alert_state state, previous;
        double value_c;                 /* C, NaN when lost */
        double threshold_c;             /* C, the level crossed (the one left, for a clear), NaN when none;
                                         * into forecast: the level forecast to be reached */
        int64_t time_ms;                /* Unix ms */
        double eta_s;                   /* s, into forecast: until the level, as forecast then; else NaN */
};

/* A rule as the API shows it. */
struct alert_status {
        const char *name;
        const char *sensor;             /* as configured */
        enum alert_state state;
        int64_t since_ms;               /* Unix ms of the last transition (or of the start) */
        double value_c;                 /* C, the value that triggered the state (NaN for none) */
        const char *value_sensor;       /* the sensor it came from, "" for none */
        double warn_c, crit_c;          /* C, the thresholds as resolved on the current sensors, NaN for none */
        bool hook_running;
        const char *gpio;               /* "" for none */
        const char *gpio_error;         /* why the line is not driven, "" when it is or there is none */
        bool gpio_driven;               /* the line is held and its last setting took; false for none */
        double eta_s;                   /* s until the forecast reaches eta_level_c, in the forecast state; else NaN */
        double eta_level_c;             /* C, that level; NaN out of the forecast state */
};

/* What the rules need from the daemon. */
struct alerts_host {
        sd_event *event;                /* hooks are child sources with a timeout */
        const char *state_dir;          /* alerts.json with the last transitions; NULL: not kept */
        /* Every transition, after it was logged and its actions started. May be NULL. */
        void (*transition)(void *userdata, const struct alert_transition *t);
        void *userdata;
};

struct alerts;

/* Rules from cfg, or the default rule when cfg has none. Loads the kept
 * transitions. err says what went wrong; -errno. */
int alerts_new(const struct alerts_host *host, const struct alert_config *cfg, struct alerts **ret,
               char *err, size_t errlen);
/* A reload: rules whose settings did not change keep their state. */
int alerts_configure(struct alerts *a, const struct alert_config *cfg, char *err, size_t errlen);
/* Kills running hooks, releases lines. Accepts NULL. */
void alerts_free(struct alerts *a);

/* Tick consumer callbacks; userdata is the struct alerts. */
void alerts_on_sample(void *userdata, const struct snapshot *snap);
void alerts_on_sensors(void *userdata, const struct sensors *s);

size_t alerts_count(const struct alerts *a);
void alerts_status(const struct alerts *a, size_t i, struct alert_status *ret);
/* The last transitions, oldest first. */
size_t alerts_log_count(const struct alerts *a);
const struct alert_transition *alerts_log_at(const struct alerts *a, size_t i);

const char *alert_state_to_string(enum alert_state s);
/* How many of the [fan NAME] fans are switched on. Accepts NULL. */
unsigned alerts_fans_on(const struct alerts *a);

/* {"rules": [...], "fans": [...], "transitions": [...]} for GET /api/v1/alerts. */
json_object *alerts_to_json(const struct alerts *a);
/* The [fan NAME] fans: state, the temperature they went by, switches. */
json_object *alerts_fans_to_json(const struct alerts *a);
/* The rules not ok, for the status document. */
json_object *alerts_active_to_json(const struct alerts *a);
