/* config.h — daemon settings: defaults, INI file (libinih), validation. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alert-config.h"

#define CONFIG_DEFAULT_PATH "/etc/heatcurve/heatcurved.conf"

/* Upper bound on history / interval, i.e. on the history ring's capacity. */
#define CONFIG_HISTORY_MAX_SAMPLES 4194304

/*
 * Error messages. Every function here writes one line into err (no trailing
 * newline) and returns a negative errno. A key is named the way the user wrote
 * it:
 *   from a file:         FILE:LINE: [daemon] interval: "5x" is not a duration (e.g. 250ms, 1s, 90m, 2h)
 *                        FILE:LINE: unknown key "intervall" in [daemon]
 *                        FILE:LINE: unknown section [foo]
 *   from the command line: --interval: "5x" is not a duration (e.g. 250ms, 1s, 90m, 2h)
 * Command-line names are "--" + key with '_' as '-' for [daemon] and [runs]
 * ("--state-dir", "--safety-limit"), and "--simulate-" + key for [simulate]
 * ("--simulate-tau"). config_validate() has no line: "FILE: [daemon] history
 * (1m) must not be shorter than [daemon] interval (5m)", or with --names.
 *
 * Reload (SIGHUP) and --check-config use the same steps, on a fresh struct:
 *     struct config new;
 *     r = config_read(&new, path, explicit, err, sizeof err);    defaults + file
 *     ... config_set_flag(&new, ...) for each command-line option ...
 *     r = config_validate(&new, err, sizeof err);
 *     if (r >= 0) m->config = new;     (else log err and keep the old one)
 * Nothing is applied until every step succeeded.
 */

struct simulate_config {
        char board[64];                 /* fixture name, e.g. "odroid-c2-3.14" */
        double ambient_c;               /* degrees C */
        uint64_t tau_ms;                /* first-order time constant, ms */
        double rise_c;                  /* degrees C above ambient at full load */
        bool quantize;                  /* whole degrees, like the vendor kernels */
        char load_source[8];            /* "host": this machine's CPU load heats it; "own": only the
                                         * loads heatcurved commands */
        double power_idle_w;            /* W its power meters read at no load; NaN ("auto"): as the
                                         * board's fixture reads */
        double power_load_w;            /* W added at full load */
};

struct config {
        char path[512];                 /* file this came from, "" for none */
        char listen_host[64];           /* numeric address, IPv6 without brackets; "" = all */
        uint16_t listen_port;
        uint64_t interval_ms;           /* sampling interval, 100 ms .. 1 h */
        uint64_t history_ms;            /* how much history the ring keeps */
        uint64_t history_save_ms;       /* how often the ring is saved */
        char state_dir[512];
        char sysfs_root[256];
        char procfs_root[256];
        bool simulate;
        struct simulate_config sim;
        char token_file[512];           /* "" for none: mutations from loopback only */
        unsigned event_clients;         /* GET /api/v1/events streams at once, 0 turns them off */
        double safety_limit_c;          /* 0 for the default (lowest hot trip - 5, else 85) */
        char stress_dir[512];           /* where io loads put their file; "" = state_dir */
        char ambient_sensor[96];        /* a temperature sensor id measuring the room, "" for none */
        bool allow_root;                /* runs with a load may start while heatcurved runs as root */
        unsigned runs_keep;             /* ended runs kept, the newest; 0 = all */
        uint64_t runs_keep_ms;          /* ms an ended run is kept after it ended; 0 = for ever */
        struct alert_config alerts;     /* [alert NAME] and [fan NAME] sections */
};

void config_defaults(struct config *c);

/* Parse FILE on top of what c holds. On error returns -EINVAL (or -errno for
 * I/O) and writes "FILE:LINE: message naming the key" into err. c is left
 * unchanged on error; on success c->path is FILE. A missing FILE is -ENOENT
 * ("FILE: No such file or directory"). Lines longer than 197 characters are
 * refused. Comments: lines starting with '#' or ';', and " ; ..." after a
 * value (not " # ...": that would be part of the value). */
int config_load(struct config *c, const char *path, char *err, size_t errlen);

/* Every value's range again (for fields set directly), then cross-field
 * checks (history >= interval, at most CONFIG_HISTORY_MAX_SAMPLES samples).
 * Keys are named as in files when c->path is set, as flags otherwise. */
int config_validate(const struct config *c, char *err, size_t errlen);

/* "ADDR:PORT", "[v6]:PORT" or ":PORT". Numeric addresses only (no names, no
 * IPv6 zone); host gets the address without brackets, "" for ":PORT" (all
 * addresses). -EINVAL on bad syntax, -ERANGE for a port outside 1..65535,
 * -ENOBUFS when hostlen is too small. */
int config_parse_listen(const char *text, char *host, size_t hostlen, uint16_t *port);

/* Set one key as if read from [section]; shared by the file parser and the
 * command line so both validate the same way. c is unchanged on error. The
 * message names the key "[section] key" when c->path is set, "--key" when it
 * is "" (see above); no "FILE:LINE: " prefix. Values: durations as in
 * duration.h; booleans yes/no, true/false, on/off, 1/0; safety_limit takes
 * "auto" (= 0). */
int config_set(struct config *c, const char *section, const char *key, const char *value,
               char *err, size_t errlen);

/* Same as config_set(), but always names the key as a flag ("--interval"):
 * for command-line options applied after a file was loaded. */
int config_set_flag(struct config *c, const char *section, const char *key, const char *value,
                    char *err, size_t errlen);

/* config_defaults() into *ret, then config_load(path) unless path is NULL.
 * A missing file is ignored when !must_exist. *ret is only written on
 * success. No config_validate(): flags may still follow. */
int config_read(struct config *ret, const char *path, bool must_exist, char *err, size_t errlen);

/* history_ms / interval_ms: the history ring's capacity, samples. */
size_t config_history_samples(const struct config *c);
