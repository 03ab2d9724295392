/* test-alert-config.c — unit tests for [alert NAME] and [fan NAME] sections through the config file parser. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "config.h"

static char path[64];

/* Loads text as a config file (and validates it); err gets the message. */
static int load(const char *text, struct config *c, char *err, size_t errlen) {
        FILE *f;
        int r;

        snprintf(path, sizeof path, "/tmp/test-alert-config-%d.conf", (int) getpid());
        f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
        config_defaults(c);
        err[0] = '\0';
        r = config_load(c, path, err, errlen);
        if (r >= 0)
                r = config_validate(c, err, errlen);
        unlink(path);
        return r;
}

static void test_the_documented_example(void **state) {
        struct config c;
        char err[512];
        const struct alert_rule_config *r;

        assert_int_equal(load("[alert soc]\n"
                              "sensor = hottest\n"
                              "warn = 70\n"
                              "crit = trip:critical-10\n"
                              "hysteresis = 3\n"
                              "for = 10s\n"
                              "exec = /bin/true --urgent\n"
                              "gpio = gpiochip0:17\n"
                              "webhook = https://:tk_7oken@ntfy.example/heat\n"
                              "webhook_format = ntfy\n"
                              "\n"
                              "[alert nvme]\n"
                              "sensor = hwmon:nvme*/temp*\n"
                              "crit = trip:critical\n"
                              "lost = yes\n"
                              "gpio_active_low = yes\n"
                              "forecast = 5m\n"
                              "gpio_forecast = yes\n"
                              "\n"
                              "[fan case]\n"
                              "sensor = thermal_zone0\n"
                              "on = 60\n"
                              "off = 50.5\n"
                              "min_on = 2m\n"
                              "gpio = /dev/gpiochip1:3\n", &c, err, sizeof err), 0);
        assert_int_equal(c.alerts.n_rules, 2);
        r = &c.alerts.rules[0];
        assert_string_equal(r->name, "soc");
        assert_int_equal(r->line, 1);
        assert_string_equal(r->sensor, "hottest");
        assert_int_equal(r->warn.kind, ALERT_THRESHOLD_CELSIUS);
        assert_true(r->warn.celsius == 70.0);
        assert_int_equal(r->crit.kind, ALERT_THRESHOLD_TRIP);
        assert_string_equal(r->crit.trip_type, "critical");
        assert_true(r->crit.celsius == -10.0);
        assert_true(r->hysteresis_c == 3.0);
        assert_int_equal(r->for_ms, 10000);
        assert_string_equal(r->exec, "/bin/true --urgent");
        assert_string_equal(r->gpio, "gpiochip0:17");
        assert_false(r->lost);
        assert_string_equal(r->webhook, "https://:tk_7oken@ntfy.example/heat");
        assert_int_equal(r->webhook_format, ALERT_WEBHOOK_NTFY);
        r = &c.alerts.rules[1];
        assert_string_equal(r->webhook, "");
        assert_int_equal(r->webhook_format, ALERT_WEBHOOK_JSON);
        assert_int_equal(r->line, 12);
        assert_true(r->hysteresis_c == ALERT_HYSTERESIS_DEFAULT_C);
        assert_int_equal(r->warn.kind, ALERT_THRESHOLD_NONE);
        assert_true(r->crit.celsius == 0.0);
        assert_true(r->lost && r->gpio_active_low);
        assert_int_equal(r->forecast_ms, 300000);
        assert_true(r->gpio_forecast);
        assert_int_equal(c.alerts.rules[0].forecast_ms, 0);     /* no forecast unless asked */
        assert_false(c.alerts.rules[0].gpio_forecast);
        assert_int_equal(c.alerts.n_fans, 1);
        assert_string_equal(c.alerts.fans[0].name, "case");
        assert_true(c.alerts.fans[0].on_c == 60.0 && c.alerts.fans[0].off_c == 50.5);
        assert_int_equal(c.alerts.fans[0].min_on_ms, 120000);
        assert_string_equal(c.alerts.fans[0].gpio, "/dev/gpiochip1:3");
}

struct bad_case {
        const char *text;
        const char *message;            /* after "PATH:" */
};

