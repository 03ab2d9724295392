/* run-store.c — runs on disk: state_dir/runs/<id>/run.json (replaced atomically) and samples.csv; crash recovery. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic-file.h"
#include "plot-data.h"
#include "run.h"
#include "samples-csv.h"
#include "util.h"

int run_store_dir(const char *state_dir, unsigned id, char *buf, size_t size) {
        int n = snprintf(buf, size, "%s/runs/%u", state_dir, id);

        return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}

#define RUN_JSON_MAX (1024 * 1024)      /* bytes; a larger run.json is not one this daemon wrote */

int run_store_reserve(const char *dir) {
        char path[PATH_MAX];
        int fd, r;

        snprintf(path, sizeof path, "%s/run.json.spare", dir);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return -errno;
        /* allocated, not just a size: a sparse file would free nothing */
        r = posix_fallocate(fd, 0, RUN_JSON_SPARE_BYTES);
        close(fd);
        if (r != 0) {
                unlink(path);
                return -r;
        }
        return 0;
}

/* 0 when there was a spare and it is gone now. */
static int run_store_release(const char *dir) {
        char path[PATH_MAX];

        snprintf(path, sizeof path, "%s/run.json.spare", dir);
        return unlink(path) < 0 ? -errno : 0;
}

int run_store_write(const struct run *r, const char *dir) {
        json_object *doc = run_to_json(r, false);
        char path[PATH_MAX];
        size_t len;
        const char *text = json_object_to_json_string_length(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED, &len);
        char *data = malloc(len + 1);
        int ret;

        if (!data) {
                json_object_put(doc);
                return -ENOMEM;
        }
        memcpy(data, text, len);
        data[len] = '\n';
        json_object_put(doc);
        snprintf(path, sizeof path, "%s/run.json", dir);
        ret = atomic_file_replace(path, data, len + 1, 0644);
        /* a full disk is a common way for a run to end: the spare makes the
         * room for the run.json that says so */
        if ((ret == -ENOSPC || ret == -EDQUOT) && run_store_release(dir) == 0)
                ret = atomic_file_replace(path, data, len + 1, 0644);
        free(data);
        if (ret == 0 && r->state != RUN_RUNNING)
                (void) run_store_release(dir);
        return ret;
}

/* dir/run.json as a run, bounded in size. */
static int run_store_read(const char *dir, struct run **ret, char *err, size_t errlen) {
        char path[PATH_MAX];
        struct stat st;
        json_object *doc;
        char *text;
        ssize_t n;
        int fd, r;

        snprintf(path, sizeof path, "%s/run.json", dir);
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0 || fstat(fd, &st) < 0) {
                r = -errno;
                snprintf(err, errlen, "%s", strerror(-r));
                if (fd >= 0)
                        close(fd);
                return r;
        }
        if (!S_ISREG(st.st_mode) || st.st_size > RUN_JSON_MAX) {
                close(fd);
                snprintf(err, errlen, S_ISREG(st.st_mode) ? "larger than %d bytes" : "not a regular file", RUN_JSON_MAX);
                return -EINVAL;
        }
        text = malloc((size_t) st.st_size + 1);
        n = text ? read(fd, text, (size_t) st.st_size) : -1;
        r = n < 0 ? -errno : 0;
        close(fd);
        if (r < 0) {
                free(text);
                snprintf(err, errlen, "%s", strerror(-r));
                return r;
        }
        text[n] = '\0';
        doc = json_tokener_parse(text);
        free(text);
        if (!doc) {
                snprintf(err, errlen, "not valid JSON");
                return -EINVAL;
        }
        r = run_from_json(doc, ret, err, errlen);
        json_object_put(doc);
        return r;
}

/* The files a run directory holds: what the daemon writes there, and
 * run.json.corrupt-* (a damaged run.json moved aside). */
