/* alerts.c — thermal alert rules: their states, confirmed changes, and the actions a change takes. */
#include "alerts.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "alert-action.h"
#include "alert-forecast.h"
#include "atomic-file.h"
#include "fan.h"
#include "json-util.h"
#include "log.h"
#include "util.h"

#define DEFAULT_WARN_C 75.0             /* without a passive trip */
#define DEFAULT_CRIT_C 85.0             /* without a hot or critical trip */
#define DEFAULT_CRIT_MARGIN_C 5.0       /* below the lowest hot/critical trip */
#define TRIP_HOT_OR_CRITICAL "hotcrit"  /* the default rule's crit: the lowest hot or critical trip */
#define SAVE_EVERY_MS 1000              /* alerts.json written at most this often */

/* The actions of a transition, in the order they act (see alert-action.h). */
static const struct alert_action *const actions[] = {
        &alert_action_journal,
        &alert_action_gpio,
        &alert_action_hook,
        &alert_action_webhook,
};
#define N_ACTIONS ELEMENTSOF(actions)

/* One temperature of the sensors the rule is bound to, as the rule sees it. */
struct rule_sensor {
        bool matches;                   /* the rule's glob matches its id (never for "hottest" or a source) */
        double warn_c, crit_c;          /* C, the levels on this sensor; NaN: none */
};

struct alert_rule {
        struct alert_rule_config cfg;
        double warn_fallback_c, crit_fallback_c;        /* C, for sensors without the trip; NaN: none */
        enum alert_state state;
        int64_t since_ms;               /* Unix ms */
        double value_c;                 /* C, at the last transition */
        char value_sensor[ALERT_SENSOR_MAX];
        int64_t above_since_ms[_ALERT_STATE_MAX];       /* warn, crit: monotonic ms since the level holds; 0 = not */
        int64_t below_since_ms;         /* monotonic ms since a state below this one is read; 0 = not */
        bool after_due;                 /* after: its latest transition, for the actions after the save */
        struct alert_transition after;
        bool matched_none_logged;
        void *action_data[N_ACTIONS];   /* each action's state for the rule, NULL for none */
        bool is_hottest;                /* cfg.sensor is "hottest" */
        /* Matches and levels per temperature, worked out once per struct
         * sensors (ids and trips change only with a probe), not per tick. */
        const struct sensors *bound;    /* what per_sensor was made for, NULL for nothing */
        size_t n_bound;                 /* its n_temps then */
        struct rule_sensor *per_sensor;
        struct alert_forecast *forecast;        /* the readings it went by, with forecast = DURATION; else NULL */
        double eta_s;                   /* s, until eta_level_c as last forecast; NaN for none */
        double eta_level_c;             /* C, the level forecast: warn, else crit */
        double entered_eta_s;           /* s, eta_s at the transition into forecast */
};

struct alerts {
        struct alerts_host host;
        char *log_path;                 /* state_dir/alerts.json, NULL when not kept */
        struct alert_rule **rules;
        size_t n_rules;
        bool is_default;                /* no rule configured: the one built from the trips */
        const struct sensors *sensors;
        struct fan fans[ALERT_FANS_MAX];
        struct gpio_out *fan_out[ALERT_FANS_MAX];       /* each fan's line, NULL when it cannot be had */
        char fan_error[ALERT_FANS_MAX][256];
        size_t n_fans;
        bool *fan_matches[ALERT_FANS_MAX];      /* fan_bind() of fans_bound; NULL: matched per sample */
        const struct sensors *fans_bound;
        size_t fans_n_bound;
        void *action_self[N_ACTIONS];   /* each action's own state, NULL for none */
        struct alert_transition log[ALERTS_LOG_MAX];    /* a ring */
        size_t log_start, log_n;
        uint64_t saved_us;              /* monotonic, the last save; 0: none yet */
        bool save_due;                  /* a transition since the last save */
        sd_event_source *save_timer;    /* a save put off to SAVE_EVERY_MS after the last */
};

static const char *const state_names[_ALERT_STATE_MAX] = { "ok", "forecast", "warn", "crit", "lost" };

const char *alert_state_to_string(enum alert_state s) {
        return state_names[s];
}

static int alert_state_from_string(const char *s) {
        for (size_t i = 0; s && i < ELEMENTSOF(state_names); i++)
                if (strcmp(state_names[i], s) == 0)
                        return (int) i;
        return -EINVAL;
}

/* ---- thresholds on one sensor */

/* C of the sensor's lowest trip of this type (hwmon: max counts as passive,
 * crit as critical), NaN when it has none. */
static double trip_c(const struct temp_sensor *t, const char *type) {
        bool hotcrit = strcmp(type, TRIP_HOT_OR_CRITICAL) == 0;
        double low = NAN;

        for (size_t k = 0; k < t->n_trips; k++) {
                const struct trip_point *tp = &t->trips[k];
                bool match = hotcrit ? strcmp(tp->type, "hot") == 0 || strcmp(tp->type, "critical") == 0 :
                                       strcmp(tp->type, type) == 0;
                if (match && tp->has_temp && (isnan(low) || tp->temp_mc / 1000.0 < low))
                        low = tp->temp_mc / 1000.0;
        }
        if (!isnan(low))
                return low;
        if (t->has_crit && (hotcrit || strcmp(type, "critical") == 0))
                return t->crit_mc / 1000.0;
        if (t->has_max && strcmp(type, "passive") == 0)
                return t->max_mc / 1000.0;
        return NAN;
}

