/* watch.c — heatcurvectl watch: a live line per second for a run, or for the hottest sensor when none runs. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "table.h"
#include "text.h"

#define WATCH_LINE_MAX 768              /* bytes of one status line */
#define SPARK_CELLS 24                  /* a sparkline of the last two minutes ... */
#define SPARK_CELL_S 5                  /* ... one character per 5 s: the hottest reading in them */
#define SPARK_SPAN_MIN_C 2.0            /* °C: a flat line stays flat, not noise blown up */

/* The run sensor (or the hottest one) over the last minutes, as s-tui draws it. */
struct spark {
        double max_c[SPARK_CELLS];      /* per cell, oldest first; NaN when no reading */
        bool throttled[SPARK_CELLS];    /* some reading in the cell was throttled */
        size_t n;                       /* cells used; the last one is filling */
        int64_t cell_end_s;             /* CLOCK_MONOTONIC s when the filling cell is full */
};

/* Where the live line goes and how. */
struct watch_out {
        bool tty;                       /* rewrite the live lines in place, no newline after */
        size_t cols;                    /* terminal width, 0 when unknown */
        bool pending;                   /* live lines without their newline are on screen */
        unsigned rows;                  /* how many: a line too wide goes on two */
};

static void watch_out_init(struct watch_out *o) {
        struct winsize ws;

        *o = (struct watch_out) { .tty = isatty(STDOUT_FILENO) };
        if (o->tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0)
                o->cols = ws.ws_col;
}

/* The columns s takes on a terminal: UTF-8 characters, the colour
 * sequences (ESC [ ... m) of the sparkline taking none. With cut, s is cut
 * after that many columns. */
static size_t columns(char *s, size_t cut) {
        size_t w = 0;

        for (char *p = s; *p; p++) {
                if (*p == '\033') {
                        while (p[1] && *p != 'm')
                                p++;
                        continue;
                }
                if (((unsigned char) *p & 0xc0) != 0x80 && w++ == cut) {
                        *p = '\0';
                        break;
                }
        }
        return w;
}

/* Where a line too wide for width columns goes on: at the last field
 * separator ("  ") before the width, NULL when there is none. */
static char *watch_split(char *line, size_t width) {
        char *split = NULL;

        for (char *p = strstr(line, "  "); p; p = strstr(p + 2, "  ")) {
                char keep = *p;
                *p = '\0';
                size_t w = columns(line, SIZE_MAX);
                *p = keep;
                if (w > width)
                        break;
                split = p;
        }
        return split;
}

/* Back to the first of the live lines on screen, cleared to the end. */
static void watch_out_clear(struct watch_out *o) {
        if (o->pending && o->rows > 1)
                printf("\033[%uA", o->rows - 1);
        printf("\r\033[J");
}

#define WATCH_ROWS_MAX 3                /* lines one live line may take */

/* A live line: on a terminal it replaces the previous one and never
 * wraps; one too wide for the terminal goes on up to WATCH_ROWS_MAX lines,
 * between fields, and only what is still too wide is cut (80 columns show
 * every field, alerts too). */
static void watch_out_line(struct watch_out *o, char *line) {
        char *rows[WATCH_ROWS_MAX] = { line }, *split;
        unsigned n = 1;

        if (!o->tty) {
                printf("%s\n", line);
                fflush(stdout);
                return;
        }
        while (o->cols > 1 && n < WATCH_ROWS_MAX && columns(rows[n - 1], SIZE_MAX) > o->cols - 1 &&
               (split = watch_split(rows[n - 1], o->cols - 1))) {
                *split = '\0';
                rows[n++] = split + 1 + strspn(split + 1, " ");
        }
        watch_out_clear(o);
        for (unsigned i = 0; i < n; i++) {
                if (o->cols > 1)
                        columns(rows[i], o->cols - 1);
                printf(i ? "\n%s" : "%s", rows[i]);
        }
        o->pending = true;
        o->rows = n;
        fflush(stdout);
}

/* A line that stays: the final state, or before an error on stderr. */
static void watch_out_end(struct watch_out *o, const char *line) {
        if (o->tty && line) {
                watch_out_clear(o);
                printf("%s\n", line);
        } else if (o->tty && o->pending)
                putchar('\n');
        else if (line)
                printf("%s\n", line);
        o->pending = false;
        o->rows = 0;
        fflush(stdout);
}