static bool run_store_own_file(const char *name) {
        return strcmp(name, "run.json") == 0 || strcmp(name, "run.json.tmp") == 0 ||
               strcmp(name, "run.json.spare") == 0 || strcmp(name, "samples.csv") == 0 ||
               strcmp(name, "samples.csv.tmp") == 0 ||
               strncmp(name, "run.json.corrupt-", 17) == 0;
}

/* 1 with the first entry of the open directory that is not a file of ours
 * (another name, or one of our names that is a directory, a link, a FIFO),
 * 0 when there is none, or -errno. */
static int run_store_foreign_file(int dfd, char *name, size_t size) {
        int fd = fcntl(dfd, F_DUPFD_CLOEXEC, 0);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        struct dirent *de;
        int found = 0;

        if (!d) {
                if (fd >= 0)
                        close(fd);
                return -errno;
        }
        rewinddir(d);           /* the duplicate shares its offset with dfd */
        while (!found && (de = readdir(d))) {
                struct stat st;
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                        continue;
                if (run_store_own_file(de->d_name) && fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                    S_ISREG(st.st_mode))
                        continue;
                snprintf(name, size, "%s", de->d_name);
                found = 1;
        }
        closedir(d);
        return found;
}

/* Unlinks the files of ours in the open run directory. -errno. */
static int run_store_unlink_own(int dfd) {
        int fd = fcntl(dfd, F_DUPFD_CLOEXEC, 0), r = 0;
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        struct dirent *de;

        if (!d) {
                r = -errno;
                if (fd >= 0)
                        close(fd);
                return r;
        }
        rewinddir(d);
        while (r == 0 && (de = readdir(d)))
                if (run_store_own_file(de->d_name) && unlinkat(dfd, de->d_name, 0) < 0 && errno != ENOENT)
                        r = -errno;
        closedir(d);
        return r;
}