static double threshold_c(const struct alert_threshold *th, double fallback, const struct temp_sensor *t) {
        double trip;

        switch (th->kind) {
        case ALERT_THRESHOLD_CELSIUS:
                return th->celsius;
        case ALERT_THRESHOLD_TRIP:
                trip = trip_c(t, th->trip_type);
                return isnan(trip) ? fallback : trip + th->celsius;
        default:
                return NAN;
        }
}

static double rule_threshold(const struct alert_rule *r, enum alert_state level, const struct temp_sensor *t) {
        double w;

        if (level == ALERT_FORECAST) {
                w = threshold_c(&r->cfg.warn, r->warn_fallback_c, t);
                return isnan(w) ? threshold_c(&r->cfg.crit, r->crit_fallback_c, t) : w;
        }
        if (level == ALERT_WARN)
                return threshold_c(&r->cfg.warn, r->warn_fallback_c, t);
        if (level == ALERT_CRIT)
                return threshold_c(&r->cfg.crit, r->crit_fallback_c, t);
        return NAN;
}

/* Does the rule watch the temperature channel with this id: its glob
 * matches, or it goes by the hottest and this is the one. */
static bool rule_matches(const struct alert_rule *r, const char *id, bool is_hottest) {
        if (r->is_hottest)
                return is_hottest;
        return fnmatch(r->cfg.sensor, id, 0) == 0;
}

/* ---- the kept transitions */

static json_object *transition_to_json(const struct alert_transition *t) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "time_ms", json_object_new_int64(t->time_ms));
        json_object_object_add(o, "rule", json_object_new_string(t->rule));
        json_object_object_add(o, "sensor", json_new_string_or_null(t->sensor));
        json_object_object_add(o, "state", json_object_new_string(state_names[t->state]));
        json_object_object_add(o, "previous", json_object_new_string(state_names[t->previous]));
        json_object_object_add(o, "value_c", json_new_number(t->value_c, 3));
        json_object_object_add(o, "threshold_c", json_new_number(t->threshold_c, 3));
        if (t->state == ALERT_FORECAST)
                json_object_object_add(o, "eta_s", json_new_number(t->eta_s, 1));
        return o;
}

static json_object *log_to_json(const struct alerts *a) {
        json_object *list = json_object_new_array();

        for (size_t i = 0; i < a->log_n; i++)
                json_object_array_add(list, transition_to_json(alerts_log_at(a, i)));
        return list;
}

static void log_append(struct alerts *a, const struct alert_transition *t) {
        if (a->log_n < ALERTS_LOG_MAX)
                a->log[(a->log_start + a->log_n++) % ALERTS_LOG_MAX] = *t;
        else {
                a->log[a->log_start] = *t;
                a->log_start = (a->log_start + 1) % ALERTS_LOG_MAX;
        }
}

static void log_save(struct alerts *a) {
        json_object *root;
        const char *text;
        size_t len;
        int r;

        if (!a->log_path)
                return;
        root = json_object_new_object();
        json_object_object_add(root, "transitions", log_to_json(a));
        text = json_object_to_json_string_length(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED, &len);
        r = atomic_file_replace(a->log_path, text, len, 0644);
        if (r < 0)
                log_warning("Cannot save alert transitions to %s: %s, ignoring", a->log_path, strerror(-r));
        json_object_put(root);
}

static double json_number_or_nan(json_object *o, const char *key) {
        json_object *v;

        return json_object_object_get_ex(o, key, &v) &&
               (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)) ?
               json_object_get_double(v) : NAN;
}

static void log_load(struct alerts *a) {
        json_object *root, *list, *o, *v;
        struct stat st;

        if (!a->log_path || stat(a->log_path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > 256 * 1024)
                return;
        root = json_object_from_file(a->log_path);
        if (!root || !json_object_object_get_ex(root, "transitions", &list) ||
            !json_object_is_type(list, json_type_array)) {
                log_warning("%s is not a list of alert transitions, ignoring it", a->log_path);
                json_object_put(root);
                return;
        }
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                struct alert_transition t = {};
                int state, previous;

                o = json_object_array_get_idx(list, i);
                state = alert_state_from_string(json_object_object_get_ex(o, "state", &v) ? json_object_get_string(v) : NULL);
                previous = alert_state_from_string(json_object_object_get_ex(o, "previous", &v) ?
                                                   json_object_get_string(v) : NULL);
                if (state < 0 || previous < 0 || !json_object_object_get_ex(o, "rule", &v))
                        continue;
                snprintf(t.rule, sizeof t.rule, "%s", json_object_get_string(v));
                if (json_object_object_get_ex(o, "sensor", &v) && json_object_get_string(v))
                        snprintf(t.sensor, sizeof t.sensor, "%s", json_object_get_string(v));
                t.state = (enum alert_state) state;
                t.previous = (enum alert_state) previous;
                t.value_c = json_number_or_nan(o, "value_c");
                t.threshold_c = json_number_or_nan(o, "threshold_c");
                t.eta_s = json_number_or_nan(o, "eta_s");
                t.time_ms = json_object_object_get_ex(o, "time_ms", &v) ? json_object_get_int64(v) : 0;
                log_append(a, &t);
        }
        json_object_put(root);
}

/* ---- the actions, through the list */