static int64_t monotonic_s(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec;
}

static void spark_add(struct spark *sp, double celsius, bool throttled) {
        int64_t now = monotonic_s();

        if (sp->n == 0 || now >= sp->cell_end_s) {
                if (sp->n == SPARK_CELLS) {
                        memmove(sp->max_c, sp->max_c + 1, (SPARK_CELLS - 1) * sizeof sp->max_c[0]);
                        memmove(sp->throttled, sp->throttled + 1, (SPARK_CELLS - 1) * sizeof sp->throttled[0]);
                        sp->n--;
                }
                sp->max_c[sp->n] = NAN;
                sp->throttled[sp->n] = false;
                sp->n++;
                sp->cell_end_s = now + SPARK_CELL_S;
        }
        celsius = round(celsius * 10.0) / 10.0;    /* as shown: 48.686 and the history's 48.69 are one level */
        if (isfinite(celsius) && !(sp->max_c[sp->n - 1] >= celsius))
                sp->max_c[sp->n - 1] = celsius;
        sp->throttled[sp->n - 1] |= throttled;
}

/* The sparkline's cells before the first reading, from the daemon's
 * history of sensor id: a watch started on a warm board shows how it got
 * there. On failure (said once) the line fills as it goes. */
static void spark_prefill(const struct client *c, struct spark *sp, const char *id) {
        char path[256];
        json_object *doc, *t, *max;
        int64_t from, bucket;

        if (!id || !*id || strpbrk(id, "&#%+ ,\"") ||
            (size_t) snprintf(path, sizeof path, "/api/v1/history?from=-%ds&points=%d&sensors=%s",
                              SPARK_CELLS * SPARK_CELL_S, SPARK_CELLS, id) >= sizeof path)
                return;
        if (client_get_json(c->url, c, path, &doc) < 0)
                return;
        t = json_get(doc, "t_ms");
        max = json_get(json_object_array_get_idx(json_get(doc, "series"), 0), "max");
        from = json_object_get_int64(json_get(doc, "from_ms"));
        bucket = json_object_get_int64(json_get(doc, "bucket_ms"));
        for (size_t i = 0; i < SPARK_CELLS; i++)
                sp->max_c[i] = NAN;
        for (size_t i = 0; bucket > 0 && i < json_len(t) && i < json_len(max); i++) {
                int64_t k = (json_object_get_int64(json_object_array_get_idx(t, i)) - from) / bucket;
                json_object *v = json_object_array_get_idx(max, i);
                if (k >= 0 && k < SPARK_CELLS && !json_is_null(v))
                        sp->max_c[k] = round(json_object_get_double(v) * 10.0) / 10.0;
        }
        /* from the oldest cell with a reading: a daemon started a minute ago has no more */
        size_t first = 0;
        while (first < SPARK_CELLS && !isfinite(sp->max_c[first]))
                first++;
        memmove(sp->max_c, sp->max_c + first, (SPARK_CELLS - first) * sizeof sp->max_c[0]);
        sp->n = SPARK_CELLS - first;
        sp->cell_end_s = monotonic_s();         /* the first reading opens a cell of its own */
        json_object_put(doc);
}

/* "▂▃▅▆▇▇" scaled to the cells shown; a throttled cell in red on a
 * terminal, as "!" elsewhere; " " for a cell without a reading. */
static const char *spark_format(const struct spark *sp, bool tty, char *buf, size_t size) {
        static const char *const bars[] = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
        double lo = INFINITY, hi = -INFINITY;
        size_t len = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < sp->n; i++)
                if (isfinite(sp->max_c[i])) {
                        lo = fmin(lo, sp->max_c[i]);
                        hi = fmax(hi, sp->max_c[i]);
                }
        if (hi - lo < SPARK_SPAN_MIN_C) {
                double mid = (hi + lo) / 2;
                lo = mid - SPARK_SPAN_MIN_C / 2;
                hi = mid + SPARK_SPAN_MIN_C / 2;
        }
        for (size_t i = 0; i < sp->n && len + 16 < size; i++) {
                const char *glyph = " ";
                if (isfinite(sp->max_c[i])) {
                        long level = lround((sp->max_c[i] - lo) / (hi - lo) * 7.0);
                        glyph = bars[level < 0 ? 0 : level > 7 ? 7 : level];
                }
                if (sp->throttled[i] && !tty)
                        glyph = "!";
                len += (size_t) snprintf(buf + len, size - len, "%s%s%s", sp->throttled[i] && tty ? "\033[31m" : "",
                                         glyph, sp->throttled[i] && tty ? "\033[0m" : "");
        }
        return buf;
}

