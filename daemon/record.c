/* record.c — the history ring's tick consumer: one column per sensor id, one row per tick. */
#include "record.h"

#include <errno.h>
#include <stdlib.h>

#include "log.h"

void recorder_init(struct recorder *rec, struct history *hist, uint64_t interval_ms) {
        *rec = (struct recorder) { .hist = hist, .interval_ms = interval_ms };
}

void recorder_done(struct recorder *rec) {
        free(rec->ch);
        free(rec->col);
        rec->ch = NULL;
        rec->col = NULL;
        rec->n = rec->load_cpus = 0;
}

/* A load is busy over total jiffies: kept to one jiffy of its row's total,
 * not to the jitter of the total below it. */
static void recorder_load_steps(struct recorder *rec) {
        if (!rec->hist)
                return;
        for (size_t i = 0; i < rec->n; i++)
                if (rec->ch[i].kind == SENSOR_KIND_CPU_LOAD)
                        (void) history_column_step(rec->hist, rec->col[i], cpu_load_step(rec->interval_ms, 1));
                else if (rec->ch[i].kind == SENSOR_KIND_LOAD)
                        (void) history_column_step(rec->hist, rec->col[i],
                                                   cpu_load_step(rec->interval_ms, rec->load_cpus ? rec->load_cpus : 1));
}

void recorder_set_interval(struct recorder *rec, uint64_t interval_ms) {
        rec->interval_ms = interval_ms;
        recorder_load_steps(rec);
}

/* The history column of a channel, -1 for none: the history keeps
 * temperatures, frequencies, loads and power draws, not cooling states or flags. */
static int recorder_column(struct recorder *rec, const struct sensor_channel *ch) {
        enum history_kind kind;

        switch (ch->kind) {
        case SENSOR_KIND_TEMPERATURE:
                kind = HISTORY_TEMP;
                break;
        case SENSOR_KIND_FREQUENCY:
                kind = HISTORY_FREQ;
                break;
        case SENSOR_KIND_CPU_LOAD:
        case SENSOR_KIND_LOAD:
                kind = HISTORY_LOAD;
                break;
        case SENSOR_KIND_POWER_DRAW:
                kind = HISTORY_POWER;
                break;
        default:
                return -1;
        }
        return rec->hist ? history_column(rec->hist, ch->id, kind) : -1;
}

int recorder_set_sensors(struct recorder *rec, const struct sensors *s) {
        struct sensors_iter it = SENSORS_ITER_INIT;
        struct sensor_channel ch;
        size_t max = 0;

        recorder_done(rec);
        while (sensors_channel_next(s, &it, &ch))
                max++;
        rec->ch = calloc(max + 1, sizeof *rec->ch);
        rec->col = calloc(max + 1, sizeof *rec->col);
        if (!rec->ch || !rec->col) {
                recorder_done(rec);
                return -ENOMEM;
        }
        it = (struct sensors_iter) SENSORS_ITER_INIT;
        while (sensors_channel_next(s, &it, &ch)) {
                int col = recorder_column(rec, &ch);

                rec->load_cpus += ch.kind == SENSOR_KIND_CPU_LOAD;
                if (col < 0)
                        continue;
                rec->ch[rec->n] = ch;
                rec->col[rec->n++] = (size_t) col;
        }
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

        if (!rec->hist || !rec->ch)
                return;
        if (history_begin(rec->hist, snap->time_ms) < 0) {
                if (!rec->clock_warned)
                        log_warning("Wall clock went backwards; not recording history until it passes the last sample");
                rec->clock_warned = true;
                return;
        }
        rec->clock_warned = false;
        /* locals: history_set() could change *rec as far as the compiler knows */
        const struct sensor_channel *ch = rec->ch;
        const size_t *col = rec->col;
        struct history *hist = rec->hist;

        for (size_t i = 0, n = rec->n; i < n; i++) {
                double v;

                if (sensors_channel_read(s, &ch[i], &v) > 0)
                        history_set(hist, col[i], v);
        }
}