/* The actions' own state beside the rules. -errno. */
static int actions_new(struct alerts *a) {
        for (size_t k = 0; k < N_ACTIONS; k++) {
                int r = actions[k]->new ? actions[k]->new(&a->host, &a->action_self[k]) : 0;
                if (r < 0)
                        return r;
        }
        return 0;
}

static void actions_free(struct alerts *a) {
        for (size_t k = 0; k < N_ACTIONS; k++)
                if (actions[k]->free)
                        actions[k]->free(a->action_self[k]);
}

/* Each action's state for a new rule, zeroed. -ENOMEM. */
static int actions_rule_alloc(struct alert_rule *r) {
        for (size_t k = 0; k < N_ACTIONS; k++)
                if (actions[k]->rule_size && !(r->action_data[k] = calloc(1, actions[k]->rule_size)))
                        return -ENOMEM;
        return 0;
}

static void actions_rule_open(struct alerts *a, struct alert_rule *r) {
        for (size_t k = 0; k < N_ACTIONS; k++)
                if (actions[k]->rule_open)
                        actions[k]->rule_open(a->action_self[k], r->action_data[k], &r->cfg, r->state);
}

static void actions_rule_close(struct alerts *a, struct alert_rule *r) {
        for (size_t k = 0; k < N_ACTIONS; k++) {
                if (actions[k]->rule_close && (r->action_data[k] || !actions[k]->rule_size))
                        actions[k]->rule_close(a->action_self[k], r->action_data[k]);
                free(r->action_data[k]);
        }
}

/* Those that act at once (the journal, a line) before the transition is
 * saved with its fsync; after_save ones (a hook, which may read it) after. */
static void actions_transition(struct alerts *a, struct alert_rule *r, const struct alert_transition *t,
                               bool after_save) {
        for (size_t k = 0; k < N_ACTIONS; k++)
                if (actions[k]->transition && actions[k]->after_save == after_save)
                        actions[k]->transition(a->action_self[k], r->action_data[k], &r->cfg, t);
}

/* ---- transitions */

/* alerts.json, then the actions that wait for it (a hook may read it):
 * for each rule its latest transition since the last save. */
static void log_flush(struct alerts *a) {
        log_save(a);
        a->saved_us = util_monotonic_us();
        a->save_due = false;
        for (size_t i = 0; i < a->n_rules; i++)
                if (a->rules[i]->after_due) {
                        a->rules[i]->after_due = false;
                        actions_transition(a, a->rules[i], &a->rules[i]->after, true);
                }
}

static int log_on_save_timer(sd_event_source *es, uint64_t usec, void *userdata) {
        struct alerts *a = userdata;

        a->save_timer = sd_event_source_disable_unref(a->save_timer);
        log_flush(a);
        return 0;
}

/* A rule flapping at a threshold (or sixteen in one tick) cost a write and
 * two fsyncs each on the event loop: alerts.json is written at most once
 * every SAVE_EVERY_MS, with all that came meanwhile. */
static void log_save_soon(struct alerts *a) {
        uint64_t due = a->saved_us + SAVE_EVERY_MS * 1000u;

        if (a->save_timer)
                return;
        if (!a->log_path || !a->host.event || !a->saved_us || util_monotonic_us() >= due ||
            sd_event_add_time(a->host.event, &a->save_timer, CLOCK_MONOTONIC, due, 0, log_on_save_timer, a) < 0)
                log_flush(a);
}

static void rule_transition(struct alerts *a, struct alert_rule *r, enum alert_state to,
                            const struct temp_sensor *t, double threshold, int64_t now) {
        struct alert_transition tr = {
                .state = to, .previous = r->state, .value_c = t ? t->temp_mc / 1000.0 : NAN,
                .threshold_c = threshold, .time_ms = now, .eta_s = to == ALERT_FORECAST ? r->eta_s : NAN,
        };

        snprintf(tr.rule, sizeof tr.rule, "%s", r->cfg.name);
        snprintf(tr.sensor, sizeof tr.sensor, "%s", t ? t->id : alert_config_is_source(r->cfg.sensor) &&
                 to != ALERT_LOST ? r->cfg.sensor : "");
        r->state = to;
        r->since_ms = now;
        r->value_c = tr.value_c;
        r->entered_eta_s = tr.eta_s;
        snprintf(r->value_sensor, sizeof r->value_sensor, "%s", tr.sensor);
        r->below_since_ms = 0;
        actions_transition(a, r, &tr, false);
        log_append(a, &tr);
        r->after = tr;
        r->after_due = true;
        a->save_due = true;             /* saved after the sample: every rule's of a tick in one write */
        if (a->host.transition)
                a->host.transition(a->host.userdata, &tr);
}

/* What the rule's sensors say now: the level entered (above a threshold),
 * the level held (not yet below it by the hysteresis), and the sensor that
 * decides (the hottest of those at the highest entered level). */
struct rule_reading {
        size_t answering;
        enum alert_state enter, hold;
        const struct temp_sensor *decider;
};

/* undervoltage and throttled are sources of their own: warn while the board
 * says so; no temperature, so no threshold and no hysteresis. */
static bool rule_read_source(const struct alert_rule *r, const struct sensors *s, struct rule_reading *ret) {
        int now;

        if (strcmp(r->cfg.sensor, ALERT_SOURCE_UNDERVOLTAGE) == 0)
                now = sensors_undervoltage(s);
        else if (strcmp(r->cfg.sensor, ALERT_SOURCE_THROTTLED) == 0)
                now = sensors_firmware_throttled(s);
        else
                return false;
        if (now >= 0) {
                ret->answering = 1;
                ret->enter = ret->hold = now ? ALERT_WARN : ALERT_OK;
        }
        return true;
}

