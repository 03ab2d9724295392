/* heatcurvectl.c — command-line client of heatcurved: options, dispatch, status, sensors, run, export, stop, delete. */
#include <curl/curl.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build-config.h"
#include "cli.h"
#include "duration.h"
#include "recording.h"
#include "runspec.h"
#include "table.h"

volatile sig_atomic_t cli_interrupted;

static void help(void) {
        printf("Usage: heatcurvectl [OPTIONS] COMMAND [ARGS]\n\n"
               "Commands:\n"
               "  status                      board, uptime, hottest sensor, current run\n"
               "  sensors                     every temperature, frequency and the load\n"
               "  run [--label L] [--ambient C] [--notes N] [--safety-limit C] [--sensor ID]\n"
               "      [--idle SPEC] [--stress SPEC] [--cooldown SPEC] ... [--wait]\n"
               "      [--repeat N [--remount]] [--on URL[,URL...]]\n"
               "                              start a run; phases in the order given;\n"
               "                              --repeat: N runs, one after the other, each\n"
               "                              once the board is back at its idle baseline;\n"
               "                              --remount: waits for Enter between them;\n"
               "                              --on: on those daemons instead of --url (their\n"
               "                              tokens from the tokens file); with --wait, then\n"
               "                              compared\n"
               "  watch [ID] [--count N]      a live line: phase, elapsed, temperatures, freq,\n"
               "                              load, work rate, predicted plateau\n"
               "  runs                        the runs with their key metrics\n"
               "  show ID                     one run: phases and every metric\n"
               "  compare [LABEL=]SOURCE ... [--time COL] [--temp COL] [--phase COL |\n"
               "      --load-start S [--load-end S]] [--ambient C] [--power COL]\n"
               "                              metrics side by side, also across boards, then\n"
               "                              grouped by label (or LABEL=) with the verdict:\n"
               "                              which runs cooler, by how much, how sure; SOURCE\n"
               "                              is a run id, a run's URL (http://host:port/3 or\n"
               "                              .../api/v1/runs/3), a run file or a recording\n"
               "                              (a CSV as analyse reads it)\n"
               "  plot ID|URL/ID ... [-o FILE] [--rise]\n"
               "                              the run as SVG (several: compared, aligned on\n"
               "                              the load start; --rise: over ambient)\n"
               "  export ID [--format csv|json|run]\n"
               "                              the samples, to stdout; run: the whole run as one\n"
               "                              file for import\n"
               "  import FILE                 a run file from another daemon, as a new run\n"
               "  analyse FILE [--time COL] [--temp COL] [--phase COL | --load-start S\n"
               "      [--load-end S]] [--ambient C] [--power COL] [--horizon DURATION]\n"
               "      [--tolerance C]\n"
               "                              the metrics of a recording, offline: samples.csv,\n"
               "                              an export, or any CSV with a header (times in s\n"
               "                              or ISO 8601; S in s from the first sample; COL\n"
               "                              in W gives °C/W)\n"
               "  alerts                      the alert rules, the fans and the last transitions\n"
               "  stop ID                     stop a running run (or a series' wait)\n"
               "  continue ID                 a series waiting for a remount after run ID goes on\n"
               "  delete ID                   delete a run that is not running\n\n"
               "Options (before or after the command):\n"
               "  --url URL                   the daemon; default $HEATCURVE_URL, else\n"
               "                              http://127.0.0.1:8080\n"
               "  --token TOKEN               sent as \"Authorization: Bearer TOKEN\"\n"
               "  --token-file FILE           the token is the content of FILE\n"
               "                              (sent to --url only; other servers get the\n"
               "                              token their URL has in ~/.config/heatcurve/tokens,\n"
               "                              lines \"URL TOKEN\", or none)\n"
               "  --json                      print the server's JSON documents\n"
               "  --timeout DURATION          longest time for one request (default 30s;\n"
               "                              10m for export), e.g. 90s, 5m\n"
               "  --help, --version\n\n"
               "SPEC is comma-separated key=value; for --stress the first word may be the load\n"
               "type (cpu, memory, io, command). Keys: duration=10m or until=stable|plateau|\n"
               "baseline with min=5m, max=90m, window=; for --stress also workers=4,\n"
               "method=sqrt|fma|matrix, duty=50, size=64M, cmd='stress-ng --cpu 4'.\n"
               "cmd is split on spaces: an argument cannot hold a space or a comma (use a\n"
               "script for those). Example:\n"
               "  heatcurvectl run --label \"alu case\" --ambient 21.5 --idle until=stable,max=30m \\\n"
               "      --stress cpu,until=plateau,max=90m --cooldown until=baseline,max=30m\n\n"
               "Exit status: 0 ok, 1 failure, 2 bad command line, 3 the run waited for or\n"
               "watched ended aborted or interrupted, 130 Ctrl-C during run --wait.\n");
}

