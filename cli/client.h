/* client.h — heatcurvectl's HTTP side: one libcurl handle, JSON in and out, one-line errors. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct client {
        const char *url;                /* base, e.g. http://127.0.0.1:8080 (no trailing slash) */
        char token[256];                /* "" for none */
        bool json;                      /* --json: print the server's documents */
};

/* The body of an answer. */
struct reply {
        long status;                    /* HTTP status, 0 when no answer came */
        char *body;                     /* NUL-terminated */
        size_t len;                     /* bytes */
};

/* METHOD base+path with an optional JSON body. Returns 0 with a 2xx reply;
 * otherwise prints "heatcurvectl: <reason>" and returns -1. When out is not
 * NULL the body is streamed there instead of kept in reply. */
int client_call(const char *base, const struct client *c, const char *method, const char *path,
                json_object *body, struct reply *ret, FILE *out);

/* The same, parsing the body as JSON (*ret owned by the caller). */
int client_get_json(const char *base, const struct client *c, const char *path, json_object **ret);

void reply_free(struct reply *r);

/* "heatcurvectl: <message>" on stderr. Returns -1. */
int fail(const char *format, ...) __attribute__((format(printf, 1, 2)));
