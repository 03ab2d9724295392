/* record.c — the history ring's tick consumer: one column per sensor id, one row per tick. */
#include "record.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "log.h"

void recorder_init(struct recorder *rec, struct history *hist, uint64_t interval_ms) {
        *rec = (struct recorder) { .hist = hist, .load_col = -1, .interval_ms = interval_ms };
}

void recorder_done(struct recorder *rec) {
        free(rec->temp_col);
        free(rec->freq_col);
        free(rec->cpu_col);
        rec->temp_col = rec->freq_col = rec->cpu_col = NULL;
        rec->load_cpus = 0;
}

/* A load is busy over total jiffies: kept to one jiffy of its row's total,
 * not to the jitter of the total below it. */
static void recorder_load_steps(struct recorder *rec) {
        if (!rec->hist)
                return;
        for (size_t i = 0; i < rec->load_cpus; i++)
                if (rec->cpu_col[i] >= 0)
                        (void) history_column_step(rec->hist, (size_t) rec->cpu_col[i],
                                                   cpu_load_step(rec->interval_ms, 1));
        if (rec->load_col >= 0)
                (void) history_column_step(rec->hist, (size_t) rec->load_col,
                                           cpu_load_step(rec->interval_ms, rec->load_cpus ? rec->load_cpus : 1));
}

void recorder_set_interval(struct recorder *rec, uint64_t interval_ms) {
        rec->interval_ms = interval_ms;
        recorder_load_steps(rec);
}

static int recorder_column(struct recorder *rec, const char *id, enum history_kind kind) {
        return rec->hist ? history_column(rec->hist, id, kind) : -1;
}

int recorder_set_sensors(struct recorder *rec, const struct sensors *s) {
        char id[SENSORS_ID_MAX + 16];

        recorder_done(rec);
        rec->temp_col = calloc(s->n_temps + 1, sizeof(int));
        rec->freq_col = calloc(s->n_policies + 1, sizeof(int));
        rec->cpu_col = calloc(s->load.n_cpus + 1, sizeof(int));
        if (!rec->temp_col || !rec->freq_col || !rec->cpu_col) {
                recorder_done(rec);
                return -ENOMEM;
        }
        for (size_t i = 0; i < s->n_temps; i++)
                rec->temp_col[i] = recorder_column(rec, s->temps[i].id, HISTORY_TEMP);
        for (size_t i = 0; i < s->n_policies; i++) {
                snprintf(id, sizeof id, "cpufreq:%s", s->policies[i].id);
                rec->freq_col[i] = recorder_column(rec, id, HISTORY_FREQ);
        }
        for (size_t i = 0; i < s->load.n_cpus; i++) {
                snprintf(id, sizeof id, "load:cpu%d", s->load.cpu_index[i]);
                rec->cpu_col[i] = recorder_column(rec, id, HISTORY_LOAD);
        }
        rec->load_col = recorder_column(rec, "load:cpu", HISTORY_LOAD);
        rec->load_cpus = s->load.n_cpus;
        recorder_load_steps(rec);
        return 0;
}

void recorder_on_sensors(void *userdata, const struct sensors *s) {
        struct recorder *rec = userdata;

        if (recorder_set_sensors(rec, s) < 0)
                log_error("Out of memory mapping sensors to history columns; history stops until the next re-probe");
}

void recorder_on_sample(void *userdata, const struct snapshot *snap) {
        struct recorder *rec = userdata;
        const struct sensors *s = snap->sensors;

        if (!rec->hist || !rec->temp_col)
                return;
        if (history_begin(rec->hist, snap->time_ms) < 0) {
                if (!rec->clock_warned)
                        log_warning("Wall clock went backwards; not recording history until it passes the last sample");
                rec->clock_warned = true;
                return;
        }
        rec->clock_warned = false;
        for (size_t i = 0; i < s->n_temps; i++)
                if (s->temps[i].ok && rec->temp_col[i] >= 0)
                        history_set(rec->hist, (size_t) rec->temp_col[i], s->temps[i].temp_mc / 1000.0);
        for (size_t i = 0; i < s->n_policies; i++)
                if (s->policies[i].ok && s->policies[i].cur_khz && rec->freq_col[i] >= 0)
                        history_set(rec->hist, (size_t) rec->freq_col[i], s->policies[i].cur_khz * 1000.0);
        if (!s->load.ok || !s->load.have_prev)
                return;
        if (rec->load_col >= 0)
                history_set(rec->hist, (size_t) rec->load_col, s->load.total);
        for (size_t i = 0; i < s->load.n_cpus; i++)
                if (rec->cpu_col[i] >= 0)
                        history_set(rec->hist, (size_t) rec->cpu_col[i], s->load.per_cpu[i]);
}
