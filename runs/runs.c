/* runs.c — the one owner of runs: the live run, the finished ones, the next id. Everything else asks here. */
#include "runs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json-util.h"
#include "log.h"
#include "util.h"

#define RUNS_SAVE_RETRY_MS 5000
#define RUNS_REPEAT_BASELINE_C 1.0                      /* C: the next run of a series starts this near the
                                                         * last one's idle baseline ... */
#define RUNS_REPEAT_WAIT_MAX_MS (30 * 60 * 1000)        /* ... or after this long, whatever the temperature */

/* A series ("repeat": N): the definition, kept to start its next run. */
struct runs_repeat {
        char *def;                      /* NUL-terminated; NULL when no series goes on */
        size_t len;
        unsigned of;                    /* id of its first run */
        unsigned last;                  /* id of its last run started */
        unsigned next;                  /* index of the run to start next, 1-based */
        bool waiting;                   /* the last run ended: the next one waits */
        bool remount_wait;              /* ... for runs_continue() */
        int64_t since_ms;               /* Unix ms the wait for the baseline began */
        double baseline_c;              /* C, the last run's idle baseline; NaN unknown */
        char sensor[SENSORS_ID_MAX];    /* the last run's sensor */
};

struct runs {
        struct run_host host;           /* first member: ended() gets back to us from it */
        struct runs_settings set;
        struct run *live;               /* owned while it runs; NULL otherwise */
        struct run *stopping;           /* the last run while its load stops; in done, unless deleted */
        bool stopping_deleted;          /* ... deleted meanwhile: owned here until its load is gone */
        struct run **done;              /* runs that ended, oldest first; owned */
        size_t n_done, cap_done;
        int64_t save_retry_ms;          /* Unix ms of the last retry of an unsaved run.json */
        unsigned next_id;
        struct runs_repeat repeat;      /* the series going on, if any */
};

static void runs_repeat_clear(struct runs *rs) {
        free(rs->repeat.def);
        rs->repeat = (struct runs_repeat) {};
}

static int runs_delete_done(struct runs *rs, size_t i, char *err, size_t errlen);
static void runs_repeat_tick(struct runs *rs, int64_t now_ms);

/* Whether the ended run done[i] is past [runs] keep / keep_for. Never the
 * newest ended run, nor one whose load is still stopping. */
static bool runs_expired(const struct runs *rs, size_t i, size_t n_over, int64_t now_ms) {
        const struct run *r = rs->done[i];
        int64_t ended = r->ended_ms > 0 ? r->ended_ms : r->created_ms;

        if (i + 1 >= rs->n_done || r == rs->stopping)
                return false;
        return n_over > 0 || (rs->set.keep_ms > 0 && now_ms - ended > (int64_t) rs->set.keep_ms);
}

/* Deletes the ended runs past the retention settings, oldest first. A run
 * that cannot be deleted (a file someone else put there) is said once and
 * kept; it counts as kept. */
static void runs_prune(struct runs *rs, int64_t now_ms) {
        size_t i = 0, n_over = rs->set.keep && rs->n_done > rs->set.keep ? rs->n_done - rs->set.keep : 0;
        char err[700];

        while (i < rs->n_done) {
                unsigned id = rs->done[i]->id;

                if (!runs_expired(rs, i, n_over, now_ms)) {
                        i++;
                        continue;
                }
                if (n_over > 0)
                        n_over--;
                if (runs_delete_done(rs, i, err, sizeof err) < 0) {
                        if (!rs->done[i]->prune_failed)
                                log_warning("Run %u is past [runs] keep/keep_for but is kept: %s", id, err);
                        rs->done[i]->prune_failed = true;
                        i++;
                } else
                        log_info("Run %u deleted: past [runs] keep/keep_for", id);
        }
}

/* A run of the series ended: the next one waits for the board to cool
 * back (and for a remount when asked); a run that did not finish ends the
 * series. */