int usage(const char *format, ...) {
        va_list ap;

        fputs("heatcurvectl: ", stderr);
        va_start(ap, format);
        vfprintf(stderr, format, ap);
        va_end(ap);
        fputs(" (see --help)\n", stderr);
        return EXIT_USAGE;
}

void print_json(json_object *o) {
        puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                               JSON_C_TO_STRING_NOSLASHESCAPE));
}

json_object *json_get(json_object *o, const char *key) {
        json_object *v = NULL;

        if (!o || !json_object_is_type(o, json_type_object))
                return NULL;
        json_object_object_get_ex(o, key, &v);
        return v;
}

bool json_is_null(json_object *o) {
        return !o || json_object_is_type(o, json_type_null);
}

size_t json_len(json_object *a) {
        return a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

bool parse_id(const char *s, unsigned *ret) {
        char *end;
        unsigned long v;

        if (*s < '0' || *s > '9')
                return false;
        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno || *end || v == 0 || v > 4000000000UL)
                return false;
        *ret = (unsigned) v;
        return true;
}

static void on_sigint(int sig) {
        cli_interrupted = 1;
}

void cli_catch_sigint(void) {
        struct sigaction sa = { .sa_handler = on_sigint };

        /* no SA_RESTART: a sleep between polls ends at once */
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
}

enum {
        OPT_URL = 0x200, OPT_TOKEN, OPT_TOKEN_FILE, OPT_JSON, OPT_VERSION, OPT_TIMEOUT,
};

static const struct option global_options[] = {
        { "url", required_argument, NULL, OPT_URL },
        { "token", required_argument, NULL, OPT_TOKEN },
        { "token-file", required_argument, NULL, OPT_TOKEN_FILE },
        { "json", no_argument, NULL, OPT_JSON },
        { "timeout", required_argument, NULL, OPT_TIMEOUT },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, OPT_VERSION },
};

/* own followed by the global options and the terminating entry. */
static struct option *options_merge(const struct option *own) {
        size_t n = 0;
        struct option *all;

        while (own && own[n].name)
                n++;
        all = calloc(n + ELEMENTSOF(global_options) + 1, sizeof *all);
        if (!all)
                abort();        /* a command-line client: out of memory is not recoverable */
        if (n)
                memcpy(all, own, n * sizeof *all);
        memcpy(all + n, global_options, sizeof global_options);
        return all;
}

/* getopt's '?' and ':', in our words. */
static int option_bad(int o, char **argv, bool command) {
        const char *arg = argv[optind - 1], *where = command ? argv[0] : NULL;

        if (o == ':')
                return usage("%s%soption %s needs a value", where ? where : "", where ? ": " : "", arg);
        if (optopt)
                return usage("%s%sunknown option -%c", where ? where : "", where ? ": " : "", optopt);
        return usage("%s%sunknown option %s", where ? where : "", where ? ": " : "", arg);
}

/* Returns 1 when o is not a global option, 0 when handled, -1 when done
 * (--help, --version, errors) with *ret_status set. */
