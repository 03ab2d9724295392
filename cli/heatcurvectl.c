/* heatcurvectl.c — command-line client of heatcurved: sensors, runs, watch, compare, export. */
#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "build-config.h"
#include "client.h"
#include "runspec.h"
#include "table.h"

#define EXIT_RUN_NOT_FINISHED 3
#define ELEMENTS(a) (sizeof(a) / sizeof((a)[0]))

static volatile sig_atomic_t interrupted;

static void help(void) {
        printf("Usage: heatcurvectl [--url URL] [--token T | --token-file F] [--json] COMMAND ...\n\n"
               "  status                      board, uptime, hottest sensor, current run\n"
               "  sensors                     every temperature, frequency and the load\n"
               "  run [--label L] [--ambient C] [--notes N] [--safety-limit C] [--sensor ID]\n"
               "      [--idle SPEC] [--stress SPEC] [--cooldown SPEC] ... [--wait]\n"
               "                              start a run; phases in the order given\n"
               "  watch [ID] [--count N]      a live line: phase, temperatures, freq, load, work\n"
               "  runs                        the runs with their key metrics\n"
               "  show ID                     one run: phases and every metric\n"
               "  compare ID|URL/ID ...       metrics side by side, also across boards\n"
               "  export ID [--format csv|json]  the samples, to stdout\n"
               "  stop ID | delete ID\n\n"
               "SPEC: comma-separated; stress starts with a load type (cpu, memory, io, command),\n"
               "then key=value: duration=10m | until=stable|plateau|baseline, min=, max=, window=;\n"
               "workers=4, method=sqrt|fma|matrix, duty=50, size=64M, cmd='stress-ng --cpu 4'\n"
               "(cmd is split on spaces; it cannot hold commas or quoted spaces).\n\n"
               "--url defaults to $HEATCURVE_URL, else http://127.0.0.1:8080.\n"
               "Exit status: 0 ok, 1 error, 2 usage, 3 a --wait'ed run did not finish.\n");
}

/* A usage error: one line, exit status 2. */
static int usage(const char *format, ...) __attribute__((format(printf, 1, 2)));
static int usage(const char *format, ...) {
        va_list ap;

        fputs("heatcurvectl: ", stderr);
        va_start(ap, format);
        vfprintf(stderr, format, ap);
        va_end(ap);
        fputs(" (see --help)\n", stderr);
        return 2;
}

static void print_json(json_object *o) {
        puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED));
}

static json_object *get(json_object *o, const char *key) {
        json_object *v = NULL;

        json_object_object_get_ex(o, key, &v);
        return v;
}

static bool parse_id(const char *s, unsigned *ret) {
        char *end;
        unsigned long v = strtoul(s, &end, 10);

        if (end == s || *end || v == 0 || v > 4000000000UL)
                return false;
        *ret = (unsigned) v;
        return true;
}

static int cmd_status(const struct client *c, int argc, char **argv) {
        json_object *st, *b, *hot, *run;
        char buf[64];

        if (argc > 1)
                return usage("status takes no argument: \"%s\"", argv[1]);
        if (client_get_json(c->url, c, "/api/v1/status", &st) < 0)
                return 1;
        if (c->json) {
                print_json(st);
                json_object_put(st);
                return 0;
        }
        b = get(st, "board");
        hot = get(get(st, "sensors"), "hottest");
        run = get(st, "current_run");
        printf("board     %s (%s, %s CPUs)\n", fmt_string(b, "model"), fmt_string(b, "hostname"), fmt_string(b, "cpus"));
        printf("kernel    %s\n", fmt_string(b, "kernel"));
        printf("version   heatcurved %s, up %s, sampling every %s\n", fmt_string(st, "version"),
               fmt_seconds(buf, sizeof buf, json_object_get_double(get(st, "uptime_s"))), fmt_string(st, "interval"));
        printf("hottest   %s %s °C\n", fmt_string(hot, "id"), fmt_number(buf, sizeof buf, get(hot, "celsius"), 1, 1));
        printf("sensors   %s temperatures, %s failing\n", fmt_string(get(st, "sensors"), "temperatures"),
               fmt_string(get(st, "sensors"), "failing"));
        if (run && !json_object_is_type(run, json_type_null))
                printf("run       %s \"%s\", phase %s\n", fmt_string(run, "id"), fmt_string(run, "label"), fmt_string(run, "phase"));
        else
                printf("run       none\n");
        json_object_put(st);
        return 0;
}

