/* api-runs.c — runs over HTTP: parse the request, ask the runs owner, answer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api-internal.h"
#include "json-compare.h"
#include "json-metrics.h"
#include "runs.h"
#include "samples-csv.h"

#define COMPARE_RUNS_MAX API_SERIES_MAX
#define COMPARE_POINTS_DEFAULT 600

/* What runs_start() and runs_import() say, as HTTP. */
static void api_runs_reply_error(struct http_request *r, int e, const char *err) {
        switch (e) {
        case -EBUSY:
                http_reply_error(r, 409, "run_active", "%s", err);
                return;
        case -EAGAIN:
                http_reply_error(r, 409, "load_stopping", "%s", err);
                return;
        case -EROFS:
        case -ENOSPC:
        case -EDQUOT:
                http_reply_error(r, 507, "storage", "%s", err);
                return;
        case -EBADMSG:
                http_reply_error(r, 400, "bad_json", "%s", err);
                return;
        case -EINVAL:
                http_reply_error(r, 400, "bad_request", "%s", err);
                return;
        case -EACCES:
                http_reply_error(r, 403, "forbidden", "%s", err);
                return;
        case -EEXIST:
                http_reply_error(r, 409, "exists", "%s", err);
                return;
        default:
                http_reply_error(r, 500, "storage", "%s", err);
        }
}

/* A run made from the POSTed body, by starting it or importing it: 201 with its document. */
static void api_runs_created(struct api *a, struct http_request *r, int e, const struct run *run, const char *err) {
        if (e < 0)
                api_runs_reply_error(r, e, err);
        else
                http_reply_json(r, 201, runs_document(a->ctx.runs, run));
}

void api_runs_start(struct api *a, struct http_request *r, unsigned id) {
        const struct run *run = NULL;
        char err[600];
        int e = runs_start(a->ctx.runs, r->body, r->body_len, &run, err, sizeof err);

        api_runs_created(a, r, e, run, err);
}

/* The body is used up: its samples are decoded where they are. */
void api_runs_import(struct api *a, struct http_request *r, unsigned id) {
        const struct run *run = NULL;
        char err[600];
        int e = runs_import(a->ctx.runs, r->body, r->body_len, &run, err, sizeof err);

        api_runs_created(a, r, e, run, err);
}

static ssize_t api_export_read(void *userdata, char *buf, size_t max) {
        ssize_t n = run_file_export_read(userdata, buf, max);

        return n < 0 ? HTTP_STREAM_ERROR : n == 0 ? HTTP_STREAM_END : n;
}

static void api_export_done(void *userdata) {
        run_file_export_free(userdata);
}

void api_run_export(struct api *a, struct http_request *r, unsigned id) {
        struct run_file_export *x;
        struct http_stream *st;
        char err[300];
        int e = runs_export(a->ctx.runs, id, &x, err, sizeof err);

        if (e == -ENOENT)
                http_reply_error(r, 404, "not_found", "%s", err);
        else if (e == -EBUSY)
                http_reply_error(r, 409, "run_active", "%s", err);
        else if (e < 0)
                http_reply_error(r, 500, "storage", "%s", err);
        else    /* streamed: a long run's samples are never all in memory */
                http_reply_stream(r, 200, "application/json", api_export_read, api_export_done, x, &st);
}

void api_runs_list(struct api *a, struct http_request *r, unsigned id) {
        json_object *root = json_object_new_object(), *list = json_object_new_array();

        for (size_t i = 0; i < runs_count(a->ctx.runs); i++)
                json_object_array_add(list, runs_document(a->ctx.runs, runs_newest(a->ctx.runs, i)));
        json_object_object_add(root, "runs", list);
        http_reply_json(r, 200, root);
}

void api_run_get(struct api *a, struct http_request *r, unsigned id) {
        const struct run *run = runs_find(a->ctx.runs, id);

        if (!run)
                http_reply_error(r, 404, "not_found", "no run %u", id);
        else
                http_reply_json(r, 200, runs_document(a->ctx.runs, run));
}

static bool api_wants_csv(struct http_request *r) {
        const char *format = http_arg(r, "format"), *accept = http_header(r, "Accept");

        if (format)
                return strcmp(format, "csv") == 0;
        return accept && strstr(accept, "text/csv");
}

static ssize_t api_samples_json_read(void *userdata, char *buf, size_t max) {
        ssize_t n = samples_json_read(userdata, buf, max);

        return n < 0 ? HTTP_STREAM_ERROR : n == 0 ? HTTP_STREAM_END : n;
}

static void api_samples_json_done(void *userdata) {
        samples_json_free(userdata);
}

void api_run_samples(struct api *a, struct http_request *r, unsigned id) {
        struct http_stream *stream;
        struct samples_json *j;
        struct stat st;
        FILE *f;
        int fd, e;

        if (!runs_find(a->ctx.runs, id)) {
                http_reply_error(r, 404, "not_found", "no run %u", id);
                return;
        }
        e = runs_open_samples(a->ctx.runs, id, &fd);
        if (e >= 0 && fstat(fd, &st) < 0) {
                e = -errno;
                close(fd);
        }
        if (e < 0) {
                http_reply_error(r, 404, "not_found", "run %u has no samples: %s", id, strerror(-e));
                return;
        }
        if (api_wants_csv(r)) {
                /* complete rows only: not a row being written, nor a power cut's NULs */
                int64_t len = samples_complete_tail(fd, (int64_t) st.st_size);
                if (len < 0) {
                        close(fd);
                        http_reply_error(r, 500, "internal", "cannot read the samples of run %u: %s",
                                         id, strerror((int) -len));
                        return;
                }
                http_reply_fd(r, 200, "text/csv; charset=utf-8", fd, (uint64_t) len);
                return;
        }
        f = fdopen(fd, "re");
        if (!f || samples_json_new(f, &j) < 0) {
                if (f)
                        fclose(f);
                else
                        close(fd);
                http_reply_error(r, 500, "internal", "cannot read the samples of run %u", id);
                return;
        }
        /* streamed as the client reads: a 24 h run is not built in memory first */
        http_reply_stream(r, 200, "application/json", api_samples_json_read, api_samples_json_done, j, &stream);
}

