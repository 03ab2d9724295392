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

#include "run.h"
#include "util.h"

int run_store_dir(const char *state_dir, unsigned id, char *buf, size_t size) {
        int n = snprintf(buf, size, "%s/runs/%u", state_dir, id);

        return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}

static int fsync_dir(const char *dir) {
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0 || fsync(fd) < 0)
                return -errno;
        return 0;
}

static int write_all(int fd, const char *data, size_t len) {
        while (len > 0) {
                ssize_t n = write(fd, data, len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                data += n;
                len -= (size_t) n;
        }
        return 0;
}

int run_store_write_json(const char *dir, json_object *doc) {
        char tmp[PATH_MAX], path[PATH_MAX];
        size_t len;
        const char *text = json_object_to_json_string_length(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED, &len);
        int fd, r;

        snprintf(tmp, sizeof tmp, "%s/run.json.tmp", dir);
        snprintf(path, sizeof path, "%s/run.json", dir);
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        r = write_all(fd, text, len);
        if (r >= 0)
                r = write_all(fd, "\n", 1);
        if (r >= 0 && fsync(fd) < 0)
                r = -errno;
        if (close(fd) < 0 && r >= 0)
                r = -errno;
        if (r >= 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0) {
                unlink(tmp);
                return r;
        }
        return fsync_dir(dir);
}

json_object *run_store_read_json(const char *dir) {
        char path[PATH_MAX];

        snprintf(path, sizeof path, "%s/run.json", dir);
        return json_object_from_file(path);
}

int run_store_delete(const char *state_dir, unsigned id) {
        static const char *const files[] = { "run.json", "run.json.tmp", "samples.csv" };
        char dir[PATH_MAX], path[PATH_MAX];

        if (run_store_dir(state_dir, id, dir, sizeof dir) < 0)
                return -ENAMETOOLONG;
        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                snprintf(path, sizeof path, "%s/%s", dir, files[i]);
                if (unlink(path) < 0 && errno != ENOENT)
                        return -errno;
        }
        return rmdir(dir) < 0 ? -errno : 0;
}

static enum analysis_phase phase_from_csv(const char *s) {
        return strcmp(s, "stress") == 0 ? ANALYSIS_PHASE_STRESS :
               strcmp(s, "cooldown") == 0 ? ANALYSIS_PHASE_COOLDOWN : ANALYSIS_PHASE_IDLE;
}

static int series_grow(struct run_series *s) {
        size_t cap = s->cap ? s->cap * 2 : 1024;

#define GROW(field) do { \
                void *p = realloc(s->field, cap * sizeof *s->field); \
                if (!p) return -ENOMEM; \
                s->field = p; \
        } while (0)
        GROW(t_s); GROW(temp_c); GROW(freq_hz); GROW(max_hz); GROW(work_rate); GROW(cooling); GROW(phase);
#undef GROW
        s->cap = cap;
        return 0;
}

int run_series_append(struct run_series *s, double t_s, double temp_c, double freq_hz, double max_hz,
                      double work_rate, bool cooling, enum analysis_phase phase) {
        if (s->n == s->cap && series_grow(s) < 0)
                return -ENOMEM;
        s->t_s[s->n] = t_s;
        s->temp_c[s->n] = temp_c;
        s->freq_hz[s->n] = freq_hz;
        s->max_hz[s->n] = max_hz;
        s->work_rate[s->n] = work_rate;
        s->cooling[s->n] = cooling;
        s->phase[s->n] = phase;
        s->n++;
        return 0;
}

void run_series_free(struct run_series *s) {
        free(s->t_s);
        free(s->temp_c);
        free(s->freq_hz);
        free(s->max_hz);
        free(s->work_rate);
        free(s->cooling);
        free(s->phase);
        *s = (struct run_series) {};
}

static double csv_number(const char *field) {
        char *end;
        double v;

        if (!*field)
                return NAN;
        v = strtod(field, &end);
        return end == field ? NAN : v;
}

/* One row of the fixed leading columns (RUN_CSV_FIXED). Returns the row's time_ms. */
static int64_t csv_row(char *line, struct run_series *s, char *unit, size_t unitlen) {
        char *f[RUN_CSV_FIXED_COLUMNS], *rest = line;
        size_t n = 0;

        line[strcspn(line, "\n")] = '\0';
        /* strsep, not strtok: an empty field (a failed sensor) is a column too */
        while (rest && n < ELEMENTSOF(f))
                f[n++] = strsep(&rest, ",");
        if (n < ELEMENTSOF(f))
                return -1;
        if (run_series_append(s, csv_number(f[1]), csv_number(f[3]), csv_number(f[5]), csv_number(f[6]),
                              csv_number(f[9]), csv_number(f[7]) > 0, phase_from_csv(f[2])) < 0)
                return -1;
        if (*f[10])
                snprintf(unit, unitlen, "%s", f[10]);
        return strtoll(f[0], NULL, 10);
}

void run_series_metrics(const struct run_series *s, double ambient_c, struct run_metrics *ret) {
        struct analysis_samples in = {
                .n = s->n, .t_s = s->t_s, .temp_c = s->temp_c, .freq_hz = s->freq_hz,
                .max_allowed_hz = s->max_hz, .cooling_active = s->cooling, .work_rate = s->work_rate,
                .phase = s->phase, .ambient_c = ambient_c,
        };

        /* too few samples: the metrics are unknown, the run is still a run */
        if (analysis_compute_metrics(&in, ret) < 0)
                analysis_metrics_init(ret, ambient_c);
}