/* Waits for the next whole second after *next; Ctrl-C ends the wait. */
static void watch_sleep(struct timespec *next) {
        struct timespec now;

        clock_gettime(CLOCK_MONOTONIC, &now);
        next->tv_sec++;
        if (now.tv_sec > next->tv_sec)  /* a slow answer: do not rush to catch up */
                *next = now;
        while (!cli_interrupted && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next, NULL) == EINTR)
                ;
}

static const char *work_text(char *buf, size_t size, json_object *live) {
        const char *unit = fmt_string(live, "work_unit");
        char rate[32];

        if (strcmp(unit, "-") == 0 || strcmp(unit, "none") == 0 || json_is_null(json_get(live, "work_rate")))
                return "-";
        snprintf(buf, size, "%s %s/s", fmt_rate(rate, sizeof rate, json_get(live, "work_rate")), unit);
        return buf;
}

/* The predicted plateau as heatcurvectl show gives it, without its unit:
 * "61.5 (60.9–62.3)", "not known yet" while the interval is wider than the
 * rise so far (now less the run's idle baseline). */
static const char *plateau_text(char *buf, size_t size, json_object *run) {
        json_object *live = json_get(run, "live"), *now = json_get(live, "temp_c");
        json_object *base = json_get(json_get(run, "metrics"), "baseline_c");
        double rise = json_is_null(now) || json_is_null(base) ? NAN :
                      json_object_get_double(now) - json_object_get_double(base);

        return fmt_plateau_unit(buf, size, json_get(live, "predicted_plateau_c"),
                                json_get(live, "predicted_plateau_low_c"), json_get(live, "predicted_plateau_high_c"),
                                rise, "");
}

/* Under load: "  eta 4m10s", the time until the plateau is known ("eta -"
 * while there is no forecast yet); "" in the other phases. */
static const char *eta_text(char *buf, size_t size, json_object *live) {
        json_object *fc = json_get(live, "forecast"), *eta = json_get(fc, "eta_s");
        char s[32];

        if (json_is_null(fc))
                return "";
        snprintf(buf, size, "  eta %s", json_is_null(eta) ? "-" :
                 fmt_seconds(s, sizeof s, json_object_get_double(eta)));
        return buf;
}

/* "run 3 stress 2/3  1m05s / 2m10s  temp 61.2 °C ▃▅▆▇▇  hottest 62.0 °C  1500 MHz throttled  load 100 %
 *  work 58.2M ops/s  plateau 68.3 (67.9–68.7)  eta 4m10s" */
static void watch_format_run(char *line, size_t size, json_object *run, const char *spark) {
        json_object *live = json_get(run, "live");
        char pe[32], te[32], temp[32], hot[32], mhz[32], load[32], work[64], plateau[64], eta[48];
        long long index = json_object_get_int64(json_get(run, "phase_index"));
        bool throttled = json_object_get_boolean(json_get(live, "throttled"));

        snprintf(line, size, "run %s %s %lld/%zu  %s / %s  temp %s °C %s  hottest %s °C  %s MHz%s  load %s %%  "
                 "work %s  plateau %s%s", fmt_string(run, "id"), fmt_string(run, "phase"), index + 1,
                 json_len(json_get(run, "phases")),
                 fmt_seconds(pe, sizeof pe, json_object_get_double(json_get(live, "phase_elapsed_s"))),
                 fmt_seconds(te, sizeof te, json_object_get_double(json_get(live, "elapsed_s"))),
                 fmt_number(temp, sizeof temp, json_get(live, "temp_c"), 1, 1), spark,
                 fmt_number(hot, sizeof hot, json_get(live, "hottest_c"), 1, 1),
                 fmt_number(mhz, sizeof mhz, json_get(live, "freq_hz"), 1e-6, 0), throttled ? " throttled" : "",
                 fmt_number(load, sizeof load, json_get(live, "load"), 100, 0),
                 work_text(work, sizeof work, live), plateau_text(plateau, sizeof plateau, run),
                 eta_text(eta, sizeof eta, live));
}