int run_store_delete(const char *state_dir, unsigned id, char *err, size_t errlen) {
        char runs[PATH_MAX], name[16], other[256];
        int runs_fd, dfd, r;

        snprintf(runs, sizeof runs, "%s/runs", state_dir);
        snprintf(name, sizeof name, "%u", id);
        runs_fd = open(runs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        /* never through a symlink: its target is not a run this daemon wrote */
        dfd = runs_fd >= 0 ? openat(runs_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
        if (dfd < 0 && errno == ENOENT && runs_fd >= 0) {
                close(runs_fd);
                return 0;               /* gone already: nothing of it is left to lose */
        }
        if (dfd < 0) {
                r = -errno;
                snprintf(err, errlen, "%s/%s: %s", runs, name, r == -ELOOP || r == -ENOTDIR ?
                         "not a directory (a symbolic link?); not touching it" : strerror(-r));
                if (runs_fd >= 0)
                        close(runs_fd);
                return r;
        }
        /* all or nothing: a file someone else put there keeps the whole run */
        r = run_store_foreign_file(dfd, other, sizeof other);
        if (r > 0) {
                snprintf(err, errlen, "%s/%s holds \"%s\", which heatcurved did not write (or not as a file); "
                         "move it away first", runs, name, other);
                close(dfd);
                close(runs_fd);
                return -ENOTEMPTY;
        }
        if (r == 0)
                r = run_store_unlink_own(dfd);
        if (r == 0 && unlinkat(runs_fd, name, AT_REMOVEDIR) < 0)
                r = -errno;
        if (r < 0)
                snprintf(err, errlen, "%s/%s: %s", runs, name, strerror(-r));
        close(dfd);
        close(runs_fd);
        return r;
}

static enum analysis_phase phase_from_csv(const char *s) {
        int k = run_phase_kind_from_string(s);

        return k < 0 ? ANALYSIS_PHASE_IDLE : (enum analysis_phase) k;
}

/* Room for cap samples (cap >= s->n). */
static int series_grow(struct run_series *s, size_t cap) {
#define GROW(field) do { \
                void *p = realloc(s->field, cap * sizeof *s->field); \
                if (!p) return -ENOMEM; \
                s->field = p; \
        } while (0)
        GROW(t_s); GROW(temp_c); GROW(freq_hz); GROW(max_hz); GROW(work_rate); GROW(load); GROW(ambient_c); GROW(cooling);
        GROW(firmware_throttled); GROW(phase); GROW(power_w);
#undef GROW
        s->cap = cap;
        return 0;
}

void run_series_limit(struct run_series *s, size_t limit) {
        samples_limit_init(&s->lim, limit);
}

/* Every other sample, from the first (SAMPLES_HALVE). */
static void series_halve(struct run_series *s) {
#define HALVE(field) samples_halve(s->field, sizeof *s->field, s->n)
        HALVE(t_s); HALVE(temp_c); HALVE(freq_hz); HALVE(max_hz); HALVE(work_rate); HALVE(load); HALVE(ambient_c);
        HALVE(cooling); HALVE(firmware_throttled); HALVE(power_w);
        s->n = HALVE(phase);
#undef HALVE
}

int run_series_append(struct run_series *s, const struct run_sample *x) {
        unsigned what = samples_limit_next(&s->lim, s->n);
        int halved = 0;

        s->last_t_s = x->t_s;
        if (isfinite(x->temp_c) && (!s->peak_known || x->temp_c > s->peak_c)) {
                s->peak_c = x->temp_c;
                s->peak_known = true;
        }
        if ((s->n_changes == 0 || x->phase != s->changes[s->n_changes - 1].kind) && s->n_changes < RUN_PHASES_MAX)
                s->changes[s->n_changes++] = (struct run_series_change) { x->phase, x->t_s };
        if (x->phase == ANALYSIS_PHASE_STRESS && s->load_seen == 0) {
                /* what comes before the load is all kept, unless it was longer than the limit */
                s->baseline_c = analysis_idle_baseline(s->t_s, s->temp_c, s->phase, s->n);
                s->load_seen = 1;
        } else if (x->phase != ANALYSIS_PHASE_STRESS && s->load_seen == 1)
                s->load_seen = 2;
        if (s->load_seen == 1)
                analysis_load_freq_add(&s->load_freq, x->freq_hz, x->max_hz, true, x->cooling,
                                       x->firmware_throttled < 0 ? -1 : x->firmware_throttled > 0);
        if (what & SAMPLES_HALVE) {
                series_halve(s);
                halved = 1;
        }
        if (!(what & SAMPLES_TAKE))
                return halved;
        if (s->n == s->cap) {
                size_t cap = s->cap ? s->cap * 2 : 1024;
                if (s->lim.limit && cap > s->lim.limit)
                        cap = s->lim.limit;
                if (series_grow(s, cap) < 0)
                        return -ENOMEM;
        }
        s->t_s[s->n] = x->t_s;
        s->temp_c[s->n] = x->temp_c;
        s->freq_hz[s->n] = x->freq_hz;
        s->max_hz[s->n] = x->max_hz;
        s->work_rate[s->n] = x->work_rate;
        s->load[s->n] = x->load;
        s->ambient_c[s->n] = x->ambient_c;
        s->cooling[s->n] = x->cooling;
        s->firmware_throttled[s->n] = (signed char) (x->firmware_throttled < 0 ? -1 : x->firmware_throttled > 0);
        s->phase[s->n] = x->phase;
        s->power_w[s->n] = x->has_power ? x->power_w : NAN;
        s->has_power |= x->has_power;
        s->n++;
        return halved;
}

int run_series_append_row(struct run_series *s, const struct samples_row *row, enum analysis_phase phase,
                          char *unit, size_t unitlen) {
        struct run_sample x = {
                row->elapsed_s, row->temp_c, row->freq_hz, row->max_allowed_hz, row->work_rate, row->load, NAN,
                row->cooling_active, row->firmware_throttled, phase, row->has_power, row->power_w,
        };

        if (run_series_append(s, &x) < 0)
                return -ENOMEM;
        /* a copy only when it changes: at every row it was a seventh of
         * reading a run back */
        if (*row->work_unit && strncmp(unit, row->work_unit, unitlen) != 0)
                snprintf(unit, unitlen, "%s", row->work_unit);
        return 0;
}

/* Which of s's samples a copy limited to limit (0 for none) keeps: every
 * step-th of those s holds. s holds every from-th of the run's given
 * samples; a limited series would keep every stride-th of them, and no
 * more than s has. */
static size_t as_read_step(const struct run_series *s, size_t limit, size_t *ret_given, size_t *ret_stride) {
        size_t given = s->lim.limit ? s->lim.given : s->n, from = s->lim.limit ? s->lim.stride : 1;
        size_t stride = samples_limit_stride(limit, given);

        if (stride < from)
                stride = from;
        *ret_given = given;
        *ret_stride = stride;
        return stride / from;
}

/* Every step-th sample of s (as_read_step()), each as the row
 * run_csv_row() writes of it and samples.csv reads back, to row(), which
 * may stop it with its -errno. */
static int each_as_read(const struct run_series *s, size_t step,
                        int (*row)(void *userdata, const struct samples_row *row, enum analysis_phase phase),
                        void *userdata) {
        for (size_t i = 0; i < s->n; i += step) {
                struct samples_row x = {
                        .elapsed_s = s->t_s[i], .temp_c = s->temp_c[i], .freq_hz = s->freq_hz[i],
                        .max_allowed_hz = s->max_hz[i], .cooling_active = s->cooling[i], .load = s->load[i],
                        .work_rate = s->work_rate[i], .work_unit = "",
                        .firmware_throttled = s->firmware_throttled[i],
                        .has_power = s->has_power, .power_w = s->power_w[i],
                };
                int e;

                samples_row_as_read(&x);
                if ((e = row(userdata, &x, s->phase[i])) < 0)
                        return e;
        }
        return 0;
}

static int copy_row(void *userdata, const struct samples_row *row, enum analysis_phase phase) {
        char unit[1];

        return run_series_append_row(userdata, row, phase, unit, sizeof unit);
}

int run_series_copy_as_read(const struct run_series *s, struct run_series *ret) {
        struct samples_limit lim = ret->lim;
        size_t given, stride, step = as_read_step(s, lim.limit, &given, &stride);

        if (s->n > 0 && series_grow(ret, (s->n + step - 1) / step) < 0) {  /* one allocation */
                run_series_free(ret);
                return -ENOMEM;
        }
        ret->lim = (struct samples_limit) {};
        if (each_as_read(s, step, copy_row, ret) < 0) {
                run_series_free(ret);
                return -ENOMEM;
        }
        if (lim.limit)
                ret->lim = (struct samples_limit) { .limit = lim.limit, .stride = stride, .given = given };
        return 0;
}

struct plot_copy {
        struct plot_data *d;
        size_t n;                       /* samples it will hold */
};

static int plot_row(void *userdata, const struct samples_row *row, enum analysis_phase phase) {
        struct plot_copy *c = userdata;

        return plot_data_add(c->d, row, phase, c->n);
}

int run_series_plot_data(const struct run_series *s, size_t limit, struct plot_data *d) {
        size_t given, stride, step = as_read_step(s, limit, &given, &stride);
        struct plot_copy c = { d, (s->n + step - 1) / step };

        return each_as_read(s, step, plot_row, &c);
}

void run_series_free(struct run_series *s) {
        free(s->t_s);
        free(s->temp_c);
        free(s->freq_hz);
        free(s->max_hz);
        free(s->work_rate);
        free(s->load);
        free(s->ambient_c);
        free(s->cooling);
        free(s->firmware_throttled);
        free(s->phase);
        free(s->power_w);
        *s = (struct run_series) {};
}

struct series_reader {
        struct run_series *s;
        char *unit;
        size_t unitlen;
        int64_t last_ms;
        size_t fixed;                   /* fixed columns the header names */
};

static int series_row(void *userdata, char *line, bool header) {
        struct series_reader *rd = userdata;
        struct samples_row row;

        if (header) {
                rd->fixed = samples_header_fixed(line);
                return 0;
        }
        if (samples_parse_row(line, rd->fixed, &row) < 0)
                return 0;       /* a row with too few fields */
        if (run_series_append_row(rd->s, &row, phase_from_csv(row.phase), rd->unit, rd->unitlen) < 0)
                return -ENOMEM;
        if (row.time_ms > 0)
                rd->last_ms = row.time_ms;
        return 0;
}

double run_plateau_horizon_s(const struct run *r) {
        for (size_t i = 0; i < r->n_phases; i++)
                if (r->phases[i].kind == ANALYSIS_PHASE_STRESS)
                        return r->phases[i].until == UNTIL_PLATEAU ? (double) r->phases[i].max_ms / 1000.0 : 0;
        return 0;
}

void run_series_metrics(const struct run_series *s, double ambient_c, struct run_metrics *ret) {
        run_series_metrics_horizon(s, ambient_c, 0, ret);
}

void run_series_metrics_horizon(const struct run_series *s, double ambient_c, double horizon_s,
                                struct run_metrics *ret) {
        run_series_metrics_prior(s, ambient_c, horizon_s, NULL, ret);
}

const struct analysis_prior *run_prior(const struct run *r) {
        return isfinite(r->prior.tau_s) ? &r->prior : NULL;
}

void run_prior_clear(struct run *r) {
        r->prior = (struct analysis_prior) { .tau_s = NAN, .spread = NAN, .low_s = NAN, .high_s = NAN };
        r->n_prior_ids = 0;
}

void run_series_metrics_prior(const struct run_series *s, double ambient_c, double horizon_s,
                              const struct analysis_prior *prior, struct run_metrics *ret) {
        struct analysis_samples in = {
                .n = s->n, .t_s = s->t_s, .temp_c = s->temp_c, .freq_hz = s->freq_hz,
                .max_allowed_hz = s->max_hz, .cooling_active = s->cooling,
                .firmware_throttled = s->firmware_throttled, .work_rate = s->work_rate, .phase = s->phase,
                .power_w = s->has_power ? s->power_w : NULL,
                .ambient_c = ambient_c, .horizon_s = horizon_s, .prior = prior,
                /* over every sample appended, not only those kept */
                .load_freq = s->load_seen ? &s->load_freq : NULL, .baseline_c = s->load_seen ? &s->baseline_c : NULL,
        };

        /* too few samples: the metrics are unknown, the run is still a run */
        if (analysis_compute_metrics(&in, ret) < 0)
                analysis_metrics_init(ret, ambient_c);
        if (s->peak_known)
                ret->peak_c = s->peak_c;
}

int64_t run_series_read_file(const char *path, struct run_series *s, char *unit, size_t unitlen) {
        struct series_reader rd = { s, unit, unitlen, 0, 0 };
        FILE *f = fopen(path, "re");

        if (!f)
                return 0;
        samples_read(f, series_row, &rd);
        fclose(f);
        return rd.last_ms;
}

int64_t run_store_read_series(const char *dir, struct run_series *s, char *unit, size_t unitlen) {
        char path[PATH_MAX];

        snprintf(path, sizeof path, "%s/samples.csv", dir);
        return run_series_read_file(path, s, unit, unitlen);
}

/* Removes what atomic_file_replace() leaves when killed before its rename. */
static void run_store_drop_tmp(const char *dir) {
        static const char *const tmp[] = { "samples.csv.tmp", "run.json.tmp" };
        char path[PATH_MAX];

        for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++) {
                snprintf(path, sizeof path, "%s/%s", dir, tmp[i]);
                (void) unlink(path);
        }
}