static int option_global(struct client *c, int o, const char *arg, int *ret_status) {
        int r = 0;

        switch (o) {
        case OPT_URL: r = client_set_url(c, arg); break;
        case OPT_TOKEN: r = client_set_token(c, arg); break;
        case OPT_TOKEN_FILE: r = client_read_token_file(c, arg); break;
        case OPT_JSON: c->json = true; break;
        case OPT_TIMEOUT:
                if (duration_parse(arg, &c->timeout_ms) < 0 || c->timeout_ms == 0 || c->timeout_ms > LONG_MAX) {
                        *ret_status = usage("--timeout needs a duration like 30s or 5m, not \"%s\"", arg);
                        return -1;
                }
                break;
        case 'h':
                help();
                return *ret_status = 0, -1;
        case OPT_VERSION:
                printf("heatcurvectl %s\n", HEATCURVE_VERSION);
                return *ret_status = 0, -1;
        default:
                return 1;
        }
        return r < 0 ? (*ret_status = 1, -1) : 0;
}

int cli_parse(struct client *c, int argc, char **argv, const struct option *own,
              cli_option_fn on_option, void *userdata, bool in_order, int *ret_status) {
        struct option *all = options_merge(own);
        int o, r = 0;

        optind = 0;             /* 0, not 1: glibc then forgets any previous parse */
        opterr = 0;             /* we say what is wrong, in one line of our own */
        while (r == 0 && (o = getopt_long(argc, argv, in_order ? "+:h" : ":h", all, NULL)) >= 0) {
                if (o == '?' || o == ':')
                        r = (*ret_status = option_bad(o, argv, !in_order), -1);
                else if ((r = option_global(c, o, optarg, ret_status)) > 0)
                        r = on_option ? ((*ret_status = on_option(o, optarg, userdata)) ? -1 : 0) : 0;
        }
        free(all);
        return r < 0 ? -1 : optind;
}

/* Commands without options of their own: only the global ones, then exactly
 * `operands` operands. Returns the index of the first, or -1 with *ret_status. */
static int parse_plain(struct client *c, int argc, char **argv, int operands, int *ret_status) {
        int first = cli_parse(c, argc, argv, NULL, NULL, NULL, false, ret_status);

        if (first < 0)
                return -1;
        if (argc - first > operands) {
                *ret_status = usage("%s: unexpected argument \"%s\"", argv[0], argv[first + operands]);
                return -1;
        }
        if (argc - first < operands) {
                *ret_status = usage("%s needs a run id", argv[0]);
                return -1;
        }
        return first;
}

/* "storage  ok", or why not; and a history file found damaged at start. */
static void status_print_storage(json_object *storage) {
        json_object *rec = json_get(storage, "history_recovered");

        if (!storage)
                return;         /* an older daemon */
        if (json_object_get_boolean(json_get(storage, "ok")))
                printf("storage  ok\n");
        else
                printf("storage  NOT OK: %s\n", fmt_string(storage, "error"));
        if (!json_is_null(rec))
                printf("history  damaged at start (%s), moved to %s\n", fmt_string(rec, "reason"),
                       fmt_string(rec, "moved_to"));
}

static void status_print(json_object *st) {
        json_object *b = json_get(st, "board"), *sn = json_get(st, "sensors"), *hot = json_get(sn, "hottest");
        json_object *run = json_get(st, "current_run");
        char buf[64], when[64];

        printf("board    %s (%s, %s CPUs)\n", fmt_string(b, "model"), fmt_string(b, "hostname"), fmt_string(b, "cpus"));
        printf("kernel   %s\n", fmt_string(b, "kernel"));
        printf("daemon   heatcurved %s, up %s, sampling every %s\n", fmt_string(st, "version"),
               fmt_seconds(buf, sizeof buf, json_object_get_double(json_get(st, "uptime_s"))),
               fmt_string(st, "interval"));
        printf("hottest  %s %s °C\n", fmt_string(hot, "id"), fmt_number(buf, sizeof buf, json_get(hot, "celsius"), 1, 1));
        printf("sensors  %s temperatures, %s failing\n", fmt_string(sn, "temperatures"), fmt_string(sn, "failing"));
        if (json_is_null(run))
                printf("run      none\n");
        else
                printf("run      %s \"%s\", phase %s, started %s\n", fmt_string(run, "id"), fmt_string(run, "label"),
                       fmt_string(run, "phase"), fmt_time(when, sizeof when, json_get(run, "started_ms")));
        status_print_storage(json_get(st, "storage"));
}

