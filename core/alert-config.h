/* alert-config.h — [alert NAME] and [fan NAME] sections: what a rule says, parsed and checked. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ALERT_RULES_MAX 16
#define ALERT_FANS_MAX 4
#define ALERT_NAME_MAX 32               /* bytes, NUL included */
#define ALERT_SENSOR_MAX 96             /* an id, a glob or "hottest" */
#define ALERT_EXEC_MAX 256
#define ALERT_EXEC_ARGS_MAX 16         /* words of exec: the program and its arguments */
#define ALERT_GPIO_MAX 64               /* "gpiochip0:17", "/dev/gpiochip0:17" */
#define ALERT_WEBHOOK_MAX 512           /* bytes of a webhook URL, NUL included */
#define ALERT_HYSTERESIS_DEFAULT_C 2.0
#define ALERT_DWELL_UNSET UINT64_MAX    /* dwell not given: alert_rule_dwell_ms() */
#define ALERT_DWELL_NO_HYSTERESIS_MS 5000u     /* its default with hysteresis = 0 */
#define ALERT_SOURCE_UNDERVOLTAGE "undervoltage"        /* the supply is too low (Raspberry Pi) */
#define ALERT_SOURCE_THROTTLED "throttled"              /* the Pi firmware throttles or caps the clock */

/* A level: absolute degrees, or relative to the sensor's own lowest trip of a type. */
enum alert_threshold_kind {
        ALERT_THRESHOLD_NONE,           /* not configured */
        ALERT_THRESHOLD_CELSIUS,        /* celsius as given */
        ALERT_THRESHOLD_TRIP,           /* the trip's temperature + celsius (an offset, often negative) */
};

struct alert_threshold {
        enum alert_threshold_kind kind;
        double celsius;                 /* C: the level, or the offset from the trip */
        char trip_type[12];             /* "passive", "active", "hot", "critical" */
};

/* What a webhook posts: the receiver it is written for. */
enum alert_webhook_format {
        ALERT_WEBHOOK_JSON,             /* the transition as a JSON object (the default) */
        ALERT_WEBHOOK_NTFY,             /* ntfy: a text body, Title, Priority and Tags headers */
        ALERT_WEBHOOK_SLACK,            /* a Slack incoming webhook: {"text": ...} */
        _ALERT_WEBHOOK_FORMAT_MAX,
};

struct alert_rule_config {
        char name[ALERT_NAME_MAX];
        unsigned line;                  /* of its [alert NAME] header, 0 when not from a file */
        char sensor[ALERT_SENSOR_MAX];  /* "" until set: a rule needs one */
        struct alert_threshold warn, crit;
        double hysteresis_c;            /* C below a level before it clears */
        uint64_t for_ms;                /* ms a level must hold before it fires */
        uint64_t dwell_ms;              /* ms a lower reading must hold before the state goes down to it */
        bool lost;                      /* a sensor that stops answering is a state of its own */
        char exec[ALERT_EXEC_MAX];      /* hook: program and arguments split on blanks, no shell; "" for none */
        uint64_t exec_timeout_ms;       /* ms before the hook is killed */
        char gpio[ALERT_GPIO_MAX];      /* output line held while warn, crit or lost; "" for none */
        bool gpio_active_low;
        /* http(s) URL posted to at each transition, "" for none. It may hold
         * a token (in its userinfo, path or query): never logged whole. */
        char webhook[ALERT_WEBHOOK_MAX];
        enum alert_webhook_format webhook_format;
        uint64_t forecast_ms;           /* ms ahead a forecast crossing of warn (or crit) is told; 0: no forecast */
        bool gpio_forecast;             /* the line is also held in the forecast state */
};

struct fan_config {
        char name[ALERT_NAME_MAX];
        unsigned line;
        char sensor[ALERT_SENSOR_MAX];
        double on_c, off_c;             /* C: switched on at or above on_c, off at or below off_c */
        uint64_t min_on_ms;             /* ms it stays on once switched on */
        char gpio[ALERT_GPIO_MAX];
        bool gpio_active_low;
};

struct alert_config {
        struct alert_rule_config rules[ALERT_RULES_MAX];
        size_t n_rules;
        struct fan_config fans[ALERT_FANS_MAX];
        size_t n_fans;
};

/* "alert NAME" or "fan NAME" with a valid name: the section belongs here. */
bool alert_config_section(const char *section);
/* A section header was read (at line): the rule or fan starts with its
 * defaults. -EEXIST for a name used twice, -E2BIG past the limit; err says so. */
int alert_config_begin(struct alert_config *ac, const char *section, unsigned line, char *err, size_t errlen);
/* One key of such a section; err names it as "[alert NAME] key: ...". */
int alert_config_set(struct alert_config *ac, const char *section, const char *key, const char *value,
                     char *err, size_t errlen);
/* What single keys cannot tell: a rule without a sensor or a level, warn
 * above crit, a fan whose off is not below on. err names the section; line
 * gets its header's line (0 when not from a file). */
int alert_config_validate(const struct alert_config *ac, unsigned *ret_line, char *err, size_t errlen);

/* The rule's dwell: as given, else none with a hysteresis or for a source,
 * and ALERT_DWELL_NO_HYSTERESIS_MS for a level without hysteresis. */
uint64_t alert_rule_dwell_ms(const struct alert_rule_config *r);

/* A sensor name that is not a temperature but a state of the board. */
bool alert_config_is_source(const char *sensor);
/* "70", "-5.5", "trip:passive", "trip:critical-10", "trip:hot+2". -EINVAL. */
int alert_threshold_parse(const char *text, struct alert_threshold *ret);
/* Back to text, as parse takes it; buf of at least 32 bytes. */
const char *alert_threshold_format(const struct alert_threshold *t, char *buf, size_t size);
/* "CHIP:LINE" where CHIP is a name (gpiochip0), a label or a /dev path and LINE a number. */
bool alert_gpio_spec_valid(const char *text);
/* Why url cannot be posted to (a phrase that does not quote it, as it may
 * hold a token), NULL when it is an http:// or https:// URL with a host. */
const char *alert_webhook_url_problem(const char *url);
/* What may be logged of a URL alert_webhook_url_problem() accepts:
 * scheme://host[:port], without userinfo, path, query or fragment. */
const char *alert_webhook_origin(const char *url, char *buf, size_t size);
/* "json", "ntfy", "slack"; -EINVAL for another name. */
int alert_webhook_format_from_string(const char *s);
const char *alert_webhook_format_to_string(enum alert_webhook_format f);