/* Cuts a samples.csv left with a torn last row (a crash mid-write, a tail
 * of zeros after a power loss) back to its last complete row. */
static void truncate_torn_tail(const char *dir) {
        char path[PATH_MAX];
        FILE *f;
        int64_t complete;
        struct stat st;

        snprintf(path, sizeof path, "%s/samples.csv", dir);
        f = fopen(path, "r+e");
        if (!f)
                return;
        complete = samples_complete_length(f);
        if (complete >= 0 && fstat(fileno(f), &st) == 0 && st.st_size > complete)
                (void) ftruncate(fileno(f), complete);
        fclose(f);
}

/* The run ended with the daemon: interrupted, metrics from the samples kept. */
static int recover_run_with(const char *dir, struct run *r, const struct run_series *s, int64_t last,
                            const char *why) {
        run_series_metrics_prior(s, r->ambient_c, run_plateau_horizon_s(r), run_prior(r), &r->metrics);
        run_quality_phases(r, s);
        snprintf(r->abort_reason, sizeof r->abort_reason, "%s; %zu samples kept", why, s->lim.given);
        r->state = RUN_INTERRUPTED;
        r->ended_ms = last;
        r->recording_ok = true;
        r->recording_error[0] = '\0';
        r->n_samples = s->lim.given;    /* the rows, not those kept in memory */
        for (size_t i = 0; i < r->n_phases; i++) {
                struct run_phase *p = &r->phases[i];
                if (!p->started_ms || p->end_reason[0])
                        continue;
                p->ended_ms = last;
                snprintf(p->end_reason, sizeof p->end_reason, "interrupted");
        }
        return run_store_write(r, dir);
}