static int cmd_status(struct client *c, int argc, char **argv) {
        json_object *st;
        int r;

        if (parse_plain(c, argc, argv, 0, &r) < 0)
                return r;
        if (client_get_json(c->url, c, "/api/v1/status", &st) < 0)
                return 1;
        if (c->json)
                print_json(st);
        else
                status_print(st);
        json_object_put(st);
        return 0;
}

/* The label if any, else the zone type, else the chip. */
static const char *sensor_name(json_object *s) {
        static const char *const keys[] = { "label", "type", "chip" };

        for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                if (strcmp(fmt_string(s, keys[i]), "-") != 0)
                        return fmt_string(s, keys[i]);
        return "-";
}

static void sensors_print_temperatures(json_object *temps) {
        struct table t;
        char buf[32];

        table_init(&t, 4);
        table_header(&t, "SENSOR\0TYPE/LABEL\0°C\0STATE\0");
        for (size_t i = 0; i < json_len(temps); i++) {
                json_object *s = json_object_array_get_idx(temps, i);
                table_cell(&t, fmt_string(s, "id"));
                table_cell(&t, sensor_name(s));
                table_cell(&t, fmt_number(buf, sizeof buf, json_get(s, "celsius"), 1, 1));
                if (json_object_get_boolean(json_get(s, "ok")))
                        table_cell(&t, "ok");
                else
                        table_cellf(&t, "error: %s", fmt_string(s, "error"));
        }
        table_print(&t, stdout);
        table_free(&t);
}

static void sensors_print_policies(json_object *freq, json_object *load) {
        struct table t;
        char a[32], b[32], c[32];

        table_init(&t, 5);
        table_header(&t, "POLICY\0CPUS\0MHz\0RANGE MHz\0GOVERNOR\0");
        for (size_t i = 0; i < json_len(freq); i++) {
                json_object *p = json_object_array_get_idx(freq, i), *cpus = json_get(p, "cpus");
                table_cell(&t, fmt_string(p, "id"));
                table_cell(&t, cpus ? json_object_to_json_string_ext(cpus, JSON_C_TO_STRING_PLAIN) : "-");
                table_cell(&t, fmt_number(a, sizeof a, json_get(p, "cur_hz"), 1e-6, 0));
                table_cellf(&t, "%s-%s", fmt_number(b, sizeof b, json_get(p, "min_hz"), 1e-6, 0),
                            fmt_number(c, sizeof c, json_get(p, "max_hz"), 1e-6, 0));
                table_cell(&t, fmt_string(p, "governor"));
        }
        table_print(&t, stdout);
        table_free(&t);
        printf("\nload  %s %%\n", fmt_number(a, sizeof a, json_get(load, "total"), 100, 1));
}

static int cmd_sensors(struct client *c, int argc, char **argv) {
        json_object *doc;
        int r;

        if (parse_plain(c, argc, argv, 0, &r) < 0)
                return r;
        if (client_get_json(c->url, c, "/api/v1/sensors", &doc) < 0)
                return 1;
        if (c->json)
                print_json(doc);
        else {
                sensors_print_temperatures(json_get(doc, "temperatures"));
                putchar('\n');
                sensors_print_policies(json_get(doc, "cpufreq"), json_get(doc, "load"));
        }
        json_object_put(doc);
        return 0;
}

enum {
        RUN_LABEL = 0x100, RUN_AMBIENT, RUN_NOTES, RUN_SAFETY, RUN_SENSOR, RUN_IDLE, RUN_STRESS,
        RUN_COOLDOWN, RUN_WAIT, RUN_REPEAT, RUN_REMOUNT, RUN_ON,
};