/* Binds the rule to s: which temperatures it watches and their levels. On
 * failure (no memory) the rule stays unbound and works them out per tick. */
static void rule_bind(struct alert_rule *r, const struct sensors *s) {
        struct sensors_iter it = SENSORS_ITER_INIT;
        struct sensor_channel ch;
        struct rule_sensor *p;

        r->bound = NULL;
        p = realloc(r->per_sensor, (s->n_temps + 1) * sizeof *p);
        if (!p)
                return;
        r->per_sensor = p;
        while (sensors_channel_next(s, &it, &ch))
                if (ch.kind == SENSOR_KIND_TEMPERATURE)
                        p[ch.index] = (struct rule_sensor) {
                                .matches = !r->is_hottest && rule_matches(r, ch.id, false),
                                .warn_c = rule_threshold(r, ALERT_WARN, &s->temps[ch.index]),
                                .crit_c = rule_threshold(r, ALERT_CRIT, &s->temps[ch.index]),
                        };
        r->bound = s;
        r->n_bound = s->n_temps;
}

static bool rule_is_bound(const struct alert_rule *r, const struct sensors *s) {
        return r->bound == s && r->n_bound == s->n_temps;
}

/* Does the rule watch temperature i, and at which levels. */
static bool rule_sensor_at(const struct alert_rule *r, const struct sensors *s, size_t i,
                           const struct temp_sensor *hottest, double *ret_warn, double *ret_crit) {
        const struct temp_sensor *t = &s->temps[i];

        if (!rule_is_bound(r, s)) {
                *ret_warn = rule_threshold(r, ALERT_WARN, t);
                *ret_crit = rule_threshold(r, ALERT_CRIT, t);
                return rule_matches(r, t->id, t == hottest);
        }
        *ret_warn = r->per_sensor[i].warn_c;
        *ret_crit = r->per_sensor[i].crit_c;
        return r->is_hottest ? t == hottest : r->per_sensor[i].matches;
}

static void rule_read(const struct alert_rule *r, const struct sensors *s, const struct temp_sensor *hottest,
                      struct rule_reading *ret) {
        size_t first = 0, end = s->n_temps;

        *ret = (struct rule_reading) { 0, ALERT_OK, ALERT_OK, NULL };
        if (rule_read_source(r, s, ret))
                return;
        if (r->is_hottest && rule_is_bound(r, s)) {
                /* only the hottest can match: look at it alone */
                if (!hottest)
                        return;
                first = (size_t) (hottest - s->temps);
                end = first + 1;
        }
        for (size_t i = first; i < end; i++) {
                const struct temp_sensor *t = &s->temps[i];
                double w, c;

                if (!t->ok || !rule_sensor_at(r, s, i, hottest, &w, &c))
                        continue;
                double v = t->temp_mc / 1000.0, hy = r->cfg.hysteresis_c;
                enum alert_state enter = v >= c ? ALERT_CRIT : v >= w ? ALERT_WARN : ALERT_OK;
                /* at the level itself it holds, also without hysteresis */
                enum alert_state hold = v > c - hy || v >= c ? ALERT_CRIT : v > w - hy || v >= w ? ALERT_WARN : ALERT_OK;
                ret->answering++;
                if (hold > ret->hold)
                        ret->hold = hold;
                if (!ret->decider || enter > ret->enter || (enter == ret->enter && t->temp_mc > ret->decider->temp_mc)) {
                        ret->decider = t;
                        ret->enter = enter > ret->enter ? enter : ret->enter;
                }
        }
}

/* With forecast = DURATION: the state is forecast when the forecast of the
 * readings the rule goes by reaches its level (warn, else crit) within the
 * duration, and it holds while the forecast reaches the level less the
 * hysteresis, or, while no forecast can be made at all (the curve shows no
 * bend), for ALERT_FORECAST_GRACE_MS after the last one. */
static void rule_read_forecast(struct alert_rule *r, int64_t mono, struct rule_reading *rd) {
        struct alert_forecast *f = r->forecast;
        double horizon, hold;

        r->eta_s = r->eta_level_c = NAN;
        if (!f)
                return;
        if (!rd->decider) {
                alert_forecast_reset(f);
                return;
        }
        alert_forecast_add(f, mono, rd->decider->temp_mc / 1000.0);
        r->eta_level_c = rule_threshold(r, ALERT_FORECAST, rd->decider);
        horizon = (double) r->cfg.forecast_ms / 1000.0;
        r->eta_s = alert_forecast_eta(f, r->eta_level_c, horizon);
        if (!(r->eta_s <= horizon))
                r->eta_s = NAN;
        hold = alert_forecast_eta(f, r->eta_level_c - r->cfg.hysteresis_c, horizon);
        if (r->eta_s <= horizon && rd->enter < ALERT_FORECAST)
                rd->enter = ALERT_FORECAST;
        if ((hold <= horizon || (isnan(hold) && r->state == ALERT_FORECAST &&
                                 mono - f->usable_ms < ALERT_FORECAST_GRACE_MS)) && rd->hold < ALERT_FORECAST)
                rd->hold = ALERT_FORECAST;
}