static const struct bad_case bad_cases[] = {
        { "[alert a]\nsensor = x\nwarn = 60\n[alert a]\n", "4: [alert a] is defined twice" },
        { "[alert a]\nsensor = x\nwarn = hot\n", "3: [alert a] warn: \"hot\" is not a temperature (e.g. 70, trip:passive-5, trip:critical-10)" },
        { "[alert a]\nsensor = x\nwarn = trip:warm-5\n", "3: [alert a] warn: \"trip:warm-5\" is not a temperature (e.g. 70, trip:passive-5, trip:critical-10)" },
        { "[alert a]\nsensor = x\ncrit = trip:critical-x\n", "3: [alert a] crit: \"trip:critical-x\" is not a temperature (e.g. 70, trip:passive-5, trip:critical-10)" },
        { "[alert a]\nsensor = x\nwarn = 60\ncolour = red\n", "4: unknown key \"colour\" in [alert a] (known: sensor, warn, crit, hysteresis, for, dwell, lost, exec, exec_timeout, gpio, gpio_active_low, webhook, webhook_format, forecast, gpio_forecast)" },
        { "[alert a]\nsensor = x\nwarn = 60\nforecast = soon\n", "4: [alert a] forecast: \"soon\" is not a duration up to 1h (e.g. 10s, 2m)" },
        { "[alert a]\nsensor = x\nwarn = 60\nforecast = 2h\n", "4: [alert a] forecast: \"2h\" is not a duration up to 1h (e.g. 10s, 2m)" },
        { "[alert a]\nsensor = x\nwarn = 60\nforecast = 0s\n", "4: [alert a] forecast: \"0s\": looks ahead at least 1s (e.g. 5m)" },
        { "[alert a]\nsensor = x\nwarn = 60\ngpio_forecast = perhaps\n", "4: [alert a] gpio_forecast: \"perhaps\" is not a boolean (yes/no, true/false, on/off, 1/0)" },
        { "[alert a]\nsensor = x\nlost = yes\nforecast = 5m\n", "1: [alert a] forecast: needs warn or crit, the level it forecasts" },
        { "[alert psu]\nsensor = throttled\nforecast = 5m\n", "1: [alert psu] forecast: throttled is a state, not a temperature: nothing to forecast" },
        { "[alert a]\nsensor = x y\n", "2: [alert a] sensor: \"x y\" is not a sensor id, a glob (hwmon:*/temp*) or hottest" },
        { "[alert a]\nsensor = x\nhysteresis = 25\n", "3: [alert a] hysteresis: \"25\" is not a number of degrees from 0 to 20" },
        { "[alert a]\nsensor = x\nfor = 2h\n", "3: [alert a] for: \"2h\" is not a duration up to 1h (e.g. 10s, 2m)" },
        { "[alert a]\nsensor = x\nlost = maybe\n", "3: [alert a] lost: \"maybe\" is not a boolean (yes/no, true/false, on/off, 1/0)" },
        { "[alert a]\nsensor = x\nexec = notify-me\n", "3: [alert a] exec: \"notify-me\" must start with an absolute program path (at most 255 bytes)" },
        { "[alert a]\nsensor = x\nexec = /nonexistent/notify-me\n", "3: [alert a] exec: /nonexistent/notify-me: No such file or directory" },
        { "[alert a]\nsensor = x\nexec = /\n", "3: [alert a] exec: / is not an executable file" },
        { "[alert a]\nsensor = x\nexec = /etc/passwd --now\n", "3: [alert a] exec: /etc/passwd is not an executable file" },
        { "[alert a]\nsensor = x\nexec = /bin/true 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n",
          "3: [alert a] exec: 17 words; a hook takes a program and at most 15 arguments" },
        { "[alert a]\nsensor = x\nexec = /bin/true\nexec_timeout = 0s\n", "4: [alert a] exec_timeout: \"0s\": a hook needs some time (e.g. 10s)" },
        { "[alert a]\nsensor = x\ngpio = 17\n", "3: [alert a] gpio: \"17\" is not CHIP:LINE (e.g. gpiochip0:17)" },
        { "[alert a]\nsensor = x\ngpio = gpiochip0:99999\n", "3: [alert a] gpio: \"gpiochip0:99999\" is not CHIP:LINE (e.g. gpiochip0:17)" },
        /* a webhook's URL may hold a token: never quoted back */
        { "[alert a]\nsensor = x\nwebhook = ntfy.sh/t0ken\n", "3: [alert a] webhook: the URL must start with http:// or https://" },
        { "[alert a]\nsensor = x\nwebhook = ftp://h/t0ken\n", "3: [alert a] webhook: the URL must start with http:// or https://" },
        { "[alert a]\nsensor = x\nwebhook = https:///t0ken\n", "3: [alert a] webhook: the URL has no host" },
        { "[alert a]\nsensor = x\nwebhook = https://u:t0ken@:80/\n", "3: [alert a] webhook: the URL has no host" },
        { "[alert a]\nsensor = x\nwebhook = https://ho$t/t0ken\n", "3: [alert a] webhook: the URL has no valid host" },
        { "[alert a]\nsensor = x\nwebhook = http://[fe80::1/t0ken\n", "3: [alert a] webhook: the URL has no valid host" },
        { "[alert a]\nsensor = x\nwebhook = http://h:99999/t0ken\n", "3: [alert a] webhook: the URL has no valid port (1 to 65535)" },
        { "[alert a]\nsensor = x\nwebhook = http://h:/t0ken\n", "3: [alert a] webhook: the URL has no valid port (1 to 65535)" },
        { "[alert a]\nsensor = x\nwebhook = http://h/t0 ken\n",
          "3: [alert a] webhook: the URL has a blank, a control or a non-ASCII character (percent-encode it)" },
        { "[alert a]\nsensor = x\nwebhook_format = teams\n", "3: [alert a] webhook_format: \"teams\" is not json, ntfy or slack" },
        { "[alert a b]\n", "1: unknown section [alert a b]" },
        { "[alert]\n", "1: unknown section [alert]" },
        /* what only the whole section tells, at its header's line */
        { "[daemon]\ninterval = 1s\n\n[alert a]\nwarn = 60\n", "4: [alert a] sensor: missing (an id, a glob or hottest)" },
        { "[alert a]\nsensor = x\nhysteresis = 1\n", "1: [alert a]: needs warn, crit or lost = yes" },
        { "[alert a]\nsensor = x\nwarn = 80\ncrit = 80\n", "1: [alert a] warn: 80 is not below crit (80)" },
        { "[fan f]\nsensor = x\non = 60\noff = 50\n", "1: [fan f]: needs sensor, gpio, on and off" },
        { "[fan f]\nsensor = x\non = 60\noff = 60\ngpio = gpiochip0:1\n", "1: [fan f] off: 60 is not below on (60)" },
        { "[alert psu]\nsensor = undervoltage\nwarn = 1\n",
          "1: [alert psu]: undervoltage is a state, not a temperature: it warns by itself, without warn or crit" },
        { "[fan f]\nspeed = 3\n", "2: unknown key \"speed\" in [fan f] (known: sensor, on, off, min_on, gpio, gpio_active_low)" },
};