/* A run.json still saying "running" after a start: the daemon died under it. */
static int recover_run(const char *dir, struct run *r) {
        struct run_series s = {};
        int64_t last;
        int e;

        truncate_torn_tail(dir);
        run_series_limit(&s, RUN_SERIES_MAX);
        last = run_store_read_series(dir, &s, r->work_unit, sizeof r->work_unit);
        e = recover_run_with(dir, r, &s, last, "heatcurved stopped during the run (crash, kill or power loss)");
        run_series_free(&s);
        return e;
}

/* A run whose run.json is lost or damaged but whose samples are there: it
 * is rebuilt from them as interrupted (phases from the phase column), and
 * the damaged file is moved aside, never deleted. */
static int rebuild_run(const char *dir, unsigned id, const char *why, struct run **ret) {
        struct run_series s = {};
        char unit[16] = "", path[PATH_MAX], aside[PATH_MAX];
        int64_t last;
        struct run *r;
        int e;

        run_series_limit(&s, RUN_SERIES_MAX);
        last = run_store_read_series(dir, &s, unit, sizeof unit);
        if (s.n == 0 || last <= 0) {
                run_series_free(&s);
                return -ENODATA;
        }
        r = run_alloc();
        if (!r) {
                run_series_free(&s);
                return -ENOMEM;
        }
        r->id = id;
        r->notes = strdup("");
        snprintf(r->label, sizeof r->label, "run %u", id);
        snprintf(r->work_unit, sizeof r->work_unit, "%s", unit);
        r->created_ms = last - (int64_t) (s.last_t_s * 1000.0);
        /* every row's phase, kept or not: a phase shorter than the stride counts */
        for (size_t i = 0; i < s.n_changes; i++) {
                struct run_phase *p = &r->phases[r->n_phases++];
                p->kind = s.changes[i].kind;
                p->until = UNTIL_DURATION;
                p->started_ms = r->created_ms + (int64_t) (s.changes[i].t_s * 1000.0);
                snprintf(p->end_reason, sizeof p->end_reason, "interrupted");
                if (r->n_phases > 1)
                        r->phases[r->n_phases - 2].ended_ms = p->started_ms;
        }
        r->phases[r->n_phases - 1].ended_ms = last;
        for (size_t i = 0; i < r->n_phases; i++)
                r->phases[i].duration_ms = (uint64_t) (r->phases[i].ended_ms - r->phases[i].started_ms);
        snprintf(path, sizeof path, "%s/run.json", dir);
        (void) util_rename_aside(path, "corrupt", aside, sizeof aside);        /* none when it was lost */
        e = r->notes ? recover_run_with(dir, r, &s, last, why) : -ENOMEM;
        run_series_free(&s);
        if (e == -ENOMEM) {
                run_free(r);
                return e;
        }
        /* not written back (a full or read-only disk): it is still listed, and rebuilt again next time */
        *ret = r;
        return 0;
}

