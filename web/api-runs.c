/* api-runs.c — runs over HTTP: start, list, show, samples, stop, delete, compare; auth for the mutating ones. */
#include "api-runs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"
#include "json-util.h"
#include "run.h"
#include "util.h"

#define COMPARE_RUNS_MAX 16
#define COMPARE_POINTS_DEFAULT 600

/* Constant time, so the token cannot be guessed a byte at a time. */
static bool token_equal(const char *a, const char *b) {
        size_t la = strlen(a), lb = strlen(b);
        unsigned char diff = la != lb;

        for (size_t i = 0; i < la; i++)
                diff |= (unsigned char) a[i] ^ (unsigned char) b[i % (lb ? lb : 1)];
        return diff == 0;
}

/* Mutating requests: the bearer token when one is configured, else loopback only. */
static bool api_authorized(struct daemon *d, struct http_request *r) {
        const char *auth = http_header(r, "Authorization");

        if (!d->token[0]) {
                if (r->from_loopback)
                        return true;
                http_reply_error(r, 403, "forbidden",
                                 "without a token_file, requests that change state are accepted from loopback only");
                return false;
        }
        if (auth && strncmp(auth, "Bearer ", 7) == 0 && token_equal(auth + 7, d->token))
                return true;
        http_reply_error(r, 401, "unauthorized", auth ? "wrong bearer token" :
                         "this request needs an Authorization: Bearer <token> header");
        return false;
}

static bool run_is_live(const struct daemon *d) {
        return d->run && d->run->state == RUN_RUNNING;
}

static void api_runs_post(struct daemon *d, struct http_request *r) {
        struct json_tokener *tok;
        json_object *def;
        struct run *run = NULL;
        char err[600];
        int ret;

        if (!api_authorized(d, r))
                return;
        if (run_is_live(d)) {
                http_reply_error(r, 409, "run_active", "run %u is running; stop it first", d->run->id);
                return;
        }
        if (d->run && d->run->stress) {
                http_reply_error(r, 409, "load_stopping", "the load of run %u is still stopping; retry in a second",
                                 d->run->id);
                return;
        }
        if (!d->state_dir_ok) {
                http_reply_error(r, 507, "storage", "the state directory is not usable: %s", d->state_error);
                return;
        }
        tok = json_tokener_new();
        def = r->body ? json_tokener_parse_ex(tok, r->body, (int) r->body_len) : NULL;
        if (!def || json_tokener_get_error(tok) != json_tokener_success) {
                http_reply_error(r, 400, "bad_json", "body: not valid JSON: %s",
                                 r->body ? json_tokener_error_desc(json_tokener_get_error(tok)) : "empty");
                json_tokener_free(tok);
                json_object_put(def);
                return;
        }
        json_tokener_free(tok);
        ret = run_parse(def, d->sensors, &run, err, sizeof err);
        json_object_put(def);
        if (ret >= 0)
                ret = run_start(d, run, err, sizeof err);
        if (ret < 0) {
                http_reply_error(r, ret == -EINVAL ? 400 : 500, ret == -EINVAL ? "bad_request" : "storage", "%s", err);
                run_free(run);
                return;
        }
        run_free(d->run);
        d->run = run;
        http_reply_json(r, 201, run_to_json(run, true));
}

static void api_runs_list(struct daemon *d, struct http_request *r) {
        json_object *root = json_object_new_object(), *a = json_object_new_array();

        if (run_is_live(d))
                json_object_array_add(a, run_to_json(d->run, true));
        for (size_t i = d->n_runs; i-- > 0; )
                json_object_array_add(a, json_object_get(d->runs[i]));
        json_object_object_add(root, "runs", a);
        http_reply_json(r, 200, root);
}

static void api_run_get(struct daemon *d, struct http_request *r, unsigned id) {
        json_object *doc = daemon_run_document(d, id);

        if (!doc)
                http_reply_error(r, 404, "not_found", "no run %u", id);
        else
                http_reply_json(r, 200, doc);
}

static bool api_wants_csv(struct http_request *r) {
        const char *format = http_arg(r, "format"), *accept = http_header(r, "Accept");

        if (format)
                return strcmp(format, "csv") == 0;
        return accept && strstr(accept, "text/csv");
}

/* One CSV field as JSON: a number, a string (the phase), or null when empty. */
static json_object *csv_field_json(const char *f) {
        char *end;
        double v;

        if (!*f)
                return NULL;
        v = strtod(f, &end);
        if (*end == '\0')
                return strchr(f, '.') ? json_object_new_double_s(v, f) : json_object_new_int64(strtoll(f, NULL, 10));
        return json_object_new_string(f);
}

static json_object *csv_line_json(char *line) {
        json_object *a = json_object_new_array();
        char *rest = line;

        line[strcspn(line, "\n")] = '\0';
        while (rest) {
                char *f = strsep(&rest, ",");
                json_object_array_add(a, csv_field_json(f));
        }
        return a;
}

