/* run.h — one run: an idle / stress / cooldown protocol driven by the sampling tick, its safety, storage and metrics. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "analysis.h"
#include "samples-csv.h"
#include "sensors.h"
#include "stress.h"

#define RUN_PHASES_MAX 16
#define RUN_LABEL_MAX 128
#define RUN_NOTES_MAX 4096
#define RUN_ARGV_MAX 64                 /* strings of a command load */
#define RUN_REASON_MAX 1024             /* bytes of an abort reason or recording error */
#define RUN_REPEAT_MAX 20               /* runs one definition may ask for ("repeat") */
#define RUN_START_AT_AHEAD_MS 60000     /* "start_at": at most this far ahead ... */
#define RUN_START_AT_LATE_MS 1000       /* ... and no more than this in the past */
#define RUN_SENSOR_LOSS_TICKS 3         /* consecutive failed reads of the run sensor under load */
#define RUN_SAFETY_DEFAULT_C 85.0       /* without a hot/critical trip */
#define RUN_SAFETY_MARGIN_C 5.0         /* below the lowest hot/critical trip */
#define RUN_QUIET_LOAD 0.25             /* CPU load (0..1) beyond the run's own above which a phase was disturbed */
#define RUN_FIT_RESIDUAL_POOR_C 1.0     /* C: a fit this far off the samples is uncertain */
#define RUN_PLATEAU_CI_WIDE_C 2.0       /* C: a plateau known no better than this is uncertain */
#define RUN_CLOCK_STEP_MS 2000          /* a wall clock jump larger than this is noted as a step */
#define RUN_PRIOR_RUNS_MAX 8            /* earlier runs a prior time constant is learned from: the newest */
/* Samples a run keeps in memory, live or read back to recover it: 8 MB.
 * A longer run keeps every 2nd, 4th ... sample (struct samples_limit);
 * 36 h at 1 Hz or 3.6 h at 10 Hz fit whole. As many as one answer
 * draws (PLOT_SAMPLES_MAX), so a live run's plot takes them as they are. */
#define RUN_SERIES_MAX 131072

enum run_state {
        RUN_RUNNING,
        RUN_FINISHED,
        RUN_ABORTED,
        RUN_INTERRUPTED,
        _RUN_STATE_MAX,
};

enum phase_until {
        UNTIL_DURATION,                 /* a fixed duration_ms */
        UNTIL_STABLE,
        UNTIL_PLATEAU,
        UNTIL_BASELINE,
        _UNTIL_MAX,
};

struct run_phase {
        enum analysis_phase kind;
        enum phase_until until;
        uint64_t duration_ms, min_ms, max_ms;   /* ms; min 0 = none */
        uint64_t window_ms;             /* ms, slope window of stable/plateau */
        double tolerance_c;             /* C, until: plateau stops when the plateau is known within +-this; 0: default */
        bool has_stress;
        struct stress_spec stress;      /* its argv and io_dir point to the two below */
        char **command;                 /* command argv, NULL-terminated; owned; NULL unless a command load */
        char *stress_dir;               /* io: where the test files go; owned; NULL until the run starts */
        int64_t started_ms, ended_ms;   /* Unix ms, 0 = not yet: labels */
        int64_t started_mono_ms;        /* CLOCK_MONOTONIC ms: what the phase's duration is measured on */
        char end_reason[16];            /* "duration", "plateau", "stopped" ...; "" while running */
};

/* The series a run keeps in memory for its analysis, one entry per sample. */
struct run_series {
        size_t n, cap;
        double *t_s;                    /* s since the run started */
        double *temp_c;                 /* the run sensor, NaN when it failed */
        double *freq_hz, *max_hz;       /* first policy's current and unthrottled max */
        double *work_rate;              /* work unit per second */
        double *load;                   /* measured CPU load of the whole board, 0..1, NaN when unknown */
        double *ambient_c;              /* the ambient sensor, NaN when none or failed */
        bool *cooling;
        signed char *firmware_throttled; /* the Pi firmware throttles or caps the clock: 1, 0, -1 unknown */
        enum analysis_phase *phase;
        double *power_w;                /* W the board draws, NaN when unknown */
        bool has_power;                 /* a sample came from a board with a power meter */
        struct samples_limit lim;       /* run_series_limit(); none when zeroed */
        /* Of every sample appended, kept or not: */
        double last_t_s;                /* the last one's t_s */
        double peak_c;                  /* the highest temp_c, when peak_known: a peak between two kept samples counts */
        bool peak_known;
        struct run_series_change {      /* where the phase column changes, at most RUN_PHASES_MAX */
                enum analysis_phase kind;
                double t_s;             /* its first sample's */
        } changes[RUN_PHASES_MAX];
        size_t n_changes;
        unsigned char load_seen;        /* 0 before the first stress sample, 1 in its phase, 2 after it */
        double baseline_c;              /* once load_seen: analysis_idle_baseline() of the samples before it */
        struct analysis_load_freq load_freq;    /* of the first stress phase: a dip between two kept samples counts */
};