void api_run_stop(struct api *a, struct http_request *r, unsigned id) {
        char err[128];
        int e = runs_stop(a->ctx.runs, id, err, sizeof err);

        if (e == -ENOENT)
                http_reply_error(r, 404, "not_found", "%s", err);
        else if (e < 0)
                http_reply_error(r, 409, "not_running", "%s", err);
        else
                http_reply_json(r, 200, runs_document(a->ctx.runs, runs_find(a->ctx.runs, id)));
}

/* A series waiting for a remount goes on. */
void api_run_continue(struct api *a, struct http_request *r, unsigned id) {
        char err[128];
        int e = runs_continue(a->ctx.runs, id, err, sizeof err);

        if (e == -ENOENT)
                http_reply_error(r, 404, "not_found", "%s", err);
        else if (e < 0)
                http_reply_error(r, 409, "not_waiting", "%s", err);
        else
                http_reply_json(r, 200, runs_document(a->ctx.runs, runs_find(a->ctx.runs, id)));
}

void api_run_delete(struct api *a, struct http_request *r, unsigned id) {
        char err[300];
        int e = runs_delete(a->ctx.runs, id, err, sizeof err);

        if (e == -EBUSY)
                http_reply_error(r, 409, "run_active", "%s", err);
        else if (e == -ENOENT)
                http_reply_error(r, 404, "not_found", "%s", err);
        else if (e == -ENOTEMPTY || e == -ELOOP || e == -ENOTDIR)
                /* its folder is not (only) what heatcurved wrote: a conflict with the disk, all kept */
                http_reply_error(r, 409, "run_files", "%s", err);
        else if (e < 0)
                http_reply_error(r, 500, "storage", "%s", err);
        else
                http_reply(r, 204, "application/json", "", 0);
}

/* The groups and verdicts of the runs ids[0..n): grouped by label, a run
 * without one by its id ("#3"), a run listed twice counted once. */
static int compare_add_verdicts(struct api *a, json_object *root, const unsigned *ids, size_t n) {
        const struct run_metrics *metrics[COMPARE_RUNS_MAX];
        struct run_metrics shown[COMPARE_RUNS_MAX];
        const char *labels[COMPARE_RUNS_MAX];
        char names[COMPARE_RUNS_MAX][16];
        size_t k = 0;

        for (size_t i = 0; i < n; i++) {
                const struct run *run = runs_find(a->ctx.runs, ids[i]);
                bool seen = false;

                for (size_t j = 0; j < i; j++)
                        seen = seen || ids[j] == ids[i];
                if (seen)
                        continue;
                snprintf(names[k], sizeof names[k], "#%u", ids[i]);
                labels[k] = run->label[0] ? run->label : names[k];
                /* as compare.svg and heatcurvectl read it: the same sentence */
                if (json_run_metrics_as_shown(&run->metrics, &shown[k]) < 0)
                        return -ENOMEM;
                metrics[k] = &shown[k];
                k++;
        }
        return json_compare_add(root, metrics, labels, k);
}

static void compare_answer(struct api *a, struct http_request *r, const unsigned *ids, struct run_series *s,
                           size_t n, void *arg) {
        const size_t *points = arg;
        json_object *root, *list, *curves;

        if (!api_runs_found(a, r, ids, n, true))      /* one was deleted while the samples were read */
                return;
        root = json_object_new_object();
        list = json_object_new_array();
        curves = json_object_new_array();
        json_object_object_add(root, "runs", list);
        json_object_object_add(root, "curves", curves);
        for (size_t i = 0; i < n; i++) {
                json_object_array_add(list, runs_document(a->ctx.runs, runs_find(a->ctx.runs, ids[i])));
                json_object_array_add(curves, run_series_curve(&s[i], ids[i], *points));
        }
        if (compare_add_verdicts(a, root, ids, n) < 0) {
                json_object_put(root);
                http_reply_error(r, 500, "internal", "out of memory");
                return;
        }
        http_reply_json(r, 200, root);
}

/* The curves are a few hundred points: built on the loop. */
static const struct api_series_answer compare_how = { .answer = compare_answer, .free_arg = free };

void api_compare(struct api *a, struct http_request *r, unsigned id) {
        static const char *const known[] = { "runs", "points", NULL };
        const char *unknown = http_unknown_arg(r, known);
        unsigned ids[COMPARE_RUNS_MAX];
        size_t n, points, *arg;
        char err[256];

        if (unknown) {
                http_reply_error(r, 400, "bad_parameter", "%s: unknown parameter (known: runs, points)", unknown);
                return;
        }
        if (api_arg_points(r, COMPARE_POINTS_DEFAULT, &points, err, sizeof err) < 0 ||
            api_arg_runs(r, ids, COMPARE_RUNS_MAX, &n, err, sizeof err) < 0) {
                http_reply_error(r, 400, "bad_parameter", "%s", err);
                return;
        }
        if (!api_runs_found(a, r, ids, n, true))
                return;
        if (!(arg = malloc(sizeof *arg))) {
                http_reply_error(r, 500, "internal", "out of memory");
                return;
        }
        *arg = points;
        api_series_then(a, r, ids, n, &compare_how, arg);
}