static json_object *csv_to_json(FILE *f) {
        json_object *root = json_object_new_object(), *rows = json_object_new_array(), *cols = NULL;
        char *line = NULL;
        size_t size = 0;

        while (getline(&line, &size, f) > 0) {
                if (line[strlen(line) - 1] != '\n')
                        break;          /* a row still being written */
                if (!cols) {
                        cols = csv_line_json(line);
                        continue;
                }
                json_object_array_add(rows, csv_line_json(line));
        }
        free(line);
        json_object_object_add(root, "columns", cols ? cols : json_object_new_array());
        json_object_object_add(root, "rows", rows);
        return root;
}

static void api_run_samples(struct daemon *d, struct http_request *r, unsigned id) {
        char dir[PATH_MAX], path[PATH_MAX];
        json_object *doc = daemon_run_document(d, id);
        struct stat st;
        int fd;

        if (!doc) {
                http_reply_error(r, 404, "not_found", "no run %u", id);
                return;
        }
        json_object_put(doc);
        if (run_is_live(d) && d->run->id == id && d->run->csv)
                fflush(d->run->csv);
        run_store_dir(d->cfg.state_dir, id, dir, sizeof dir);
        snprintf(path, sizeof path, "%s/samples.csv", dir);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0) {
                http_reply_error(r, 404, "not_found", "run %u has no samples: %s", id, strerror(errno));
                if (fd >= 0)
                        close(fd);
                return;
        }
        if (api_wants_csv(r)) {
                http_reply_fd(r, 200, "text/csv; charset=utf-8", fd, (uint64_t) st.st_size);
                return;
        }
        FILE *f = fdopen(fd, "re");
        if (!f) {
                close(fd);
                http_reply_error(r, 500, "internal", "cannot read %s", path);
                return;
        }
        http_reply_json(r, 200, csv_to_json(f));
        fclose(f);
}

static void api_run_stop(struct daemon *d, struct http_request *r, unsigned id) {
        if (!api_authorized(d, r))
                return;
        if (!run_is_live(d) || d->run->id != id) {
                json_object *doc = daemon_run_document(d, id);
                http_reply_error(r, doc ? 409 : 404, doc ? "not_running" : "not_found",
                                 doc ? "run %u is not running" : "no run %u", id);
                json_object_put(doc);
                return;
        }
        run_stop(d->run, util_now_ms());
        http_reply_json(r, 200, run_to_json(d->run, true));
}

static void api_run_delete(struct daemon *d, struct http_request *r, unsigned id) {
        size_t i = 0;
        int ret;

        if (!api_authorized(d, r))
                return;
        if (run_is_live(d) && d->run->id == id) {
                http_reply_error(r, 409, "run_active", "run %u is running; stop it first", id);
                return;
        }
        while (i < d->n_runs && json_object_get_int64(json_object_object_get(d->runs[i], "id")) != (int64_t) id)
                i++;
        if (i == d->n_runs) {
                http_reply_error(r, 404, "not_found", "no run %u", id);
                return;
        }
        ret = run_store_delete(d->cfg.state_dir, id);
        if (ret < 0) {
                http_reply_error(r, 500, "storage", "cannot delete run %u: %s", id, strerror(-ret));
                return;
        }
        json_object_put(d->runs[i]);
        memmove(&d->runs[i], &d->runs[i + 1], (d->n_runs - i - 1) * sizeof *d->runs);
        d->n_runs--;
        http_reply(r, 204, "application/json", "", 0);
}

/* The run's curve, t = 0 at the first stress sample (or the first sample), mean per bucket. */
static json_object *compare_curve(const char *dir, size_t points) {
        struct run_series s = {};
        json_object *o = json_object_new_object(), *t = json_object_new_array(), *y = json_object_new_array();
        char unit[16];
        size_t start = 0;

        run_store_read_series(dir, &s, unit, sizeof unit);
        while (start < s.n && s.phase[start] != ANALYSIS_PHASE_STRESS)
                start++;
        double t0 = start < s.n ? s.t_s[start] : s.n ? s.t_s[0] : 0.0;
        double span = s.n ? s.t_s[s.n - 1] - s.t_s[0] : 0.0, width = span > 0 ? span / (double) points : 1.0;
        for (size_t i = 0; i < s.n; ) {
                double sum = 0, tsum = 0, edge = s.t_s[i] + width;
                size_t k = 0;
                for (; i < s.n && (s.t_s[i] < edge || k == 0); i++)
                        if (isfinite(s.temp_c[i])) {
                                sum += s.temp_c[i];
                                tsum += s.t_s[i];
                                k++;
                        }
                if (k) {
                        json_object_array_add(t, json_new_number(tsum / (double) k - t0, 1));
                        json_object_array_add(y, json_new_number(sum / (double) k, 2));
                }
        }
        json_object_object_add(o, "t_s", t);
        json_object_object_add(o, "temp_c", y);
        run_series_free(&s);
        return o;
}

