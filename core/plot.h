/* plot.h — the three plots (a run, runs compared, the history) as SVG, from plain data: no I/O, no daemon. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis.h"

/*
 * Every function renders into a new string (caller frees) and returns 0 or
 * -errno: -EINVAL for bad arguments (a size out of range, NULL arrays with
 * n > 0), -ENOMEM. Output is deterministic: the same input gives the same
 * bytes. Whatever the number of samples, a series is drawn as at most
 * 2 x PLOT_BUCKETS_MAX points (min and max of each bucket, in time order),
 * so the cost is O(n) to scan plus a bounded document.
 */

#define PLOT_WIDTH_DEFAULT 960          /* px */
#define PLOT_HEIGHT_DEFAULT 600         /* px */
#define PLOT_SIZE_MIN 320               /* px, either side */
#define PLOT_SIZE_MAX 4096              /* px, either side */
#define PLOT_BUCKETS_MAX 1000           /* per series, at most one per px of the plot area */
#define PLOT_COMPARE_MAX 7              /* runs in one compare plot: one palette colour each */

/* A phase of a run on its time axis. */
struct plot_phase {
        enum analysis_phase kind;
        double start_s, end_s;          /* s since the run started */
        bool disturbed;                 /* other load than the run's in it: hatched */
};

/* A horizontal reference line: a trip point, the safety limit. */
struct plot_level {
        double temp_c;                  /* C */
        char label[48];                 /* "passive", "critical", "safety limit" */
};

#define PLOT_LEVELS_MAX 16

/* One run: its samples, phases, fits and metrics. Optional arrays may be NULL. */
struct plot_run {
        const char *label;              /* the user's label, may be "" */
        const char *board;              /* board model, may be "" */
        const char *date;               /* start time, already formatted, may be "" */
        const char *sensor;             /* the run sensor's id, may be "" */
        const char *quality;            /* "disturbed" or "uncertain": said in the title and legend; NULL or "" */
        size_t n;
        const double *t_s;              /* s since the run started, increasing */
        const double *temp_c;           /* C, NaN for a missing value */
        const double *freq_hz;          /* Hz, optional */
        const double *work_rate;        /* work_unit per second, optional */
        const char *work_unit;          /* "ops", "bytes", "ios"; NULL or "" for none */
        size_t n_phases;
        const struct plot_phase *phases;
        struct analysis_fit heat, cool; /* model ANALYSIS_MODEL_NONE: not drawn */
        struct run_metrics metrics;
        size_t n_levels;
        struct plot_level levels[PLOT_LEVELS_MAX];
};

/* The curves drawn over the samples: the first stress segment and the
 * first cooldown after it, as analysis_compute_metrics() finds them, each
 * fitted by analysis_fit_plateau(). That fit works on a bounded number of
 * bins, so a live run's plot, drawn again every few seconds, costs the
 * same at any phase length; the heating curve is the fit the run's
 * plateau_c comes from. Fits that cannot be made are left as
 * ANALYSIS_MODEL_NONE. */
void plot_run_fits(const double *t_s, const double *temp_c, const enum analysis_phase *phase, size_t n,
                   struct analysis_fit *heat, struct analysis_fit *cool);

/* The run's temperature over time with phases, fits, plateau band, baseline,
 * ambient and levels; a second panel with CPU frequency (and work rate);
 * a title and a metrics box. */
int plot_run_svg(const struct plot_run *r, unsigned width, unsigned height, char **ret, size_t *ret_len);

/* One run of a comparison: its curve with t = 0 at the load start. */
struct plot_curve {
        const char *label;              /* may be "" */
        unsigned id;                    /* shown when label is "" */
        const char *origin;             /* where the run comes from ("host:port"), may be NULL */
        const char *quality;            /* "disturbed" or "uncertain": said in the legend; NULL or "" */
        size_t n;
        const double *t_s;              /* s since the load started (negative before), increasing */
        const double *temp_c;           /* C */
        struct run_metrics metrics;     /* ambient_c / baseline_c give the rise */
};

/* Curves aligned on the load start, one colour each, a legend with key
 * metrics, and a table of the differences from the first run. With rise,
 * y is the temperature over ambient (over the baseline for a run without
 * ambient, which the legend says). 1 to PLOT_COMPARE_MAX curves. */
int plot_compare_svg(const struct plot_curve *curves, size_t n, bool rise, unsigned width, unsigned height,
                     char **ret, size_t *ret_len);

/* "2026-12-01 08:00:00" (UTC) for Unix ms: no time_t (32-bit boards pass
 * 2038 too), no locale, no time zone. */
void plot_format_utc(int64_t ms, char *buf, size_t size);

enum plot_kind {
        PLOT_KIND_TEMP,                 /* C */
        PLOT_KIND_FREQ,                 /* Hz, drawn in MHz */
        PLOT_KIND_LOAD,                 /* fraction, drawn in % */
        _PLOT_KIND_MAX,
};

/* One column of a history query: min, max and mean per bucket. */
struct plot_band {
        const char *id;
        enum plot_kind kind;
        const double *min, *max, *mean;         /* n_buckets each, NaN where no data */
        double max_hz;                          /* Hz, a frequency's hardware maximum; 0 unknown */
};

/* A bucket of the history counts as throttled when a frequency's mean is
 * below its max_hz by more than PLOT_THROTTLE_TOLERANCE (as a run counts a
 * sample) while the load was at least PLOT_THROTTLE_LOAD: a governor that
 * follows demand lowers the clock of an idle board, which is no throttling.
 * A plot without a load series goes by the frequency alone. The dashboard's share
 * of the last 15 min follows the same rule. */
#define PLOT_THROTTLE_TOLERANCE 0.005
#define PLOT_THROTTLE_LOAD 0.5
bool plot_throttled(double freq_hz, double max_hz, double load);

/* A stretch of wall-clock time on the history: a run. */
struct plot_span {
        int64_t from_ms, to_ms;         /* Unix ms */
        const char *label;              /* "#3 case A"; may be "" */
};

/* A rule's change to warn or crit, marked on the history. */
struct plot_alert_mark {
        int64_t t_ms;                   /* Unix ms */
        bool crit;                      /* crit, else warn */
        const char *label;              /* "soc crit 85.0 °C" */
};

/* What the history marks over its series; counts may be 0, arrays NULL then. */
struct plot_history_marks {
        size_t n_levels;
        struct plot_level levels[PLOT_LEVELS_MAX];      /* trip points of the temperatures shown */
        size_t n_runs;
        const struct plot_span *runs;
        size_t n_alerts;
        const struct plot_alert_mark *alerts;
};

/* The history: one panel per kind present, a min/max band and the mean
 * line per series, time of day (UTC) on the x axis. t_ms are bucket starts;
 * a gap longer than two buckets lifts the pen. A frequency panel whose
 * values do not change is a thin strip. Throttled buckets are shaded over
 * every panel; marks (may be NULL) add the trip lines to the temperature
 * panel, each run's start and end with its label, and alert marks. */
int plot_history_svg(const int64_t *t_ms, size_t n_buckets, int64_t bucket_ms, int64_t from_ms, int64_t to_ms,
                     const struct plot_band *bands, size_t n_bands, const struct plot_history_marks *marks,
                     unsigned width, unsigned height, char **ret, size_t *ret_len);
