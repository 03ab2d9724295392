/* test-webhook.c — unit tests for the webhook action: curl's request in each format, quoting, and a URL's loggable part. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "alert-action.h"

static const struct board_info board = { .model = "Raspberry Pi 4 Model B", .hostname = "pi4" };

static struct alert_rule_config rule(const char *url, enum alert_webhook_format f) {
        struct alert_rule_config cfg = { .name = "soc", .sensor = "thermal_zone0", .webhook_format = f };

        snprintf(cfg.webhook, sizeof cfg.webhook, "%s", url);
        return cfg;
}

/* ok -> warn on thermal_zone0 at 62.5 C, level 60, 2023-11-14T22:13:20.250Z. */
static struct alert_transition warn(void) {
        return (struct alert_transition) {
                .rule = "soc", .sensor = "thermal_zone0", .state = ALERT_WARN, .previous = ALERT_OK,
                .value_c = 62.5, .threshold_c = 60.0, .time_ms = 1700000000250LL,
        };
}

static void assert_line(const char *request, const char *line) {
        if (!strstr(request, line))
                fail_msg("no line\n  %s\nin\n%s", line, request);
}

static void test_json(void **state) {
        struct alert_rule_config cfg = rule("https://user:tok@example.org:8443/hook?auth=tok", ALERT_WEBHOOK_JSON);
        struct alert_transition t = warn();
        char buf[4096];

        assert_true(alert_webhook_request(&cfg, &t, &board, buf, sizeof buf) > 0);
        assert_line(buf, "url = \"https://user:tok@example.org:8443/hook?auth=tok\"\n");
        assert_line(buf, "header = \"Content-Type: application/json\"\n");
        assert_line(buf, "data-binary = \"{\\\"rule\\\":\\\"soc\\\",\\\"sensor\\\":\\\"thermal_zone0\\\","
                         "\\\"state\\\":\\\"warn\\\",\\\"previous\\\":\\\"ok\\\",\\\"value_c\\\":62.5,"
                         "\\\"threshold_c\\\":60.0,\\\"time_ms\\\":1700000000250,"
                         "\\\"time\\\":\\\"2023-11-14T22:13:20.250Z\\\",\\\"hostname\\\":\\\"pi4\\\","
                         "\\\"board\\\":\\\"Raspberry Pi 4 Model B\\\",\\\"text\\\":\\\"Alert soc on pi4: warn, "
                         "thermal_zone0 at 62.5 \u00b0C (level 60.0 \u00b0C), was ok\\\"}\"\n");
        assert_line(buf, "max-time = \"10\"\n");
        assert_line(buf, "proto = \"=http,https\"\n");
        assert_line(buf, "write-out = \"%{http_code}\"\n");
        assert_line(buf, "fail\n");
}

static void test_lost_in_json(void **state) {
        struct alert_rule_config cfg = rule("http://h/", ALERT_WEBHOOK_JSON);
        struct alert_transition t = { .rule = "soc", .state = ALERT_LOST, .previous = ALERT_WARN,
                                      .value_c = NAN, .threshold_c = NAN, .time_ms = 0 };
        struct board_info none = {};
        char buf[4096];

        assert_true(alert_webhook_request(&cfg, &t, &none, buf, sizeof buf) > 0);
        assert_line(buf, "\\\"sensor\\\":null,");
        assert_line(buf, "\\\"value_c\\\":null,\\\"threshold_c\\\":null,");
        assert_line(buf, "\\\"hostname\\\":null,\\\"board\\\":null,");
        assert_line(buf, "\\\"text\\\":\\\"Alert soc: lost, no sensor answers, was warn\\\"}");
}

static void test_ntfy(void **state) {
        struct alert_rule_config cfg = rule("https://ntfy.sh/heat-7f3a", ALERT_WEBHOOK_NTFY);
        struct alert_transition t = warn();
        struct board_info odd = board;
        char buf[4096];

        t.state = ALERT_CRIT;
        t.previous = ALERT_WARN;
        t.threshold_c = 75;
        snprintf(odd.hostname, sizeof odd.hostname, "p\xc3\xaf\"4");     /* header text stays ASCII */
        assert_true(alert_webhook_request(&cfg, &t, &odd, buf, sizeof buf) > 0);
        assert_line(buf, "header = \"Title: Alert soc on p??\\\"4: crit\"\n");
        assert_line(buf, "header = \"Priority: 5\"\n");
        assert_line(buf, "header = \"Tags: rotating_light,heatcurve\"\n");
        assert_line(buf, "header = \"Content-Type: text/plain; charset=utf-8\"\n");
        assert_line(buf, "data-binary = \"thermal_zone0 at 62.5 \u00b0C (level 75.0 \u00b0C), was warn\"\n");
        t.state = ALERT_OK;
        assert_true(alert_webhook_request(&cfg, &t, &board, buf, sizeof buf) > 0);
        assert_line(buf, "header = \"Priority: 3\"\n");
        assert_line(buf, "header = \"Tags: white_check_mark,heatcurve\"\n");
}

static void test_slack(void **state) {
        struct alert_rule_config cfg = rule("https://hooks.slack.com/services/T0/B0/XXXX", ALERT_WEBHOOK_SLACK);
        struct alert_transition t = warn();
        char buf[4096];

        assert_true(alert_webhook_request(&cfg, &t, &board, buf, sizeof buf) > 0);
        assert_line(buf, "header = \"Content-Type: application/json\"\n");
        assert_line(buf, "data-binary = \"{\\\"text\\\":\\\"Alert soc on pi4: warn, thermal_zone0 at 62.5 \u00b0C "
                         "(level 60.0 \u00b0C), was ok\\\"}\"\n");
}

/* A quote or a backslash in the URL cannot end curl's string early; a
 * request that does not fit is refused, not cut. */
static void test_quoting_and_room(void **state) {
        struct alert_rule_config cfg = rule("http://h/a\"b\\c", ALERT_WEBHOOK_JSON);
        struct alert_transition t = warn();
        char buf[4096];

        assert_true(alert_webhook_request(&cfg, &t, &board, buf, sizeof buf) > 0);
        assert_line(buf, "url = \"http://h/a\\\"b\\\\c\"\n");
        assert_int_equal(alert_webhook_request(&cfg, &t, &board, buf, 200), -E2BIG);
}

static void test_origin(void **state) {
        static const char *const cases[][2] = {
                { "https://user:tok@ntfy.example:8443/topic?auth=tok#x", "https://ntfy.example:8443" },
                { "HTTP://[::1]:8080/a", "http://[::1]:8080" },
                { "http://h?x=@y", "http://h" },
                { "https://hooks.slack.com/services/T0/B0/XXXX", "https://hooks.slack.com" },
        };
        char buf[ALERT_WEBHOOK_MAX];

        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                assert_null(alert_webhook_url_problem(cases[i][0]));
                assert_string_equal(alert_webhook_origin(cases[i][0], buf, sizeof buf), cases[i][1]);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_json),
                cmocka_unit_test(test_lost_in_json),
                cmocka_unit_test(test_ntfy),
                cmocka_unit_test(test_slack),
                cmocka_unit_test(test_quoting_and_room),
                cmocka_unit_test(test_origin),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