/* A state goes down once the lower reading held dwell: a value that hovers
 * at a level without hysteresis (or with noise wider than it, given a
 * dwell) does not flap the rule, and its hook, at every tick. Going up
 * waits for nothing but "for". */
static bool rule_dwelt(struct alert_rule *r, int64_t mono) {
        if (!r->below_since_ms)
                r->below_since_ms = mono > 0 ? mono : 1;
        return mono - r->below_since_ms >= (int64_t) alert_rule_dwell_ms(&r->cfg);
}

/* now is the wall clock (a label), mono what "for" and "dwell" are measured on. */
static void rule_eval(struct alerts *a, struct alert_rule *r, const struct sensors *s,
                      const struct temp_sensor *hottest, int64_t now, int64_t mono) {
        struct rule_reading rd;
        enum alert_state up = ALERT_OK;

        if (!rule_is_bound(r, s))
                rule_bind(r, s);
        rule_read(r, s, hottest, &rd);
        if (rd.answering == 0) {
                /* nothing to judge by: a state of its own when asked for, else unchanged */
                if (r->cfg.lost && r->state != ALERT_LOST)
                        rule_transition(a, r, ALERT_LOST, NULL, NAN, now);
                memset(r->above_since_ms, 0, sizeof r->above_since_ms);
                if (r->forecast)
                        alert_forecast_reset(r->forecast);
                return;
        }
        rule_read_forecast(r, mono, &rd);
        for (enum alert_state l = ALERT_FORECAST; l <= ALERT_CRIT; l++) {
                if (rd.enter < l)
                        r->above_since_ms[l] = 0;
                else if (!r->above_since_ms[l])
                        r->above_since_ms[l] = mono > 0 ? mono : 1;
                if (r->above_since_ms[l] && mono - r->above_since_ms[l] >= (int64_t) r->cfg.for_ms)
                        up = l;
        }
        if (r->state == ALERT_LOST)
                /* answering again: straight to what the sensors say */
                rule_transition(a, r, rd.enter, rd.decider, rule_threshold(r, rd.enter, rd.decider), now);
        else if (up > r->state)
                rule_transition(a, r, up, rd.decider, rule_threshold(r, up, rd.decider), now);
        else if (rd.hold < r->state && rule_dwelt(r, mono))
                rule_transition(a, r, rd.hold, rd.decider, rule_threshold(r, r->state, rd.decider), now);
        if (rd.hold >= r->state)
                r->below_since_ms = 0;
}

static void fan_log(const struct fan *f) {
        char field[ALERT_NAME_MAX + 8];
        const char *fields[] = { field, NULL };

        snprintf(field, sizeof field, "FAN=%s", f->cfg.name);
        if (f->value_sensor[0])
                log_fields(LOG_NOTICE, fields, "Fan %s switched %s: %s at %.1f C", f->cfg.name, f->on ? "on" : "off",
                           f->value_sensor, f->value_c);
        else
                log_fields(LOG_WARNING, fields, "Fan %s switched on: no sensor answers", f->cfg.name);
}

/* Which temperatures each fan goes by, for s. A fan without memory for it
 * matches its pattern at every sample instead. */
static void fans_bind(struct alerts *a, const struct sensors *s) {
        for (size_t i = 0; i < ALERT_FANS_MAX; i++) {
                bool *m = NULL;

                if (i < a->n_fans) {
                        m = realloc(a->fan_matches[i], (s->n_temps + 1) * sizeof *m);
                        if (m)
                                fan_bind(&a->fans[i], s, m);
                }
                if (!m)
                        free(a->fan_matches[i]);
                a->fan_matches[i] = m;
        }
        a->fans_bound = s;
        a->fans_n_bound = s->n_temps;
}

/* A walk over every temperature, taken only when a rule goes by the hottest. */
static const struct temp_sensor *alerts_hottest(const struct alerts *a, const struct sensors *s) {
        for (size_t i = 0; i < a->n_rules; i++)
                if (a->rules[i]->is_hottest)
                        return sensors_hottest(s);
        return NULL;
}

void alerts_on_sample(void *userdata, const struct snapshot *snap) {
        struct alerts *a = userdata;
        const struct temp_sensor *hottest = alerts_hottest(a, snap->sensors);

        a->sensors = snap->sensors;
        for (size_t k = 0; k < N_ACTIONS; k++)
                if (actions[k]->sample)
                        actions[k]->sample(a->action_self[k]);
        for (size_t i = 0; i < a->n_rules; i++)
                rule_eval(a, a->rules[i], snap->sensors, hottest, snap->time_ms, snap->mono_ms);
        if (a->save_due)
                log_save_soon(a);
        if (a->n_fans && (a->fans_bound != snap->sensors || a->fans_n_bound != snap->sensors->n_temps))
                fans_bind(a, snap->sensors);
        for (size_t i = 0; i < a->n_fans; i++)
                if (fan_eval(&a->fans[i], snap->sensors, a->fan_matches[i], snap->time_ms, snap->mono_ms)) {
                        fan_log(&a->fans[i]);
                        alert_gpio_set(a->fan_out[i], "fan", a->fans[i].cfg.name, a->fans[i].on, a->fan_error[i],
                                   sizeof a->fan_error[i]);
                }
}

unsigned alerts_fans_on(const struct alerts *a) {
        unsigned n = 0;

        for (size_t i = 0; a && i < a->n_fans; i++)
                n += a->fans[i].on;
        return n;
}

