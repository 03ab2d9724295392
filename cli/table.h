/* table.h — aligned text tables for people: columns as wide as their widest cell. */
#pragma once

#include <json-c/json.h>
#include <stddef.h>
#include <stdio.h>

struct table {
        size_t cols, n;                 /* cells per row, cells so far */
        char **cells;
};

void table_init(struct table *t, size_t cols);
/* Appends one cell; rows fill left to right. NULL prints as "-". Control
 * characters are escaped and the text cut after 200 characters. */
void table_cell(struct table *t, const char *text);
/* One cell per NUL-terminated name in names, which ends with an empty name. */
void table_header(struct table *t, const char *names);
void table_cellf(struct table *t, const char *format, ...) __attribute__((format(printf, 2, 3)));
/* Two spaces between columns, no trailing spaces; numbers are not special.
 * Widths count UTF-8 characters: right for "°C" and "±", not for wide CJK. */
void table_print(const struct table *t, FILE *f);
void table_free(struct table *t);

/* A JSON number scaled by `scale` with `decimals`, or "-" for null/absent. */
const char *fmt_number(char *buf, size_t size, json_object *o, double scale, int decimals);
/* A plateau with its 95 % interval, "61.5 °C (60.9–62.3)"; "not known
 * yet" when the interval is wider than rise_c, the rise so far (NaN: not
 * checked); the plateau alone when there is no interval (older runs);
 * "-" when there is no plateau. */
const char *fmt_plateau(char *buf, size_t size, json_object *plateau, json_object *low, json_object *high,
                        double rise_c);
/* The same with unit after the plateau instead of " °C": "" for the
 * short form, "61.5 (60.9–62.3)", where the unit is said elsewhere. */
const char *fmt_plateau_unit(char *buf, size_t size, json_object *plateau, json_object *low, json_object *high,
                             double rise_c, const char *unit);
/* Member `key` of o as text, "-" when null or absent; control characters
 * escaped and cut after 200 characters. Valid until 16 more calls. */
const char *fmt_string(json_object *o, const char *key);
/* Unix ms as local "YYYY-MM-DD HH:MM", "-" for null. */
const char *fmt_time(char *buf, size_t size, json_object *ms);
/* The same to the second, "YYYY-MM-DD HH:MM:SS": when things happen within a minute. */
const char *fmt_time_s(char *buf, size_t size, json_object *ms);
/* Unix ms as local "HH:MM:SS", "-" for null. */
const char *fmt_clock(char *buf, size_t size, json_object *ms);
/* A rate with an SI prefix: 61673900 -> "61.7M", 950 -> "950"; "-" for null. */
const char *fmt_rate(char *buf, size_t size, json_object *o);
/* Seconds as "1h02m", "5m03s", "42s". */
const char *fmt_seconds(char *buf, size_t size, double s);
