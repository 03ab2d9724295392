/* analyse.c — heatcurvectl analyse: the run metrics of any recording, offline, computed by the daemon's own analysis code. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analysis.h"
#include "cli.h"
#include "json-metrics.h"
#include "json-util.h"
#include "recording.h"

/* Column names tried when the command line names none: the daemon's
 * samples.csv first (runs/run.h RUN_CSV_FIXED), then common spellings. */
static const char *const time_names[] = { "elapsed_s", "time_s", "time", "timestamp", "t", "seconds", "time_ms", NULL };
static const char *const temp_names[] = { "temp_c", "temperature_c", "temperature", "temp", "cpu_temp", "soc_temp", NULL };

struct analyse_args {
        const char *time_col, *temp_col, *phase_col;
        double load_start, load_end;            /* s from the first sample; NaN when not given */
        double ambient_c;                       /* NaN when not given */
};

/* The recording as the analysis wants it: parallel arrays. */
struct samples {
        bool has_freq, has_max, has_work, has_cooling, has_firmware;   /* the optional columns exist */
        size_t n;
        double *t, *temp, *freq, *max_hz, *work;
        bool *cooling;
        signed char *firmware;
        enum analysis_phase *phase;
        const char *work_unit;
        bool millidegrees;
        const char *phase_source;               /* how the load was found, for people */
};

enum {
        OPT_TIME = 0x100, OPT_TEMP, OPT_PHASE, OPT_LOAD_START, OPT_LOAD_END, OPT_AMBIENT,
};

static int parse_seconds(const char *opt, const char *arg, double *ret) {
        char *end;

        errno = 0;
        *ret = strtod(arg, &end);
        if (errno || end == arg || *end || !isfinite(*ret))
                return usage("analyse: %s needs a number, not \"%s\"", opt, arg);
        return 0;
}

static int analyse_on_option(int o, const char *arg, void *userdata) {
        struct analyse_args *a = userdata;

        switch (o) {
        case OPT_TIME:
                a->time_col = arg;
                return 0;
        case OPT_TEMP:
                a->temp_col = arg;
                return 0;
        case OPT_PHASE:
                a->phase_col = arg;
                return 0;
        case OPT_LOAD_START:
                return parse_seconds("--load-start", arg, &a->load_start);
        case OPT_LOAD_END:
                return parse_seconds("--load-end", arg, &a->load_end);
        default:
                return parse_seconds("--ambient", arg, &a->ambient_c);
        }
}

static void samples_free(struct samples *s) {
        free(s->t);
        free(s->temp);
        free(s->freq);
        free(s->max_hz);
        free(s->work);
        free(s->cooling);
        free(s->firmware);
        free(s->phase);
}

static int samples_alloc(struct samples *s, size_t n) {
        s->t = calloc(n + 1, sizeof(double));
        s->temp = calloc(n + 1, sizeof(double));
        s->freq = calloc(n + 1, sizeof(double));
        s->max_hz = calloc(n + 1, sizeof(double));
        s->work = calloc(n + 1, sizeof(double));
        s->cooling = calloc(n + 1, sizeof(bool));
        s->firmware = calloc(n + 1, sizeof(signed char));
        s->phase = calloc(n + 1, sizeof(enum analysis_phase));
        return s->t && s->temp && s->freq && s->max_hz && s->work && s->cooling && s->firmware && s->phase ? 0 : -ENOMEM;
}

/* A number cell; "" is NaN (a sensor that did not answer). */
static bool cell_number(const char *cell, double *ret) {
        char *end;

        if (!*cell) {
                *ret = NAN;
                return true;
        }
        *ret = strtod(cell, &end);
        return end != cell && *end == '\0';
}

/* The first column whose name contains `part` (ASCII case ignored). */
static long column_containing(const struct recording *rec, const char *part) {
        for (size_t k = 0; k < rec->cols; k++)
                if (strcasestr(rec->names[k], part))
                        return (long) k;
        return -1;
}