static void runs_repeat_ended(struct runs *rs, const struct run *r) {
        struct runs_repeat *p = &rs->repeat;

        if (!p->def || r->repeat_of != p->of)
                return;
        if (r->state != RUN_FINISHED || r->repeat_index >= r->repeat_count) {
                if (r->repeat_index < r->repeat_count)
                        log_notice("Run series %u ends with run %u, %u of %u: it did not finish", p->of, r->id,
                                   r->repeat_index, r->repeat_count);
                runs_repeat_clear(rs);
                return;
        }
        p->last = r->id;
        p->next = r->repeat_index + 1;
        p->waiting = true;
        p->remount_wait = r->remount;
        p->since_ms = r->ended_ms;
        p->baseline_c = isfinite(r->metrics.baseline_c) ? r->metrics.baseline_c : r->baseline_c;
        snprintf(p->sensor, sizeof p->sensor, "%s", r->sensor);
        if (r->remount)
                log_notice("Run series %u: remount the case, then continue (POST /api/v1/runs/%u/continue) "
                           "for run %u of %u", p->of, r->id, p->next, r->repeat_count);
}

/* The engine says a run ended: it joins the finished ones (room was made
 * before it started, so this cannot fail). */
static void runs_on_run_ended(struct run_host *host, struct run *r) {
        struct runs *rs = (struct runs *) host;

        if (r != rs->live)
                return;
        rs->done[rs->n_done++] = r;
        rs->live = NULL;
        rs->stopping = run_stress_stopping(r) ? r : NULL;
        runs_repeat_ended(rs, r);
        runs_prune(rs, r->ended_ms);
}

int runs_new(sd_event *event, const struct runs_settings *set, struct runs **ret, char *warn, size_t warnlen) {
        struct runs *rs = calloc(1, sizeof *rs);
        unsigned max_id = 0;
        size_t n = 0;
        int r;

        if (!rs)
                return -ENOMEM;
        rs->host.event = event;
        rs->host.ended = runs_on_run_ended;
        rs->set = *set;
        warn[0] = '\0';
        if (!set->unusable[0]) {
                r = run_store_load_all(set->state_dir, &rs->done, &n, &max_id, warn, warnlen);
                if (r < 0 && !warn[0])
                        snprintf(warn, warnlen, "Cannot read the runs in %s/runs: %s, ignoring", set->state_dir,
                                 strerror(-r));
        }
        rs->n_done = rs->cap_done = n;
        /* from the directory names, so an unreadable run's directory is never reused */
        rs->next_id = max_id + 1;
        for (size_t i = 0; i < rs->n_done; i++)
                if (rs->done[i]->state == RUN_INTERRUPTED && rs->done[i]->abort_reason[0])
                        log_notice("Run %u was interrupted: %s", rs->done[i]->id, rs->done[i]->abort_reason);
        if (!set->unusable[0])
                runs_prune(rs, util_now_ms());
        *ret = rs;
        return 0;
}

void runs_free(struct runs *rs, const char *reason) {
        if (!rs)
                return;
        if (rs->live)
                run_interrupt(rs->live, reason);
        run_free(rs->live);     /* only if it could not end */
        if (rs->stopping_deleted)
                run_free(rs->stopping);
        for (size_t i = 0; i < rs->n_done; i++) {
                (void) run_save_pending(rs->done[i]);
                run_free(rs->done[i]);
        }
        free(rs->done);
        free(rs->repeat.def);
        free(rs);
}

void runs_set_settings(struct runs *rs, const struct runs_settings *set) {
        rs->set = *set;
        if (!set->unusable[0])
                runs_prune(rs, util_now_ms());
}

/* Runs whose run.json could not be written when they ended (a full disk)
 * are written again, every few seconds, until it goes through. */
static void runs_save_pending(struct runs *rs, int64_t now_ms) {
        if (now_ms - rs->save_retry_ms < RUNS_SAVE_RETRY_MS)
                return;
        rs->save_retry_ms = now_ms;
        for (size_t i = 0; i < rs->n_done; i++)
                (void) run_save_pending(rs->done[i]);
}