static void test_bad_sections(void **state) {
        struct config c;
        char err[512], want[600];

        for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
                int r = load(bad_cases[i].text, &c, err, sizeof err);
                snprintf(want, sizeof want, "%s:%s", path, bad_cases[i].message);
                if (r >= 0 || strcmp(err, want) != 0)
                        fail_msg("case %zu:\n  got %d \"%s\"\n  want \"%s\"", i, r, err, want);
        }
}

static void test_limits(void **state) {
        char text[4096] = "", err[512];
        struct config c;
        size_t len = 0;

        for (int i = 0; i <= ALERT_RULES_MAX; i++)
                len += (size_t) snprintf(text + len, sizeof text - len, "[alert r%d]\nsensor = x\nwarn = 60\n", i);
        assert_int_equal(load(text, &c, err, sizeof err), -E2BIG);
        assert_non_null(strstr(err, "at most 16 alert rules"));
}

static void test_threshold_text_round_trip(void **state) {
        static const char *const texts[] = { "70", "-5.5", "trip:passive", "trip:critical-10", "trip:hot+2" };
        struct alert_threshold t;
        char buf[48];

        for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
                assert_int_equal(alert_threshold_parse(texts[i], &t), 0);
                assert_string_equal(alert_threshold_format(&t, buf, sizeof buf), texts[i]);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_the_documented_example),
                cmocka_unit_test(test_bad_sections),
                cmocka_unit_test(test_limits),
                cmocka_unit_test(test_threshold_text_round_trip),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
