/* client.h — heatcurvectl's HTTP side: one libcurl handle, JSON in and out, one-line errors. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct client {
        char url[1024];                 /* base, e.g. http://127.0.0.1:8080 (no trailing slash) */
        char token[1024];               /* "" for none */
        bool json;                      /* --json: print the server's documents */
};

/* Sets the base URL, dropping trailing slashes. Returns 0, or -1 after
 * printing the reason (empty, too long). */
int client_set_url(struct client *c, const char *url);
/* The bearer token, from the argument or the first line of a file. Returns 0
 * or -1 after printing the reason (unreadable, too long, not one line). */
int client_set_token(struct client *c, const char *token);
int client_read_token_file(struct client *c, const char *path);

/* The body of an answer. */
struct reply {
        long status;                    /* HTTP status, 0 when no answer came */
        char *body;                     /* NUL-terminated */
        size_t len;                     /* bytes */
};

/* METHOD base+path with an optional JSON body. Returns 0 with a 2xx reply;
 * otherwise prints "heatcurvectl: <reason>" and returns -1. When out is not
 * NULL a 2xx body is streamed there as it arrives instead of kept in *ret
 * (ret may be NULL when the body is not wanted). */
int client_call(const char *base, const struct client *c, const char *method, const char *path,
                json_object *body, struct reply *ret, FILE *out);

/* One JSON document filling text (white space around it allowed), or NULL. */
json_object *client_parse_json(const char *text, size_t len);

/* The same, parsing the body as JSON (*ret owned by the caller). */
int client_get_json(const char *base, const struct client *c, const char *path, json_object **ret);

void reply_free(struct reply *r);

/* "heatcurvectl: <message>" on stderr. Returns -1. */
int fail(const char *format, ...) __attribute__((format(printf, 1, 2)));
