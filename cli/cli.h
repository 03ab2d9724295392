/* cli.h — what heatcurvectl's command files share: options, usage errors, JSON access, the commands. */
#pragma once

#include <getopt.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "client.h"
#include "util.h"


#define EXIT_USAGE 2                    /* bad command line */
#define EXIT_RUN_NOT_FINISHED 3         /* a waited-for run ended aborted or interrupted */
#define EXIT_INTERRUPTED 130            /* Ctrl-C while waiting for a run, which goes on */

/* Called for each of a command's own options; returns 0 or an exit status. */
typedef int (*cli_option_fn)(int option, const char *arg, void *userdata);

/* Parses argv (argv[0] is the command, or the program for the global pass):
 * the command's own options (own may be NULL) and the global ones (--url,
 * --token, --token-file, --json, --timeout, --help, --version) anywhere. Returns the
 * index of the first operand, or -1 with *ret_status set (done or failed).
 * in_order stops at the first operand (the global pass, before the command). */
int cli_parse(struct client *c, int argc, char **argv, const struct option *own,
              cli_option_fn on_option, void *userdata, bool in_order, int *ret_status);

/* "heatcurvectl: <message> (see --help)" on stderr. Returns EXIT_USAGE. */
int usage(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* The document as the server sent it, pretty-printed, on stdout. */
void print_json(json_object *o);
/* Member key of o; NULL when o is not an object or has no such member. */
json_object *json_get(json_object *o, const char *key);
/* Absent or JSON null. */
bool json_is_null(json_object *o);
/* Elements of an array; 0 for anything else, NULL included. */
size_t json_len(json_object *a);
/* A run id: a positive decimal number. */
bool parse_id(const char *s, unsigned *ret);

/* Ctrl-C sets cli_interrupted; waits and sleeps return early. */
extern volatile sig_atomic_t cli_interrupted;
void cli_catch_sigint(void);

int cmd_watch(struct client *c, int argc, char **argv);
enum {
        WATCH_WAIT = 1 << 0,            /* run --wait: Ctrl-C fails; --json prints only the final document */
};

/* Follows run id until it ends (0 finished, EXIT_RUN_NOT_FINISHED otherwise),
 * for count updates (count > 0), or until Ctrl-C; 1 when the daemon fails. */
int watch_run(const struct client *c, unsigned id, long count, unsigned flags);

/* watch_run() for each run of run id's series in turn ("repeat"), asking
 * for the remount between them when the series waits for one; the ids of
 * the runs followed into ids[*n...] (ids may be NULL), at most max in all.
 * (repeat.c) */
int watch_series(const struct client *c, unsigned id, unsigned flags, unsigned *ids, size_t *n, size_t max);

int cmd_runs(struct client *c, int argc, char **argv);
int cmd_analyse(struct client *c, int argc, char **argv);
/* How one metric of the run document is shown, in show, compare and the
 * group table alike (one label, scale and rounding per metric). */
struct metric {
        const char *key;                /* in "metrics" */
        const char *label;              /* with its unit; NULL: not a row of its own */
        double scale;                   /* shown = value * scale; 0: a rate in work_unit/s; < 0: text */
        int decimals;
        bool no_diff;                   /* no "Δ vs 1st": a difference of it means nothing */
};
/* The metric of key, NULL for one this client does not know. (show.c) */
const struct metric *metric_find(const char *key);
/* The metrics table of `show` and `compare`: one column per run document
 * (each with a "metrics" object) in the array runs. */
void metrics_print(json_object *runs);
int cmd_show(struct client *c, int argc, char **argv);
int cmd_alerts(struct client *c, int argc, char **argv);
int cmd_compare(struct client *c, int argc, char **argv);
int cmd_plot(struct client *c, int argc, char **argv);      /* plot.c */
