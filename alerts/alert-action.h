/* alert-action.h — for alerts/ only: the ops table each action of a transition exports, and the line helpers fans share. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "alert-config.h"
#include "alerts.h"
#include "gpio.h"

/* An action is one file exporting one struct alert_action and one entry in
 * alerts.c's list; the list's order is the order they act in. alerts.c owns
 * the rules and their states and calls every action of the list for each
 * rule and each transition. An action may keep state of its own beside the
 * rules (self) and some for each rule (rule: rule_size bytes, zeroed, kept
 * while the rule is, across reloads that leave it unchanged). Every op may be
 * NULL.
 *
 * A fan ([fan NAME], fan.c) is no action: it is a switch of its own, with
 * hysteresis and a minimum on time, judged at every sample rather than on a
 * rule's transition. It drives its line with the GPIO action's helpers. */
struct alert_action {
        const char *name;
        size_t rule_size;               /* bytes of state per rule; 0: none */
        /* Acts only once the transition is in alerts.json (a hook may read
         * it); the others act before that write and its fsync. */
        bool after_save;
        /* self, or -errno. */
        int (*new)(const struct alerts_host *host, void **ret);
        /* After every rule was closed: ends what still runs, frees self. */
        void (*free)(void *self);
        /* Once a sample, before the rules are judged. */
        void (*sample)(void *self);
        /* After every probe of the sensors: the board as it is now. */
        void (*sensors)(void *self, const struct sensors *s);
        /* After every (re)configure, for each rule, new or kept; state is the
         * rule's now. cfg stays where it is while the rule lives. */
        void (*rule_open)(void *self, void *rule, const struct alert_rule_config *cfg, enum alert_state state);
        /* The rule is gone (a reload changed it, or the end); its state is freed after. */
        void (*rule_close)(void *self, void *rule);
        /* One confirmed change of the rule's state. */
        void (*transition)(void *self, void *rule, const struct alert_rule_config *cfg,
                           const struct alert_transition *t);
        /* Its part of what the API shows of the rule. */
        void (*status)(const void *rule, struct alert_status *ret);
};

extern const struct alert_action alert_action_journal;
extern const struct alert_action alert_action_gpio;
extern const struct alert_action alert_action_hook;
extern const struct alert_action alert_action_webhook;

/* What the webhook action gives curl for the POST of t to cfg's webhook
 * (its config file, read from stdin: the URL, the headers and the body in
 * cfg's format), into buf. Its length, or -E2BIG when it does not fit. */
int alert_webhook_request(const struct alert_rule_config *cfg, const struct alert_transition *t,
                          const struct board_info *board, char *buf, size_t size);

/* The line of a rule (kind "alert") or a fan (kind "fan"), requested at
 * level on. A line that cannot be had (a missing chip, a line out of range
 * or held elsewhere) is logged with the section's name and the line, and
 * NULL returned with error saying why; the rule or fan works on without it.
 * NULL with error "" when spec_text is "". */
struct gpio_out *alert_gpio_open(const char *kind, const char *name, const char *spec_text, bool active_low,
                                 bool on, char *error, size_t errlen);
/* Drives it to on; a failure is kept in error and logged when the line was
 * driven until then (not again while it keeps failing); success clears error
 * and, after a failure, says so. Nothing for NULL. */
void alert_gpio_set(struct gpio_out *g, const char *kind, const char *name, bool on, char *error, size_t errlen);
/* Whether the line of g (with its error as alert_gpio_set() keeps it) is at
 * the level last asked for: false when it could not be had or its last
 * setting failed. */
static inline bool alert_gpio_driven(const struct gpio_out *g, const char *error) {
        return g && !error[0];
}
