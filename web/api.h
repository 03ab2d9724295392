/* api.h — the JSON API: routes requests to handlers that read the state the daemon hands over. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "http.h"
#include "snapshot.h"

struct alerts;
struct config;
struct history;
struct runs;
struct simulator;

/* The daemon's own facts for /api/v1/status, asked for at each request. */
struct api_daemon_status {
        bool storage_ok;                /* the state directory takes writes and the last save went through */
        const char *storage_error;      /* why not, "" when ok */
        int64_t history_saved_ms;       /* Unix ms of the last history save, 0 for never */
        const char *history_moved_to;   /* where a history file that could not be read back was moved at
                                         * start, "" for none */
        const char *history_damage;     /* why it could not be read back, "" when it could */
};

/* What the API reads: owned by the daemon, valid while the API lives. The
 * config and token are replaced in place at a reload. */
struct api_context {
        sd_event *event;
        const struct config *cfg;
        const char *token;              /* bearer token for requests that change state, "" for none */
        struct runs *runs;
        const struct alerts *alerts;
        const struct history *hist;
        const struct simulator *sim;    /* NULL unless simulating */
        int64_t started_ms;             /* Unix ms the daemon started */
        void (*status)(void *userdata, struct api_daemon_status *ret);
        void *userdata;
};

struct api;

int api_new(const struct api_context *ctx, struct api **ret);
void api_free(struct api *a);

/* An http_dispatch_t; userdata is the struct api. */
void api_dispatch(void *userdata, struct http_request *r);
/* An http_body_max_t: POST /api/v1/runs/import takes a run file (up to
 * API_IMPORT_BODY_MAX) from a client that may change state. */
#define API_IMPORT_BODY_MAX (32 * 1024 * 1024)
size_t api_body_max(void *userdata, struct http_request *r);

/* Tick consumer: a new snapshot (the sensors document is rebuilt on its
 * first request after it), and new sensors after a (re)probe. */
void api_on_sample(void *userdata, const struct snapshot *snap);
void api_on_sensors(void *userdata, const struct sensors *s);