static struct alert_rule *rule_default_undervoltage(int64_t now);
static void rule_free(struct alerts *a, struct alert_rule *r);

/* Without rules of the user's, a board that reports its supply gets the
 * undervoltage rule beside the temperature one. */
static void alerts_default_sources(struct alerts *a, const struct sensors *s) {
        struct alert_rule **p, *r;

        if (!a->is_default || a->n_rules != 1 || !(s->power.present || s->firmware.present))
                return;
        r = rule_default_undervoltage(util_now_ms());
        p = r ? realloc(a->rules, 2 * sizeof *p) : NULL;
        if (!p) {
                rule_free(a, r);
                return;
        }
        a->rules = p;
        a->rules[a->n_rules++] = r;
        actions_rule_open(a, r);
}

void alerts_on_sensors(void *userdata, const struct sensors *s) {
        struct alerts *a = userdata;
        struct sensor_channel ch;

        a->sensors = s;
        for (size_t k = 0; k < N_ACTIONS; k++)
                if (actions[k]->sensors)
                        actions[k]->sensors(a->action_self[k], s);
        alerts_default_sources(a, s);
        fans_bind(a, s);
        for (size_t i = 0; i < a->n_rules; i++) {
                struct alert_rule *r = a->rules[i];
                size_t matched = 0;
                rule_bind(r, s);
                matched += alert_config_is_source(r->cfg.sensor) &&
                           (strcmp(r->cfg.sensor, ALERT_SOURCE_THROTTLED) ? sensors_undervoltage(s) >= 0 || s->power.present
                                                                           : s->firmware.present);
                for (struct sensors_iter it = SENSORS_ITER_INIT; sensors_channel_next(s, &it, &ch); )
                        matched += ch.kind == SENSOR_KIND_TEMPERATURE && (r->is_hottest || rule_matches(r, ch.id, false));
                if (!matched && !r->matched_none_logged)
                        log_warning("Alert %s: sensor \"%s\" matches nothing on this board", r->cfg.name, r->cfg.sensor);
                r->matched_none_logged = !matched;
        }
}

/* ---- building and rebuilding the rules */

static struct alert_rule *rule_new(const struct alert_rule_config *cfg, int64_t now) {
        struct alert_rule *r = calloc(1, sizeof *r);

        if (!r)
                return NULL;
        if (actions_rule_alloc(r) < 0) {
                for (size_t k = 0; k < N_ACTIONS; k++)
                        free(r->action_data[k]);
                free(r);
                return NULL;
        }
        r->cfg = *cfg;
        if (cfg->forecast_ms && !(r->forecast = malloc(sizeof *r->forecast))) {
                for (size_t k = 0; k < N_ACTIONS; k++)
                        free(r->action_data[k]);
                free(r);
                return NULL;
        }
        if (r->forecast) {
                memset(r->forecast, 0, sizeof *r->forecast);
                alert_forecast_reset(r->forecast);
        }
        r->eta_s = r->eta_level_c = r->entered_eta_s = NAN;
        r->is_hottest = strcmp(cfg->sensor, "hottest") == 0;
        r->warn_fallback_c = r->crit_fallback_c = NAN;
        r->state = ALERT_OK;
        r->since_ms = now;
        r->value_c = NAN;
        return r;
}

/* Warn at the lowest passive trip, crit 5 C below the lowest hot or critical
 * trip; 75 and 85 C on sensors without them. Every temperature sensor. */
static struct alert_rule *rule_default(int64_t now) {
        struct alert_rule_config cfg = {
                .name = "default", .sensor = "*", .hysteresis_c = ALERT_HYSTERESIS_DEFAULT_C,
                .dwell_ms = ALERT_DWELL_UNSET,
                .warn = { ALERT_THRESHOLD_TRIP, 0, "passive" },
                .crit = { ALERT_THRESHOLD_TRIP, -DEFAULT_CRIT_MARGIN_C, TRIP_HOT_OR_CRITICAL },
                .exec_timeout_ms = 30000,
        };
        struct alert_rule *r = rule_new(&cfg, now);

        if (r) {
                r->warn_fallback_c = DEFAULT_WARN_C;
                r->crit_fallback_c = DEFAULT_CRIT_C;
        }
        return r;
}

/* Its actions let go of it: a running hook finishes on its own, a line is
 * released at its last level. */
static void rule_free(struct alerts *a, struct alert_rule *r) {
        if (!r)
                return;
        actions_rule_close(a, r);
        free(r->per_sensor);
        free(r->forecast);
        free(r);
}

static bool rule_config_equal(const struct alert_rule_config *x, const struct alert_rule_config *y) {
        struct alert_rule_config a = *x, b = *y;

        a.line = b.line = 0;            /* moving a section in the file changes nothing */
        return memcmp(&a, &b, sizeof a) == 0;
}