/* One entry of the series. */
struct run_sample {
        double t_s, temp_c, freq_hz, max_hz, work_rate, load, ambient_c;
        bool cooling;
        int firmware_throttled;
        enum analysis_phase phase;
        bool has_power;                 /* the board has a power meter: power_w is its reading */
        double power_w;                 /* W, NaN when it failed */
};

struct run;
struct run_load;

/* The two clocks of one moment, ms. */
struct run_now {
        int64_t wall_ms;                /* Unix time: labels */
        int64_t mono_ms;                /* CLOCK_MONOTONIC: durations */
};

/* What the engine needs from its owner (runs.c), and nothing else of the daemon. */
struct run_host {
        sd_event *event;                /* the loads' child sources and kill timers */
        const struct sensors *sensors;  /* the latest reading; the owner keeps it current */
        unsigned fans_on;               /* fans the daemon switches that are on: cooling too */
        /* The run reached its final state (its load may still be stopping). */
        void (*ended)(struct run_host *host, struct run *r);
};

/* Where a run goes and what it defaults to; resolved when it starts. */
struct run_settings {
        const char *state_dir;          /* runs/<id>/ is created below it */
        const char *stress_dir;         /* io loads' files; "" = state_dir */
        double safety_limit_c;          /* C; 0 = lowest hot/critical trip - margin, else the default */
        const char *ambient_sensor;     /* a sensor measuring the room, "" or NULL for none */
};

struct run {
        /* The record: what run.json holds, for a live run and a finished one alike. */
        unsigned id;
        char label[RUN_LABEL_MAX * 4];  /* RUN_LABEL_MAX - 1 characters of UTF-8 at most */
        char *notes;
        enum run_state state;
        size_t n_phases, phase_index;
        struct run_phase phases[RUN_PHASES_MAX];
        char abort_reason[RUN_REASON_MAX];
        int64_t created_ms, ended_ms;   /* Unix ms */
        double ambient_c;               /* C, NaN when not known: given, or the ambient sensor's idle median */
        char ambient_sensor[SENSORS_ID_MAX];    /* the room's sensor, "" for none */
        double safety_limit_c;          /* C */
        char sensor[SENSORS_ID_MAX];
        struct board_info board;
        struct run_metrics metrics;
        char work_unit[16];
        bool recording_ok;
        char recording_error[RUN_REASON_MAX];
        size_t n_samples;               /* rows written */
        unsigned clock_steps;           /* wall clock steps seen during the run */
        unsigned imported_id;           /* its id on the daemon it was exported from, 0 for a run made here */
        int64_t imported_ms;            /* Unix ms it was imported, 0 for a run made here */
        unsigned repeat_count;          /* runs its definition asked for ("repeat"), 1 for a single run */
        unsigned repeat_of;             /* id of the series' first run, 0 for a single run */
        unsigned repeat_index;          /* 1..repeat_count: which of the series; 0 for a single run */
        bool remount;                   /* the series waits for POST .../continue between its runs */
        double phase_load[RUN_PHASES_MAX];      /* mean CPU load (0..1) beyond the run's own, per phase; NaN unknown */
        struct analysis_prior prior;    /* the board's time constant from earlier runs of its label and sensor
                                         * (runs.c); tau_s NaN: none. Its use is metrics.prior_use */
        unsigned prior_ids[RUN_PRIOR_RUNS_MAX]; /* the runs it came from, newest first */
        size_t n_prior_ids;

