/* client.h — heatcurvectl's HTTP side: one libcurl handle, JSON in and out, one-line errors. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <stdint.h>

#define CLIENT_TIMEOUT_MS (30 * 1000)             /* a whole request, by default */
#define CLIENT_EXPORT_TIMEOUT_MS (10 * 60 * 1000) /* a whole export (samples streamed to stdout) */

struct client {
        char url[1024];                 /* base, e.g. http://127.0.0.1:8080 (no trailing slash) */
        char token[1024];               /* "" for none; sent to url only */
        bool json;                      /* --json: print the server's documents */
        uint64_t timeout_ms;            /* --timeout for every request; 0 for the defaults above */
};

/* Sets the base URL, dropping trailing slashes. Returns 0, or -1 after
 * printing the reason (empty, too long). */
int client_set_url(struct client *c, const char *url);
/* The bearer token, from the argument or a file (whole, trailing newlines
 * dropped, as the daemon reads its own). Returns 0 or -1 after printing
 * the reason (unreadable, too long, not one line). */
int client_set_token(struct client *c, const char *token);
int client_read_token_file(struct client *c, const char *path);

/* Whether two base URLs name the same server and path: scheme and host
 * compared without case, default ports filled in, trailing slashes
 * ignored. URLs with user info or that are not http(s) match nothing. */
bool client_same_base(const char *a, const char *b);

/* The token to send to base, "" for none: --token/--token-file only when
 * base is the --url; otherwise the line for base in the tokens file
 * ($HEATCURVE_TOKENS_FILE, else $XDG_CONFIG_HOME/heatcurve/tokens, else
 * ~/.config/heatcurve/tokens; lines "URL TOKEN", # comments). Returns 0,
 * or -1 after printing why (the file is readable by others, a bad line). */
int client_token_for(const struct client *c, const char *base, char *buf, size_t size);

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
/* GET base+path streamed to out, as client_call(); then an error (-1,
 * printed) when the answer was empty or did not start with starts (after
 * white space): the bytes are out already, the exit status says so. */
int client_export(const char *base, const struct client *c, const char *path, FILE *out, const char *starts);

/* GET base+path, its 2xx body handed to line() a line at a time as it
 * comes, '\n' removed, the first with header true; as samples_read() reads
 * a file, a last line without its '\n' is left out and a line holding a NUL
 * byte ends the text. Returns 0, or prints why not and returns -1 (when
 * line() returned < 0 too: the transfer stops there). */
int client_get_lines(const char *base, const struct client *c, const char *path,
                     int (*line)(void *userdata, char *line, bool header), void *userdata);

/* One JSON document filling text (white space around it allowed), or NULL. */
json_object *client_parse_json(const char *text, size_t len);

/* The same, parsing the body as JSON (*ret owned by the caller). */
int client_get_json(const char *base, const struct client *c, const char *path, json_object **ret);

void reply_free(struct reply *r);

/* "heatcurvectl: <message>" on stderr, control characters escaped and cut
 * after CLIENT_MESSAGE_MAX characters (messages quote servers). Returns -1. */
#define CLIENT_MESSAGE_MAX 400
int cli_fail(const char *format, ...) __attribute__((format(printf, 1, 2)));