/* Fans whose settings did not change keep their state (and their min_on). */
static void alerts_configure_fans(struct alerts *a, const struct alert_config *cfg, int64_t now) {
        struct fan fans[ALERT_FANS_MAX];
        struct gpio_out *outs[ALERT_FANS_MAX] = { NULL };
        char errors[ALERT_FANS_MAX][256] = { "" };

        for (size_t i = 0; i < cfg->n_fans; i++) {
                fan_init(&fans[i], &cfg->fans[i], now);
                for (size_t k = 0; k < a->n_fans; k++) {
                        struct fan_config x = a->fans[k].cfg, y = cfg->fans[i];
                        x.line = y.line = 0;
                        if (memcmp(&x, &y, sizeof x) != 0)
                                continue;
                        fans[i] = a->fans[k];
                        outs[i] = a->fan_out[k];
                        a->fan_out[k] = NULL;
                }
        }
        for (size_t k = 0; k < a->n_fans; k++)
                gpio_out_free(a->fan_out[k]);
        for (size_t i = 0; i < cfg->n_fans; i++)
                if (!outs[i])
                        outs[i] = alert_gpio_open("fan", fans[i].cfg.name, fans[i].cfg.gpio, fans[i].cfg.gpio_active_low,
                                              fans[i].on, errors[i], sizeof errors[i]);
        memcpy(a->fans, fans, cfg->n_fans * sizeof *fans);
        memcpy(a->fan_out, outs, sizeof outs);
        memcpy(a->fan_error, errors, sizeof errors);
        a->n_fans = cfg->n_fans;
        a->fans_bound = NULL;           /* the fans changed: bound again at the next sample */
}

/* The Pi's supply: warn while it is too low (the other reason it slows down). */
static struct alert_rule *rule_default_undervoltage(int64_t now) {
        struct alert_rule_config cfg = {
                .name = "undervoltage", .sensor = ALERT_SOURCE_UNDERVOLTAGE, .exec_timeout_ms = 30000,
                .dwell_ms = ALERT_DWELL_UNSET,
        };

        return rule_new(&cfg, now);
}