        /* The engine: set while the run is live (host is NULL for a run read from disk). */
        struct run_host *host;
        int64_t created_mono_ms;        /* CLOCK_MONOTONIC ms at the start: the series' time 0 */
        int64_t clock_offset_ms;        /* wall - monotonic, ms, as last seen */
        double baseline_c;              /* C, fixed when the idle phase ends; NaN before */
        double predicted_plateau_c;     /* C, live estimate under load */
        double plateau_ci95_c;          /* C, the larger half of its 95 % interval ... */
        double plateau_low_c, plateau_high_c;   /* C, ... the interval itself */
        double forecast_plateau_c;      /* C, where the stress phase settles (analysis_forecast()); NaN: not known */
        double forecast_eta_s;          /* s from the last sample until that is known within 0.5 C; NaN: not known */
        int64_t last_forecast_ms;       /* CLOCK_MONOTONIC ms of the last forecast */
        double max_allowed_hz;          /* Hz, the run policy's scaling max at start: below it under load is throttling */
        struct run_series series;       /* limited to RUN_SERIES_MAX */
        struct run_sample last;         /* the newest sample, kept in the series or not */
        bool sampled;                   /* last holds one */
        bool prune_failed;              /* runs.c: past retention, could not be deleted (said once) */
        struct run_load *load;          /* the current phase's load, NULL for none */
        struct run_load *stopping;      /* loads of earlier phases not yet reaped, a list */
        uint64_t work_prev;             /* work counter at the previous tick */
        int64_t work_prev_ms;
        double work_rate;               /* per second, last tick */
        unsigned sensor_failures;       /* consecutive */
        size_t phase_start[RUN_PHASES_MAX];     /* index in series of each begun phase's first sample */
        int64_t last_plateau_check_ms;
        bool prior_contradiction_said;  /* the journal was told the data contradict the prior */
        bool prior_stopped;             /* until: plateau stopped on an interval the prior bounded */
        bool unsaved;                   /* the last run.json write failed: retried until it goes through */
        char dir[600];                  /* state_dir/runs/<id> */
        int csv_fd;                     /* samples.csv, O_APPEND; -1 when closed */
        char *row;                      /* one formatted row */
        double *values;                 /* its per-sensor values, in header order */
        size_t row_size;                /* bytes */
        char (*csv_ids)[SENSORS_CHANNEL_ID_MAX]; /* the channels of the header's per-sensor columns,
                                                   * temperatures then frequencies */
        struct sensor_channel *csv_ch;  /* those channels in host->sensors, found again at a re-probe */
        size_t csv_temps, csv_policies;
        int64_t start_at_ms;            /* Unix ms the first phase starts at ("start_at"), 0: at once */
        bool waiting;                   /* running, its first phase not begun until start_at_ms */
        sd_event_source *start_timer;   /* CLOCK_REALTIME, at start_at_ms while waiting */
        char power_id[SENSORS_CHANNEL_ID_MAX];  /* the power meter of the power_w column, "" for none */
        struct sensor_channel power_ch; /* that channel in host->sensors, found again at a re-probe */
};

/* A zeroed run with every "unknown" marked (NaN, no file open). */
struct run *run_alloc(void);
/* Parse and validate a POSTed definition; err names the field. (run-def.c) */
int run_parse(json_object *def, const struct sensors *s, struct run **ret, char *err, size_t errlen);
/* The label and notes of o (a definition, or a run being imported; where
 * prefixes the field in err) as run_parse() takes them: strings, valid
 * UTF-8 without NUL, at most RUN_LABEL_MAX - 1 and RUN_NOTES_MAX
 * characters. NULL where absent. (run-def.c) */
int run_check_texts(json_object *o, const char *where, const char **label, const char **notes,
                    char *err, size_t errlen);
/* Resolve the defaults, create state_dir/runs/<id> and its files, start the
 * first phase. On error nothing is left on disk and err says why. */
int run_start(struct run *r, struct run_host *host, const struct run_settings *set, unsigned id,
              char *err, size_t errlen);
/* Called after every sensor read while the run is live or its load stops,
 * with the tick's wall clock (a label) and monotonic clock (what phases,
 * windows and rates are measured on), both ms. */
void run_tick(struct run *r, int64_t wall_ms, int64_t mono_ms);
/* host->sensors was probed again: samples.csv finds its columns' sensors anew. */
void run_sensors_changed(struct run *r);
/* End the run now: aborted (an alert, a failure) or stopped by a request. */
void run_abort(struct run *r, const char *reason);
void run_stop(struct run *r);
/* End the run as interrupted: the daemon stops, not the user's choice (a
 * restart, a package upgrade, a shutdown); its samples and metrics are kept. */
void run_interrupt(struct run *r, const char *reason);
/* Writes run.json again if the last write failed (a full disk that has
 * room again): the first abort reason is kept. 1 when written, 0 when there
 * was nothing to write, -errno. */
int run_save_pending(struct run *r);
/* The load of an ended run is still stopping. */
bool run_stress_stopping(const struct run *r);
/* Stops and reaps a load still running (blocking, bounded), frees. Accepts NULL. */
void run_free(struct run *r);

