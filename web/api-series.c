/* api-series.c — runs' samples for an answer: a live run's from memory, an ended run's read off the event loop. */
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "api-internal.h"
#include "offload.h"
#include "runs.h"

/*
 * An ended run's samples are in its samples.csv: a day at 1 Hz is 21 MB,
 * 30 ms to parse here and several times that on a board, more when it
 * comes from a slow card. It is read on a thread of its own (offload.h)
 * while the request is deferred, so the ticks and the other answers go on;
 * a live run's series is copied from memory at once. At most
 * API_SERIES_READS_MAX answers wait for reads at a time, each with its
 * thread and its samples in memory; more get 503.
 */
#define API_SERIES_READS_MAX 4
#define API_SERIES_ARG_MAX 64           /* bytes of the answer's own arguments */

struct series_read {
        struct api *a;
        struct http_request *r;
        struct offload *work;           /* NULL once the read is done */
        api_series_answer_t answer;
        size_t n;
        unsigned ids[API_SERIES_MAX];
        char *paths[API_SERIES_MAX];    /* samples.csv to read; NULL when the series is there already */
        struct run_series s[API_SERIES_MAX];
        char unit[16];
        _Alignas(max_align_t) unsigned char arg[API_SERIES_ARG_MAX];
};

static void series_read_free(void *userdata) {
        struct series_read *p = userdata;

        for (size_t i = 0; i < p->n; i++) {
                run_series_free(&p->s[i]);
                free(p->paths[i]);
        }
        free(p);
}

static void series_read_work(void *userdata) {
        struct series_read *p = userdata;

        for (size_t i = 0; i < p->n; i++)
                if (p->paths[i])
                        run_series_read_file(p->paths[i], &p->s[i], p->unit, sizeof p->unit);
}

static void series_read_done(void *userdata) {
        struct series_read *p = userdata;

        p->work = NULL;
        http_resume(p->r);
}

static void series_read_answer(void *userdata, struct http_request *r) {
        struct series_read *p = userdata;

        p->answer(p->a, r, p->ids, p->s, p->n, p->arg);
        for (size_t i = 0; i < p->n; i++)
                run_series_free(&p->s[i]);
#ifdef __GLIBC__
        /* A day of samples is megabytes, freed in pieces glibc would keep. */
        malloc_trim(0);
#endif
}

static void series_read_release(void *userdata) {
        struct series_read *p = userdata;

        p->a->series_reads--;
        if (p->work)
                offload_cancel(p->work);        /* frees p, now or when the read returns */
        else
                series_read_free(p);
}

void api_series_then(struct api *a, struct http_request *r, const unsigned *ids, size_t n,
                     api_series_answer_t answer, const void *arg, size_t arglen) {
        struct series_read *p = calloc(1, sizeof *p);
        bool files = false;
        int e = 0;

        if (!p || n > API_SERIES_MAX || arglen > sizeof p->arg) {
                free(p);
                http_reply_error(r, 500, "internal", "out of memory");
                return;
        }
        *p = (struct series_read) { .a = a, .r = r, .answer = answer, .n = n };
        memcpy(p->ids, ids, n * sizeof *ids);
        memcpy(p->arg, arg, arglen);
        for (size_t i = 0; i < n && e >= 0; i++) {
                e = runs_series(a->ctx.runs, ids[i], &p->s[i], p->unit, sizeof p->unit, &p->paths[i]);
                files |= p->paths[i] != NULL;
        }
        if (e == -ENOMEM) {
                series_read_free(p);
                http_reply_error(r, 500, "internal", "out of memory");
                return;
        }
        if (!files) {                   /* nothing to read (or a run gone, which the answer says) */
                series_read_answer(p, r);
                series_read_free(p);
                return;
        }
        if (a->series_reads >= API_SERIES_READS_MAX) {
                series_read_free(p);
                http_reply_error(r, 503, "busy", "%d answers are reading runs' samples already; ask again in a moment",
                                 API_SERIES_READS_MAX);
                return;
        }
        e = offload_start(a->ctx.event, series_read_work, series_read_done, series_read_free, p, &p->work);
        if (e < 0) {
                series_read_free(p);
                http_reply_error(r, 500, "internal", "cannot read the samples: %s", strerror(-e));
                return;
        }
        a->series_reads++;
        if (http_defer(r, series_read_answer, series_read_release, p) < 0) {
                series_read_release(p);
                http_reply_error(r, 500, "internal", "out of memory");
        }
}