/* "  alert soc crit  alert fan warn": a field per rule not ok in a status
 * document (GET /api/v1/status), "" for none. Names come from the daemon's
 * config: escaped for the terminal. */
static const char *alerts_text(char *buf, size_t size, json_object *status) {
        json_object *active = json_get(status, "active_alerts");
        size_t len = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < json_len(active) && len < size; i++) {
                json_object *a = json_object_array_get_idx(active, i);
                const char *name = fmt_string(a, "name"), *state = fmt_string(a, "state");
                char n[128], st[32];
                len += (size_t) snprintf(buf + len, size - len, "  alert %s %s",
                                         text_escape_terminal(name, strlen(name), 24, n, sizeof n),
                                         text_escape_terminal(state, strlen(state), 8, st, sizeof st));
        }
        return buf;
}

/* "run 3 finished after 1h02m" or "run 3 aborted after 5m03s: <reason>" */
static void watch_format_end(char *line, size_t size, json_object *run) {
        json_object *start = json_get(run, "started_ms"), *end = json_get(run, "ended_ms");
        const char *reason = fmt_string(run, "abort_reason");
        char took[32] = "-";

        if (!json_is_null(start) && !json_is_null(end))
                fmt_seconds(took, sizeof took,
                            (double) (json_object_get_int64(end) - json_object_get_int64(start)) / 1000.0);
        snprintf(line, size, "run %s %s after %s%s%s", fmt_string(run, "id"), fmt_string(run, "state"), took,
                 strcmp(reason, "-") ? ": " : "", strcmp(reason, "-") ? reason : "");
}

