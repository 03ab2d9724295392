/* analyse.c — heatcurvectl analyse: the run metrics of any recording, offline, computed by the daemon's own analysis code. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analyse.h"
#include "analysis.h"
#include "cli.h"
#include "duration.h"
#include "json-metrics.h"
#include "json-util.h"
#include "recording.h"
#include "table.h"
#include "samples-csv.h"

/* Column names tried when the command line names none: the daemon's
 * samples.csv first (runs/run.h RUN_CSV_FIXED), then common spellings. */
static const char *const time_names[] = { "elapsed_s", "time_s", "time", "timestamp", "t", "seconds", "time_ms", NULL };
static const char *const temp_names[] = { "temp_c", "temperature_c", "temperature", "temp", "cpu_temp", "soc_temp", NULL };

/* Samples kept of a recording, as a run keeps them (RUN_SERIES_MAX): a
 * longer one keeps every 2nd, 4th ... row, evenly (struct samples_limit). */
#define ANALYSE_SAMPLES_MAX 131072

/* The recording as the analysis wants it: parallel arrays, read a row at a time. */
struct samples {
        bool has_freq, has_max, has_work, has_cooling, has_firmware, has_power; /* the optional columns exist */
        long freq_col, max_col, work_col, cooling_col, firmware_col, power_col;
        size_t n, cap;
        double *t, *temp, *freq, *max_hz, *work, *power;
        bool *cooling;
        signed char *firmware;
        enum analysis_phase *phase;
        struct samples_limit lim;
        char *work_unit;                        /* the last one named */
        int millidegrees;                       /* 1, 0, or -1 until a value decides */
        const char *phase_source;               /* how the load was found, for people */
        /* of every row, kept or not, as a run takes them (runs/run-store.c) */
        size_t rows, valid, stress;
        double peak;                            /* NaN until a row has a temperature */
        unsigned char load_seen;                /* 0 before the first stress row, 1 in its phase, 2 after it */
        double baseline;                        /* once load_seen: of the samples kept before the load */
        struct analysis_load_freq load_freq;    /* of the first stress phase */
        double t_first, t_last;
        char *t_last_text;                      /* the previous row's time cell */
        size_t t_last_size;
};

enum {
        OPT_TIME = 0x100, OPT_TEMP, OPT_PHASE, OPT_LOAD_START, OPT_LOAD_END, OPT_AMBIENT, OPT_POWER, OPT_HORIZON,
        OPT_TOLERANCE,
};

const struct option analyse_options[] = {
        { "time", required_argument, NULL, OPT_TIME }, { "temp", required_argument, NULL, OPT_TEMP },
        { "phase", required_argument, NULL, OPT_PHASE },
        { "load-start", required_argument, NULL, OPT_LOAD_START },
        { "load-end", required_argument, NULL, OPT_LOAD_END },
        { "ambient", required_argument, NULL, OPT_AMBIENT }, { "power", required_argument, NULL, OPT_POWER },
        { "horizon", required_argument, NULL, OPT_HORIZON },
        { "tolerance", required_argument, NULL, OPT_TOLERANCE }, {},
};

static int parse_seconds(const char *opt, const char *arg, double *ret) {
        char *end;

        errno = 0;
        *ret = strtod(arg, &end);
        if (errno || end == arg || *end || !isfinite(*ret))
                return usage("analyse: %s needs a number, not \"%s\"", opt, arg);
        return 0;
}

int analyse_on_option(int o, const char *arg, void *userdata) {
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
        case OPT_POWER:
                a->power_col = arg;
                return 0;
        case OPT_LOAD_START:
                return parse_seconds("--load-start", arg, &a->load_start);
        case OPT_LOAD_END:
                return parse_seconds("--load-end", arg, &a->load_end);
        case OPT_HORIZON: {
                uint64_t ms;
                if (duration_parse(arg, &ms) < 0 || ms == 0)
                        return usage("analyse: --horizon needs a duration (e.g. 30m), not \"%s\"", arg);
                a->horizon_s = (double) ms / 1000.0;
                return 0;
        }
        case OPT_TOLERANCE:
                if (parse_seconds("--tolerance", arg, &a->tolerance_c) < 0)
                        return -1;
                if (!(a->tolerance_c > 0))
                        return usage("analyse: --tolerance needs a positive number of °C, not \"%s\"", arg);
                return 0;
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
        free(s->power);
        free(s->cooling);
        free(s->firmware);
        free(s->phase);
        free(s->work_unit);
        free(s->t_last_text);
}