#define RUN_ON_MAX 16                   /* daemons one run --on starts it on */
#define RUN_REPEAT_LIMIT 20             /* --repeat at most, as the daemon takes it (RUN_REPEAT_MAX) */

struct run_args {
        json_object *body;              /* the POST body being built */
        json_object *phases;            /* its "phases" */
        bool wait;                      /* --wait */
        bool series;                    /* --repeat N with N > 1 */
        const char *on;                 /* --on URL,URL...: the daemons; NULL for --url */
};

static int run_number(json_object *body, const char *key, const char *opt, const char *value) {
        char *end;
        double v;

        errno = 0;
        v = strtod(value, &end);
        if (end == value || *end || errno || !isfinite(v))
                return usage("run: %s needs a number in °C, not \"%s\"", opt, value);
        json_object_object_add(body, key, json_object_new_double(v));
        return 0;
}

static int run_repeat(struct run_args *a, const char *value) {
        unsigned n;

        if (!parse_id(value, &n) || n > RUN_REPEAT_LIMIT)
                return usage("run: --repeat needs a count of runs, not \"%s\"", value);
        json_object_object_add(a->body, "repeat", json_object_new_int64(n));
        a->series = n > 1;
        return 0;
}

static int run_on_option(int o, const char *arg, void *userdata) {
        static const char *const kinds[] = { "idle", "stress", "cooldown" };
        struct run_args *a = userdata;
        json_object *phase;

        switch (o) {
        case RUN_LABEL: json_object_object_add(a->body, "label", json_object_new_string(arg)); return 0;
        case RUN_NOTES: json_object_object_add(a->body, "notes", json_object_new_string(arg)); return 0;
        case RUN_SENSOR: json_object_object_add(a->body, "sensor", json_object_new_string(arg)); return 0;
        case RUN_AMBIENT: return run_number(a->body, "ambient_c", "--ambient", arg);
        case RUN_SAFETY: return run_number(a->body, "safety_limit_c", "--safety-limit", arg);
        case RUN_WAIT: a->wait = true; return 0;
        case RUN_REPEAT: return run_repeat(a, arg);
        case RUN_ON: a->on = arg; return 0;
        case RUN_REMOUNT:
                json_object_object_add(a->body, "remount", json_object_new_boolean(true));
                a->wait = true;         /* someone has to press Enter */
                return 0;
        case RUN_IDLE: case RUN_STRESS: case RUN_COOLDOWN:
                phase = runspec_phase(kinds[o - RUN_IDLE], arg, json_len(a->phases));
                if (!phase)
                        return EXIT_USAGE;
                json_object_array_add(a->phases, phase);
                return 0;
        }
        return EXIT_USAGE;
}

/* Fills a from the command line; returns 0 or an exit status. */
static int run_parse(struct client *c, int argc, char **argv, struct run_args *a) {
        static const struct option opts[] = {
                { "label", required_argument, NULL, RUN_LABEL }, { "ambient", required_argument, NULL, RUN_AMBIENT },
                { "notes", required_argument, NULL, RUN_NOTES }, { "safety-limit", required_argument, NULL, RUN_SAFETY },
                { "sensor", required_argument, NULL, RUN_SENSOR }, { "idle", required_argument, NULL, RUN_IDLE },
                { "stress", required_argument, NULL, RUN_STRESS }, { "cooldown", required_argument, NULL, RUN_COOLDOWN },
                { "wait", no_argument, NULL, RUN_WAIT }, { "repeat", required_argument, NULL, RUN_REPEAT },
                { "remount", no_argument, NULL, RUN_REMOUNT }, { "on", required_argument, NULL, RUN_ON }, {}
        };
        int first, r;

        first = cli_parse(c, argc, argv, opts, run_on_option, a, false, &r);
        if (first < 0)
                return r;
        if (first < argc)
                return usage("run: unexpected argument \"%s\"", argv[first]);
        if (json_len(a->phases) == 0)
                return usage("run needs at least one phase: --idle, --stress or --cooldown");
        return 0;
}

