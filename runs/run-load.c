/* run-load.c — one stress load of a run on the event loop, from its start until every worker is reaped. */
#include "run-load.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "log.h"

static int run_load_on_child(sd_event_source *es, const siginfo_t *si, void *userdata) {
        struct run_load *l = userdata;

        stress_child_exited(l->stress, si);
        return 0;
}

static int run_load_on_kill_timer(sd_event_source *es, uint64_t usec, void *userdata) {
        struct run_load *l = userdata;
        char field[32];
        const char *fields[] = { field, NULL };

        if (!stress_all_exited(l->stress)) {
                snprintf(field, sizeof field, "RUN_ID=%u", l->run_id);
                log_fields(LOG_WARNING, fields, "Run %u: load did not stop within %u ms, killing it", l->run_id,
                           STRESS_STOP_GRACE_MS);
                stress_kill(l->stress);
        }
        return 0;
}

int run_load_start(sd_event *event, const struct stress_spec *spec, unsigned run_id, struct run_load **ret) {
        struct run_load *l = calloc(1, sizeof *l);
        int r;

        if (!l)
                return -ENOMEM;
        l->run_id = run_id;
        r = stress_start(spec, &l->stress);
        if (r < 0) {
                free(l);
                return r;
        }
        l->child_sources = calloc(stress_n_pids(l->stress) + 1, sizeof *l->child_sources);
        if (!l->child_sources)
                r = -ENOMEM;
        for (size_t i = 0; r >= 0 && i < stress_n_pids(l->stress); i++, l->n_sources++)
                r = sd_event_add_child(event, &l->child_sources[i], stress_pid(l->stress, i), WEXITED,
                                       run_load_on_child, l);
        if (r < 0) {
                run_load_free(l);
                return r;
        }
        *ret = l;
        return 0;
}

void run_load_stop(struct run_load *l, sd_event *event) {
        l->stopping = true;
        stress_stop(l->stress);
        if (!l->kill_timer)
                sd_event_add_time_relative(event, &l->kill_timer, CLOCK_MONOTONIC, STRESS_STOP_GRACE_MS * 1000u, 0,
                                           run_load_on_kill_timer, l);
}

bool run_load_exited(const struct run_load *l) {
        return stress_all_exited(l->stress);
}

bool run_load_failed(const struct run_load *l, char *why, size_t size) {
        int code = 0, status = 0;

        if (l->stopping || !stress_failed(l->stress))
                return false;
        for (size_t i = 0; i < stress_n_pids(l->stress); i++)
                if (stress_exit_status(l->stress, i, &code, &status) >= 0)
                        break;
        snprintf(why, size, "%s %d", code == CLD_EXITED ? "exit status" : "signal", status);
        return true;
}

void run_load_free(struct run_load *l) {
        if (!l)
                return;
        for (size_t i = 0; i < l->n_sources; i++)
                sd_event_source_disable_unref(l->child_sources[i]);
        sd_event_source_disable_unref(l->kill_timer);
        if (!stress_all_exited(l->stress))
                stress_reap_blocking(l->stress, STRESS_STOP_GRACE_MS);
        stress_free(l->stress);
        free(l->child_sources);
        free(l);
}
