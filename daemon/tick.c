/* sample.c — one tick of heatcurved: read, log changes, record history, cache the snapshot. */
#include "tick.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "daemon.h"
#include "json-sensors.h"
#include "log.h"
#include "run.h"
#include "util.h"

void sample_columns_free(struct daemon *d) {
        free(d->temp_col);
        free(d->freq_col);
        free(d->cpu_col);
        free(d->was_ok);
        d->temp_col = d->freq_col = d->cpu_col = NULL;
        d->was_ok = NULL;
}

static int sample_column(struct daemon *d, const char *id, enum history_kind kind) {
        return d->hist ? history_column(d->hist, id, kind) : -1;
}

int sample_columns_update(struct daemon *d) {
        const struct sensors *s = d->sensors;
        char id[SENSORS_ID_MAX + 16];

        sample_columns_free(d);
        d->temp_col = calloc(s->n_temps + 1, sizeof(int));
        d->was_ok = calloc(s->n_temps + 1, sizeof(bool));
        d->freq_col = calloc(s->n_policies + 1, sizeof(int));
        d->cpu_col = calloc(s->load.n_cpus + 1, sizeof(int));
        if (!d->temp_col || !d->was_ok || !d->freq_col || !d->cpu_col)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_temps; i++) {
                d->temp_col[i] = sample_column(d, s->temps[i].id, HISTORY_TEMP);
                d->was_ok[i] = true;    /* so a sensor failing from the start is logged once */
        }
        for (size_t i = 0; i < s->n_policies; i++) {
                snprintf(id, sizeof id, "cpufreq:%s", s->policies[i].id);
                d->freq_col[i] = sample_column(d, id, HISTORY_FREQ);
        }
        for (size_t i = 0; i < s->load.n_cpus; i++) {
                snprintf(id, sizeof id, "load:cpu%d", s->load.cpu_index[i]);
                d->cpu_col[i] = sample_column(d, id, HISTORY_LOAD);
        }
        d->load_col = sample_column(d, "load:cpu", HISTORY_LOAD);
        return 0;
}

/* Only changes of state are logged: one line when a sensor fails, one when it is back. */
static void sample_log_changes(struct daemon *d) {
        for (size_t i = 0; i < d->sensors->n_temps; i++) {
                const struct temp_sensor *t = &d->sensors->temps[i];
                char field[SENSORS_ID_MAX + 8];
                const char *fields[] = { field, NULL };

                if (t->ok == d->was_ok[i])
                        continue;
                d->was_ok[i] = t->ok;
                snprintf(field, sizeof field, "SENSOR=%s", t->id);
                if (t->ok)
                        log_fields(LOG_NOTICE, fields, "Sensor %s answers again", t->id);
                else
                        log_fields(LOG_WARNING, fields, "Sensor %s: reading %s failed: %s, ignoring",
                                   t->id, t->path, strerror(t->error));
        }
}

static void sample_record(struct daemon *d, int64_t now_ms) {
        const struct sensors *s = d->sensors;
        int r;

        if (!d->hist)
                return;
        r = history_begin(d->hist, now_ms);
        if (r < 0) {
                if (!d->clock_warned)
                        log_warning("Wall clock went backwards; not recording history until it passes the last sample");
                d->clock_warned = true;
                return;
        }
        d->clock_warned = false;
        for (size_t i = 0; i < s->n_temps; i++)
                if (s->temps[i].ok && d->temp_col[i] >= 0)
                        history_set(d->hist, (size_t) d->temp_col[i], s->temps[i].temp_mc / 1000.0);
        for (size_t i = 0; i < s->n_policies; i++)
                if (s->policies[i].ok && s->policies[i].cur_khz && d->freq_col[i] >= 0)
                        history_set(d->hist, (size_t) d->freq_col[i], s->policies[i].cur_khz * 1000.0);
        if (!s->load.ok || !s->load.have_prev)
                return;
        if (d->load_col >= 0)
                history_set(d->hist, (size_t) d->load_col, s->load.total);
        for (size_t i = 0; i < s->load.n_cpus; i++)
                if (d->cpu_col[i] >= 0)
                        history_set(d->hist, (size_t) d->cpu_col[i], s->load.per_cpu[i]);
}

const char *sample_sensors_json(struct daemon *d, size_t *ret_len) {
        json_object *doc;

        if (d->sensors_json && !d->sensors_json_stale) {
                *ret_len = d->sensors_json_len;
                return d->sensors_json;
        }
        doc = json_sensors_document(d->sensors);
        size_t len;
        const char *text = json_object_to_json_string_length(doc, JSON_C_TO_STRING_PLAIN, &len);
        char *copy = malloc(len + 1);

        if (copy) {
                memcpy(copy, text, len + 1);
                free(d->sensors_json);
                d->sensors_json = copy;
                d->sensors_json_len = len;
                d->sensors_json_stale = false;
        }
        json_object_put(doc);
        *ret_len = d->sensors_json_len;
        return copy;
}

static void sample_notify_status(struct daemon *d) {
        const struct temp_sensor *t = sensors_hottest(d->sensors);
        char run[80] = "";

        if (d->run && d->run->state == RUN_RUNNING)
                snprintf(run, sizeof run, "; run %u: %s", d->run->id,
                         run_phase_kind_to_string(d->run->phases[d->run->phase_index].kind));
        if (t)
                sd_notifyf(0, "STATUS=Hottest %s %.1f C%s", t->id, t->temp_mc / 1000.0, run);
        else
                sd_notifyf(0, "STATUS=No temperature sensor answers%s", run);
}

static void sample_reprobe(struct daemon *d) {
        size_t before = d->sensors->n_temps;
        int r = sensors_reprobe(&d->sensors);

        if (r < 0) {
                log_warning("Re-probing sensors failed: %s, keeping the old set", strerror(-r));
                d->sensors->need_reprobe = false;
                return;
        }
        log_info("A sensor vanished; re-probed: %zu temperature sensors (was %zu)", d->sensors->n_temps, before);
        sample_columns_update(d);
}

void sample_tick(struct daemon *d) {
        int64_t now = util_now_ms();
        int r;

        if (d->sim) {
                r = simulator_step(d->sim, now);
                if (r < 0)
                        log_warning("Simulated board: step failed: %s, ignoring", strerror(-r));
        }
        sensors_read(d->sensors, now);
        sample_log_changes(d);
        if (d->sensors->need_reprobe) {
                sample_reprobe(d);
                sensors_read(d->sensors, now);
        }
        sample_record(d, now);
        if (d->run)
                run_tick(d->run, now);
        d->sensors_json_stale = true;
        sample_notify_status(d);
        d->ticks++;
}
