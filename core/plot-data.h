/* plot-data.h — what a run plot is drawn from, built from the API's documents, so the daemon and heatcurvectl draw the same bytes. */
#pragma once

#include <json-c/json.h>
#include <stddef.h>

#include "plot.h"
#include "samples-csv.h"

/*
 * The daemon and heatcurvectl (for runs on other daemons, fetched over
 * HTTP) fill this the same way: the run document (GET /api/v1/runs/{id},
 * run.json) gives label, board, date, sensor, phases, metrics and the safety
 * limit; the samples come from samples.csv (the daemon's arrays read from
 * it, or the file as GET /api/v1/runs/{id}/samples sends it); trip points are
 * added as levels. plot_data_finish() fits the curves and points `run` at
 * the arrays. The metrics are taken from the document, as rounded there, so
 * both sides draw the same numbers. Limitation: the document gives the
 * phases' starts in wall-clock ms while elapsed_s runs on the monotonic
 * clock, so after a wall clock step during a run the shaded phases (and
 * the compare alignment) are off by the step.
 */
struct plot_data {
        struct plot_run run;            /* valid after plot_data_finish() */
        unsigned id;
        double *t_s, *temp_c, *freq_hz, *work_rate;
        enum analysis_phase *phase;
        size_t n, cap;
        struct plot_phase phases[16];   /* the run's phases, s since it started */
        size_t n_phases;
        double safety_limit_c;          /* C, NaN when unknown */
        char label[128], board[128], date[32], sensor[128], work_unit[16];
        char quality[16];               /* the document's quality in a word: plot_data_quality() */
};

/* A run document's "quality" in a word, as heatcurvectl shows it: "" when
 * ok or not said; else "disturbed" when a metric is, or when none is
 * flagged (then a phase was); else "uncertain". */
const char *plot_data_quality(json_object *quality);

/* Starts d (zeroed) from a run document; err names a missing field. -EINVAL. */
int plot_data_from_doc(struct plot_data *d, json_object *run_doc, char *err, size_t errlen);
/* The samples one plot holds at most, shared among its runs (each of n
 * runs keeps PLOT_SAMPLES_MAX / n, evenly: struct samples_limit), in the
 * daemon and in heatcurvectl alike: 8 MB in the daemon's arrays. A day at
 * 1 Hz is drawn whole, a week from every eighth sample. */
#define PLOT_SAMPLES_MAX 131072
/* A samples.csv into d, line by line as samples_read() gives them (the
 * header first): at most limit samples (0 for all), evenly, as the daemon
 * keeps them. */
struct plot_data_reader {
        struct plot_data *d;
        struct samples_limit lim;
        size_t fixed;                   /* fixed columns the header names */
};
void plot_data_reader_init(struct plot_data_reader *rd, struct plot_data *d, size_t limit);
/* A row callback for samples_read(): userdata is the reader. -ENOMEM. */
int plot_data_read_row(void *userdata, char *line, bool header);
/* A whole samples.csv from f into d through a reader: samples_read()'s
 * result, with what was read before an error kept in d. */
int plot_data_read_file(struct plot_data *d, FILE *f, size_t limit);
/* One sample more, from a row as samples.csv reads back (the daemon's copy
 * of a live run: run_series_plot_data()); d grows to no more than limit
 * (0 for no bound). -ENOMEM. */
int plot_data_add(struct plot_data *d, const struct samples_row *row, enum analysis_phase phase, size_t limit);
/* A trip point as a level ("passive", "critical" ...); the same value twice is drawn once. */
void plot_data_add_level(struct plot_data *d, double temp_c, const char *label);
/* The trip points (and hwmon max/crit) of the run sensor, from a sensors
 * document (GET /api/v1/sensors); nothing when the sensor is not in it. */
void plot_data_levels_from_sensors(struct plot_data *d, json_object *sensors_doc);
/* Drops the samples whose time does not move forward (the first of two at
 * the same time stays), as the daemon does; adds the safety limit as a
 * level, fits the heating and cooling curves, and fills d->run. */
void plot_data_finish(struct plot_data *d);
void plot_data_free(struct plot_data *d);

/* The curve of a compare plot: times shifted so that 0 is the load start
 * (the start of the first stress phase, as t_since_load_s in samples.csv;
 * else the first stress sample; else the first sample). The
 * arrays point into d, whose t_s is shifted in place. */
void plot_data_curve(struct plot_data *d, const char *origin, struct plot_curve *ret);
