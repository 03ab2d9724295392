/* api-series.c — runs' samples for an answer: a live run's from memory, an ended run's read off the event loop. */
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "api-internal.h"
#include "offload.h"
#include "plot-data.h"
#include "runs.h"

/*
 * An ended run's samples are in its samples.csv: a day at 1 Hz is 21 MB,
 * 30 ms to parse here and several times that on a board, more when it
 * comes from a slow card. It is read on a thread of its own (offload.h)
 * while the request is deferred, so the ticks and the other answers go on;
 * a live run's series is copied from memory at once, on the loop that
 * changes it. What the answer computes from them (fits, drawing) runs on
 * the same thread. At most API_SERIES_JOBS_MAX answers wait for threads at
 * a time, each with at most PLOT_SAMPLES_MAX samples in memory (plot-data.h,
 * 8 MB, shared among its runs): a comparison of sixteen week-long runs
 * cannot take a board's memory. More answers get 503.
 */
#define API_SERIES_JOBS_MAX 4
/* Samples (36 bytes each in a plot, 62 in a series) from which the heap is trimmed after
 * the answer: an hour at 1 Hz. A smaller answer's memory is reused. */
#define API_SERIES_TRIM_SAMPLES 3600

struct series_job {
        struct api *a;
        struct http_request *r;
        struct offload *work;           /* NULL once the thread is done */
        const struct api_series_answer *how;
        void *arg;
        size_t n;
        unsigned ids[API_SERIES_MAX];
        char *paths[API_SERIES_MAX];    /* samples.csv to read; NULL when the series is there already */
        struct run_series s[API_SERIES_MAX];
        char unit[16];
        size_t samples;                 /* read or copied, all runs */
};

static void series_job_free(void *userdata) {
        struct series_job *p = userdata;
        size_t samples = p->samples;

        for (size_t i = 0; i < p->n; i++) {
                run_series_free(&p->s[i]);
                free(p->paths[i]);
        }
        if (p->arg)
                p->how->free_arg(p->arg);
        free(p);
#ifdef __GLIBC__
        /* A day of samples is megabytes, freed in pieces glibc would keep. */
        if (samples >= API_SERIES_TRIM_SAMPLES)
                malloc_trim(0);
#else
        (void) samples;
#endif
}

static void series_job_work(void *userdata) {
        struct series_job *p = userdata;

        for (size_t i = 0; i < p->n; i++)
                if (p->paths[i] && p->how->read)
                        p->samples += p->how->read(p->arg, i, p->paths[i], PLOT_SAMPLES_MAX / p->n);
                else if (p->paths[i]) {
                        run_series_read_file(p->paths[i], &p->s[i], p->unit, sizeof p->unit);
                        p->samples += p->s[i].n;
                }
        if (!p->how->work)
                return;
        p->how->work(p->arg, p->ids, p->s, p->n);
        /* what work() did not take, megabytes for a day: freed here, off the loop */
        for (size_t i = 0; i < p->n; i++)
                run_series_free(&p->s[i]);
}

static void series_job_done(void *userdata) {
        struct series_job *p = userdata;

        p->work = NULL;
        http_resume(p->r);
}

static void series_job_answer(void *userdata, struct http_request *r) {
        struct series_job *p = userdata;

        p->how->answer(p->a, r, p->ids, p->s, p->n, p->arg);
}

static void series_job_release(void *userdata) {
        struct series_job *p = userdata;

        p->a->series_jobs--;
        if (p->work)
                offload_cancel(p->work);        /* frees p, now or when the thread is done */
        else
                series_job_free(p);
}

void api_series_then(struct api *a, struct http_request *r, const unsigned *ids, size_t n,
                     const struct api_series_answer *how, void *arg) {
        struct series_job *p = n <= API_SERIES_MAX ? calloc(1, sizeof *p) : NULL;
        bool thread = how->work != NULL;
        int e = 0;

        if (!p) {
                how->free_arg(arg);
                http_reply_error(r, 500, "internal", "out of memory");
                return;
        }
        *p = (struct series_job) { .a = a, .r = r, .how = how, .arg = arg, .n = n };
        memcpy(p->ids, ids, n * sizeof *ids);
        for (size_t i = 0; i < n && e >= 0; i++) {
                const struct run_series *live = how->copy ? runs_live_series(a->ctx.runs, ids[i]) : NULL;

                if (live)
                        e = how->copy(arg, i, live, PLOT_SAMPLES_MAX / n);
                else
                        e = runs_series(a->ctx.runs, ids[i], PLOT_SAMPLES_MAX / n, &p->s[i], p->unit,
                                        sizeof p->unit, &p->paths[i]);
                thread |= p->paths[i] != NULL;
                p->samples += live && e > 0 ? (size_t) e : p->s[i].n;
        }
        if (e == -ENOMEM) {
                series_job_free(p);
                http_reply_error(r, 500, "internal", "out of memory");
                return;
        }
        if (!thread) {                  /* nothing to read or compute (or a run gone, which the answer says) */
                series_job_answer(p, r);
                series_job_free(p);
                return;
        }
        if (a->series_jobs >= API_SERIES_JOBS_MAX) {
                series_job_free(p);
                http_reply_error(r, 503, "busy", "%d answers are reading runs' samples already; ask again in a moment",
                                 API_SERIES_JOBS_MAX);
                return;
        }
        e = offload_start(a->ctx.event, series_job_work, series_job_done, series_job_free, p, &p->work);
        if (e < 0) {
                series_job_free(p);
                http_reply_error(r, 500, "internal", "cannot read the samples: %s", strerror(-e));
                return;
        }
        a->series_jobs++;
        if (http_defer(r, series_job_answer, series_job_release, p) < 0) {
                series_job_release(p);
                http_reply_error(r, 500, "internal", "out of memory");
        }
}