int alerts_configure(struct alerts *a, const struct alert_config *cfg, char *err, size_t errlen) {
        size_t n = cfg->n_rules ? cfg->n_rules : 1;
        struct alert_rule **rules = calloc(n, sizeof *rules);
        int64_t now = util_now_ms();

        if (!rules) {
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        /* an unchanged rule keeps its state, its since, its running hook and its line */
        for (size_t i = 0; i < n; i++)
                for (size_t k = 0; cfg->n_rules && k < a->n_rules && !rules[i]; k++)
                        if (a->rules[k] && rule_config_equal(&a->rules[k]->cfg, &cfg->rules[i])) {
                                rules[i] = a->rules[k];
                                a->rules[k] = NULL;
                        }
        /* the others go first, so a changed rule can request the same line again */
        for (size_t k = 0; k < a->n_rules; k++)
                rule_free(a, a->rules[k]);
        free(a->rules);
        a->rules = NULL;
        a->n_rules = 0;
        for (size_t i = 0; i < n; i++) {
                if (!rules[i])
                        rules[i] = cfg->n_rules ? rule_new(&cfg->rules[i], now) : rule_default(now);
                if (!rules[i]) {
                        for (size_t k = 0; k < n; k++)
                                rule_free(a, rules[k]);
                        free(rules);
                        snprintf(err, errlen, "out of memory");
                        return -ENOMEM;
                }
                actions_rule_open(a, rules[i]);
        }
        a->rules = rules;
        a->n_rules = n;
        a->is_default = cfg->n_rules == 0;
        alerts_configure_fans(a, cfg, now);
        if (a->sensors)
                alerts_on_sensors(a, a->sensors);
        return 0;
}

int alerts_new(const struct alerts_host *host, const struct alert_config *cfg, struct alerts **ret,
               char *err, size_t errlen) {
        struct alerts *a = calloc(1, sizeof *a);
        int r;

        if (!a) {
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        a->host = *host;
        if (host->state_dir && asprintf(&a->log_path, "%s/alerts.json", host->state_dir) < 0)
                a->log_path = NULL;
        log_load(a);
        r = actions_new(a);
        if (r < 0)
                snprintf(err, errlen, "out of memory");
        else
                r = alerts_configure(a, cfg, err, errlen);
        if (r < 0) {
                alerts_free(a);
                return r;
        }
        *ret = a;
        return 0;
}

void alerts_free(struct alerts *a) {
        if (!a)
                return;
        if (a->save_timer) {
                a->save_timer = sd_event_source_disable_unref(a->save_timer);
                log_save(a);
        }
        for (size_t i = 0; i < a->n_rules; i++)
                rule_free(a, a->rules[i]);
        for (size_t i = 0; i < a->n_fans; i++)
                gpio_out_free(a->fan_out[i]);
        for (size_t i = 0; i < ALERT_FANS_MAX; i++)
                free(a->fan_matches[i]);
        actions_free(a);
        free(a->rules);
        free(a->log_path);
        free(a);
}

/* ---- what the API shows */

size_t alerts_count(const struct alerts *a) {
        return a->n_rules;
}

void alerts_status(const struct alerts *a, size_t i, struct alert_status *ret) {
        const struct alert_rule *r = a->rules[i];
        const struct temp_sensor *t = NULL;
        struct rule_reading rd;

        if (a->sensors) {
                rule_read(r, a->sensors, sensors_hottest(a->sensors), &rd);
                t = rd.decider;
        }
        *ret = (struct alert_status) {
                .name = r->cfg.name, .sensor = r->cfg.sensor, .state = r->state, .since_ms = r->since_ms,
                .value_c = r->value_c, .value_sensor = r->value_sensor,
                .warn_c = t ? rule_threshold(r, ALERT_WARN, t) : NAN,
                .crit_c = t ? rule_threshold(r, ALERT_CRIT, t) : NAN,
                .gpio = r->cfg.gpio, .gpio_error = "",
                .eta_s = r->state == ALERT_FORECAST ? r->eta_s : NAN,
                .eta_level_c = r->state == ALERT_FORECAST ? r->eta_level_c : NAN,
        };
        for (size_t k = 0; k < N_ACTIONS; k++)
                if (actions[k]->status)
                        actions[k]->status(r->action_data[k], ret);
}

size_t alerts_log_count(const struct alerts *a) {
        return a->log_n;
}

const struct alert_transition *alerts_log_at(const struct alerts *a, size_t i) {
        return &a->log[(a->log_start + i) % ALERTS_LOG_MAX];
}

static json_object *rule_to_json(const struct alerts *a, size_t i) {
        const struct alert_rule *r = a->rules[i];
        json_object *o = json_object_new_object();
        struct alert_status st;
        char buf[48];

        alerts_status(a, i, &st);
        json_object_object_add(o, "name", json_object_new_string(st.name));
        json_object_object_add(o, "sensor", json_object_new_string(st.sensor));
        json_object_object_add(o, "state", json_object_new_string(state_names[st.state]));
        json_object_object_add(o, "since_ms", json_object_new_int64(st.since_ms));
        json_object_object_add(o, "value_c", json_new_number(st.value_c, 3));
        json_object_object_add(o, "value_sensor", json_new_string_or_null(st.value_sensor));
        json_object_object_add(o, "warn", r->cfg.warn.kind ? json_object_new_string(
                                       alert_threshold_format(&r->cfg.warn, buf, sizeof buf)) : NULL);
        json_object_object_add(o, "crit", r->cfg.crit.kind ? json_object_new_string(
                                       alert_threshold_format(&r->cfg.crit, buf, sizeof buf)) : NULL);
        json_object_object_add(o, "warn_c", json_new_number(st.warn_c, 3));
        json_object_object_add(o, "crit_c", json_new_number(st.crit_c, 3));
        json_object_object_add(o, "hysteresis_c", json_new_number(r->cfg.hysteresis_c, 2));
        json_object_object_add(o, "for_s", json_new_number((double) r->cfg.for_ms / 1000.0, 3));
        json_object_object_add(o, "lost", json_object_new_boolean(r->cfg.lost));
        json_object_object_add(o, "exec", json_new_string_or_null(r->cfg.exec));
        json_object_object_add(o, "hook_running", json_object_new_boolean(st.hook_running));
        json_object_object_add(o, "gpio", json_new_string_or_null(st.gpio));
        json_object_object_add(o, "gpio_error", json_new_string_or_null(st.gpio_error));
        json_object_object_add(o, "gpio_driven", st.gpio[0] ? json_object_new_boolean(st.gpio_driven) : NULL);
        json_object_object_add(o, "forecast_s", r->cfg.forecast_ms ?
                               json_new_number((double) r->cfg.forecast_ms / 1000.0, 3) : NULL);
        json_object_object_add(o, "eta_s", json_new_number(st.eta_s, 1));
        json_object_object_add(o, "eta_level_c", json_new_number(st.eta_level_c, 3));
        return o;
}

json_object *alerts_to_json(const struct alerts *a) {
        json_object *root = json_object_new_object(), *rules = json_object_new_array();

        for (size_t i = 0; i < a->n_rules; i++)
                json_object_array_add(rules, rule_to_json(a, i));
        json_object_object_add(root, "default_rule", json_object_new_boolean(a->is_default));
        json_object_object_add(root, "rules", rules);
        json_object_object_add(root, "fans", alerts_fans_to_json(a));
        json_object_object_add(root, "transitions", log_to_json(a));
        return root;
}

json_object *alerts_fans_to_json(const struct alerts *a) {
        json_object *fans = json_object_new_array();

        for (size_t i = 0; i < a->n_fans; i++) {
                json_object *o = fan_to_json(&a->fans[i]);
                json_object_object_add(o, "gpio_error", json_new_string_or_null(a->fan_error[i]));
                json_object_object_add(o, "gpio_driven", a->fans[i].cfg.gpio[0] ? json_object_new_boolean(
                                               alert_gpio_driven(a->fan_out[i], a->fan_error[i])) : NULL);
                json_object_array_add(fans, o);
        }
        return fans;
}

json_object *alerts_active_to_json(const struct alerts *a) {
        json_object *list = json_object_new_array();

        for (size_t i = 0; i < a->n_rules; i++) {
                const struct alert_rule *r = a->rules[i];
                if (r->state == ALERT_OK)
                        continue;
                json_object *o = json_object_new_object();
                json_object_object_add(o, "name", json_object_new_string(r->cfg.name));
                json_object_object_add(o, "state", json_object_new_string(state_names[r->state]));
                json_object_object_add(o, "sensor", json_new_string_or_null(r->value_sensor));
                json_object_object_add(o, "value_c", json_new_number(r->value_c, 3));
                json_object_object_add(o, "since_ms", json_object_new_int64(r->since_ms));
                if (r->state == ALERT_FORECAST) {
                        /* as at the transition: the list changes only with a state */
                        json_object_object_add(o, "eta_s", json_new_number(r->entered_eta_s, 1));
                        json_object_object_add(o, "level_c", json_new_number(r->eta_level_c, 3));
                }
                json_object_array_add(list, o);
        }
        return list;
}