int64_t run_store_read_series(const char *dir, struct run_series *s, char *unit, size_t unitlen) {
        char path[700], *line = NULL;
        size_t size = 0;
        int64_t last = 0;
        FILE *f;

        snprintf(path, sizeof path, "%s/samples.csv", dir);
        f = fopen(path, "re");
        if (!f)
                return 0;
        for (bool header = true; getline(&line, &size, f) > 0; header = false) {
                if (header || line[strlen(line) - 1] != '\n')
                        continue;       /* the header, or a row cut short by the crash */
                int64_t t = csv_row(line, s, unit, unitlen);
                if (t > 0)
                        last = t;
        }
        free(line);
        fclose(f);
        return last;
}

static void recover_phases(json_object *doc, int64_t last_ms) {
        json_object *phases, *p, *v;

        if (!json_object_object_get_ex(doc, "phases", &phases))
                return;
        for (size_t i = 0; i < json_object_array_length(phases); i++) {
                p = json_object_array_get_idx(phases, i);
                if (!json_object_object_get_ex(p, "started_ms", &v) || json_object_is_type(v, json_type_null))
                        continue;
                if (json_object_object_get_ex(p, "end_reason", &v) && !json_object_is_type(v, json_type_null))
                        continue;
                json_object_object_add(p, "ended_ms", last_ms ? json_object_new_int64(last_ms) : NULL);
                json_object_object_add(p, "end_reason", json_object_new_string("interrupted"));
        }
}

/* A run.json still saying "running" after a start: the daemon died under it. */
static int recover_run(const char *dir, json_object *doc) {
        struct run_series s = {};
        struct run_metrics m;
        char unit[16] = "", reason[200];
        json_object *v, *rec = json_object_new_object();
        double ambient = NAN;
        int64_t last = run_store_read_series(dir, &s, unit, sizeof unit);

        if (json_object_object_get_ex(doc, "ambient_c", &v) && !json_object_is_type(v, json_type_null))
                ambient = json_object_get_double(v);
        run_series_metrics(&s, ambient, &m);
        snprintf(reason, sizeof reason, "heatcurved stopped during the run (crash, kill or power loss); "
                 "%zu samples kept", s.n);
        json_object_object_add(doc, "state", json_object_new_string("interrupted"));
        json_object_object_add(doc, "abort_reason", json_object_new_string(reason));
        json_object_object_add(doc, "phase", NULL);
        json_object_object_add(doc, "phase_index", NULL);
        json_object_object_add(doc, "live", NULL);
        json_object_object_add(doc, "ended_ms", last ? json_object_new_int64(last) : NULL);
        json_object_object_add(doc, "metrics", run_metrics_to_json(&m, unit));
        json_object_object_add(rec, "ok", json_object_new_boolean(true));
        json_object_object_add(rec, "error", NULL);
        json_object_object_add(rec, "samples", json_object_new_int64((int64_t) s.n));
        json_object_object_add(doc, "recording", rec);
        recover_phases(doc, last);
        run_series_free(&s);
        return run_store_write_json(dir, doc);
}

static int compare_docs(const void *a, const void *b) {
        int64_t x = json_object_get_int64(json_object_object_get(*(json_object *const *) a, "id"));
        int64_t y = json_object_get_int64(json_object_object_get(*(json_object *const *) b, "id"));

        return (x > y) - (x < y);
}

static bool is_number(const char *s) {
        return *s && strspn(s, "0123456789") == strlen(s) && strlen(s) < 10;
}

int run_store_load_all(const char *state_dir, json_object ***ret, size_t *n, char *warn, size_t warnlen) {
        char runs[PATH_MAX], dir[PATH_MAX];
        json_object **docs = NULL, *doc;
        struct dirent *de;
        size_t count = 0;
        DIR *d;

        *ret = NULL;
        *n = 0;
        warn[0] = '\0';
        snprintf(runs, sizeof runs, "%s/runs", state_dir);
        d = opendir(runs);
        if (!d)
                return errno == ENOENT ? 0 : -errno;
        while ((de = readdir(d))) {
                if (!is_number(de->d_name))
                        continue;
                snprintf(dir, sizeof dir, "%s/%s", runs, de->d_name);
                doc = run_store_read_json(dir);
                if (!doc || !json_object_is_type(json_object_object_get(doc, "id"), json_type_int)) {
                        snprintf(warn, warnlen, "%s/run.json is missing or unreadable, ignoring that run", dir);
                        json_object_put(doc);
                        continue;
                }
                const char *state = json_object_get_string(json_object_object_get(doc, "state"));
                int r = state && strcmp(state, "running") == 0 ? recover_run(dir, doc) : 0;
                if (r < 0)
                        snprintf(warn, warnlen, "%s: cannot rewrite run.json as interrupted: %s", dir, strerror(-r));
                json_object **p = realloc(docs, (count + 1) * sizeof *docs);
                if (!p) {
                        json_object_put(doc);
                        break;
                }
                docs = p;
                docs[count++] = doc;
        }
        closedir(d);
        qsort(docs, count, sizeof *docs, compare_docs);
        *ret = docs;
        *n = count;
        return (int) count;
}