void runs_on_sample(void *userdata, const struct snapshot *snap) {
        struct runs *rs = userdata;
        struct run *r = rs->live ? rs->live : rs->stopping;

        rs->host.sensors = snap->sensors;
        rs->host.fans_on = snap->fans_on;
        runs_save_pending(rs, snap->time_ms);
        if (!r) {
                runs_repeat_tick(rs, snap->time_ms);
                return;
        }
        run_tick(r, snap->time_ms, snap->mono_ms);
        if (rs->stopping && !run_stress_stopping(rs->stopping)) {
                if (rs->stopping_deleted)
                        run_free(rs->stopping);
                rs->stopping = NULL;
                rs->stopping_deleted = false;
        }
}

void runs_on_sensors(void *userdata, const struct sensors *s) {
        struct runs *rs = userdata;

        rs->host.sensors = s;
        if (rs->live)
                run_sensors_changed(rs->live);
}

static int runs_reserve(struct runs *rs) {
        size_t cap = rs->cap_done ? rs->cap_done * 2 : 16;
        struct run **p;

        if (rs->n_done < rs->cap_done)
                return 0;
        p = realloc(rs->done, cap * sizeof *p);
        if (!p)
                return -ENOMEM;
        rs->done = p;
        rs->cap_done = cap;
        return 0;
}

static int runs_can_start(const struct runs *rs, char *err, size_t errlen) {
        if (rs->live) {
                snprintf(err, errlen, "run %u is running; stop it first", rs->live->id);
                return -EBUSY;
        }
        if (rs->stopping) {
                snprintf(err, errlen, "the load of run %u is still stopping; retry in a second", rs->stopping->id);
                return -EAGAIN;
        }
        if (rs->set.unusable[0]) {
                snprintf(err, errlen, "the state directory is not usable: %s", rs->set.unusable);
                return -EROFS;
        }
        return 0;
}

/* A request body as one JSON value and nothing after it: -EBADMSG; and no
 * key twice in one object, which json-c would settle by keeping the last
 * one, silently: -EINVAL naming it. */
static int runs_parse_body(const char *text, size_t len, json_object **ret, char *err, size_t errlen) {
        struct json_tokener *tok = json_tokener_new();
        json_object *doc;
        char where[256];
        size_t end;
        int r;

        doc = tok && text && len <= INT_MAX ? json_tokener_parse_ex(tok, text, (int) len) : NULL;
        if (!doc || json_tokener_get_error(tok) != json_tokener_success) {
                snprintf(err, errlen, "body: not valid JSON: %s",
                         text && tok ? json_tokener_error_desc(json_tokener_get_error(tok)) : "empty");
                json_tokener_free(tok);
                json_object_put(doc);
                return -EBADMSG;
        }
        end = json_tokener_get_parse_end(tok);
        json_tokener_free(tok);
        end += strspn(text + end, " \t\r\n");
        if (end != len) {
                snprintf(err, errlen, "body: more after the JSON value (at byte %zu)", end);
                json_object_put(doc);
                return -EBADMSG;
        }
        r = json_find_duplicate_key(text, len, where, sizeof where);
        if (r != 0) {
                json_object_put(doc);
                if (r > 0)
                        return util_errorf(err, errlen, -EINVAL, "%s: duplicate field", where[0] ? where : "\"\"");
                return util_errorf(err, errlen, r, "body: %s", strerror(-r));
        }
        *ret = doc;
        return 0;
}

/* A load the settings refuse, refused before anything starts. */
static int runs_check_loads(const struct runs *rs, const struct run *r, char *err, size_t errlen) {
        /* a command runs anything as the daemon's user: not for every local account */
        for (size_t i = 0; i < r->n_phases && !rs->set.commands_allowed; i++)
                if (r->phases[i].has_stress && stress_type_runs_program(r->phases[i].stress.type)) {
                        snprintf(err, errlen, "phases[%zu].load: a command load needs a token: set token_file in "
                                 "[daemon] and send it (the command runs as heatcurved's user)", i);
                        return -EACCES;
                }
        /* a load runs as the daemon's user: as root, an io load writes where root may, and any
         * load is the whole machine's to lose; so only when the configuration says yes */
        for (size_t i = 0; i < r->n_phases && rs->set.root_loads_refused; i++)
                if (r->phases[i].has_stress) {
                        snprintf(err, errlen, "phases[%zu].load: heatcurved runs as root, and so would the load; "
                                 "set [runs] allow_root = yes in heatcurved.conf to allow it, or run heatcurved "
                                 "as its own user as heatcurved.service does", i);
                        return -EACCES;
                }
        return 0;
}