/* POSTs the run; returns its id (> 0) or -1. With --json the answer is
 * printed unless the run is waited for: then its final document is. */
static long long run_start(const struct client *c, json_object *body, bool wait) {
        struct reply reply;
        json_object *run, *id;
        long long ret = -1;

        if (client_call(c->url, c, "POST", "/api/v1/runs", body, &reply, NULL) < 0)
                return -1;
        run = client_parse_json(reply.body, reply.len);
        reply_free(&reply);
        id = json_get(run, "id");
        if (!run)
                cli_fail("POST %s/api/v1/runs: the answer is not JSON", c->url);
        else if (!id || json_object_get_int64(id) <= 0)
                cli_fail("POST %s/api/v1/runs: the answer has no run id", c->url);
        else {
                ret = (long long) json_object_get_int64(id);
                if (c->json && !wait)
                        print_json(run);
                else if (!c->json)
                        printf("run %lld started\n", ret);
                fflush(stdout);
        }
        json_object_put(run);
        return ret;
}

/* One daemon of --on: its URL, and the token the tokens file has for it. */
static int run_board(const struct client *c, const char *url, struct client *ret) {
        *ret = *c;
        if (client_set_url(ret, url) < 0)
                return -1;
        return client_token_for(c, ret->url, ret->token, sizeof ret->token);
}

/* The runs of every board, grouped and judged as compare does them. */
static int run_on_compare(struct client *c, char (*urls)[sizeof c->url], const unsigned *ids, const size_t *board,
                          size_t n) {
        char **argv = calloc(n + 2, sizeof *argv), (*sources)[sizeof c->url + 32] = calloc(n ? n : 1, sizeof *sources);
        int r = 1;

        if (argv && sources) {
                argv[0] = (char *) "compare";
                for (size_t i = 0; i < n; i++) {
                        snprintf(sources[i], sizeof sources[i], "%s/api/v1/runs/%u", urls[board[i]], ids[i]);
                        argv[i + 1] = sources[i];
                }
                if (!c->json)
                        printf("\n");
                r = cmd_compare(c, (int) n + 1, argv);
        }
        free(argv);
        free(sources);
        return r;
}

/* --on URL,URL...: the run posted to each daemon, one after the other,
 * with the same start_at, the next whole second at least
 * RUN_ON_AHEAD_MS ahead: their first phases start on the same second of
 * the wall clock (each daemon's own, so NTP keeps them together). With
 * --wait each followed to its end in turn, then the runs of all compared. */
#define RUN_ON_AHEAD_MS 2000
static int run_on(struct client *c, const struct run_args *a) {
        char urls[RUN_ON_MAX][sizeof c->url], *copy = strdup(a->on), *save = NULL;
        unsigned first[RUN_ON_MAX], ids[RUN_ON_MAX * RUN_REPEAT_LIMIT];
        size_t nb = 0, n = 0, board[RUN_ON_MAX * RUN_REPEAT_LIMIT];
        struct client b;
        int r = 0;

        if (!copy)
                abort();
        if (!json_object_object_get_ex(a->body, "start_at", NULL))
                json_object_object_add(a->body, "start_at",
                                       json_object_new_int64((util_now_ms() + RUN_ON_AHEAD_MS + 999) / 1000 * 1000));
        for (char *u = strtok_r(copy, ",", &save); u && r == 0; u = strtok_r(NULL, ",", &save)) {
                long long id;

                if (nb == RUN_ON_MAX) {
                        r = usage("run: --on takes at most %d daemons", RUN_ON_MAX);
                        break;
                }
                if (run_board(c, u, &b) < 0 || (id = run_start(&b, a->body, a->wait)) < 0)
                        r = 1;
                else {
                        snprintf(urls[nb], sizeof urls[nb], "%s", b.url);
                        first[nb++] = (unsigned) id;
                }
        }
        free(copy);
        if (r != 0 || !a->wait)
                return r;
        for (size_t i = 0; i < nb && r == 0; i++) {
                size_t before = n;
                if (run_board(c, urls[i], &b) < 0)
                        return 1;
                r = watch_series(&b, first[i], WATCH_WAIT, ids, &n, ELEMENTSOF(ids));
                for (size_t k = before; k < n; k++)
                        board[k] = i;
        }
        return r == 0 && n > 1 ? run_on_compare(c, urls, ids, board, n) : r;
}