static long column_find(const struct recording *rec, const char *given, const char *const *defaults,
                        const char *what, const char *option) {
        long k = given ? recording_column(rec, given) : recording_column_any(rec, defaults);

        if (k < 0 && !given && defaults == temp_names)
                k = column_containing(rec, "temp");
        if (k >= 0)
                return k;
        if (given)
                cli_fail("%s:1: no column \"%s\" in the header (%s)", rec->path, given, option);
        else
                cli_fail("%s:1: no %s column in the header (tried %s, ...); name it with %s", rec->path, what,
                     defaults[0], option);
        return -1;
}

/* Seconds: a number (milliseconds when the column is called *_ms), or an
 * ISO 8601 time. */
static int cell_time(const struct recording *rec, size_t row, long col, double *ret) {
        const char *cell = recording_cell(rec, row, col), *name = rec->names[col];
        size_t len = strlen(name);

        if (*cell && cell_number(cell, ret) && isfinite(*ret)) {
                if (len > 3 && strcasecmp(name + len - 3, "_ms") == 0)
                        *ret /= 1000.0;
                return 0;
        }
        if (recording_parse_iso8601(cell, ret))
                return 0;
        return cli_fail("%s:%zu: time \"%s\" in column \"%s\" is neither a number of seconds nor an ISO 8601 time",
                    rec->path, rec->line[row], cell, name);
}

/* The daemon's rule for sysfs values: 1..999 can only be whole degrees,
 * 1000 and more only millidegrees; the first value that decides, decides. */
static bool column_in_millidegrees(const struct recording *rec, long col) {
        for (size_t i = 0; i < rec->rows; i++) {
                double v;
                if (!cell_number(recording_cell(rec, i, col), &v) || !isfinite(v) || v == 0)
                        continue;
                if (fabs(v) >= 1000)
                        return true;
                if (v > 0)
                        return false;
        }
        return false;
}

static int cell_phase(const struct recording *rec, size_t row, long col, enum analysis_phase *ret) {
        const char *cell = recording_cell(rec, row, col);

        if (strcasecmp(cell, "idle") == 0)
                *ret = ANALYSIS_PHASE_IDLE;
        else if (strcasecmp(cell, "stress") == 0)
                *ret = ANALYSIS_PHASE_STRESS;
        else if (strcasecmp(cell, "cooldown") == 0)
                *ret = ANALYSIS_PHASE_COOLDOWN;
        else
                return cli_fail("%s:%zu: phase \"%s\" in column \"%s\" is not idle, stress or cooldown", rec->path,
                            rec->line[row], cell, rec->names[col]);
        return 0;
}

/* Optional columns of the daemon's own samples.csv, NaN when absent. */
static void samples_optional(struct samples *s, const struct recording *rec, size_t row, size_t i) {
        static const char *const f[] = { "freq_hz", NULL }, *const m[] = { "max_allowed_hz", NULL };
        static const char *const w[] = { "work_rate_per_s", "work_rate", NULL }, *const c[] = { "cooling_active", NULL };
        static const char *const fw[] = { "firmware_throttled", NULL };
        double v;

        s->has_freq = recording_column_any(rec, f) >= 0;
        s->has_max = recording_column_any(rec, m) >= 0;
        s->has_work = recording_column_any(rec, w) >= 0;
        s->has_cooling = recording_column_any(rec, c) >= 0;
        s->has_firmware = recording_column_any(rec, fw) >= 0;
        s->freq[i] = cell_number(recording_cell(rec, row, recording_column_any(rec, f)), &v) ? v : NAN;
        s->max_hz[i] = cell_number(recording_cell(rec, row, recording_column_any(rec, m)), &v) ? v : NAN;
        s->work[i] = cell_number(recording_cell(rec, row, recording_column_any(rec, w)), &v) ? v : NAN;
        s->cooling[i] = cell_number(recording_cell(rec, row, recording_column_any(rec, c)), &v) && v > 0;
        s->firmware[i] = (signed char) (cell_number(recording_cell(rec, row, recording_column_any(rec, fw)), &v) ?
                                        v > 0 : -1);
}