/* Shows one polled document; returns true when the run has ended. */
static bool watch_show_run(const struct client *c, struct watch_out *o, struct spark *sp, json_object *run,
                           unsigned flags) {
        const char *state = fmt_string(run, "state");
        bool ended = strcmp(state, "running") != 0 && strcmp(state, "waiting") != 0;   /* waiting: for start_at */
        json_object *live = json_get(run, "live"), *status = NULL;
        char line[WATCH_LINE_MAX], spark[SPARK_CELLS * 16], alerts[WATCH_LINE_MAX / 2];

        if (c->json) {
                if (ended && (flags & WATCH_WAIT))
                        print_json(run);
                else if (!(flags & WATCH_WAIT))
                        puts(json_object_to_json_string_ext(run, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
                fflush(stdout);
        } else if (ended) {
                watch_format_end(line, sizeof line, run);
                watch_out_end(o, line);
        } else {
                json_object *temp = json_get(live, "temp_c");
                spark_add(sp, json_is_null(temp) ? NAN : json_object_get_double(temp),
                          json_object_get_boolean(json_get(live, "throttled")));
                watch_format_run(line, sizeof line, run, spark_format(sp, o->tty, spark, sizeof spark));
                /* the alerts are the status document's; without it the line goes without them */
                if (client_get_json(c->url, c, "/api/v1/status", &status) >= 0) {
                        alerts_text(alerts, sizeof alerts, status);
                        snprintf(line + strlen(line), sizeof line - strlen(line), "%s", alerts);
                        json_object_put(status);
                }
                watch_out_line(o, line);
        }
        return ended;
}

int watch_run(const struct client *c, unsigned id, long count, unsigned flags) {
        struct spark sp = {};
        struct watch_out o;
        struct timespec next;
        char path[64];

        watch_out_init(&o);
        clock_gettime(CLOCK_MONOTONIC, &next);
        snprintf(path, sizeof path, "/api/v1/runs/%u", id);
        for (long n = 1; ; n++) {
                json_object *run;
                bool ended;

                if (client_get_json(c->url, c, path, &run) < 0) {
                        watch_out_end(&o, NULL);
                        return 1;
                }
                if (n == 1 && !c->json)
                        spark_prefill(c, &sp, json_object_get_string(json_get(run, "sensor")));
                ended = watch_show_run(c, &o, &sp, run, flags);
                if (ended) {
                        int r = strcmp(fmt_string(run, "state"), "finished") == 0 ? 0 : EXIT_RUN_NOT_FINISHED;
                        json_object_put(run);
                        return r;
                }
                json_object_put(run);
                if (count > 0 && n >= count)
                        break;
                watch_sleep(&next);
                if (cli_interrupted)
                        break;
        }
        watch_out_end(&o, NULL);
        if (cli_interrupted && (flags & WATCH_WAIT))
                return cli_fail("interrupted; run %u goes on (\"heatcurvectl stop %u\" ends it)", id, id), EXIT_INTERRUPTED;
        return 0;
}

/* No run: the hottest sensor, once a second. */
static int watch_board(const struct client *c, long count) {
        struct spark sp = {};
        struct watch_out o;
        struct timespec next;
        char line[WATCH_LINE_MAX], buf[32], spark[SPARK_CELLS * 16], alerts[WATCH_LINE_MAX / 2];

        watch_out_init(&o);
        clock_gettime(CLOCK_MONOTONIC, &next);
        for (long n = 1; ; n++) {
                json_object *st, *hot, *run;

                if (client_get_json(c->url, c, "/api/v1/status", &st) < 0) {
                        watch_out_end(&o, NULL);
                        return 1;
                }
                hot = json_get(json_get(st, "sensors"), "hottest");
                run = json_get(st, "current_run");
                if (n == 1 && !c->json)
                        spark_prefill(c, &sp, json_object_get_string(json_get(hot, "id")));
                spark_add(&sp, json_is_null(json_get(hot, "celsius")) ? NAN :
                          json_object_get_double(json_get(hot, "celsius")), false);
                if (json_is_null(run))
                        snprintf(line, sizeof line, "no run  hottest %s %s °C %s", fmt_string(hot, "id"),
                                 fmt_number(buf, sizeof buf, json_get(hot, "celsius"), 1, 1),
                                 spark_format(&sp, o.tty, spark, sizeof spark));
                else    /* one started meanwhile: "heatcurvectl watch" follows it */
                        snprintf(line, sizeof line, "run %s %s started  hottest %s %s °C", fmt_string(run, "id"),
                                 fmt_string(run, "phase"), fmt_string(hot, "id"),
                                 fmt_number(buf, sizeof buf, json_get(hot, "celsius"), 1, 1));
                snprintf(line + strlen(line), sizeof line - strlen(line), "%s",
                         alerts_text(alerts, sizeof alerts, st));
                if (c->json)
                        puts(json_object_to_json_string_ext(st, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
                else
                        watch_out_line(&o, line);
                json_object_put(st);
                if ((count > 0 && n >= count) || (watch_sleep(&next), cli_interrupted))
                        break;
        }
        watch_out_end(&o, NULL);
        return 0;
}

static int watch_on_option(int option, const char *arg, void *userdata) {
        long *count = userdata;
        char *end;

        errno = 0;
        *count = strtol(arg, &end, 10);
        if (end == arg || *end || errno || *count <= 0)
                return usage("watch: --count needs a positive number, not \"%s\"", arg);
        return 0;
}

/* The current run's id: 1 and *ret, 0 when none runs, -1 on failure. */
static int watch_current_run(const struct client *c, unsigned *ret) {
        json_object *st, *run;
        int found;

        if (client_get_json(c->url, c, "/api/v1/status", &st) < 0)
                return -1;
        run = json_get(st, "current_run");
        found = !json_is_null(run) && json_object_get_int64(json_get(run, "id")) > 0;
        if (found)
                *ret = (unsigned) json_object_get_int64(json_get(run, "id"));
        json_object_put(st);
        return found;
}

int cmd_watch(struct client *c, int argc, char **argv) {
        static const struct option opts[] = { { "count", required_argument, NULL, 0x100 }, {} };
        long count = 0;
        unsigned id = 0;
        int first, r;

        first = cli_parse(c, argc, argv, opts, watch_on_option, &count, false, &r);
        if (first < 0)
                return r;
        if (argc - first > 1)
                return usage("watch: unexpected argument \"%s\"", argv[first + 1]);
        if (first < argc && !parse_id(argv[first], &id))
                return usage("watch: \"%s\" is not a run id", argv[first]);
        cli_catch_sigint();
        if (id == 0) {
                r = watch_current_run(c, &id);
                if (r < 0)
                        return 1;
                if (r == 0)
                        return watch_board(c, count);
        }
        return watch_run(c, id, count, 0);
}
