/* json-util.h — json-c helpers: exact decimal numbers, nulls for missing values, error bodies, duplicate keys. */
#pragma once

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

/* Millidegrees as an exact decimal Celsius number (43125 -> 43.125, 43000 -> 43.0). */
json_object *json_new_millis(int64_t milli);
/* A double with at most `decimals` decimals; NaN/inf become null. */
json_object *json_new_number(double v, int decimals);
/* The text json_new_number() gives v ("null" for NaN/inf) into buf
 * (48 bytes are always enough); returns its length. */
size_t json_number_text(double v, int decimals, char *buf, size_t size);
/* A string, or null for NULL/"" . */
/* A JSON string of text that may not be UTF-8 (sysfs names, labels, the
 * board's model): invalid bytes become U+FFFD, so every answer parses. */
json_object *json_new_text(const char *s);
json_object *json_new_string_or_null(const char *s);
/* {"error": {"code": code, "message": message}} serialised, caller frees. */
char *json_error_body(const char *code, const char *message);

/* json-c keeps the last of two equal keys in an object without a word, so
 * a body that says two things would be read as saying one. This finds the
 * first key given twice in one object of text, which json-c has already
 * parsed (so it is well formed, in json-c's non-strict dialect: single
 * quotes, comments, trailing commas). Keys are compared as json-c stores
 * them ("\u006cabel" is "label"). path gets where it is, as the run
 * definition errors name fields: "label", "phases[1].load.workers".
 * 1 when found, 0 when every key is unique, -ENOMEM, -E2BIG nested deeper
 * than json-c's default limit, -EINVAL for text json-c would not take. */
int json_find_duplicate_key(const char *text, size_t len, char *path, size_t pathlen);

/* JSON text written piece by piece into one growing buffer, for answers
 * too large to build as a json-c tree (one object per number). The first
 * failed allocation is kept in error and later writes do nothing. */
struct json_writer {
        char *buf;
        size_t len, cap;
        int error;                      /* 0, or -ENOMEM */
};
void json_writer_raw(struct json_writer *w, const char *text, size_t len);
/* A string literal, written as it is. */
#define json_writer_lit(w, literal) json_writer_raw((w), "" literal, sizeof(literal) - 1)
/* A string, escaped as json-c escapes it ("a/b" as "a\/b"). */
void json_writer_string(struct json_writer *w, const char *s);
void json_writer_number(struct json_writer *w, double v, int decimals);
void json_writer_int(struct json_writer *w, int64_t v);
