/* alerts.c — heatcurvectl alerts: the alert rules, the fans and the last transitions. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "table.h"

#define TRANSITIONS_SHOWN 10

/* Whether the GPIO line of a rule or fan is driven: "yes", "no" (held but
 * its last setting failed, or not held at all), "-" for no line. */
static const char *alerts_gpio_cell(json_object *o) {
        json_object *driven = json_get(o, "gpio_driven");

        if (!driven || !json_object_is_type(driven, json_type_boolean))
                return "-";
        return json_object_get_boolean(driven) ? "yes" : "no";
}

/* The reason a line is not driven, one line under the table. */
static void alerts_print_gpio_errors(json_object *list, const char *what) {
        for (size_t i = 0; i < json_len(list); i++) {
                json_object *o = json_object_array_get_idx(list, i);

                if (strcmp(fmt_string(o, "gpio_error"), "-") != 0)
                        printf("%s %s: gpio %s: %s\n", what, fmt_string(o, "name"), fmt_string(o, "gpio"),
                               fmt_string(o, "gpio_error"));
        }
}

static void alerts_print_rules(json_object *rules) {
        struct table t;
        char since[32], value[32], warn[32], crit[32];

        table_init(&t, 8);
        table_header(&t, "RULE\0STATE\0SINCE\0SENSOR\0°C\0WARN °C\0CRIT °C\0GPIO\0");
        for (size_t i = 0; i < json_len(rules); i++) {
                json_object *r = json_object_array_get_idx(rules, i);
                table_cell(&t, fmt_string(r, "name"));
                table_cell(&t, fmt_string(r, "state"));
                table_cell(&t, fmt_time_s(since, sizeof since, json_get(r, "since_ms")));
                table_cell(&t, strcmp(fmt_string(r, "value_sensor"), "-") ? fmt_string(r, "value_sensor") :
                               fmt_string(r, "sensor"));
                table_cell(&t, fmt_number(value, sizeof value, json_get(r, "value_c"), 1, 1));
                table_cell(&t, fmt_number(warn, sizeof warn, json_get(r, "warn_c"), 1, 1));
                table_cell(&t, fmt_number(crit, sizeof crit, json_get(r, "crit_c"), 1, 1));
                table_cell(&t, alerts_gpio_cell(r));
        }
        table_print(&t, stdout);
        table_free(&t);
        alerts_print_gpio_errors(rules, "rule");
}

static void alerts_print_fans(json_object *fans) {
        struct table t;
        char since[32], value[32];

        if (!json_len(fans))
                return;
        printf("\n");
        table_init(&t, 6);
        table_header(&t, "FAN\0STATE\0SINCE\0SENSOR\0°C\0GPIO\0");
        for (size_t i = 0; i < json_len(fans); i++) {
                json_object *f = json_object_array_get_idx(fans, i);
                table_cell(&t, fmt_string(f, "name"));
                table_cell(&t, json_object_get_boolean(json_get(f, "on")) ? "on" : "off");
                table_cell(&t, fmt_time_s(since, sizeof since, json_get(f, "since_ms")));
                table_cell(&t, fmt_string(f, "value_sensor"));
                table_cell(&t, fmt_number(value, sizeof value, json_get(f, "value_c"), 1, 1));
                table_cell(&t, alerts_gpio_cell(f));
        }
        table_print(&t, stdout);
        table_free(&t);
        alerts_print_gpio_errors(fans, "fan");
}

/* The newest last, as in a log. */
static void alerts_print_transitions(json_object *list) {
        size_t n = json_len(list), first = n > TRANSITIONS_SHOWN ? n - TRANSITIONS_SHOWN : 0;
        struct table t;
        char when[32], value[32];

        if (!n)
                return;
        printf("\n");
        table_init(&t, 5);
        table_header(&t, "WHEN\0RULE\0CHANGE\0SENSOR\0°C\0");
        for (size_t i = first; i < n; i++) {
                json_object *e = json_object_array_get_idx(list, i);
                table_cell(&t, fmt_time_s(when, sizeof when, json_get(e, "time_ms")));
                table_cell(&t, fmt_string(e, "rule"));
                table_cellf(&t, "%s -> %s", fmt_string(e, "previous"), fmt_string(e, "state"));
                table_cell(&t, fmt_string(e, "sensor"));
                table_cell(&t, fmt_number(value, sizeof value, json_get(e, "value_c"), 1, 1));
        }
        table_print(&t, stdout);
        table_free(&t);
}

int cmd_alerts(struct client *c, int argc, char **argv) {
        json_object *doc;
        int r, first = cli_parse(c, argc, argv, NULL, NULL, NULL, false, &r);

        if (first < 0)
                return r;
        if (first < argc)
                return usage("%s: unexpected argument \"%s\"", argv[0], argv[first]);
        if (client_get_json(c->url, c, "/api/v1/alerts", &doc) < 0)
                return 1;
        if (c->json)
                print_json(doc);
        else {
                alerts_print_rules(json_get(doc, "rules"));
                alerts_print_fans(json_get(doc, "fans"));
                alerts_print_transitions(json_get(doc, "transitions"));
        }
        json_object_put(doc);
        return 0;
}