static int cmd_run(struct client *c, int argc, char **argv) {
        struct run_args a = { .body = json_object_new_object(), .phases = json_object_new_array() };
        long long id;
        int r;

        json_object_object_add(a.body, "phases", a.phases);
        r = run_parse(c, argc, argv, &a);
        if (r == 0 && a.wait)
                cli_catch_sigint();     /* a Ctrl-C as the run is posted: the run goes on, say so */
        if (r == 0 && a.on) {
                r = run_on(c, &a);
                json_object_put(a.body);
                return r;
        }
        id = r == 0 ? run_start(c, a.body, a.wait) : 0;
        json_object_put(a.body);
        if (r != 0)
                return r;
        if (id < 0)
                return 1;
        if (!a.wait)
                return 0;
        return a.series ? watch_series(c, (unsigned) id, WATCH_WAIT, NULL, NULL, 0) :
                          watch_run(c, (unsigned) id, 0, WATCH_WAIT);
}

struct export_args {
        const char *format;             /* csv or json, NULL until --format */
};

static int export_on_option(int o, const char *arg, void *userdata) {
        struct export_args *a = userdata;

        if (strcmp(arg, "csv") != 0 && strcmp(arg, "json") != 0 && strcmp(arg, "run") != 0)
                return usage("export: --format is csv, json or run, not \"%s\"", arg);
        a->format = arg;
        return 0;
}

/* The samples, byte for byte as the server sends them, streamed to stdout. */
static int cmd_export(struct client *c, int argc, char **argv) {
        static const struct option opts[] = { { "format", required_argument, NULL, 0x100 }, {} };
        struct export_args a = {};
        char path[96];
        unsigned id;
        int first, r;

        first = cli_parse(c, argc, argv, opts, export_on_option, &a, false, &r);
        if (first < 0)
                return r;
        if (argc - first != 1 || !parse_id(argv[first], &id))
                return usage("export needs one run id");
        if (!a.format)
                a.format = c->json ? "json" : "csv";
        if (strcmp(a.format, "run") == 0)       /* the whole run, for import elsewhere */
                snprintf(path, sizeof path, "/api/v1/runs/%u/export", id);
        else
                snprintf(path, sizeof path, "/api/v1/runs/%u/samples?format=%s", id, a.format);
        /* a samples.csv starts with its header, the others are one JSON object */
        if (client_export(c->url, c, path, stdout, strcmp(a.format, "csv") == 0 ? "time_ms," : "{") < 0)
                return 1;
        if (fflush(stdout) != 0)
                return cli_fail("writing the samples: %s", strerror(errno)), 1;
        return 0;
}

#define IMPORT_MAX_BYTES (32u * 1024u * 1024u)  /* what the daemon takes (API_IMPORT_BODY_MAX) */

/* A run file (export --format run) from another daemon, as a new run here. */
static int cmd_import(struct client *c, int argc, char **argv) {
        json_object *body, *doc, *from;
        struct reply reply;
        size_t len;
        char *text;
        int first, r;

        if ((first = parse_plain(c, argc, argv, 1, &r)) < 0)
                return r;
        text = recording_read_all(argv[first], IMPORT_MAX_BYTES, &len);
        if (!text)
                return cli_fail("%s: %s", argv[first], errno == EFBIG ? "larger than a daemon takes (32 MiB)" :
                                strerror(errno)), 1;
        body = client_parse_json(text, len);
        free(text);
        if (!body)
                return cli_fail("%s: not JSON (a file of heatcurvectl export --format run)", argv[first]), 1;
        r = client_call(c->url, c, "POST", "/api/v1/runs/import", body, &reply, NULL);
        json_object_put(body);
        if (r < 0)
                return 1;
        doc = client_parse_json(reply.body, reply.len);
        reply_free(&reply);
        if (!doc || !json_object_is_type(json_get(doc, "id"), json_type_int)) {
                json_object_put(doc);
                return cli_fail("POST %s/api/v1/runs/import: the answer has no run id", c->url), 1;
        }
        from = json_get(doc, "imported");
        if (c->json)
                print_json(doc);
        else
                printf("run %s imported (run %s of %s)\n", fmt_string(doc, "id"), fmt_string(from, "id"),
                       fmt_string(json_get(doc, "board"), "hostname"));
        json_object_put(doc);
        return 0;
}