static int compare_parse(const char *list, unsigned *ids, size_t *n, char *err, size_t errlen) {
        *n = 0;
        for (const char *p = list; p && *p; ) {
                char *end;
                unsigned long v = strtoul(p, &end, 10);
                if (end == p || (*end != ',' && *end != '\0') || v == 0 || v > UINT_MAX) {
                        snprintf(err, errlen, "runs: \"%s\" is not a comma-separated list of run ids", list);
                        return -EINVAL;
                }
                if (*n == COMPARE_RUNS_MAX) {
                        snprintf(err, errlen, "runs: at most %d runs", COMPARE_RUNS_MAX);
                        return -EINVAL;
                }
                ids[(*n)++] = (unsigned) v;
                p = *end ? end + 1 : end;
        }
        if (*n == 0) {
                snprintf(err, errlen, "runs: give the ids to compare, e.g. runs=1,4,7");
                return -EINVAL;
        }
        return 0;
}

static void api_compare(struct daemon *d, struct http_request *r) {
        static const char *const known[] = { "runs", "points", NULL };
        const char *unknown = http_unknown_arg(r, known), *points_arg = http_arg(r, "points");
        unsigned ids[COMPARE_RUNS_MAX];
        size_t n, points = COMPARE_POINTS_DEFAULT;
        json_object *root, *runs, *curves;
        char err[256], dir[PATH_MAX];

        if (unknown) {
                http_reply_error(r, 400, "bad_parameter", "%s: unknown parameter (known: runs, points)", unknown);
                return;
        }
        if (points_arg) {
                char *end;
                long v = strtol(points_arg, &end, 10);
                if (end == points_arg || *end || v < 1 || v > 10000) {
                        http_reply_error(r, 400, "bad_parameter", "points: \"%s\" is not a number from 1 to 10000", points_arg);
                        return;
                }
                points = (size_t) v;
        }
        if (compare_parse(http_arg(r, "runs"), ids, &n, err, sizeof err) < 0) {
                http_reply_error(r, 400, "bad_parameter", "%s", err);
                return;
        }
        root = json_object_new_object();
        runs = json_object_new_array();
        curves = json_object_new_array();
        json_object_object_add(root, "runs", runs);
        json_object_object_add(root, "curves", curves);
        for (size_t i = 0; i < n; i++) {
                json_object *doc = daemon_run_document(d, ids[i]), *c;
                if (!doc) {
                        json_object_put(root);
                        http_reply_error(r, 400, "bad_parameter", "runs: no run %u", ids[i]);
                        return;
                }
                json_object_array_add(runs, doc);
                run_store_dir(d->cfg.state_dir, ids[i], dir, sizeof dir);
                c = compare_curve(dir, points);
                json_object_object_add(c, "id", json_object_new_int64(ids[i]));
                json_object_array_add(curves, c);
        }
        http_reply_json(r, 200, root);
}

/* "/api/v1/runs/12/samples" -> id 12, tail "/samples". */
static bool parse_run_path(const char *url, unsigned *id, const char **tail) {
        const char *p = url + strlen("/api/v1/runs/");
        char *end;
        unsigned long v = strtoul(p, &end, 10);

        if (end == p || v == 0 || v > UINT_MAX || (*end && *end != '/'))
                return false;
        *id = (unsigned) v;
        *tail = end;
        return true;
}

static void method_not_allowed(struct http_request *r, const char *allowed) {
        http_reply_error(r, 405, "method_not_allowed", "%s does not take %s (only %s)", r->url, r->method, allowed);
}

bool api_runs_dispatch(struct daemon *d, struct http_request *r) {
        bool get = strcmp(r->method, "GET") == 0 || strcmp(r->method, "HEAD") == 0;
        bool post = strcmp(r->method, "POST") == 0, del = strcmp(r->method, "DELETE") == 0;
        const char *tail;
        unsigned id;

        if (strcmp(r->url, "/api/v1/compare") == 0) {
                get ? api_compare(d, r) : method_not_allowed(r, "GET");
                return true;
        }
        if (strcmp(r->url, "/api/v1/runs") == 0) {
                get ? api_runs_list(d, r) : post ? api_runs_post(d, r) : method_not_allowed(r, "GET, POST");
                return true;
        }
        if (strncmp(r->url, "/api/v1/runs/", 13) != 0 || !parse_run_path(r->url, &id, &tail))
                return false;
        if (strcmp(tail, "") == 0)
                get ? api_run_get(d, r, id) : del ? api_run_delete(d, r, id) : method_not_allowed(r, "GET, DELETE");
        else if (strcmp(tail, "/samples") == 0)
                get ? api_run_samples(d, r, id) : method_not_allowed(r, "GET");
        else if (strcmp(tail, "/stop") == 0)
                post ? api_run_stop(d, r, id) : method_not_allowed(r, "POST");
        else
                return false;
        return true;
}