static void print_temperatures(json_object *temps) {
        struct table t;
        char buf[32];

        table_init(&t, 4);
        table_cell(&t, "SENSOR");
        table_cell(&t, "TYPE/LABEL");
        table_cell(&t, "°C");
        table_cell(&t, "STATE");
        for (size_t i = 0; i < json_object_array_length(temps); i++) {
                json_object *s = json_object_array_get_idx(temps, i);
                bool ok = json_object_get_boolean(get(s, "ok"));
                table_cell(&t, fmt_string(s, "id"));
                table_cell(&t, strcmp(fmt_string(s, "label"), "-") ? fmt_string(s, "label") :
                               strcmp(fmt_string(s, "type"), "-") ? fmt_string(s, "type") : fmt_string(s, "chip"));
                table_cell(&t, fmt_number(buf, sizeof buf, get(s, "celsius"), 1, 1));
                table_cell(&t, ok ? "ok" : fmt_string(s, "error"));
        }
        table_print(&t, stdout);
        table_free(&t);
}

static void print_policies(json_object *freq, json_object *load) {
        struct table t;
        char a[32], b[32], c[32];

        table_init(&t, 5);
        table_cell(&t, "POLICY");
        table_cell(&t, "CPUS");
        table_cell(&t, "MHz");
        table_cell(&t, "RANGE MHz");
        table_cell(&t, "GOVERNOR");
        for (size_t i = 0; i < json_object_array_length(freq); i++) {
                json_object *p = json_object_array_get_idx(freq, i);
                table_cell(&t, fmt_string(p, "id"));
                table_cell(&t, json_object_to_json_string_ext(get(p, "cpus"), JSON_C_TO_STRING_PLAIN));
                table_cell(&t, fmt_number(a, sizeof a, get(p, "cur_hz"), 1e-6, 0));
                table_cellf(&t, "%s-%s", fmt_number(b, sizeof b, get(p, "min_hz"), 1e-6, 0),
                            fmt_number(c, sizeof c, get(p, "max_hz"), 1e-6, 0));
                table_cell(&t, fmt_string(p, "governor"));
        }
        table_print(&t, stdout);
        table_free(&t);
        printf("\nload %s %%\n", fmt_number(a, sizeof a, get(load, "total"), 100, 1));
}

static int cmd_sensors(const struct client *c, int argc, char **argv) {
        json_object *doc;

        if (argc > 1)
                return usage("sensors takes no argument: \"%s\"", argv[1]);
        if (client_get_json(c->url, c, "/api/v1/sensors", &doc) < 0)
                return 1;
        if (c->json)
                print_json(doc);
        else {
                print_temperatures(get(doc, "temperatures"));
                putchar('\n');
                print_policies(get(doc, "cpufreq"), get(doc, "load"));
        }
        json_object_put(doc);
        return 0;
}

static void on_sigint(int sig) {
        interrupted = 1;
}

static void watch_print_line(json_object *run, bool tty) {
        json_object *live = get(run, "live");
        char a[32], b[32], c[32], d[32], e[32], f[32], g[32], h[32];

        printf("%srun %s %-8s %s  %s °C  hottest %s °C  %s MHz  load %s %%  %s %s/s  plateau %s ±%s °C%s",
               tty ? "\r\033[K" : "", fmt_string(run, "id"), fmt_string(run, "phase"),
               fmt_seconds(a, sizeof a, json_object_get_double(get(live, "phase_elapsed_s"))),
               fmt_number(b, sizeof b, get(live, "temp_c"), 1, 1), fmt_number(c, sizeof c, get(live, "hottest_c"), 1, 1),
               fmt_number(d, sizeof d, get(live, "freq_hz"), 1e-6, 0), fmt_number(e, sizeof e, get(live, "load"), 100, 0),
               fmt_number(f, sizeof f, get(live, "work_rate"), 1, 0), fmt_string(live, "work_unit"),
               fmt_number(g, sizeof g, get(live, "predicted_plateau_c"), 1, 1),
               fmt_number(h, sizeof h, get(live, "predicted_plateau_ci95_c"), 1, 1), tty ? "" : "\n");
        fflush(stdout);
}

