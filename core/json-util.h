/* json-util.h — json-c helpers: exact decimal numbers, nulls for missing values, error bodies. */
#pragma once

#include <json-c/json.h>
#include <stdint.h>

/* Millidegrees as an exact decimal Celsius number (43125 -> 43.125, 43000 -> 43.0). */
json_object *json_new_millis(int64_t milli);
/* A double with at most `decimals` decimals; NaN/inf become null. */
json_object *json_new_number(double v, int decimals);
/* A string, or null for NULL/"" . */
json_object *json_new_string_or_null(const char *s);
/* {"error": {"code": code, "message": message}} serialised, caller frees. */
char *json_error_body(const char *code, const char *message);
