/* run.h — runs: an idle / stress / cooldown protocol driven by the sampling tick, its safety, storage and metrics. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <systemd/sd-event.h>

#include "analysis.h"
#include "sensors.h"
#include "stress.h"

#define RUN_PHASES_MAX 16
#define RUN_LABEL_MAX 128
#define RUN_NOTES_MAX 4096
#define RUN_FLUSH_MS 5000               /* samples.csv reaches the kernel at least this often */
#define RUN_SENSOR_LOSS_TICKS 3         /* consecutive failed reads of the run sensor under load */
#define RUN_SAFETY_DEFAULT_C 85.0       /* without a hot/critical trip */
#define RUN_SAFETY_MARGIN_C 5.0         /* below the lowest hot/critical trip */

/* samples.csv starts with these columns; then one per temperature sensor
 * ("<id>_c") and per cpufreq policy ("<policy>_hz"). */
#define RUN_CSV_FIXED "time_ms,elapsed_s,phase,temp_c,hottest_c,freq_hz,max_allowed_hz,cooling_active,load,work_rate_per_s,work_unit"
#define RUN_CSV_FIXED_COLUMNS 11

enum run_state {
        RUN_RUNNING,
        RUN_FINISHED,
        RUN_ABORTED,
        RUN_INTERRUPTED,
};

enum phase_until {
        UNTIL_DURATION,                 /* a fixed duration_ms */
        UNTIL_STABLE,
        UNTIL_PLATEAU,
        UNTIL_BASELINE,
};

struct run_phase {
        enum analysis_phase kind;
        enum phase_until until;
        uint64_t duration_ms, min_ms, max_ms;   /* ms; min 0 = none */
        uint64_t window_ms;             /* ms, slope window of stable/plateau */
        bool has_load;
        struct load_spec load;          /* strings below are owned here */
        char *command[65];              /* command argv, NULL-terminated */
        char load_dir[512];             /* io: where the test files go */
        int64_t started_ms, ended_ms;   /* Unix ms, 0 = not yet */
        const char *end_reason;         /* static string, NULL while running */
};

/* The series a run keeps in memory for its analysis, one entry per sample. */
struct run_series {
        size_t n, cap;
        double *t_s;                    /* s since the run started */
        double *temp_c;                 /* the run sensor, NaN when it failed */
        double *freq_hz, *max_hz;       /* first policy's current and unthrottled max */
        double *work_rate;              /* work unit per second */
        bool *cooling;
        enum analysis_phase *phase;
};

struct daemon;

struct run {
        unsigned id;
        char label[RUN_LABEL_MAX];
        char *notes;
        enum run_state state;
        size_t n_phases, phase_index;
        struct run_phase phases[RUN_PHASES_MAX];
        char abort_reason[1024];
        int64_t created_ms, ended_ms;   /* Unix ms */
        double ambient_c;               /* C, NaN when not given */
        double safety_limit_c;          /* C */
        char sensor[SENSORS_ID_MAX];
        struct board_info board;
        struct run_metrics metrics;
        double baseline_c;              /* C, fixed when the idle phase ends; NaN before */
        double predicted_plateau_c;     /* C, live estimate under load */
        double plateau_ci95_c;
        double max_allowed_hz;          /* Hz, the run policy's scaling max at start: below it under load is throttling */

        struct daemon *daemon;
        struct run_series series;
        struct stress *stress;
        sd_event_source *child_sources[LOAD_WORKERS_MAX];
        sd_event_source *kill_timer;    /* SIGKILL what ignored SIGTERM */
        uint64_t work_prev;             /* work counter at the previous tick */
        int64_t work_prev_ms;
        double work_rate;               /* per second, last tick */
        char work_unit[16];
        unsigned sensor_failures;       /* consecutive */
        size_t phase_first;             /* index in series of the current phase's first sample */
        int64_t last_plateau_check_ms;

        char dir[600];                  /* state_dir/runs/<id> */
        FILE *csv;
        bool recording_ok;
        char recording_error[1024];
        size_t n_samples;               /* rows written */
        int64_t flushed_ms;
        char (*csv_ids)[SENSORS_ID_MAX]; /* the per-sensor columns of the header, temperatures then policies */
        size_t csv_temps, csv_policies;
};

/* Parse and validate a POSTed definition; err names the field. */
int run_parse(json_object *def, const struct sensors *s, struct run **ret, char *err, size_t errlen);
/* Take the next id, create its directory and files, start the first phase. */
int run_start(struct daemon *d, struct run *r, char *err, size_t errlen);
/* Called after every sensor read while the run is running. */
void run_tick(struct run *r, int64_t now_ms);
/* End the run now: stopped by a request, or the daemon shuts down. */
void run_abort(struct run *r, const char *reason, int64_t now_ms);
void run_stop(struct run *r, int64_t now_ms);
void run_free(struct run *r);

json_object *run_to_json(const struct run *r, bool live);
json_object *run_metrics_to_json(const struct run_metrics *m, const char *work_unit);
const char *run_state_to_string(enum run_state s);
const char *run_phase_kind_to_string(enum analysis_phase k);

int run_series_append(struct run_series *s, double t_s, double temp_c, double freq_hz, double max_hz,
                      double work_rate, bool cooling, enum analysis_phase phase);
void run_series_free(struct run_series *s);
void run_series_metrics(const struct run_series *s, double ambient_c, struct run_metrics *ret);

/* Runs on disk. */
int run_store_dir(const char *state_dir, unsigned id, char *buf, size_t size);
/* Atomic replace: temp file, fsync, rename, fsync the directory. */
int run_store_write_json(const char *dir, json_object *doc);
json_object *run_store_read_json(const char *dir);
/* Every runs/<id>/run.json under state_dir, oldest first; runs left
 * "running" by a crash are rewritten as "interrupted" with metrics from
 * their samples. Returns the count or -errno. */
int run_store_load_all(const char *state_dir, json_object ***ret, size_t *n, char *warn, size_t warnlen);
int run_store_delete(const char *state_dir, unsigned id);
/* The fixed columns of every complete row of dir/samples.csv; returns the
 * last row's time_ms, 0 for none. unit gets the work unit seen last. */
int64_t run_store_read_series(const char *dir, struct run_series *s, char *unit, size_t unitlen);