static int samples_row(struct samples *s, const struct recording *rec, size_t row, long tc, long yc, long pc) {
        size_t i = s->n;
        double y;

        if (cell_time(rec, row, tc, &s->t[i]) < 0)
                return -1;
        if (i > 0 && !(s->t[i] > s->t[i - 1]))
                return cli_fail("%s:%zu: time %s is not after the previous row's %s", rec->path, rec->line[row],
                            recording_cell(rec, row, tc), recording_cell(rec, row - 1, tc));
        if (!cell_number(recording_cell(rec, row, yc), &y) || isinf(y))
                return cli_fail("%s:%zu: temperature \"%s\" in column \"%s\" is not a number", rec->path,
                            rec->line[row], recording_cell(rec, row, yc), rec->names[yc]);
        s->temp[i] = s->millidegrees ? y / 1000.0 : y;          /* millidegrees -> C */
        if (pc >= 0 && cell_phase(rec, row, pc, &s->phase[i]) < 0)
                return -1;
        samples_optional(s, rec, row, i);
        s->n++;
        return 0;
}

/* The load: a phase column, --load-start/--load-end (s from the first
 * sample), or else the whole recording. */
static void samples_phases(struct samples *s, const struct analyse_args *a, bool has_column) {
        double t0 = s->n ? s->t[0] : 0;

        if (has_column) {
                s->phase_source = "phase column";
                return;
        }
        s->phase_source = isnan(a->load_start) ? "whole recording" : "--load-start/--load-end";
        for (size_t i = 0; i < s->n; i++) {
                double t = s->t[i] - t0;
                s->phase[i] = isnan(a->load_start) ? ANALYSIS_PHASE_STRESS :
                              t < a->load_start ? ANALYSIS_PHASE_IDLE :
                              isnan(a->load_end) || t < a->load_end ? ANALYSIS_PHASE_STRESS : ANALYSIS_PHASE_COOLDOWN;
        }
}

static int samples_read(struct samples *s, const struct recording *rec, const struct analyse_args *a) {
        long tc = column_find(rec, a->time_col, time_names, "time", "--time");
        long yc = tc < 0 ? -1 : column_find(rec, a->temp_col, temp_names, "temperature", "--temp");
        long pc = -1, uc = recording_column(rec, "work_unit");
        size_t valid = 0;

        if (yc < 0)
                return -1;
        if (a->phase_col || isnan(a->load_start)) {
                static const char *const phase_names[] = { "phase", NULL };
                pc = a->phase_col ? column_find(rec, a->phase_col, NULL, "phase", "--phase")
                                  : recording_column_any(rec, phase_names);
                if (a->phase_col && pc < 0)
                        return -1;
        }
        if (samples_alloc(s, rec->rows) < 0)
                return cli_fail("%s: out of memory", rec->path);
        s->millidegrees = column_in_millidegrees(rec, yc);
        for (size_t row = 0; row < rec->rows; row++) {
                if (samples_row(s, rec, row, tc, yc, pc) < 0)
                        return -1;
                valid += !isnan(s->temp[s->n - 1]);
                if (uc >= 0 && *recording_cell(rec, row, uc))
                        s->work_unit = recording_cell(rec, row, uc);
        }
        if (valid < 4)
                return cli_fail("%s: %zu sample%s with a temperature; the analysis needs at least 4", rec->path, valid,
                            valid == 1 ? "" : "s");
        samples_phases(s, a, pc >= 0);
        return 0;
}

/* The metrics object of GET /api/v1/runs/{id} (the one encoder in core),
 * then the plateau as the stop rule saw it at the end of the data. */
static json_object *metrics_json(const struct run_metrics *m, const char *work_unit, const struct analysis_plateau *p) {
        json_object *o = json_run_metrics(m, work_unit);

        json_object_object_add(o, "predicted_plateau_c", json_new_number(p->plateau_c, 2));
        json_object_object_add(o, "predicted_plateau_ci95_c", json_new_number(p->ci95_c, 2));
        return o;
}