/* Polls until the run ends, Ctrl-C, or count updates. 0 finished, 3 not, 1 error. */
static int watch_run(const struct client *c, unsigned id, long count, bool tty) {
        char path[64];
        json_object *run;
        const char *state;

        snprintf(path, sizeof path, "/api/v1/runs/%u", id);
        for (long n = 0; !interrupted && (count <= 0 || n < count); n++) {
                if (n > 0)
                        sleep(1);
                if (client_get_json(c->url, c, path, &run) < 0)
                        return 1;
                state = fmt_string(run, "state");
                if (strcmp(state, "running") != 0) {
                        printf("%srun %u %s%s%s\n", tty ? "\r\033[K" : "", id, state,
                               strcmp(fmt_string(run, "abort_reason"), "-") ? ": " : "",
                               strcmp(fmt_string(run, "abort_reason"), "-") ? fmt_string(run, "abort_reason") : "");
                        int ret = strcmp(state, "finished") == 0 ? 0 : EXIT_RUN_NOT_FINISHED;
                        json_object_put(run);
                        return ret;
                }
                watch_print_line(run, tty);
                json_object_put(run);
        }
        if (tty)
                putchar('\n');
        return 0;
}

/* No run: the hottest sensor, once a second. */
static int watch_board(const struct client *c, long count, bool tty) {
        json_object *st, *hot;
        char buf[32];

        for (long n = 0; !interrupted && (count <= 0 || n < count); n++) {
                if (n > 0)
                        sleep(1);
                if (client_get_json(c->url, c, "/api/v1/status", &st) < 0)
                        return 1;
                hot = get(get(st, "sensors"), "hottest");
                printf("%sno run  hottest %s %s °C%s", tty ? "\r\033[K" : "", fmt_string(hot, "id"),
                       fmt_number(buf, sizeof buf, get(hot, "celsius"), 1, 1), tty ? "" : "\n");
                fflush(stdout);
                json_object_put(st);
        }
        if (tty)
                putchar('\n');
        return 0;
}

static int current_run_id(const struct client *c, unsigned *ret) {
        json_object *st, *run;
        int found;

        if (client_get_json(c->url, c, "/api/v1/status", &st) < 0)
                return -1;
        run = get(st, "current_run");
        found = run && !json_object_is_type(run, json_type_null);
        if (found)
                *ret = (unsigned) json_object_get_int64(get(run, "id"));
        json_object_put(st);
        return found;
}

static int cmd_watch(const struct client *c, int argc, char **argv) {
        static const struct option opts[] = { { "count", required_argument, NULL, 'n' }, {} };
        long count = 0;
        unsigned id = 0;
        int o, found;

        optind = 0;     /* 0, not 1: glibc then forgets the previous parse entirely */
        while ((o = getopt_long(argc, argv, "n:", opts, NULL)) >= 0) {
                if (o != 'n')
                        return 2;
                count = strtol(optarg, NULL, 10);
        }
        if (optind < argc && !parse_id(argv[optind], &id))
                return usage("watch: \"%s\" is not a run id", argv[optind]);
        signal(SIGINT, on_sigint);
        if (!id) {
                found = current_run_id(c, &id);
                if (found < 0)
                        return 1;
                if (!found)
                        return watch_board(c, count, isatty(STDOUT_FILENO));
        }
        return watch_run(c, id, count, isatty(STDOUT_FILENO));
}

enum {
        RUN_LABEL = 0x100, RUN_AMBIENT, RUN_NOTES, RUN_SAFETY, RUN_SENSOR, RUN_IDLE, RUN_STRESS,
        RUN_COOLDOWN, RUN_WAIT,
};

static int run_number(json_object *body, const char *key, const char *opt, const char *value) {
        char *end;
        double v = strtod(value, &end);

        if (end == value || *end || !isfinite(v))
                return usage("%s needs a number", opt);
        json_object_object_add(body, key, json_object_new_double(v));
        return 0;
}