/* How far to trust the numbers. (run-quality.c) */
enum run_quality {
        RUN_QUALITY_OK,
        RUN_QUALITY_DISTURBED,          /* the board was busy with something else in the phase it comes from */
        RUN_QUALITY_UNCERTAIN,          /* the fit behind it is poor or its interval wide */
        RUN_QUALITY_UNKNOWN,            /* not known (too few samples, no such phase) */
};
/* Each phase's CPU load beyond the run's own load, from the series. */
void run_quality_phases(struct run *r, const struct run_series *s);
/* The CPU load (0..1 of the whole board) phase p's own stress load makes:
 * workers x duty; NaN when it cannot be told (io waits, a command is
 * anything). (run-quality.c) */
double run_phase_own_load(const struct run *r, const struct run_phase *p);
/* A phase whose load beyond the run's own was above RUN_QUIET_LOAD. */
bool run_phase_disturbed(const struct run *r, size_t phase);
/* The quality of one metric of run_metrics, by its name in the document. */
enum run_quality run_metric_quality(const struct run *r, const char *metric);
const char *run_quality_to_string(enum run_quality q);
/* The mean load of the series over the last window_s seconds from index
 * first on, NaN when unknown; for until=stable, which waits for a quiet board. */
double run_series_mean_load(const struct run_series *s, size_t first, double window_s);
json_object *run_quality_to_json(const struct run *r);
void run_quality_from_json(json_object *o, struct run *r);

/* run.json: the one declaration of the document, both ways. (run-json.c) */
json_object *run_to_json(const struct run *r, bool live);
/* A document run_to_json() wrote; err names what is wrong. The run has no host. */
int run_from_json(json_object *doc, struct run **ret, char *err, size_t errlen);
const char *run_state_to_string(enum run_state s);
/* Its state's name, or "waiting" while it waits for start_at. */
const char *run_state_name(const struct run *r);
/* The live forecast of a run in a stress phase, {"plateau_c", "eta_s" (null
 * when not within reach), "tolerance_c"}; NULL (null) out of one. */
json_object *run_forecast_to_json(const struct run *r);
const char *run_phase_kind_to_string(enum analysis_phase k);
const char *run_until_to_string(enum phase_until u);
/* The enum value, or -EINVAL. */
int run_phase_kind_from_string(const char *s);
int run_until_from_string(const char *s);

/* The in-memory series and the metrics computed over it. (run-store.c) */
/* Bounds the empty series s to limit samples (at least 2; 0 for none),
 * evenly spread over all the samples appended (struct samples_limit). */
void run_series_limit(struct run_series *s, size_t limit);
/* 1 when a limited series dropped every other sample kept before it took
 * x (what was at index i is at (i + 1) / 2 now, when i was even), 0, or
 * -ENOMEM. x itself is kept or not by the limit's stride. */
int run_series_append(struct run_series *s, const struct run_sample *x);
/* One row of a samples.csv read back (no ambient: run.json keeps it);
 * a work unit it names goes into unit. */
struct samples_row;
int run_series_append_row(struct run_series *s, const struct samples_row *row, enum analysis_phase phase,
                          char *unit, size_t unitlen);
/* A copy of s as run_store_read_series() reads it back from the
 * samples.csv written of it (samples_row_as_read()): a live run's series
 * stands for its file without reading it. ret is empty, maybe limited;
 * s may be limited too, and then ret keeps no more of the run than s
 * does. 0 or -ENOMEM. */
int run_series_copy_as_read(const struct run_series *s, struct run_series *ret);
/* The samples of s that run_series_copy_as_read() would copy with this
 * limit (0 for none), added to d (plot_data_add()), with the same numbers:
 * the five columns a plot draws, 36 bytes a sample where a copy takes 62.
 * 0 or -ENOMEM, with the samples added before kept in d. */
struct plot_data;
int run_series_plot_data(const struct run_series *s, size_t limit, struct plot_data *d);
void run_series_free(struct run_series *s);
void run_series_metrics(const struct run_series *s, double ambient_c, struct run_metrics *ret);
/* The same with the plateau over a horizon (s; 0: the default). */
void run_series_metrics_horizon(const struct run_series *s, double ambient_c, double horizon_s,
                                struct run_metrics *ret);
/* The same with a prior time constant for the heating fit (NULL: none). */
void run_series_metrics_prior(const struct run_series *s, double ambient_c, double horizon_s,
                              const struct analysis_prior *prior, struct run_metrics *ret);
