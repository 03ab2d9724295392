/* run-load.h — for runs/ only: one stress load of a run on the event loop, from its start until every worker is reaped. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "stress.h"

/* The workers of one phase's load, a child source each, and the timer that
 * SIGKILLs what ignored SIGTERM. A run keeps the current phase's load and the
 * loads of earlier phases that are still stopping, each with its own timer,
 * so back-to-back load phases never touch each other. */
struct run_load {
        struct run_load *next;          /* the run's list of loads still stopping */
        unsigned run_id;                /* for the log */
        struct stress *stress;
        sd_event_source **child_sources;        /* one per worker pid */
        size_t n_sources;
        sd_event_source *kill_timer;
        bool stopping;                  /* a stop was asked: an exit since is no failure */
};

int run_load_start(sd_event *event, const struct stress_spec *spec, unsigned run_id, struct run_load **ret);
/* SIGTERM now, SIGKILL after STRESS_STOP_GRACE_MS. */
void run_load_stop(struct run_load *l, sd_event *event);
/* Every worker was reaped. */
bool run_load_exited(const struct run_load *l);
/* A worker ended by itself before any stop; why gets how ("exit status 127",
 * "signal 9"). */
bool run_load_failed(const struct run_load *l, char *why, size_t size);
/* Stops and reaps what still runs (blocking, bounded), frees. Accepts NULL.
 * Never from inside one of its child sources' callbacks. */
void run_load_free(struct run_load *l);