/* Fills body from the options; returns 0, or an exit status. */
static int run_parse_options(int argc, char **argv, json_object *body, json_object *phases, bool *wait) {
        static const struct option opts[] = {
                { "label", required_argument, NULL, RUN_LABEL }, { "ambient", required_argument, NULL, RUN_AMBIENT },
                { "notes", required_argument, NULL, RUN_NOTES }, { "safety-limit", required_argument, NULL, RUN_SAFETY },
                { "sensor", required_argument, NULL, RUN_SENSOR }, { "idle", required_argument, NULL, RUN_IDLE },
                { "stress", required_argument, NULL, RUN_STRESS }, { "cooldown", required_argument, NULL, RUN_COOLDOWN },
                { "wait", no_argument, NULL, RUN_WAIT }, {}
        };
        static const char *const kinds[] = { "idle", "stress", "cooldown" };
        json_object *phase;
        int o, r = 0;

        optind = 0;     /* 0, not 1: glibc then forgets the previous parse entirely */
        while (r == 0 && (o = getopt_long(argc, argv, "", opts, NULL)) >= 0) {
                switch (o) {
                case RUN_LABEL: json_object_object_add(body, "label", json_object_new_string(optarg)); break;
                case RUN_NOTES: json_object_object_add(body, "notes", json_object_new_string(optarg)); break;
                case RUN_SENSOR: json_object_object_add(body, "sensor", json_object_new_string(optarg)); break;
                case RUN_AMBIENT: r = run_number(body, "ambient_c", "--ambient", optarg); break;
                case RUN_SAFETY: r = run_number(body, "safety_limit_c", "--safety-limit", optarg); break;
                case RUN_IDLE: case RUN_STRESS: case RUN_COOLDOWN:
                        phase = runspec_phase(kinds[o - RUN_IDLE], optarg, (unsigned) json_object_array_length(phases));
                        if (!phase)
                                return 2;
                        json_object_array_add(phases, phase);
                        break;
                case RUN_WAIT: *wait = true; break;
                default: return 2;
                }
        }
        if (r == 0 && optind < argc)
                return usage("run: unexpected argument \"%s\"", argv[optind]);
        if (r == 0 && json_object_array_length(phases) == 0)
                return usage("run needs at least one phase: --idle, --stress or --cooldown");
        return r;
}

static int cmd_run(const struct client *c, int argc, char **argv) {
        json_object *body = json_object_new_object(), *phases = json_object_new_array(), *run;
        struct reply reply;
        bool wait = false;
        unsigned id;
        int r;

        json_object_object_add(body, "phases", phases);
        r = run_parse_options(argc, argv, body, phases, &wait);
        if (r == 0)
                r = client_call(c->url, c, "POST", "/api/v1/runs", body, &reply, NULL) < 0 ? 1 : 0;
        json_object_put(body);
        if (r != 0)
                return r;
        run = json_tokener_parse(reply.body);
        reply_free(&reply);
        if (!run)
                return fail("POST /api/v1/runs: the answer is not JSON"), 1;
        id = (unsigned) json_object_get_int64(get(run, "id"));
        if (c->json)
                print_json(run);
        else
                printf("run %u started\n", id);
        json_object_put(run);
        if (!wait)
                return 0;
        signal(SIGINT, on_sigint);
        return watch_run(c, id, 0, isatty(STDOUT_FILENO));
}

struct metric {
        const char *key, *label;
        double scale;
        int decimals;
};

static const struct metric metrics[] = {
        { "baseline_c", "baseline °C", 1, 1 },
        { "ambient_c", "ambient °C", 1, 1 },
        { "peak_c", "peak °C", 1, 1 },
        { "plateau_c", "plateau °C", 1, 1 },
        { "plateau_ci95_c", "plateau ±95% °C", 1, 2 },
        { "rise_c", "rise °C", 1, 1 },
        { "rise_over_ambient_c", "rise over ambient °C", 1, 1 },
        { "tau_heat_s", "tau heat s", 1, 0 },
        { "t90_heat_s", "t90 heat s", 1, 0 },
        { "tau_cool_s", "tau cool s", 1, 0 },
        { "t_back_to_baseline_s", "back to baseline s", 1, 0 },
        { "throttled_fraction", "throttled %", 100, 1 },
        { "freq_mean_hz", "freq mean MHz", 1e-6, 0 },
        { "freq_min_hz", "freq min MHz", 1e-6, 0 },
        { "work_rate_start", "work rate start /s", 1, 0 },
        { "work_rate_end", "work rate end /s", 1, 0 },
        { "work_rate_drop_pct", "work rate drop %", 1, 1 },
        { "fit_residual_c", "fit residual °C", 1, 3 },
};

