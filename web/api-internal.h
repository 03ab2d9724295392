/* api-internal.h — for the API's own files only: the api object and the helpers its handlers share. */
#pragma once

#include <stddef.h>

#include "api.h"

struct api {
        struct api_context ctx;
        const struct sensors *sensors;  /* the latest snapshot's */
        uint64_t ticks;                 /* the latest snapshot's tick */
        int64_t tick_ns;                /* ns the tick before it took, -1 for not known */
        char *sensors_json;             /* GET /api/v1/sensors of the last tick, serialised on first use */
        size_t sensors_json_len;        /* bytes */
        bool sensors_json_stale;        /* a tick came since it was serialised */
        size_t metrics_len;             /* bytes of the last /metrics answer, 0 for none yet */
        struct api_plot_cache *plots;   /* run plots already drawn (api-plots.c) */
        unsigned series_jobs;           /* answers waiting for runs' samples on a thread (api-series.c) */
        struct events *events;          /* GET /api/v1/events (api-events.c) */
        unsigned events_run_id;         /* the live run the stream last told of, 0 for none */
        size_t events_phase_index;      /* and its phase then */
        char *events_alerts;            /* the active alerts last told, NULL for not yet */
        char *events_forecast;          /* the run's forecast last told, NULL for none */
        uint64_t events_failed;         /* events not published: out of memory */
};

#define API_POINTS_MAX 10000

/* A history query as the request asks it. */
struct history_request {
        int64_t from_ms, to_ms;
        size_t points;
        size_t cols[256];
        size_t n_cols;
};

/* from, to, sensors and points of a history request; any parameter not in
 * the NULL-terminated known list is refused. -EINVAL with a message naming
 * the parameter. */
int api_history_parse(const struct history *h, struct http_request *r, const char *const *known,
                      struct history_request *q, char *err, size_t errlen);

/* The "points" argument: 1..API_POINTS_MAX, default when absent. -EINVAL
 * with a message naming it. */
int api_arg_points(struct http_request *r, size_t def, size_t *ret, char *err, size_t errlen);

/* The "runs" argument: a comma-separated list of 1..max run ids. -EINVAL
 * with a message naming it. */
int api_arg_runs(struct http_request *r, unsigned *ids, size_t max, size_t *n, char *err, size_t errlen);

/* Whether every run of ids[0..n) exists (a run may be deleted while its
 * samples are read); if not, answers 400 naming the "runs" argument when
 * listed is true (the ids came from it), else 404. */
bool api_runs_found(struct api *a, struct http_request *r, const unsigned *ids, size_t n, bool listed);

/* The request may change state: it carries the token when one is configured,
 * else it comes from loopback. It may then also see the daemon's paths.
 * (api-routes.c) */
bool api_trusted(const struct api *a, struct http_request *r);

/* The handlers of the route table (api-routes.c, api_handler_t): each
 * answers one method and path, id the run of a path with one, else 0. The
 * dispatch has checked the client of a route that changes state. */
void api_get_status(struct api *a, struct http_request *r, unsigned id);
void api_get_sensors(struct api *a, struct http_request *r, unsigned id);
void api_get_history(struct api *a, struct http_request *r, unsigned id);
void api_get_alerts(struct api *a, struct http_request *r, unsigned id);
void api_get_metrics(struct api *a, struct http_request *r, unsigned id);
/* runs and compare (api-runs.c) */
void api_runs_list(struct api *a, struct http_request *r, unsigned id);
void api_runs_start(struct api *a, struct http_request *r, unsigned id);
void api_runs_import(struct api *a, struct http_request *r, unsigned id);
void api_run_get(struct api *a, struct http_request *r, unsigned id);
void api_run_delete(struct api *a, struct http_request *r, unsigned id);
void api_run_samples(struct api *a, struct http_request *r, unsigned id);
void api_run_export(struct api *a, struct http_request *r, unsigned id);
void api_run_stop(struct api *a, struct http_request *r, unsigned id);
void api_run_continue(struct api *a, struct http_request *r, unsigned id);
void api_compare(struct api *a, struct http_request *r, unsigned id);
/* the plots, .svg (api-plots.c) */
void api_plot_history(struct api *a, struct http_request *r, unsigned id);
void api_plot_run(struct api *a, struct http_request *r, unsigned id);
void api_plot_compare(struct api *a, struct http_request *r, unsigned id);
/* the server-sent events (api-events.c) */
void api_events_get(struct api *a, struct http_request *r, unsigned id);
/* the dashboard's page and files (api-dashboard.c) */
void api_dashboard_get(struct api *a, struct http_request *r, unsigned id);

void api_plots_free(struct api *a);
/* Whether a run's plot drawn from drawn_samples still shows it at
 * run_samples: an ended run's when nothing was added, a live run's while it
 * has grown by less than one of the plot's buckets at this width. */
bool api_plot_fresh(size_t drawn_samples, size_t run_samples, bool running, unsigned width);
/* The /api/v1/sensors document of the latest tick, built on first use. */
const char *api_sensors_json(struct api *a, size_t *ret_len);

/* Gets the recorded samples of runs ids[0..n) (runs_series()) for an
 * answer (api-series.c). An ended run's file is read on a thread, the
 * request deferred meanwhile; a live run's series is copied at once. Then
 * how->work(), when not NULL, runs on that thread too: what the answer
 * computes from the samples (fits, drawing), which may take the series'
 * arrays. how->answer() replies on the event loop: at once when there is
 * no file to read and no work, else when the thread is done; a run deleted
 * meanwhile is no longer found by runs_find(). arg is the answer's own,
 * handed over: how->free_arg() frees it, on whichever thread lets go last.
 * how->read(), when not NULL, reads run i's samples.csv at path itself,
 * keeping at most limit samples, on the thread, instead of into s[i],
 * which stays empty (a plot keeps 5 of the series' 10 columns): returns
 * the samples kept. how->copy() likewise takes a live run's samples from
 * its series, on the loop: the samples kept, or -ENOMEM. */
#define API_SERIES_MAX 16
struct run_series;
struct api_series_answer {
        size_t (*read)(void *arg, size_t i, const char *path, size_t limit);
        int (*copy)(void *arg, size_t i, const struct run_series *live, size_t limit);
        void (*work)(void *arg, const unsigned *ids, struct run_series *s, size_t n);
        void (*answer)(struct api *a, struct http_request *r, const unsigned *ids, struct run_series *s, size_t n,
                       void *arg);
        void (*free_arg)(void *arg);
};
void api_series_then(struct api *a, struct http_request *r, const unsigned *ids, size_t n,
                     const struct api_series_answer *how, void *arg);

/* Publishes what changed since the last call: run and phase events; each
 * tick also the sample and alert events while anyone listens. */
void api_events_check_runs(struct api *a);
void api_events_tick(struct api *a);
