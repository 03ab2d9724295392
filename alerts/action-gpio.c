/* action-gpio.c — the GPIO action: a rule's line (LED, buzzer, relay), on while not ok; the line helpers fans share. */
#include <stdio.h>

#include "alert-action.h"
#include "log.h"

struct gpio_rule {
        struct gpio_out *out;           /* the rule's line, NULL for none or when it cannot be had */
        char error[256];                /* why not, "" when fine or none */
};

struct gpio_out *alert_gpio_open(const char *kind, const char *name, const char *spec_text, bool active_low,
                                 bool on, char *error, size_t errlen) {
        struct gpio_spec spec;
        struct gpio_out *g = NULL;
        char consumer[ALERT_NAME_MAX + 8];

        error[0] = '\0';
        if (!spec_text[0])
                return NULL;
        snprintf(consumer, sizeof consumer, "%s-%s", kind, name);
        if (gpio_spec_parse(spec_text, &spec, error, errlen) < 0 ||
            gpio_out_new(&spec, consumer, active_low, on, &g, error, errlen) < 0) {
                log_error("%s %s: cannot drive gpio %s: %s; the %s works on without it",
                          kind[0] == 'a' ? "Alert" : "Fan", name, spec_text, error, kind);
                return NULL;
        }
        return g;
}

void alert_gpio_set(struct gpio_out *g, const char *kind, const char *name, bool on, char *error, size_t errlen) {
        const char *who = kind[0] == 'a' ? "Alert" : "Fan";
        bool was_failing;

        if (!g)
                return;
        was_failing = error[0] != '\0';
        if (gpio_out_set(g, on, error, errlen) < 0) {
                if (!was_failing)
                        log_error("%s %s: setting its gpio line %s failed: %s; the line is not driven until a "
                                  "setting succeeds", who, name, on ? "on" : "off", error);
                return;
        }
        error[0] = '\0';
        if (was_failing)
                log_notice("%s %s: its gpio line is driven again (%s)", who, name, on ? "on" : "off");
}

/* Held at warn, crit and lost; in the forecast state only with gpio_forecast = yes. */
static bool gpio_state_on(const struct alert_rule_config *cfg, enum alert_state state) {
        return state == ALERT_FORECAST ? cfg->gpio_forecast : state != ALERT_OK;
}

/* A line not had before is tried again: a reload is how to retry it. */
static void gpio_rule_open(void *self, void *rule, const struct alert_rule_config *cfg, enum alert_state state) {
        struct gpio_rule *g = rule;

        if (!g->out && cfg->gpio[0])
                g->out = alert_gpio_open("alert", cfg->name, cfg->gpio, cfg->gpio_active_low, gpio_state_on(cfg, state),
                                         g->error, sizeof g->error);
}

/* The line keeps its last level when released: a fan that was on stays on
 * while no daemon watches. */
static void gpio_rule_close(void *self, void *rule) {
        struct gpio_rule *g = rule;

        gpio_out_free(g->out);
        g->out = NULL;
}

/* Held while the rule is at or above its level, or lost. */
static void gpio_transition(void *self, void *rule, const struct alert_rule_config *cfg,
                            const struct alert_transition *t) {
        struct gpio_rule *g = rule;

        alert_gpio_set(g->out, "alert", cfg->name, gpio_state_on(cfg, t->state), g->error, sizeof g->error);
}

static void gpio_status(const void *rule, struct alert_status *ret) {
        const struct gpio_rule *g = rule;

        ret->gpio_error = g->error;
        ret->gpio_driven = alert_gpio_driven(g->out, g->error);
}

const struct alert_action alert_action_gpio = {
        .name = "gpio",
        .rule_size = sizeof(struct gpio_rule),
        .rule_open = gpio_rule_open,
        .rule_close = gpio_rule_close,
        .transition = gpio_transition,
        .status = gpio_status,
};