static double run_duration_s(json_object *run) {
        json_object *start = get(run, "started_ms"), *end = get(run, "ended_ms");

        if (!start || json_object_is_type(start, json_type_null))
                return 0;
        int64_t e = end && !json_object_is_type(end, json_type_null) ? json_object_get_int64(end) :
                    (int64_t) time(NULL) * 1000;
        return (double) (e - json_object_get_int64(start)) / 1000.0;
}

static int cmd_runs(const struct client *c, int argc, char **argv) {
        json_object *doc, *runs;
        struct table t;
        char a[32], b[32], d[32], e[32], f[32], g[32];

        if (argc > 1)
                return usage("runs takes no argument: \"%s\"", argv[1]);
        if (client_get_json(c->url, c, "/api/v1/runs", &doc) < 0)
                return 1;
        if (c->json) {
                print_json(doc);
                json_object_put(doc);
                return 0;
        }
        runs = get(doc, "runs");
        table_init(&t, 10);
        for (const char *h = "ID\0LABEL\0STATE\0STARTED\0DURATION\0BASELINE\0PLATEAU\0RISE\0TAU HEAT\0THROTTLED"; *h; h += strlen(h) + 1)
                table_cell(&t, h);
        for (size_t i = 0; i < json_object_array_length(runs); i++) {
                json_object *r = json_object_array_get_idx(runs, i), *m = get(r, "metrics");
                table_cell(&t, fmt_string(r, "id"));
                table_cell(&t, fmt_string(r, "label"));
                table_cell(&t, fmt_string(r, "state"));
                table_cell(&t, fmt_time(a, sizeof a, get(r, "started_ms")));
                table_cell(&t, fmt_seconds(b, sizeof b, run_duration_s(r)));
                table_cell(&t, fmt_number(d, sizeof d, get(m, "baseline_c"), 1, 1));
                table_cell(&t, fmt_number(e, sizeof e, get(m, "plateau_c"), 1, 1));
                table_cell(&t, fmt_number(f, sizeof f, get(m, "rise_c"), 1, 1));
                table_cell(&t, fmt_number(g, sizeof g, get(m, "tau_heat_s"), 1, 0));
                table_cell(&t, fmt_number(a, sizeof a, get(m, "throttled_fraction"), 100, 1));
        }
        table_print(&t, stdout);
        table_free(&t);
        json_object_put(doc);
        return 0;
}

static void show_phases(json_object *phases) {
        struct table t;
        char a[32], b[32];

        table_init(&t, 5);
        for (const char *h = "PHASE\0END RULE\0STARTED\0DURATION\0ENDED BY"; *h; h += strlen(h) + 1)
                table_cell(&t, h);
        for (size_t i = 0; i < json_object_array_length(phases); i++) {
                json_object *p = json_object_array_get_idx(phases, i), *load = get(p, "load");
                json_object *s = get(p, "started_ms"), *e = get(p, "ended_ms");
                if (load && !json_object_is_type(load, json_type_null))
                        table_cellf(&t, "%s (%s)", fmt_string(p, "kind"), fmt_string(load, "type"));
                else
                        table_cell(&t, fmt_string(p, "kind"));
                if (strcmp(fmt_string(p, "until"), "-"))
                        table_cellf(&t, "until %s, max %s", fmt_string(p, "until"), fmt_string(p, "max"));
                else
                        table_cellf(&t, "for %s", fmt_string(p, "duration"));
                table_cell(&t, fmt_time(a, sizeof a, s));
                table_cell(&t, s && e && !json_object_is_type(e, json_type_null) ?
                           fmt_seconds(b, sizeof b, (double) (json_object_get_int64(e) - json_object_get_int64(s)) / 1000.0) : "-");
                table_cell(&t, fmt_string(p, "end_reason"));
        }
        table_print(&t, stdout);
        table_free(&t);
}

