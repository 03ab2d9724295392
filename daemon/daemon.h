/* daemon.h — the one state object of heatcurved and its lifecycle. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "config.h"
#include "history.h"
#include "history-save.h"
#include "record.h"
#include "sensors.h"
#include "simulate.h"
#include "tick.h"

struct alerts;
struct api;
struct http_server;
struct runs;

#define DAEMON_OVERRIDES_MAX 32

/* A setting given on the command line; re-applied on top of the file at every reload. */
struct config_override {
        const char *section, *key, *value;
};

/* What the command line asked for, besides config settings. */
struct options {
        const char *config_path;        /* NULL: the default path, if it exists */
        struct config_override overrides[DAEMON_OVERRIDES_MAX];
        size_t n_overrides;
        bool once, check_config;
};

struct daemon {
        sd_event *event;
        sd_event_source *save_source;   /* periodic history save */
        sd_event_source *clock_source;  /* the wall clock was set: the tick back on its grid */
        sd_event_source *watch_source;  /* the sensors' inotify watch (fixture trees only), NULL for none */
        struct config cfg;
        const struct options *opts;     /* owned by main() */

        struct sensors *sensors;
        struct simulator *sim;
        struct history *hist;
        struct history_saver saver;     /* history.bin in the state directory */
        struct recorder recorder;       /* feeds the history from the tick */
        struct runs *runs;
        struct alerts *alerts;
        struct api *api;
        struct http_server *http;
        int listen_port;                /* actual port (when configured as 0) */

        struct tick_consumer consumers[TICK_CONSUMERS_MAX];     /* called at every tick, in order */
        size_t n_consumers;
        bool *was_ok;                   /* per temperature: ok at the previous tick, for change-of-state logs */
        uint64_t ticks;
        uint64_t tick_next_ns;          /* CLOCK_MONOTONIC ns of the next tick: the loop's timeout */
        struct tick_status status;      /* what the last STATUS= was made of */
        char status_text[256];          /* and what it said, "STATUS=..." */
        int64_t tick_ns;                /* ns the last tick took, -1 before one */
        uint64_t reprobe_ns;            /* CLOCK_MONOTONIC ns of the last re-probe at a tick, 0 for none */

        int64_t started_ms;             /* Unix ms */
        int64_t history_saved_ms;       /* Unix ms of the last successful save, 0 for never */
        bool state_dir_ok;              /* the state directory exists and is writable */
        bool state_ok;                  /* ... and the last save went through */
        char state_error[1200];         /* why it is not, "" when ok */
        char history_aside[640];        /* where an unreadable history file went at start, "" for nowhere */
        char history_damage[160];       /* why it could not be read back, "" when it could */
        bool history_blocked;           /* ... and it could not be moved aside: never saved over */
        char token[256];                /* bearer token for mutating requests, "" for none */
        int stop_signal;                /* the signal that ended the loop, 0 while running */
};

/* Defaults, then the config file, then the command line; validated. Used at
 * start, by --check-config and by reload, so all three judge a file alike.
 * Built in place: on failure *ret is half-built, for the caller to drop. */
int daemon_config_build(const struct options *o, struct config *ret, char *err, size_t errlen);

/* Probe the sensors (or build the simulated board); with `serve`, also the
 * history, the HTTP server, timers and signals. Errors are logged here. */
int daemon_new(const struct options *o, const struct config *cfg, bool serve, struct daemon **ret);
int daemon_run(struct daemon *d);
/* Accepts NULL and half-built objects; saves the history first. */
void daemon_free(struct daemon *d);

/* One snapshot printed as JSON (heatcurved --once). */
int daemon_print_once(struct daemon *d);