static int cmd_stop_delete(struct client *c, int argc, char **argv) {
        bool go_on = strcmp(argv[0], "continue") == 0, stop = go_on || strcmp(argv[0], "stop") == 0;
        json_object *doc = NULL;
        struct reply reply;
        char path[64];
        unsigned id;
        int first, r;

        if ((first = parse_plain(c, argc, argv, 1, &r)) < 0)
                return r;
        if (!parse_id(argv[first], &id))
                return usage("%s: \"%s\" is not a run id", argv[0], argv[first]);
        snprintf(path, sizeof path, go_on ? "/api/v1/runs/%u/continue" : stop ? "/api/v1/runs/%u/stop" :
                 "/api/v1/runs/%u", id);
        r = 0;
        if (client_call(c->url, c, stop ? "POST" : "DELETE", path, NULL, &reply, NULL) < 0)
                return 1;
        if (stop && reply.len == 0)
                r = cli_fail("POST %s%s: the answer is empty, so the run's state is unknown", c->url, path);
        else if (reply.len > 0 && !(doc = client_parse_json(reply.body, reply.len)))
                r = cli_fail("%s %s%s: the answer is not JSON", stop ? "POST" : "DELETE", c->url, path);
        else if (stop && !json_object_is_type(json_get(doc, "state"), json_type_string))
                r = cli_fail("POST %s%s: the answer has no run state", c->url, path);
        else if (c->json && doc)
                print_json(doc);
        else if (!c->json && go_on)
                printf("run %u's series goes on\n", id);
        else if (!c->json && stop)
                printf("run %u stopped: %s\n", id, fmt_string(doc, "state"));
        else if (!c->json)
                printf("run %u deleted\n", id);
        json_object_put(doc);
        reply_free(&reply);
        return r < 0 ? 1 : 0;
}

int main(int argc, char **argv) {
        static const struct {
                const char *name;
                int (*fn)(struct client *c, int argc, char **argv);
        } commands[] = {
                { "status", cmd_status }, { "sensors", cmd_sensors }, { "run", cmd_run }, { "watch", cmd_watch },
                { "runs", cmd_runs }, { "show", cmd_show }, { "compare", cmd_compare }, { "export", cmd_export },
                { "import", cmd_import },
                { "plot", cmd_plot },
                { "stop", cmd_stop_delete }, { "delete", cmd_stop_delete }, { "analyse", cmd_analyse },
                { "alerts", cmd_alerts }, { "continue", cmd_stop_delete },
        };
        const char *env = getenv("HEATCURVE_URL");
        struct client c = {};
        int first, r;

        if (client_set_url(&c, env && *env ? env : "http://127.0.0.1:8080") < 0)
                return 1;
        first = cli_parse(&c, argc, argv, NULL, NULL, NULL, true, &r);
        if (first < 0)
                return r;
        if (first >= argc)
                return usage("no command given");
        for (size_t i = 0; i < ELEMENTSOF(commands); i++) {
                if (strcmp(argv[first], commands[i].name) != 0)
                        continue;
                if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
                        return cli_fail("cannot initialise libcurl"), 1;
                r = commands[i].fn(&c, argc - first, argv + first);
                curl_global_cleanup();
                return r;
        }
        return usage("unknown command \"%s\"", argv[first]);
}