/* What until: plateau computed on the load's samples at its last one. */
static void load_plateau(const struct samples *s, struct analysis_plateau *ret) {
        size_t a = 0, b;

        while (a < s->n && s->phase[a] != ANALYSIS_PHASE_STRESS)
                a++;
        for (b = a; b < s->n && s->phase[b] == ANALYSIS_PHASE_STRESS; b++)
                ;
        if (analysis_check_plateau_window(s->t + a, s->temp + a, b - a, ANALYSIS_PLATEAU_WINDOW_S, ret) < 0)
                *ret = (struct analysis_plateau) { .plateau_c = NAN, .ci95_c = NAN, .slope_c_per_s = NAN };
}

static int analyse_print(const struct samples *s, const struct recording *rec, json_object *metrics, bool json) {
        json_object *run, *runs;
        size_t stress = 0;

        if (json) {
                print_json(metrics);
                return 0;
        }
        for (size_t i = 0; i < s->n; i++)
                stress += s->phase[i] == ANALYSIS_PHASE_STRESS;
        printf("%s: %zu samples over %.0f s, %zu under load (%s); temperatures in %s\n\n", rec->path, s->n,
               s->t[s->n - 1] - s->t[0], stress, s->phase_source, s->millidegrees ? "millidegrees" : "°C");
        run = json_object_new_object();
        runs = json_object_new_array();
        json_object_object_add(run, "metrics", json_object_get(metrics));
        json_object_array_add(runs, run);
        metrics_print(runs);
        json_object_put(runs);
        return 0;
}

int cmd_analyse(struct client *c, int argc, char **argv) {
        static const struct option opts[] = {
                { "time", required_argument, NULL, OPT_TIME }, { "temp", required_argument, NULL, OPT_TEMP },
                { "phase", required_argument, NULL, OPT_PHASE },
                { "load-start", required_argument, NULL, OPT_LOAD_START },
                { "load-end", required_argument, NULL, OPT_LOAD_END },
                { "ambient", required_argument, NULL, OPT_AMBIENT }, {},
        };
        struct analyse_args a = { .load_start = NAN, .load_end = NAN, .ambient_c = NAN };
        struct recording rec;
        struct samples s = {};
        int first, r;

        first = cli_parse(c, argc, argv, opts, analyse_on_option, &a, false, &r);
        if (first < 0)
                return r;
        if (argc - first != 1)
                return usage("analyse needs one file (a CSV with a header, or a run export)");
        if (a.phase_col && !isnan(a.load_start))
                return usage("analyse: --phase and --load-start exclude each other");
        if (!isnan(a.load_end) && (isnan(a.load_start) || !(a.load_end > a.load_start)))
                return usage("analyse: --load-end needs a --load-start before it");
        r = recording_read(argv[first], &rec) < 0 || samples_read(&s, &rec, &a) < 0 ? 1 : 0;
        if (r == 0) {
                struct analysis_samples in = {
                        .n = s.n, .t_s = s.t, .temp_c = s.temp, .phase = s.phase, .ambient_c = a.ambient_c,
                        .freq_hz = s.has_freq ? s.freq : NULL, .max_allowed_hz = s.has_max ? s.max_hz : NULL,
                        .cooling_active = s.has_cooling ? s.cooling : NULL,
                        .firmware_throttled = s.has_firmware ? s.firmware : NULL, .work_rate = s.has_work ? s.work : NULL,
                };
                struct run_metrics m;
                struct analysis_plateau p;
                if (analysis_compute_metrics(&in, &m) < 0)
                        analysis_metrics_init(&m, a.ambient_c);
                load_plateau(&s, &p);
                json_object *o = metrics_json(&m, s.work_unit, &p);
                analyse_print(&s, &rec, o, c->json);
                json_object_put(o);
        }
        samples_free(&s);
        recording_free(&rec);
        return r;
}