/* The run's prior when it has one, else NULL. (run-store.c) */
const struct analysis_prior *run_prior(const struct run *r);
/* No prior: a run made elsewhere, or read back without one. */
void run_prior_clear(struct run *r);
/* The horizon of a run's plateau: the max of its first stress phase when
 * that runs until plateau, else 0 (ANALYSIS_PLATEAU_HORIZON_S). */
double run_plateau_horizon_s(const struct run *r);
/* C, the phase's plateau tolerance: its "tolerance", or ANALYSIS_PLATEAU_TOLERANCE_C. */
double run_phase_tolerance_c(const struct run_phase *p);

/* A run as one file: {"format": "heatcurve-run", "format_version": 1,
 * "run": run.json, "samples_csv": samples.csv}. (run-file.c) */
/* The file of an ended run whose files are in dir, made as it is read:
 * run_file_export_read() fills buf with its next bytes, 0 at the end,
 * -errno when samples.csv changed under it. -EBUSY while it runs. */
struct run_file_export;
int run_file_export_open(const struct run *r, const char *dir, struct run_file_export **ret, char *err,
                         size_t errlen);
ssize_t run_file_export_read(struct run_file_export *x, char *buf, size_t max);
void run_file_export_free(struct run_file_export *x);
/* A run file's text (len bytes) made ready for a JSON parser without its
 * samples: the samples_csv string is decoded in place in text, as json-c
 * decodes it, and is *csv (*csv_len bytes, not NUL-terminated); *rest
 * (caller frees) is the document with "" in its place. 1 when done, 0 when
 * text is not plain JSON with one top-level samples_csv string (then
 * nothing is changed and the parser reads it all), -ENOMEM. */
int run_file_split(char *text, size_t len, char **rest, size_t *rest_len, const char **csv, size_t *csv_len);
/* Checks doc as hostile input, creates state_dir/runs/<id> with the run's
 * files, and returns it with its metrics computed from its samples (csv,
 * len bytes, or doc's samples_csv when csv is NULL), at most
 * RUN_SERIES_MAX of them in memory; err names what is wrong (-EINVAL) or
 * what failed. Nothing is written before all is checked, and nothing stays
 * on failure. */
int run_file_import(json_object *doc, const char *csv, size_t len, const char *state_dir, unsigned id,
                    struct run **ret, char *err, size_t errlen);

/* Runs on disk. (run-store.c) */
int run_store_dir(const char *state_dir, unsigned id, char *buf, size_t size);
/* run.json of r, replaced atomically. On a full disk (ENOSPC, EDQUOT) the
 * spare of run_store_reserve() is given up to make the room; once r has
 * ended and its run.json is written, the spare goes. */
int run_store_write(const struct run *r, const char *dir);
/* Bytes set aside for run.json on a full disk: a run.json is a few KiB, one
 * with 16 phases and 4 KiB of notes in escapes stays well below. */
#define RUN_JSON_SPARE_BYTES (64 * 1024)
/* Sets room aside in dir (dir/run.json.spare) for the run.json writes of a
 * run that fills the disk, so the reason it ended survives. -errno; a run
 * start refuses ENOSPC and EDQUOT, and goes on without one on other errors
 * (its last write may then have to wait for room). */
int run_store_reserve(const char *dir);
/* Every run under state_dir/runs, oldest first; runs left "running" by a
 * crash are rewritten as "interrupted" with metrics from their samples.
 * max_id gets the highest id of any run directory, readable or not, so a
 * new id never points at an existing directory. Returns the count or -errno. */
int run_store_load_all(const char *state_dir, struct run ***ret, size_t *n, unsigned *max_id,
                       char *warn, size_t warnlen);
/* Removes state_dir/runs/<id> with its files, never through a symlink, and
 * only when it holds nothing but the files the daemon writes (all or
 * nothing): -ELOOP or -ENOTDIR for a link or a file in its place,
 * -ENOTEMPTY for anything else in it, with err naming it; 0 when it is gone
 * already. -errno. */
int run_store_delete(const char *state_dir, unsigned id, char *err, size_t errlen);
/* The fixed columns of every complete row of dir/samples.csv; returns the
 * last row's time_ms, 0 for none. unit gets the work unit seen last. */
int64_t run_store_read_series(const char *dir, struct run_series *s, char *unit, size_t unitlen);
/* The same for the samples.csv at path. It touches nothing but its
 * arguments, so it may run on any thread. */
int64_t run_series_read_file(const char *path, struct run_series *s, char *unit, size_t unitlen);