/* Rows are metrics, columns runs; a header row names the runs when there are several. */
static void show_metrics(json_object *runs, size_t n) {
        struct table t;
        char buf[32];

        table_init(&t, n + 1);
        if (n > 1) {
                table_cell(&t, "");
                for (size_t i = 0; i < n; i++) {
                        json_object *r = json_object_array_get_idx(runs, i);
                        table_cellf(&t, "%s (%s, #%s)", fmt_string(r, "label"),
                                    fmt_string(get(r, "board"), "hostname"), fmt_string(r, "id"));
                }
        }
        for (size_t k = 0; k < ELEMENTS(metrics); k++) {
                table_cell(&t, metrics[k].label);
                for (size_t i = 0; i < n; i++) {
                        json_object *m = get(json_object_array_get_idx(runs, i), "metrics");
                        table_cell(&t, fmt_number(buf, sizeof buf, get(m, metrics[k].key), metrics[k].scale, metrics[k].decimals));
                }
        }
        table_print(&t, stdout);
        table_free(&t);
}

static int cmd_show(const struct client *c, int argc, char **argv) {
        json_object *run, *one;
        char path[64];
        unsigned id;

        if (argc != 2 || !parse_id(argv[1], &id))
                return usage("show needs one run id");
        snprintf(path, sizeof path, "/api/v1/runs/%u", id);
        if (client_get_json(c->url, c, path, &run) < 0)
                return 1;
        if (c->json) {
                print_json(run);
                json_object_put(run);
                return 0;
        }
        printf("run %u \"%s\" on %s (%s): %s", id, fmt_string(run, "label"), fmt_string(get(run, "board"), "model"),
               fmt_string(get(run, "board"), "hostname"), fmt_string(run, "state"));
        if (strcmp(fmt_string(run, "abort_reason"), "-"))
                printf(" — %s", fmt_string(run, "abort_reason"));
        printf("\nsensor %s, safety limit %s °C, %s samples, fit %s\n\n", fmt_string(run, "sensor"),
               fmt_string(run, "safety_limit_c"), fmt_string(get(run, "recording"), "samples"),
               fmt_string(get(run, "metrics"), "fit_model"));
        show_phases(get(run, "phases"));
        putchar('\n');
        one = json_object_new_array();
        json_object_array_add(one, run);
        show_metrics(one, 1);
        json_object_put(one);
        return 0;
}

/* "3" on --url, or "http://host:port/3". */
static int compare_fetch(const struct client *c, const char *arg, json_object **ret) {
        char base[1024], path[64];
        const char *slash = strrchr(arg, '/');
        unsigned id;

        if (!strstr(arg, "://")) {
                if (!parse_id(arg, &id))
                        return usage("compare: \"%s\" is neither a run id nor URL/ID", arg);
                snprintf(base, sizeof base, "%s", c->url);
        } else {
                if (!slash || !parse_id(slash + 1, &id) || (size_t) (slash - arg) >= sizeof base)
                        return usage("compare: \"%s\" does not end in /ID", arg);
                memcpy(base, arg, (size_t) (slash - arg));
                base[slash - arg] = '\0';
        }
        snprintf(path, sizeof path, "/api/v1/runs/%u", id);
        return client_get_json(base, c, path, ret) < 0 ? 1 : 0;
}

static int cmd_compare(const struct client *c, int argc, char **argv) {
        json_object *runs = json_object_new_array(), *run;
        int r = 0;

        if (argc < 2)
                r = usage("compare needs run ids or URL/ID");
        for (int i = 1; r == 0 && i < argc; i++)
                if ((r = compare_fetch(c, argv[i], &run)) == 0)
                        json_object_array_add(runs, run);
        if (r == 0 && c->json)
                print_json(runs);
        else if (r == 0)
                show_metrics(runs, json_object_array_length(runs));
        json_object_put(runs);
        return r;
}

static int cmd_export(const struct client *c, int argc, char **argv) {
        static const struct option opts[] = { { "format", required_argument, NULL, 'f' }, {} };
        const char *format = "csv";
        char path[96];
        unsigned id;
        int o;

        optind = 0;     /* 0, not 1: glibc then forgets the previous parse entirely */
        while ((o = getopt_long(argc, argv, "f:", opts, NULL)) >= 0) {
                if (o != 'f')
                        return 2;
                format = optarg;
        }
        if (strcmp(format, "csv") && strcmp(format, "json"))
                return usage("export: --format is csv or json, not \"%s\"", format);
        if (optind != argc - 1 || !parse_id(argv[optind], &id))
                return usage("export needs one run id");
        snprintf(path, sizeof path, "/api/v1/runs/%u/samples?format=%s", id, format);
        if (client_call(c->url, c, "GET", path, NULL, NULL, stdout) < 0)
                return 1;
        return fflush(stdout) == 0 ? 0 : (fail("writing the samples: %s", strerror(errno)), 1);
}

