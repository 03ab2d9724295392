/* runs.h — the one owner of runs: the live run, the finished ones, the next id. Everything else asks here. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <systemd/sd-event.h>

#include "run.h"
#include "snapshot.h"

struct runs;

/* What the owner is told by the daemon, at start and at each reload. */
struct runs_settings {
        char state_dir[512];
        char stress_dir[512];           /* "" = state_dir */
        char ambient_sensor[96];        /* a sensor measuring the room, "" for none */
        bool commands_allowed;          /* command loads may run: a token is configured, so a request
                                         * that got this far carried it */
        bool root_loads_refused;        /* heatcurved runs as root and [runs] allow_root is no: no load */
        bool own_load_only;             /* the board is heated by the runs' loads alone (the simulator with
                                         * load_source = own): other programs' load disturbs no run */
        double safety_limit_c;          /* C; 0 = from the trips */
        unsigned keep;                  /* ended runs kept, the newest; 0 = all */
        uint64_t keep_ms;               /* ms an ended run is kept after it ended; 0 = for ever */
        char unusable[1200];            /* why the state directory cannot take runs; "" when it can */
};

/* Reads the runs already in state_dir (unless it is unusable). warn gets
 * what could not be read, "" for nothing. -errno only when out of memory. */
int runs_new(sd_event *event, const struct runs_settings *set, struct runs **ret, char *warn, size_t warnlen);
/* Ends a live run as interrupted with reason, waits (bounded) for its load, frees. Accepts NULL. */
void runs_free(struct runs *rs, const char *reason);
void runs_set_settings(struct runs *rs, const struct runs_settings *set);

/* The sampling tick's consumer: the live run records the snapshot and
 * moves on; an ended run's load is reaped. */
void runs_on_sample(void *userdata, const struct snapshot *snap);
/* The sensors were (re)probed: the old set is gone. Before the next sample. */
void runs_on_sensors(void *userdata, const struct sensors *s);

/* Parse, validate and start a run from a JSON definition (a request body,
 * NULL for none). Errors, with err saying why: -EBUSY a run is live; -EAGAIN
 * the last run's load is still stopping; -EROFS the state directory is
 * unusable; -EBADMSG not JSON; -EINVAL a bad definition (err names the
 * field, or a key given twice); -EACCES a command load without a token
 * configured, or any load while root_loads_refused; other -errno: storage. */
int runs_start(struct runs *rs, const char *def_json, size_t len, const struct run **ret,
               char *err, size_t errlen);
/* A definition with "repeat": N > 1 starts a series: its runs start one
 * after the other, each when the last finished and the board is back within
 * 1 C of its idle baseline (at most 30 min later), and with "remount" when
 * runs_continue() says the case is back on. A run of the series that does
 * not finish, or a stop, ends it; so does a restart of the daemon. While
 * one waits, runs_start() answers -EBUSY. */
/* The waiting series of run id goes on: -ENOENT no such run, -EALREADY
 * its series does not wait for a remount. */
int runs_continue(struct runs *rs, unsigned id, char *err, size_t errlen);
/* -ENOENT no such run; -EALREADY it is not running (nor the last run of a
 * waiting series, which the stop ends). */
int runs_stop(struct runs *rs, unsigned id, char *err, size_t errlen);
/* Abort the live run, if any, with this reason (an alert at crit). */
void runs_abort(struct runs *rs, const char *reason);
/* Removes its directory, then forgets it. -ENOENT no such run; -EBUSY it is
 * live; other -errno: storage (the run stays). */
int runs_delete(struct runs *rs, unsigned id, char *err, size_t errlen);

/* An ended run as one self-describing JSON document, to be read with
 * run_file_export_read() (run-file.c): -ENOENT no such run, -EBUSY it runs. */
int runs_export(const struct runs *rs, unsigned id, struct run_file_export **ret, char *err, size_t errlen);
/* Such a document as a new run with the next id: -EBADMSG not JSON,
 * -EINVAL not a run file (err names the field), -EROFS the state
 * directory is unusable, other -errno: storage. text (NUL-terminated at
 * len) is used up: its samples are decoded in place (run_file_split()). */
int runs_import(struct runs *rs, char *text, size_t len, const struct run **ret, char *err, size_t errlen);

/* The load (0..1 of the board) the live run's current phase commands:
 * workers x duty of a CPU or memory load, a whole board for one whose
 * share cannot be told (io, a command); 0 between loads and runs. What a
 * simulated board with load_source = own is heated by. */
double runs_commanded_load(const struct runs *rs);

/* The run with this id, live or finished, or NULL. */
const struct run *runs_find(const struct runs *rs, unsigned id);
/* The live run, or NULL. */
const struct run *runs_live(const struct runs *rs);
/* Every run, newest first: i from 0 to runs_count() - 1. */
size_t runs_count(const struct runs *rs);
const struct run *runs_newest(const struct runs *rs, size_t i);
/* A run's document, with the live block while it runs; caller puts it. */
json_object *runs_document(const struct runs *rs, const struct run *r);

/* samples.csv of a run, open for reading; -ENOENT for no such run. */
int runs_open_samples(const struct runs *rs, unsigned id, int *ret_fd);
/* A live run's series, which changes at every tick, when it has samples;
 * else NULL (read its samples.csv: runs_series()). */
const struct run_series *runs_live_series(const struct runs *rs, unsigned id);
/* A run's recorded samples, for plots: the fixed columns of every complete
 * row of its samples.csv, at most limit of them evenly spread when limit is
 * not 0 (run_series_limit()). A live run's are copied from memory into ret
 * now, the same numbers (run_series_copy_as_read()), and *ret_path is NULL.
 * An ended run's are left to read, off the event loop if the caller wants:
 * ret is empty (and limited) and *ret_path is its samples.csv (malloc'd),
 * for run_series_read_file() on any thread. Free with run_series_free().
 * unit gets the work unit ("" for none, or not read yet). -ENOENT for no
 * such run, -ENOMEM. */
int runs_series(const struct runs *rs, unsigned id, size_t limit, struct run_series *ret, char *unit,
                size_t unitlen, char **ret_path);
/* A run's temperature curve for comparisons, from its series: t = 0 at the
 * first stress sample (or the first sample), means over at most `points`
 * buckets: {"t_s": [...], "temp_c": [...], "id": id}. */
json_object *run_series_curve(const struct run_series *s, unsigned id, size_t points);
