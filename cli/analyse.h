/* analyse.h — the metrics of a recording, offline: what heatcurvectl analyse and compare share. */
#pragma once

#include <getopt.h>
#include <json-c/json.h>

/* How the columns of a recording are found (analyse's options). */
struct analyse_args {
        const char *time_col, *temp_col, *phase_col, *power_col;  /* power: W, optional */
        double load_start, load_end;            /* s from the first sample; NaN when not given */
        double ambient_c;                       /* C; NaN when not given */
        double horizon_s;                       /* until: plateau's horizon (the phase's max); 0: the default */
        double tolerance_c;                     /* until: plateau's tolerance; 0: the default */
};

/* --time, --temp, --phase, --load-start, --load-end, --ambient, --power,
 * --horizon, --tolerance, for
 * cli_parse() with analyse_on_option() and a struct analyse_args. */
extern const struct option analyse_options[];
int analyse_on_option(int o, const char *arg, void *userdata);
/* The options' combinations: 0, or the usage error's exit status. */
int analyse_check_args(const struct analyse_args *a, const char *cmd);

/* A recording (a CSV with a header, or a run file) as a run document with
 * its metrics computed here: a run file's run (its ambient unless
 * a->ambient_c is given), a CSV's {"label": null, "state": "recorded"};
 * both with "source": path. 0, or 1 after printing why not. */
int analyse_source(const char *path, const struct analyse_args *a, json_object **ret);