/* A board's time constants do not change between runs: the heat-up and
 * cool-down time constants of the newest RUN_PRIOR_RUNS_MAX finished runs
 * made here with r's label and sensor, where their phases were not
 * disturbed (on a board only the runs heat, nothing disturbs), are the
 * prior of r's plateau fit. */
static bool runs_prior_takes(const struct runs *rs, const struct run *d, const char *metric) {
        return rs->set.own_load_only || run_metric_quality(d, metric) != RUN_QUALITY_DISTURBED;
}

static void runs_prior_learn(const struct runs *rs, struct run *r) {
        double taus[2 * RUN_PRIOR_RUNS_MAX];
        size_t n = 0;

        run_prior_clear(r);
        for (size_t i = rs->n_done; i-- > 0 && r->n_prior_ids < RUN_PRIOR_RUNS_MAX; ) {
                const struct run *d = rs->done[i];
                size_t before = n;

                if (d == r || d->state != RUN_FINISHED || d->imported_id || strcmp(d->label, r->label) != 0 ||
                    strcmp(d->sensor, r->sensor) != 0)
                        continue;
                if (isfinite(d->metrics.tau_heat_s) && runs_prior_takes(rs, d, "tau_heat_s"))
                        taus[n++] = d->metrics.tau_heat_s;
                if (isfinite(d->metrics.tau_cool_s) && runs_prior_takes(rs, d, "tau_cool_s"))
                        taus[n++] = d->metrics.tau_cool_s;
                if (n > before)
                        r->prior_ids[r->n_prior_ids++] = d->id;
        }
        if (analysis_prior_from_taus(taus, n, r->n_prior_ids, &r->prior) < 0)
                run_prior_clear(r);
}

/* Parses and starts a definition: the run of series `of` (0: a new series
 * when it asks for repeats) with this index. */
