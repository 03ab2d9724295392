/* alert-config.c — [alert NAME] and [fan NAME] sections: what a rule says, parsed and checked. */
#include "alert-config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "duration.h"
#include "util.h"

#define EXEC_TIMEOUT_DEFAULT_MS 30000u
#define FAN_MIN_ON_DEFAULT_MS 30000u

static const char *const trip_types[] = { "active", "passive", "hot", "critical" };
static const char *const webhook_formats[_ALERT_WEBHOOK_FORMAT_MAX] = {
        [ALERT_WEBHOOK_JSON] = "json", [ALERT_WEBHOOK_NTFY] = "ntfy", [ALERT_WEBHOOK_SLACK] = "slack",
};

/* "alert soc" -> kind "alert", name "soc". */
static bool split_section(const char *section, const char **kind, const char **name) {
        const char *sp = strchr(section, ' ');

        if (!sp || sp[1] == '\0' || strlen(sp + 1) >= ALERT_NAME_MAX)
                return false;
        if (strspn(sp + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != strlen(sp + 1))
                return false;
        if (strncmp(section, "alert ", 6) == 0)
                *kind = "alert";
        else if (strncmp(section, "fan ", 4) == 0)
                *kind = "fan";
        else
                return false;
        *name = sp + 1;
        return true;
}

bool alert_config_is_source(const char *sensor) {
        return strcmp(sensor, ALERT_SOURCE_UNDERVOLTAGE) == 0 || strcmp(sensor, ALERT_SOURCE_THROTTLED) == 0;
}

bool alert_config_section(const char *section) {
        const char *kind, *name;

        return split_section(section, &kind, &name);
}

static struct alert_rule_config *rule_find(struct alert_config *ac, const char *name) {
        for (size_t i = 0; i < ac->n_rules; i++)
                if (strcmp(ac->rules[i].name, name) == 0)
                        return &ac->rules[i];
        return NULL;
}

static struct fan_config *fan_find(struct alert_config *ac, const char *name) {
        for (size_t i = 0; i < ac->n_fans; i++)
                if (strcmp(ac->fans[i].name, name) == 0)
                        return &ac->fans[i];
        return NULL;
}

uint64_t alert_rule_dwell_ms(const struct alert_rule_config *r) {
        if (r->dwell_ms != ALERT_DWELL_UNSET)
                return r->dwell_ms;
        /* a source is a yes or no of the board's: no level to hover at */
        return r->hysteresis_c > 0 || alert_config_is_source(r->sensor) ? 0 : ALERT_DWELL_NO_HYSTERESIS_MS;
}

int alert_config_begin(struct alert_config *ac, const char *section, unsigned line, char *err, size_t errlen) {
        const char *kind, *name;

        if (!split_section(section, &kind, &name))
                return util_errorf(err, errlen, -EINVAL, "unknown section [%s]", section);
        if (kind[0] == 'a') {
                if (rule_find(ac, name))
                        return util_errorf(err, errlen, -EEXIST, "[%s] is defined twice", section);
                if (ac->n_rules == ALERT_RULES_MAX)
                        return util_errorf(err, errlen, -E2BIG, "[%s]: at most %d alert rules", section, ALERT_RULES_MAX);
                struct alert_rule_config *r = &ac->rules[ac->n_rules++];
                *r = (struct alert_rule_config) {
                        .line = line, .hysteresis_c = ALERT_HYSTERESIS_DEFAULT_C,
                        .dwell_ms = ALERT_DWELL_UNSET, .exec_timeout_ms = EXEC_TIMEOUT_DEFAULT_MS,
                };
                snprintf(r->name, sizeof r->name, "%s", name);
                return 0;
        }
        if (fan_find(ac, name))
                return util_errorf(err, errlen, -EEXIST, "[%s] is defined twice", section);
        if (ac->n_fans == ALERT_FANS_MAX)
                return util_errorf(err, errlen, -E2BIG, "[%s]: at most %d fans", section, ALERT_FANS_MAX);
        struct fan_config *f = &ac->fans[ac->n_fans++];
        *f = (struct fan_config) { .line = line, .on_c = NAN, .off_c = NAN, .min_on_ms = FAN_MIN_ON_DEFAULT_MS };
        snprintf(f->name, sizeof f->name, "%s", name);
        return 0;
}

static int parse_number(const char *text, double *ret) {
        char *end;
        double x;

        errno = 0;
        x = strtod(text, &end);
        if (end == text || *end || errno || !isfinite(x))
                return -EINVAL;
        *ret = x;
        return 0;
}

int alert_threshold_parse(const char *text, struct alert_threshold *ret) {
        struct alert_threshold t = { ALERT_THRESHOLD_CELSIUS, 0, "" };
        size_t n;

        if (strncmp(text, "trip:", 5) != 0) {
                if (parse_number(text, &t.celsius) < 0 || t.celsius < -50 || t.celsius > 200)
                        return -EINVAL;
                *ret = t;
                return 0;
        }
        text += 5;
        n = strcspn(text, "+-");
        t.kind = ALERT_THRESHOLD_TRIP;
        for (size_t i = 0; i < ELEMENTSOF(trip_types); i++)
                if (strlen(trip_types[i]) == n && strncmp(text, trip_types[i], n) == 0)
                        snprintf(t.trip_type, sizeof t.trip_type, "%s", trip_types[i]);
        if (!t.trip_type[0])
                return -EINVAL;
        if (text[n] && (parse_number(text + n, &t.celsius) < 0 || fabs(t.celsius) > 100))
                return -EINVAL;
        *ret = t;
        return 0;
}

const char *alert_threshold_format(const struct alert_threshold *t, char *buf, size_t size) {
        if (t->kind == ALERT_THRESHOLD_NONE)
                snprintf(buf, size, "none");
        else if (t->kind == ALERT_THRESHOLD_CELSIUS)
                snprintf(buf, size, "%g", t->celsius);
        else if (t->celsius == 0)
                snprintf(buf, size, "trip:%s", t->trip_type);
        else
                snprintf(buf, size, "trip:%s%+g", t->trip_type, t->celsius);
        return buf;
}

bool alert_gpio_spec_valid(const char *text) {
        const char *colon = strrchr(text, ':');
        size_t digits;

        if (!colon || colon == text)
                return false;
        for (const char *c = text; c < colon; c++)
                if ((unsigned char) *c <= ' ' || *c == 0x7f)
                        return false;           /* no blanks or control characters in a chip name */
        digits = strspn(colon + 1, "0123456789");
        return digits > 0 && digits <= 5 && colon[1 + digits] == '\0' && strtoul(colon + 1, NULL, 10) <= 65535;
}

/* Length of "http://" or "https://" at the start of url (any case), 0 for another scheme. */
static size_t webhook_scheme_len(const char *url) {
        if (strncasecmp(url, "http://", 7) == 0)
                return 7;
        if (strncasecmp(url, "https://", 8) == 0)
                return 8;
        return 0;
}

/* The host and port of the authority starting at p: [hostport, end) without userinfo. */
static void webhook_hostport(const char *p, const char **ret_start, const char **ret_end) {
        const char *end = p + strcspn(p, "/?#");

        for (const char *c = p; c < end; c++)
                if (*c == '@')
                        p = c + 1;
        *ret_start = p;
        *ret_end = end;
}

static bool webhook_port_valid(const char *p, const char *end) {
        unsigned long port = 0;

        if (p == end || end - p > 5)
                return false;
        for (const char *c = p; c < end; c++) {
                if (*c < '0' || *c > '9')
                        return false;
                port = port * 10 + (unsigned long) (*c - '0');
        }
        return port >= 1 && port <= 65535;
}

const char *alert_webhook_url_problem(const char *url) {
        const char *p, *end, *host_end;
        size_t scheme = webhook_scheme_len(url);

        if (strlen(url) >= ALERT_WEBHOOK_MAX)
                return "the URL is longer than 511 bytes";
        for (const char *c = url; *c; c++)
                if ((unsigned char) *c <= ' ' || (unsigned char) *c >= 0x7f)
                        return "the URL has a blank, a control or a non-ASCII character (percent-encode it)";
        if (!scheme)
                return "the URL must start with http:// or https://";
        webhook_hostport(url + scheme, &p, &end);
        if (*p == '[') {
                host_end = memchr(p, ']', (size_t) (end - p));
                if (!host_end || host_end == p + 1 || strspn(p + 1, "0123456789abcdefABCDEF:.") != (size_t) (host_end - p - 1))
                        return "the URL has no valid host";
                host_end++;
        } else {
                host_end = memchr(p, ':', (size_t) (end - p));
                host_end = host_end ? host_end : end;
                if (host_end == p)
                        return "the URL has no host";
                for (const char *c = p; c < host_end; c++)
                        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_", *c))
                                return "the URL has no valid host";
        }
        if (host_end < end && (*host_end != ':' || !webhook_port_valid(host_end + 1, end)))
                return "the URL has no valid port (1 to 65535)";
        return NULL;
}

const char *alert_webhook_origin(const char *url, char *buf, size_t size) {
        size_t scheme = webhook_scheme_len(url);
        const char *p, *end;

        if (!scheme) {
                snprintf(buf, size, "?");
                return buf;
        }
        webhook_hostport(url + scheme, &p, &end);
        snprintf(buf, size, "%s%.*s", scheme == 8 ? "https://" : "http://", (int) (end - p), p);
        return buf;
}

int alert_webhook_format_from_string(const char *s) {
        for (size_t i = 0; i < ELEMENTSOF(webhook_formats); i++)
                if (strcmp(s, webhook_formats[i]) == 0)
                        return (int) i;
        return -EINVAL;
}

const char *alert_webhook_format_to_string(enum alert_webhook_format f) {
        return f < _ALERT_WEBHOOK_FORMAT_MAX ? webhook_formats[f] : "?";
}

static int set_bool(const char *value, bool *ret) {
        static const char *const yes[] = { "yes", "true", "on", "1" }, *const no[] = { "no", "false", "off", "0" };

        for (size_t i = 0; i < ELEMENTSOF(yes); i++) {
                if (strcasecmp(value, yes[i]) == 0) {
                        *ret = true;
                        return 0;
                }
                if (strcasecmp(value, no[i]) == 0) {
                        *ret = false;
                        return 0;
                }
        }
        return -EINVAL;
}

/* The keys both sections share. 1 when handled, 0 when not one of them, -errno. */
static int set_common(const char *name, const char *key, const char *value, char *sensor, char *gpio,
                      bool *active_low, char *err, size_t errlen) {
        if (strcmp(key, "sensor") == 0) {
                if (!*value || strlen(value) >= ALERT_SENSOR_MAX || strpbrk(value, " \t"))
                        return util_errorf(err, errlen, -EINVAL, "%s sensor: \"%s\" is not a sensor id, a glob "
                                        "(hwmon:*/temp*) or hottest", name, value);
                snprintf(sensor, ALERT_SENSOR_MAX, "%s", value);
                return 1;
        }
        if (strcmp(key, "gpio") == 0) {
                if (strlen(value) >= ALERT_GPIO_MAX || !alert_gpio_spec_valid(value))
                        return util_errorf(err, errlen, -EINVAL, "%s gpio: \"%s\" is not CHIP:LINE (e.g. gpiochip0:17)",
                                        name, value);
                snprintf(gpio, ALERT_GPIO_MAX, "%s", value);
                return 1;
        }
        if (strcmp(key, "gpio_active_low") == 0) {
                if (set_bool(value, active_low) < 0)
                        return util_errorf(err, errlen, -EINVAL, "%s gpio_active_low: \"%s\" is not a boolean "
                                        "(yes/no, true/false, on/off, 1/0)", name, value);
                return 1;
        }
        return 0;
}

static int set_duration(const char *name, const char *key, const char *value, uint64_t max_ms, uint64_t *ret,
                        char *err, size_t errlen) {
        uint64_t ms;

        if (duration_parse(value, &ms) < 0 || ms > max_ms)
                return util_errorf(err, errlen, -EINVAL, "%s %s: \"%s\" is not a duration up to 1h (e.g. 10s, 2m)",
                                name, key, value);
        *ret = ms;
        return 0;
}

/* exec: an absolute path to an executable regular file, then at most
 * ALERT_EXEC_ARGS_MAX - 1 arguments, split on blanks as the hook is run. */
static int set_exec(struct alert_rule_config *r, const char *name, const char *value, char *err, size_t errlen) {
        char buf[ALERT_EXEC_MAX], *save = NULL, *prog;
        size_t words = 0;
        struct stat st;

        if (value[0] != '/' || strlen(value) >= ALERT_EXEC_MAX)
                return util_errorf(err, errlen, -EINVAL, "%s exec: \"%s\" must start with an absolute "
                                "program path (at most %d bytes)", name, value, ALERT_EXEC_MAX - 1);
        snprintf(buf, sizeof buf, "%s", value);
        prog = strtok_r(buf, " \t", &save);
        for (char *w = prog; w; w = strtok_r(NULL, " \t", &save))
                words++;
        if (words > ALERT_EXEC_ARGS_MAX)
                return util_errorf(err, errlen, -EINVAL, "%s exec: %zu words; a hook takes a program and at most "
                                "%d arguments", name, words, ALERT_EXEC_ARGS_MAX - 1);
        if (stat(prog, &st) < 0)
                return util_errorf(err, errlen, -errno, "%s exec: %s: %s", name, prog, strerror(errno));
        if (!S_ISREG(st.st_mode) || access(prog, X_OK) < 0)
                return util_errorf(err, errlen, -EINVAL, "%s exec: %s is not an executable file", name, prog);
        snprintf(r->exec, sizeof r->exec, "%s", value);
        return 0;
}

/* webhook: the URL is checked, never quoted back (it may hold a token). */
static int set_webhook(struct alert_rule_config *r, const char *name, const char *key, const char *value,
                       char *err, size_t errlen) {
        const char *problem;
        int f;

        if (strcmp(key, "webhook_format") == 0) {
                if ((f = alert_webhook_format_from_string(value)) < 0)
                        return util_errorf(err, errlen, -EINVAL, "%s webhook_format: \"%s\" is not json, ntfy or slack",
                                        name, value);
                r->webhook_format = (enum alert_webhook_format) f;
                return 0;
        }
        if ((problem = alert_webhook_url_problem(value)))
                return util_errorf(err, errlen, -EINVAL, "%s webhook: %s", name, problem);
        snprintf(r->webhook, sizeof r->webhook, "%s", value);
        return 0;
}

static int set_rule(struct alert_rule_config *r, const char *name, const char *key, const char *value,
                    char *err, size_t errlen) {
        int e = set_common(name, key, value, r->sensor, r->gpio, &r->gpio_active_low, err, errlen);
        double x;

        if (e != 0)
                return e < 0 ? e : 0;
        if (strcmp(key, "warn") == 0 || strcmp(key, "crit") == 0) {
                if (alert_threshold_parse(value, key[0] == 'w' ? &r->warn : &r->crit) < 0)
                        return util_errorf(err, errlen, -EINVAL, "%s %s: \"%s\" is not a temperature (e.g. 70, "
                                        "trip:passive-5, trip:critical-10)", name, key, value);
                return 0;
        }
        if (strcmp(key, "hysteresis") == 0) {
                if (parse_number(value, &x) < 0 || x < 0 || x > 20)
                        return util_errorf(err, errlen, -EINVAL, "%s hysteresis: \"%s\" is not a number of degrees "
                                        "from 0 to 20", name, value);
                r->hysteresis_c = x;
                return 0;
        }
        if (strcmp(key, "for") == 0)
                return set_duration(name, key, value, 3600000, &r->for_ms, err, errlen);
        if (strcmp(key, "dwell") == 0)
                return set_duration(name, key, value, 3600000, &r->dwell_ms, err, errlen);
        if (strcmp(key, "exec_timeout") == 0) {
                e = set_duration(name, key, value, 3600000, &r->exec_timeout_ms, err, errlen);
                if (e == 0 && r->exec_timeout_ms == 0)
                        return util_errorf(err, errlen, -EINVAL, "%s exec_timeout: \"%s\": a hook needs some time "
                                        "(e.g. 10s)", name, value);
                return e;
        }
        if (strcmp(key, "lost") == 0) {
                if (set_bool(value, &r->lost) < 0)
                        return util_errorf(err, errlen, -EINVAL, "%s lost: \"%s\" is not a boolean (yes/no, "
                                        "true/false, on/off, 1/0)", name, value);
                return 0;
        }
        if (strcmp(key, "exec") == 0)
                return set_exec(r, name, value, err, errlen);
        if (strcmp(key, "webhook") == 0 || strcmp(key, "webhook_format") == 0)
                return set_webhook(r, name, key, value, err, errlen);
        if (strcmp(key, "forecast") == 0) {
                e = set_duration(name, key, value, 3600000, &r->forecast_ms, err, errlen);
                if (e == 0 && r->forecast_ms < 1000)
                        return util_errorf(err, errlen, -EINVAL, "%s forecast: \"%s\": looks ahead at least 1s "
                                        "(e.g. 5m)", name, value);
                return e;
        }
        if (strcmp(key, "gpio_forecast") == 0) {
                if (set_bool(value, &r->gpio_forecast) < 0)
                        return util_errorf(err, errlen, -EINVAL, "%s gpio_forecast: \"%s\" is not a boolean (yes/no, "
                                        "true/false, on/off, 1/0)", name, value);
                return 0;
        }
        return util_errorf(err, errlen, -EINVAL, "unknown key \"%s\" in %s (known: sensor, warn, crit, hysteresis, "
                        "for, dwell, lost, exec, exec_timeout, gpio, gpio_active_low, webhook, webhook_format, forecast, "
                        "gpio_forecast)", key, name);
}

static int set_fan(struct fan_config *f, const char *name, const char *key, const char *value,
                   char *err, size_t errlen) {
        int e = set_common(name, key, value, f->sensor, f->gpio, &f->gpio_active_low, err, errlen);
        double x;

        if (e != 0)
                return e < 0 ? e : 0;
        if (strcmp(key, "on") == 0 || strcmp(key, "off") == 0) {
                if (parse_number(value, &x) < 0 || x < -50 || x > 200)
                        return util_errorf(err, errlen, -EINVAL, "%s %s: \"%s\" is not a temperature in C", name,
                                        key, value);
                *(key[1] == 'n' ? &f->on_c : &f->off_c) = x;
                return 0;
        }
        if (strcmp(key, "min_on") == 0)
                return set_duration(name, key, value, 3600000, &f->min_on_ms, err, errlen);
        return util_errorf(err, errlen, -EINVAL, "unknown key \"%s\" in %s (known: sensor, on, off, min_on, gpio, "
                        "gpio_active_low)", key, name);
}

int alert_config_set(struct alert_config *ac, const char *section, const char *key, const char *value,
                     char *err, size_t errlen) {
        const char *kind, *name;
        char shown[ALERT_NAME_MAX + 10];

        if (!split_section(section, &kind, &name))
                return util_errorf(err, errlen, -EINVAL, "unknown section [%s]", section);
        snprintf(shown, sizeof shown, "[%s]", section);
        if (kind[0] == 'a') {
                struct alert_rule_config *r = rule_find(ac, name);
                /* set from outside a file (no header seen): the rule starts here */
                if (!r && alert_config_begin(ac, section, 0, err, errlen) < 0)
                        return -EINVAL;
                return set_rule(r ? r : rule_find(ac, name), shown, key, value, err, errlen);
        }
        struct fan_config *f = fan_find(ac, name);
        if (!f && alert_config_begin(ac, section, 0, err, errlen) < 0)
                return -EINVAL;
        return set_fan(f ? f : fan_find(ac, name), shown, key, value, err, errlen);
}

static int validate_rule(const struct alert_rule_config *r, char *err, size_t errlen) {
        if (!r->sensor[0])
                return util_errorf(err, errlen, -EINVAL, "[alert %s] sensor: missing (an id, a glob or hottest)", r->name);
        if (alert_config_is_source(r->sensor)) {
                if (r->warn.kind != ALERT_THRESHOLD_NONE || r->crit.kind != ALERT_THRESHOLD_NONE)
                        return util_errorf(err, errlen, -EINVAL, "[alert %s]: %s is a state, not a temperature: "
                                           "it warns by itself, without warn or crit", r->name, r->sensor);
                if (r->forecast_ms)
                        return util_errorf(err, errlen, -EINVAL, "[alert %s] forecast: %s is a state, not a "
                                           "temperature: nothing to forecast", r->name, r->sensor);
                return 0;
        }
        if (r->warn.kind == ALERT_THRESHOLD_NONE && r->crit.kind == ALERT_THRESHOLD_NONE && !r->lost)
                return util_errorf(err, errlen, -EINVAL, "[alert %s]: needs warn, crit or lost = yes", r->name);
        if (r->forecast_ms && r->warn.kind == ALERT_THRESHOLD_NONE && r->crit.kind == ALERT_THRESHOLD_NONE)
                return util_errorf(err, errlen, -EINVAL, "[alert %s] forecast: needs warn or crit, the level it "
                                   "forecasts", r->name);
        if (r->warn.kind == ALERT_THRESHOLD_CELSIUS && r->crit.kind == ALERT_THRESHOLD_CELSIUS &&
            r->warn.celsius >= r->crit.celsius)
                return util_errorf(err, errlen, -EINVAL, "[alert %s] warn: %g is not below crit (%g)", r->name,
                                r->warn.celsius, r->crit.celsius);
        return 0;
}

static int validate_fan(const struct fan_config *f, char *err, size_t errlen) {
        if (!f->sensor[0] || !f->gpio[0] || isnan(f->on_c) || isnan(f->off_c))
                return util_errorf(err, errlen, -EINVAL, "[fan %s]: needs sensor, gpio, on and off", f->name);
        if (f->off_c >= f->on_c)
                return util_errorf(err, errlen, -EINVAL, "[fan %s] off: %g is not below on (%g)", f->name,
                                f->off_c, f->on_c);
        return 0;
}

int alert_config_validate(const struct alert_config *ac, unsigned *ret_line, char *err, size_t errlen) {
        int r;

        for (size_t i = 0; i < ac->n_rules; i++)
                if ((r = validate_rule(&ac->rules[i], err, errlen)) < 0) {
                        *ret_line = ac->rules[i].line;
                        return r;
                }
        for (size_t i = 0; i < ac->n_fans; i++)
                if ((r = validate_fan(&ac->fans[i], err, errlen)) < 0) {
                        *ret_line = ac->fans[i].line;
                        return r;
                }
        return 0;
}