/* Room for cap samples. */
static int samples_grow(struct samples *s, size_t cap) {
#define GROW(field) do { \
                void *p = realloc(s->field, cap * sizeof *s->field); \
                if (!p) return -ENOMEM; \
                s->field = p; \
        } while (0)
        GROW(t); GROW(temp); GROW(freq); GROW(max_hz); GROW(work); GROW(power); GROW(cooling); GROW(firmware); GROW(phase);
#undef GROW
        s->cap = cap;
        return 0;
}

/* Every other sample kept, from the first (SAMPLES_HALVE). */
static void samples_halve_all(struct samples *s) {
#define HALVE(field) samples_halve(s->field, sizeof *s->field, s->n)
        HALVE(t); HALVE(temp); HALVE(freq); HALVE(max_hz); HALVE(work); HALVE(power); HALVE(cooling); HALVE(firmware);
        s->n = HALVE(phase);
#undef HALVE
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
static int cell_time(const struct recording *rec, long col, double *ret) {
        const char *cell = recording_cell(rec, col), *name = rec->names[col];
        size_t len = strlen(name);

        if (*cell && cell_number(cell, ret) && isfinite(*ret)) {
                if (len > 3 && strcasecmp(name + len - 3, "_ms") == 0)
                        *ret /= 1000.0;
                return 0;
        }
        if (recording_parse_iso8601(cell, ret))
                return 0;
        return cli_fail("%s:%zu: time \"%s\" in column \"%s\" is neither a number of seconds nor an ISO 8601 time",
                    rec->path, rec->line, cell, name);
}

/* The daemon's rule for sysfs values: 1..999 can only be whole degrees,
 * 1000 and more only millidegrees; the first value that decides, decides. */
static void samples_decide_unit(struct samples *s, double v) {
        if (s->millidegrees >= 0 || !isfinite(v) || v == 0)
                return;
        if (fabs(v) >= 1000)
                s->millidegrees = 1;
        else if (v > 0)
                s->millidegrees = 0;
}

static int cell_phase(const struct recording *rec, long col, enum analysis_phase *ret) {
        const char *cell = recording_cell(rec, col);

        if (strcasecmp(cell, "idle") == 0)
                *ret = ANALYSIS_PHASE_IDLE;
        else if (strcasecmp(cell, "stress") == 0)
                *ret = ANALYSIS_PHASE_STRESS;
        else if (strcasecmp(cell, "cooldown") == 0)
                *ret = ANALYSIS_PHASE_COOLDOWN;
        else
                return cli_fail("%s:%zu: phase \"%s\" in column \"%s\" is not idle, stress or cooldown", rec->path,
                            rec->line, cell, rec->names[col]);
        return 0;
}

/* Optional columns of the daemon's own samples.csv: which exist. */
static void samples_columns(struct samples *s, const struct recording *rec) {
        static const char *const f[] = { "freq_hz", NULL }, *const m[] = { "max_allowed_hz", NULL };
        static const char *const w[] = { "work_rate_per_s", "work_rate", NULL }, *const c[] = { "cooling_active", NULL };
        static const char *const fw[] = { "firmware_throttled", NULL }, *const pw[] = { "power_w", NULL };

        s->freq_col = recording_column_any(rec, f);
        s->max_col = recording_column_any(rec, m);
        s->work_col = recording_column_any(rec, w);
        s->cooling_col = recording_column_any(rec, c);
        s->firmware_col = recording_column_any(rec, fw);
        s->power_col = recording_column_any(rec, pw);
        s->has_freq = s->freq_col >= 0;
        s->has_max = s->max_col >= 0;
        s->has_work = s->work_col >= 0;
        s->has_cooling = s->cooling_col >= 0;
        s->has_firmware = s->firmware_col >= 0;
}

/* Their values in the current row, NaN when absent. */
struct optional_cells {
        double freq, max_hz, work, power;
        bool cooling;
        signed char firmware;
};

static void samples_optional(const struct samples *s, const struct recording *rec, struct optional_cells *o) {
        double v;

        o->freq = cell_number(recording_cell(rec, s->freq_col), &v) ? v : NAN;
        o->max_hz = cell_number(recording_cell(rec, s->max_col), &v) ? v : NAN;
        o->work = cell_number(recording_cell(rec, s->work_col), &v) ? v : NAN;
        o->power = cell_number(recording_cell(rec, s->power_col), &v) ? v : NAN;
        o->cooling = cell_number(recording_cell(rec, s->cooling_col), &v) && v > 0;
        o->firmware = (signed char) (cell_number(recording_cell(rec, s->firmware_col), &v) ? v > 0 : -1);
}

/* What every row counts for, kept or not: a peak or a dip in frequency
 * between two kept samples counts, as in a run. */
static void samples_count(struct samples *s, double y, enum analysis_phase phase, const struct optional_cells *o) {
        if (isfinite(y) && (isnan(s->peak) || y > s->peak))
                s->peak = y;
        if (phase == ANALYSIS_PHASE_STRESS && s->load_seen == 0) {
                s->baseline = analysis_idle_baseline(s->t, s->temp, s->phase, s->n);
                s->load_seen = 1;
        } else if (phase != ANALYSIS_PHASE_STRESS && s->load_seen == 1)
                s->load_seen = 2;
        if (s->load_seen == 1)
                analysis_load_freq_add(&s->load_freq, s->has_freq ? o->freq : NAN, s->has_max ? o->max_hz : NAN,
                                       s->has_cooling, o->cooling, s->has_firmware ? o->firmware : -1);
}

/* The load: a phase column, --load-start/--load-end (s from the first
 * sample), or else the whole recording. */
static int row_phase(const struct samples *s, const struct recording *rec, const struct analyse_args *a, long pc,
                     double t, enum analysis_phase *ret) {
        double since = t - s->t_first;

        if (pc >= 0)
                return cell_phase(rec, pc, ret);
        *ret = isnan(a->load_start) ? ANALYSIS_PHASE_STRESS :
               since < a->load_start ? ANALYSIS_PHASE_IDLE :
               isnan(a->load_end) || since < a->load_end ? ANALYSIS_PHASE_STRESS : ANALYSIS_PHASE_COOLDOWN;
        return 0;
}

/* The previous row's time cell, for the message of a time that goes back. */
static int samples_keep_time_text(struct samples *s, const char *cell) {
        size_t len = strlen(cell) + 1;

        if (len > s->t_last_size) {
                char *p = realloc(s->t_last_text, len);
                if (!p)
                        return -ENOMEM;
                s->t_last_text = p;
                s->t_last_size = len;
        }
        memcpy(s->t_last_text, cell, len);
        return 0;
}

/* Kept or not, by the limit's stride; the arrays halved when full. */
static int samples_take(struct samples *s, double t, double y, enum analysis_phase phase, const struct recording *rec) {
        unsigned what = samples_limit_next(&s->lim, s->n);
        struct optional_cells o;

        samples_optional(s, rec, &o);
        samples_count(s, y, phase, &o);

        if (what & SAMPLES_HALVE)
                samples_halve_all(s);
        if (!(what & SAMPLES_TAKE))
                return 0;
        if (s->n == s->cap && samples_grow(s, s->cap ? (s->cap * 2 < ANALYSE_SAMPLES_MAX ? s->cap * 2 :
                                                        ANALYSE_SAMPLES_MAX) : 1024) < 0)
                return -ENOMEM;
        s->t[s->n] = t;
        s->temp[s->n] = y;
        s->phase[s->n] = phase;
        s->freq[s->n] = o.freq;
        s->max_hz[s->n] = o.max_hz;
        s->work[s->n] = o.work;
        s->power[s->n] = o.power;
        s->cooling[s->n] = o.cooling;
        s->firmware[s->n] = o.firmware;
        s->n++;
        return 0;
}

static int samples_row(struct samples *s, const struct recording *rec, const struct analyse_args *a, long tc,
                       long yc, long pc) {
        enum analysis_phase phase = ANALYSIS_PHASE_IDLE;
        double t, y;

        if (cell_time(rec, tc, &t) < 0)
                return -1;
        if (s->rows > 0 && !(t > s->t_last))
                return cli_fail("%s:%zu: time %s is not after the previous row's %s", rec->path, rec->line,
                            recording_cell(rec, tc), s->t_last_text);
        if (!cell_number(recording_cell(rec, yc), &y) || isinf(y))
                return cli_fail("%s:%zu: temperature \"%s\" in column \"%s\" is not a number", rec->path,
                            rec->line, recording_cell(rec, yc), rec->names[yc]);
        samples_decide_unit(s, y);
        if (s->rows == 0)
                s->t_first = t;
        if (row_phase(s, rec, a, pc, t, &phase) < 0)
                return -1;
        if (samples_keep_time_text(s, recording_cell(rec, tc)) < 0 || samples_take(s, t, y, phase, rec) < 0)
                return cli_fail("%s: out of memory", rec->path);
        s->t_last = t;
        s->rows++;
        s->valid += !isnan(y);
        s->stress += phase == ANALYSIS_PHASE_STRESS;
        return 0;
}

/* The work unit a row names, the last one kept. */
static int samples_unit(struct samples *s, const char *unit) {
        if (!*unit || (s->work_unit && strcmp(s->work_unit, unit) == 0))
                return 0;
        free(s->work_unit);
        s->work_unit = strdup(unit);
        return s->work_unit ? 0 : -ENOMEM;
}

static int samples_gather(struct samples *s, struct recording *rec, const struct analyse_args *a) {
        long tc = column_find(rec, a->time_col, time_names, "time", "--time");
        long yc = tc < 0 ? -1 : column_find(rec, a->temp_col, temp_names, "temperature", "--temp");
        long pc = -1, uc = recording_column(rec, "work_unit");
        int e;

        if (yc < 0)
                return -1;
        if (a->phase_col || isnan(a->load_start)) {
                static const char *const phase_names[] = { "phase", NULL };
                pc = a->phase_col ? column_find(rec, a->phase_col, NULL, "phase", "--phase")
                                  : recording_column_any(rec, phase_names);
                if (a->phase_col && pc < 0)
                        return -1;
        }
        samples_limit_init(&s->lim, ANALYSE_SAMPLES_MAX);
        samples_columns(s, rec);
        if (a->power_col && (s->power_col = column_find(rec, a->power_col, NULL, "power", "--power")) < 0)
                return -1;
        s->has_power = s->power_col >= 0;
        s->millidegrees = -1;
        s->peak = NAN;
        s->phase_source = pc >= 0 ? "phase column" :
                          isnan(a->load_start) ? "whole recording" : "--load-start/--load-end";
        while ((e = recording_next(rec)) > 0) {
                if (samples_row(s, rec, a, tc, yc, pc) < 0)
                        return -1;
                if (uc >= 0 && samples_unit(s, recording_cell(rec, uc)) < 0)
                        return cli_fail("%s: out of memory", rec->path);
        }
        if (e < 0)
                return -1;
        if (s->valid < 4)
                return cli_fail("%s: %zu sample%s with a temperature; the analysis needs at least 4", rec->path,
                            s->valid, s->valid == 1 ? "" : "s");
        if (s->millidegrees < 0)
                s->millidegrees = 0;
        if (s->millidegrees) {                                  /* millidegrees -> C */
                for (size_t i = 0; i < s->n; i++)
                        s->temp[i] /= 1000.0;
                s->peak /= 1000.0;
                s->baseline /= 1000.0;
        }
        return 0;
}

/* The metrics object of GET /api/v1/runs/{id} (the one encoder in core),
 * then the plateau as the stop rule saw it at the end of the data. */
static json_object *metrics_json(const struct run_metrics *m, const char *work_unit, const struct analysis_plateau *p) {
        json_object *o = json_run_metrics(m, work_unit);

        json_object_object_add(o, "predicted_plateau_c", json_new_number(p->plateau_c, 2));
        json_object_object_add(o, "predicted_plateau_ci95_c", json_new_number(p->ci95_c, 2));
        json_object_object_add(o, "predicted_plateau_low_c", json_new_number(p->low_c, 2));
        json_object_object_add(o, "predicted_plateau_high_c", json_new_number(p->high_c, 2));
        json_object_object_add(o, "plateau_reached", json_object_new_boolean(p->reached));
        return o;
}

/* What until: plateau computed on the load's samples at its last one. */
static void load_plateau(const struct samples *s, const struct analyse_args *args, struct analysis_plateau *ret) {
        size_t a = 0, b;

        while (a < s->n && s->phase[a] != ANALYSIS_PHASE_STRESS)
                a++;
        for (b = a; b < s->n && s->phase[b] == ANALYSIS_PHASE_STRESS; b++)
                ;
        if (analysis_check_plateau_horizon(s->t + a, s->temp + a, b - a, ANALYSIS_PLATEAU_WINDOW_S, args->horizon_s,
                                           args->tolerance_c, ret) < 0)
                *ret = (struct analysis_plateau) { .plateau_c = NAN, .ci95_c = NAN, .low_c = NAN, .high_c = NAN,
                                                   .slope_c_per_s = NAN };
}

/* What until: plateau would decide at the end of the load. */
static void plateau_print(const struct samples *s, const struct analyse_args *a, const struct analysis_plateau *p) {
        size_t i = 0, j;
        char buf[96], h[32];
        json_object *v = json_new_number(p->plateau_c, 2), *lo = json_new_number(p->low_c, 2);
        json_object *hi = json_new_number(p->high_c, 2);

        while (i < s->n && s->phase[i] != ANALYSIS_PHASE_STRESS)
                i++;
        for (j = i; j < s->n && s->phase[j] == ANALYSIS_PHASE_STRESS; j++)
                ;
        double rise = j > i ? analysis_rise_so_far(s->t + i, s->temp + i, j - i) : NAN;
        duration_format((uint64_t) ((a->horizon_s > 0 ? a->horizon_s : ANALYSIS_PLATEAU_HORIZON_S) * 1000), h, sizeof h);
        printf("\nuntil: plateau at the end of the load (±%.2g °C over %s): plateau %s; %s\n",
               a->tolerance_c > 0 ? a->tolerance_c : ANALYSIS_PLATEAU_TOLERANCE_C, h,
               fmt_plateau(buf, sizeof buf, v, lo, hi, isnan(rise) ? 0 : rise),
               p->reached ? "would stop" : "would go on");
        json_object_put(v);
        json_object_put(lo);
        json_object_put(hi);
}

static int analyse_print(const struct samples *s, const struct recording *rec, json_object *metrics, bool json) {
        json_object *run, *runs;

        if (json) {
                print_json(metrics);
                return 0;
        }
        printf("%s: %zu samples over %.0f s, %zu under load (%s); temperatures in %s\n\n", rec->path, s->rows,
               s->t_last - s->t_first, s->stress, s->phase_source, s->millidegrees ? "millidegrees" : "°C");
        run = json_object_new_object();
        runs = json_object_new_array();
        json_object_object_add(run, "metrics", json_object_get(metrics));
        json_object_array_add(runs, run);
        metrics_print(runs);
        json_object_put(runs);
        return 0;
}

int analyse_check_args(const struct analyse_args *a, const char *cmd) {
        if (a->phase_col && !isnan(a->load_start))
                return usage("%s: --phase and --load-start exclude each other", cmd);
        if (!isnan(a->load_end) && (isnan(a->load_start) || !(a->load_end > a->load_start)))
                return usage("%s: --load-end needs a --load-start before it", cmd);
        return 0;
}

/* The metrics of the samples gathered, over ambient_c when known. */
static json_object *samples_metrics(const struct samples *s, const struct analyse_args *a, double ambient_c) {
        struct analysis_samples in = {
                .n = s->n, .t_s = s->t, .temp_c = s->temp, .phase = s->phase, .ambient_c = ambient_c,
                .horizon_s = a->horizon_s,
                .freq_hz = s->has_freq ? s->freq : NULL, .max_allowed_hz = s->has_max ? s->max_hz : NULL,
                .cooling_active = s->has_cooling ? s->cooling : NULL,
                .firmware_throttled = s->has_firmware ? s->firmware : NULL, .work_rate = s->has_work ? s->work : NULL,
                .power_w = s->has_power ? s->power : NULL,
                /* over every row, not only those kept */
                .load_freq = s->load_seen ? &s->load_freq : NULL, .baseline_c = s->load_seen ? &s->baseline : NULL,
        };
        struct run_metrics m;
        struct analysis_plateau p;

        if (analysis_compute_metrics(&in, &m) < 0)
                analysis_metrics_init(&m, ambient_c);
        else if (!isnan(s->peak))
                m.peak_c = s->peak;
        load_plateau(s, a, &p);
        return metrics_json(&m, s->work_unit, &p);
}

/* A run file's run document (export --format run), or NULL. */
static json_object *recording_run(const struct recording *rec) {
        json_object *run = rec->from_json ? json_get(rec->doc, "run") : NULL;

        return json_object_is_type(run, json_type_object) ? run : NULL;
}

int analyse_source(const char *path, const struct analyse_args *a, json_object **ret) {
        struct recording rec;
        struct samples s = {};
        json_object *run, *doc = NULL;
        double ambient_c = a->ambient_c;
        int r;

        r = recording_open(path, &rec) < 0 || samples_gather(&s, &rec, a) < 0 ? 1 : 0;
        if (r == 0) {
                run = recording_run(&rec);
                if (run && isnan(ambient_c) && json_object_is_type(json_get(run, "ambient_c"), json_type_double))
                        ambient_c = json_object_get_double(json_get(run, "ambient_c"));
                /* a run file is its run, its metrics computed here again; a CSV only its metrics */
                doc = run ? json_object_get(run) : json_object_new_object();
                if (!run) {
                        json_object_object_add(doc, "label", NULL);
                        json_object_object_add(doc, "state", json_object_new_string("recorded"));
                }
                json_object_object_add(doc, "source", json_object_new_string(path));
                json_object_object_add(doc, "metrics", samples_metrics(&s, a, ambient_c));
                *ret = doc;
        }
        samples_free(&s);
        recording_free(&rec);
        return r;
}

int cmd_analyse(struct client *c, int argc, char **argv) {
        struct analyse_args a = { .load_start = NAN, .load_end = NAN, .ambient_c = NAN };
        struct recording rec;
        struct samples s = {};
        int first, r;

        first = cli_parse(c, argc, argv, analyse_options, analyse_on_option, &a, false, &r);
        if (first < 0)
                return r;
        if (argc - first != 1)
                return usage("analyse needs one file (a CSV with a header, or a run export)");
        if ((r = analyse_check_args(&a, "analyse")) != 0)
                return r;
        r = recording_open(argv[first], &rec) < 0 || samples_gather(&s, &rec, &a) < 0 ? 1 : 0;
        if (r == 0) {
                json_object *o = samples_metrics(&s, &a, a.ambient_c);
                analyse_print(&s, &rec, o, c->json);
                if (!c->json) {
                        struct analysis_plateau p;
                        load_plateau(&s, &a, &p);
                        plateau_print(&s, &a, &p);
                }
                json_object_put(o);
        }
        samples_free(&s);
        recording_free(&rec);
        return r;
}