static int runs_start_def(struct runs *rs, const char *def_json, size_t len, unsigned of, unsigned index,
                          struct run **ret, char *err, size_t errlen) {
        struct run_settings set = { rs->set.state_dir, rs->set.stress_dir, rs->set.safety_limit_c,
                                    rs->set.ambient_sensor };
        json_object *def = NULL;
        struct run *r = NULL;
        int e;

        if ((e = runs_can_start(rs, err, errlen)) < 0)
                return e;
        if (runs_reserve(rs) < 0) {
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        e = runs_parse_body(def_json, len, &def, err, errlen);
        if (e < 0)
                return e;
        e = run_parse(def, rs->host.sensors, &r, err, errlen);
        json_object_put(def);
        if (e < 0)
                return e;
        if ((e = runs_check_loads(rs, r, err, errlen)) < 0) {
                run_free(r);
                return e;
        }
        if (r->repeat_count > 1) {
                r->repeat_of = of ? of : rs->next_id;
                r->repeat_index = index;
        }
        /* live before it starts: a run whose first load cannot start ends
         * inside run_start(), through ended(), like any other */
        rs->live = r;
        e = run_start(r, &rs->host, &set, rs->next_id, err, errlen);
        if (e < 0) {
                rs->live = NULL;
                run_free(r);
                return e;
        }
        rs->next_id++;
        if (r->state == RUN_RUNNING)
                runs_prior_learn(rs, r);
        *ret = r;
        return 0;
}

int runs_start(struct runs *rs, const char *def_json, size_t len, const struct run **ret,
               char *err, size_t errlen) {
        struct runs_repeat *p = &rs->repeat;
        struct run *r;
        char *copy;
        int e;

        if (p->def && p->waiting) {
                snprintf(err, errlen, "run series %u waits to start its run %u; POST /api/v1/runs/%u/%s", p->of,
                         p->next, p->last, p->remount_wait ? "continue to go on, or .../stop to end it" :
                         "stop to end it");
                return -EBUSY;
        }
        if (!(copy = malloc(len + 1))) {
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        memcpy(copy, def_json ? def_json : "", def_json ? len : 0);
        copy[def_json ? len : 0] = '\0';
        e = runs_start_def(rs, def_json, len, 0, 1, &r, err, errlen);
        if (e < 0 || r->repeat_count < 2 || r != rs->live) {
                free(copy);
                if (e == 0)
                        *ret = r;
                return e;
        }
        runs_repeat_clear(rs);
        *p = (struct runs_repeat) { .def = copy, .len = def_json ? len : 0, .of = r->id, .last = r->id,
                                    .next = 2, .baseline_c = NAN };
        *ret = r;
        return 0;
}

/* Degrees C of the temperature sensor with this id, NaN when it is gone. */
static double runs_temp(const struct sensors *s, const char *id) {
        for (size_t i = 0; s && i < s->n_temps; i++)
                if (strcmp(s->temps[i].id, id) == 0)
                        return s->temps[i].ok ? s->temps[i].temp_mc / 1000.0 : NAN;
        return NAN;
}

/* The next run of a waiting series, once the board is back near the last
 * run's idle baseline (or after RUNS_REPEAT_WAIT_MAX_MS) and, for a
 * remount, the user said so. */
static void runs_repeat_tick(struct runs *rs, int64_t now_ms) {
        struct runs_repeat *p = &rs->repeat;
        double t = runs_temp(rs->host.sensors, p->sensor);
        unsigned of = p->of, next = p->next;
        char err[700];
        struct run *r;

        if (!p->def || !p->waiting || p->remount_wait || rs->live || rs->stopping)
                return;
        if (isfinite(p->baseline_c) && isfinite(t) && t > p->baseline_c + RUNS_REPEAT_BASELINE_C &&
            now_ms - p->since_ms < RUNS_REPEAT_WAIT_MAX_MS)
                return;
        p->waiting = false;
        if (runs_start_def(rs, p->def, p->len, of, next, &r, err, sizeof err) < 0) {
                log_warning("Run series %u: its run %u cannot start: %s", of, next, err);
                runs_repeat_clear(rs);
                return;
        }
        if (rs->repeat.def)     /* a run whose load cannot start ended the series already */
                rs->repeat.last = r->id;
        log_info("Run series %u: run %u started, %u of %u", of, r->id, next, r->repeat_count);
}

int runs_continue(struct runs *rs, unsigned id, char *err, size_t errlen) {
        const struct run *r = runs_find(rs, id);
        struct runs_repeat *p = &rs->repeat;

        if (!r) {
                snprintf(err, errlen, "no run %u", id);
                return -ENOENT;
        }
        if (!p->def || !p->remount_wait || r->repeat_of != p->of) {
                snprintf(err, errlen, "run %u's series does not wait for a remount", id);
                return -EALREADY;
        }
        p->remount_wait = false;
        p->since_ms = util_now_ms();
        return 0;
}

int runs_stop(struct runs *rs, unsigned id, char *err, size_t errlen) {
        const struct run *r = runs_find(rs, id);

        if (rs->live && rs->live->id == id) {
                if (rs->repeat.def && rs->live->repeat_of == rs->repeat.of)
                        runs_repeat_clear(rs);  /* stopping one run of a series stops the series */
                run_stop(rs->live);
                return 0;
        }
        if (!r) {
                snprintf(err, errlen, "no run %u", id);
                return -ENOENT;
        }
        if (rs->repeat.def && rs->repeat.waiting && r->repeat_of == rs->repeat.of) {
                log_info("Run series %u stopped on request before its run %u", rs->repeat.of, rs->repeat.next);
                runs_repeat_clear(rs);
                return 0;
        }
        snprintf(err, errlen, "run %u is not running", id);
        return -EALREADY;
}

void runs_abort(struct runs *rs, const char *reason) {
        if (rs->live)
                run_abort(rs->live, reason);
}

static size_t runs_done_index(const struct runs *rs, unsigned id) {
        size_t i = 0;

        while (i < rs->n_done && rs->done[i]->id != id)
                i++;
        return i;
}

int runs_delete(struct runs *rs, unsigned id, char *err, size_t errlen) {
        size_t i = runs_done_index(rs, id);

        if (rs->live && rs->live->id == id) {
                snprintf(err, errlen, "run %u is running; stop it first", id);
                return -EBUSY;
        }
        if (i == rs->n_done) {
                snprintf(err, errlen, "no run %u", id);
                return -ENOENT;
        }
        return runs_delete_done(rs, i, err, errlen);
}

/* Deletes the ended run done[i], its files and its entry. */
static int runs_delete_done(struct runs *rs, size_t i, char *err, size_t errlen) {
        unsigned id = rs->done[i]->id;
        char why[600];
        int e;

        e = run_store_delete(rs->set.state_dir, id, why, sizeof why);
        if (e < 0) {
                snprintf(err, errlen, "cannot delete run %u: %s", id, why);
                return e;
        }
        if (rs->done[i] == rs->stopping)
                rs->stopping_deleted = true;    /* freed once its load is gone */
        else
                run_free(rs->done[i]);
        memmove(&rs->done[i], &rs->done[i + 1], (rs->n_done - i - 1) * sizeof *rs->done);
        rs->n_done--;
        return 0;
}

const struct run *runs_find(const struct runs *rs, unsigned id) {
        size_t i;

        if (rs->live && rs->live->id == id)
                return rs->live;
        i = runs_done_index(rs, id);
        return i < rs->n_done ? rs->done[i] : NULL;
}

double runs_commanded_load(const struct runs *rs) {
        const struct run *r = rs ? rs->live : NULL;
        double own;

        if (!r || r->state != RUN_RUNNING || r->phase_index >= r->n_phases || !r->load)
                return 0.0;
        own = run_phase_own_load(r, &r->phases[r->phase_index]);
        return isfinite(own) ? own : 1.0;
}

const struct run *runs_live(const struct runs *rs) {
        return rs->live;
}

size_t runs_count(const struct runs *rs) {
        return rs->n_done + (rs->live ? 1 : 0);
}

const struct run *runs_newest(const struct runs *rs, size_t i) {
        if (rs->live) {
                if (i == 0)
                        return rs->live;
                i--;
        }
        return i < rs->n_done ? rs->done[rs->n_done - 1 - i] : NULL;
}

/* The run of r's series after r, or NULL. */
static const struct run *runs_repeat_next(const struct runs *rs, const struct run *r) {
        for (size_t i = 0; i < runs_count(rs); i++) {
                const struct run *x = runs_newest(rs, i);
                if (x->repeat_of == r->repeat_of && x->repeat_index == r->repeat_index + 1)
                        return x;
        }
        return NULL;
}

json_object *runs_document(const struct runs *rs, const struct run *r) {
        json_object *o = run_to_json(r, r == rs->live);
        const struct run *next;
        bool waits;

        if (!r->repeat_of)
                return o;
        next = runs_repeat_next(rs, r);
        waits = rs->repeat.def && rs->repeat.waiting && rs->repeat.last == r->id;
        json_object_object_add(o, "repeat_next", next ? json_object_new_int64(next->id) : NULL);
        json_object_object_add(o, "repeat_waiting", !waits ? NULL :
                               json_object_new_string(rs->repeat.remount_wait ? "remount" : "baseline"));
        return o;
}

static int runs_samples_path(const struct runs *rs, unsigned id, char *buf, size_t size) {
        char dir[PATH_MAX];
        int e = run_store_dir(rs->set.state_dir, id, dir, sizeof dir);

        if (e >= 0 && snprintf(buf, size, "%s/samples.csv", dir) >= (int) size)
                e = -ENAMETOOLONG;
        return e;
}

int runs_open_samples(const struct runs *rs, unsigned id, int *ret_fd) {
        char path[PATH_MAX];
        int e = runs_samples_path(rs, id, path, sizeof path);

        if (e < 0)
                return e;
        *ret_fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        return *ret_fd < 0 ? -errno : 0;
}

const struct run_series *runs_live_series(const struct runs *rs, unsigned id) {
        const struct run *r = runs_find(rs, id);

        /* A live run keeps its series: reading its samples.csv instead takes
         * 32-42 ms for a day at 1 Hz here, at every drawing. */
        return r && r->host && r->series.n > 0 ? &r->series : NULL;
}

int runs_series(const struct runs *rs, unsigned id, size_t limit, struct run_series *ret, char *unit,
                size_t unitlen, char **ret_path) {
        const struct run *r = runs_find(rs, id);
        char path[PATH_MAX];

        *ret = (struct run_series) {};
        if (limit)
                run_series_limit(ret, limit);
        *ret_path = NULL;
        unit[0] = '\0';
        if (!r || runs_samples_path(rs, id, path, sizeof path) < 0)
                return -ENOENT;
        if (runs_live_series(rs, id)) {
                for (size_t i = 0; i < r->series.n && !unit[0]; i++)
                        if (isfinite(r->series.work_rate[i]))
                                snprintf(unit, unitlen, "%s", r->work_unit);
                return run_series_copy_as_read(&r->series, ret);
        }
        *ret_path = strdup(path);
        return *ret_path ? 0 : -ENOMEM;
}

json_object *run_series_curve(const struct run_series *s, unsigned id, size_t points) {
        json_object *o, *t, *y;
        size_t start = 0;

        o = json_object_new_object();
        t = json_object_new_array();
        y = json_object_new_array();
        while (start < s->n && s->phase[start] != ANALYSIS_PHASE_STRESS)
                start++;
        double t0 = start < s->n ? s->t_s[start] : s->n ? s->t_s[0] : 0.0;
        double span = s->n ? s->t_s[s->n - 1] - s->t_s[0] : 0.0, width = span > 0 ? span / (double) points : 1.0;
        for (size_t i = 0; i < s->n; ) {
                double sum = 0, tsum = 0, edge = s->t_s[i] + width;
                size_t k = 0;
                for (; i < s->n && (s->t_s[i] < edge || k == 0); i++)
                        if (isfinite(s->temp_c[i])) {
                                sum += s->temp_c[i];
                                tsum += s->t_s[i];
                                k++;
                        }
                if (k) {
                        json_object_array_add(t, json_new_number(tsum / (double) k - t0, 1));
                        json_object_array_add(y, json_new_number(sum / (double) k, 2));
                }
        }
        json_object_object_add(o, "t_s", t);
        json_object_object_add(o, "temp_c", y);
        json_object_object_add(o, "id", json_object_new_int64(id));
        return o;
}

int runs_export(const struct runs *rs, unsigned id, struct run_file_export **ret, char *err, size_t errlen) {
        const struct run *r = runs_find(rs, id);
        char dir[PATH_MAX];

        if (!r) {
                snprintf(err, errlen, "no run %u", id);
                return -ENOENT;
        }
        if (run_store_dir(rs->set.state_dir, id, dir, sizeof dir) < 0) {
                snprintf(err, errlen, "the state directory's path is too long");
                return -ENAMETOOLONG;
        }
        return run_file_export_open(r, dir, ret, err, errlen);
}

int runs_import(struct runs *rs, char *text, size_t len, const struct run **ret, char *err, size_t errlen) {
        json_object *doc;
        const char *csv = NULL;
        char *rest = NULL;
        size_t csv_len = 0, rest_len = 0;
        struct run *r;
        int e;

        if (rs->set.unusable[0]) {
                snprintf(err, errlen, "the state directory is not usable: %s", rs->set.unusable);
                return -EROFS;
        }
        if (runs_reserve(rs) < 0) {
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        /* the samples stay where they came in: json-c would hold them twice more */
        e = text ? run_file_split(text, len, &rest, &rest_len, &csv, &csv_len) : 0;
        if (e < 0) {
                snprintf(err, errlen, "out of memory");
                return e;
        }
        e = rest ? runs_parse_body(rest, rest_len, &doc, err, errlen) : runs_parse_body(text, len, &doc, err, errlen);
        free(rest);
        if (e < 0)
                return e;
        e = run_file_import(doc, csv, csv_len, rs->set.state_dir, rs->next_id, &r, err, errlen);
        json_object_put(doc);
        if (e < 0)
                return e;
        /* the directory exists now: its id is taken whatever comes */
        rs->next_id++;
        rs->done[rs->n_done++] = r;
        *ret = r;
        return 0;
}