static int compare_ids(const void *a, const void *b) {
        unsigned x = (*(struct run *const *) a)->id, y = (*(struct run *const *) b)->id;

        return (x > y) - (x < y);
}

/* A run directory's name: a decimal id without leading zeros. */
static bool run_dir_id(const char *name, unsigned *ret) {
        size_t len = strlen(name);

        if (len == 0 || len >= 10 || strspn(name, "0123456789") != len || name[0] == '0')
                return false;
        *ret = (unsigned) strtoul(name, NULL, 10);
        return true;
}

int run_store_load_all(const char *state_dir, struct run ***ret, size_t *n, unsigned *max_id,
                       char *warn, size_t warnlen) {
        char runs[PATH_MAX], dir[PATH_MAX], why[300];
        struct run **list = NULL, *r;
        struct dirent *de;
        size_t count = 0;
        unsigned id;
        DIR *d;

        *ret = NULL;
        *n = 0;
        *max_id = 0;
        warn[0] = '\0';
        snprintf(runs, sizeof runs, "%s/runs", state_dir);
        d = opendir(runs);
        if (!d)
                return errno == ENOENT ? 0 : -errno;
        while ((de = readdir(d))) {
                if (!run_dir_id(de->d_name, &id))
                        continue;
                if (id > *max_id)
                        *max_id = id;
                snprintf(dir, sizeof dir, "%s/%s", runs, de->d_name);
                /* an atomic write that a kill cut before its rename: nothing
                 * there is data (an import's samples.csv.tmp can be 30 MB) */
                run_store_drop_tmp(dir);
                if (run_store_read(dir, &r, why, sizeof why) < 0) {
                        char reason[400];
                        snprintf(reason, sizeof reason, "run.json was lost or damaged (%s)", why);
                        truncate_torn_tail(dir);
                        if (rebuild_run(dir, id, reason, &r) < 0) {
                                if (rmdir(dir) == 0)            /* empty: an import cut before it wrote */
                                        snprintf(warn, warnlen, "%s held no run, only an unfinished write; "
                                                 "removed", dir);
                                else
                                        snprintf(warn, warnlen, "%s/run.json: %s, and no samples to rebuild it "
                                                 "from; ignoring that run", dir, why);
                                continue;
                        }
                        snprintf(warn, warnlen, "%s/run.json: %s; rebuilt from samples.csv as interrupted "
                                 "(the damaged file is kept as run.json.corrupt-*)", dir, why);
                }
                int e = r->state == RUN_RUNNING ? recover_run(dir, r) : 0;
                if (e < 0)
                        snprintf(warn, warnlen, "%s: cannot rewrite run.json as interrupted: %s", dir, strerror(-e));
                struct run **p = realloc(list, (count + 1) * sizeof *list);
                if (!p) {
                        run_free(r);
                        break;
                }
                list = p;
                list[count++] = r;
        }
        closedir(d);
        if (count)
                qsort(list, count, sizeof *list, compare_ids);
        *ret = list;
        *n = count;
        return (int) count;
}