static int cmd_stop_delete(const struct client *c, int argc, char **argv) {
        bool stop = strcmp(argv[0], "stop") == 0;
        struct reply reply;
        char path[64];
        unsigned id;

        if (argc != 2 || !parse_id(argv[1], &id))
                return usage("%s needs one run id", argv[0]);
        snprintf(path, sizeof path, stop ? "/api/v1/runs/%u/stop" : "/api/v1/runs/%u", id);
        if (client_call(c->url, c, stop ? "POST" : "DELETE", path, NULL, &reply, NULL) < 0)
                return 1;
        if (c->json && reply.body && reply.len)
                puts(reply.body);
        else
                printf("run %u %s\n", id, stop ? "stopped" : "deleted");
        reply_free(&reply);
        return 0;
}

static int read_token_file(const char *path, char *buf, size_t size) {
        FILE *f = fopen(path, "re");
        size_t n;

        if (!f)
                return fail("--token-file %s: %s", path, strerror(errno));
        n = fread(buf, 1, size - 1, f);
        fclose(f);
        buf[n] = '\0';
        buf[strcspn(buf, "\r\n")] = '\0';
        return 0;
}

/* Global options, up to the command. Returns the command's index, or 0 with
 * *exit_status set (--help, --version, errors). */
static int parse_global(int argc, char **argv, struct client *c, int *exit_status) {
        static const struct option opts[] = {
                { "url", required_argument, NULL, 'u' }, { "token", required_argument, NULL, 't' },
                { "token-file", required_argument, NULL, 'T' }, { "json", no_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' }, { "version", no_argument, NULL, 'V' }, {}
        };
        int o;

        *exit_status = 0;
        while ((o = getopt_long(argc, argv, "+u:t:T:jh", opts, NULL)) >= 0) {
                switch (o) {
                case 'u': c->url = optarg; break;
                case 't': snprintf(c->token, sizeof c->token, "%s", optarg); break;
                case 'T':
                        if (read_token_file(optarg, c->token, sizeof c->token) < 0)
                                return *exit_status = 1, 0;
                        break;
                case 'j': c->json = true; break;
                case 'h': help(); return 0;
                case 'V': printf("heatcurvectl %s\n", HEATCURVE_VERSION); return 0;
                default: return *exit_status = 2, 0;
                }
        }
        if (optind >= argc)
                return *exit_status = usage("no command given"), 0;
        return optind;
}

int main(int argc, char **argv) {
        static const struct { const char *name; int (*fn)(const struct client *, int, char **); } commands[] = {
                { "status", cmd_status }, { "sensors", cmd_sensors }, { "run", cmd_run }, { "watch", cmd_watch },
                { "runs", cmd_runs }, { "show", cmd_show }, { "compare", cmd_compare }, { "export", cmd_export },
                { "stop", cmd_stop_delete }, { "delete", cmd_stop_delete },
        };
        struct client c = { .url = getenv("HEATCURVE_URL") };
        char url[1024];
        int first, r = -1;

        if (!c.url || !*c.url)
                c.url = "http://127.0.0.1:8080";
        first = parse_global(argc, argv, &c, &r);
        if (first == 0)
                return r;
        snprintf(url, sizeof url, "%s", c.url);
        while (url[0] && url[strlen(url) - 1] == '/')
                url[strlen(url) - 1] = '\0';
        c.url = url;
        curl_global_init(CURL_GLOBAL_DEFAULT);
        r = -1;
        for (size_t i = 0; i < ELEMENTS(commands); i++)
                if (strcmp(argv[first], commands[i].name) == 0)
                        r = commands[i].fn(&c, argc - first, argv + first);
        if (r < 0)
                r = usage("unknown command \"%s\"", argv[first]);
        curl_global_cleanup();
        return r;
}
