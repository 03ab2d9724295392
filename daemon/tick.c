/* tick.c — the sampling tick: read the sensors, log changes of state, hand the snapshot to every consumer. */
#include "tick.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <systemd/sd-daemon.h>

#include "alerts.h"
#include "daemon.h"
#include "log.h"
#include "runs.h"
#include "util.h"

int tick_add_consumer(struct daemon *d, const struct tick_consumer *c) {
        if (d->n_consumers == ELEMENTSOF(d->consumers))
                return -E2BIG;
        d->consumers[d->n_consumers++] = *c;
        return 0;
}

void tick_free(struct daemon *d) {
        free(d->was_ok);
        d->was_ok = NULL;
}

static int tick_on_watch(sd_event_source *es, int fd, uint32_t revents, void *userdata) {
        struct daemon *d = userdata;

        sensors_watch_drain(d->sensors);
        return 0;
}

/* On a fixture tree the sensors watch their files with inotify. Polled here,
 * with the tick's timer, it costs nothing until a file is deleted; left to
 * sensors_read() it is one more read() at every tick. It goes first, so a
 * change that came with the timer is seen by this very tick, as before. The
 * fd belongs to the struct sensors: a new one (re-probe) gets a new source. */
static void tick_watch_sensors(struct daemon *d) {
        int fd = sensors_watch_fd(d->sensors), r;

        d->watch_source = sd_event_source_disable_unref(d->watch_source);
        if (!d->event || fd < 0)
                return;
        r = sd_event_add_io(d->event, &d->watch_source, fd, EPOLLIN, tick_on_watch, d);
        if (r >= 0)
                r = sd_event_source_set_priority(d->watch_source, SD_EVENT_PRIORITY_IMPORTANT);
        if (r < 0) {
                log_warning("Cannot poll the watch on the sensor files: %s; each tick reads it instead", strerror(-r));
                d->watch_source = sd_event_source_disable_unref(d->watch_source);
                return;
        }
        sensors_watch_polled(d->sensors);
}

int tick_sensors_changed(struct daemon *d) {
        const struct sensors *s = d->sensors;

        tick_watch_sensors(d);
        /* first, whatever happens below: consumers keep channels of the set
         * they were told about, by index */
        for (size_t i = 0; i < d->n_consumers; i++)
                if (d->consumers[i].on_sensors)
                        d->consumers[i].on_sensors(d->consumers[i].userdata, s);
        free(d->was_ok);
        d->was_ok = calloc(s->n_temps + 1, sizeof(bool));
        if (!d->was_ok)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_temps; i++)
                d->was_ok[i] = true;    /* so a sensor failing from the start is logged once */
        return 0;
}

/* Only changes of state are logged: one line when a sensor fails, one when it is back. */
static void tick_log_changes(struct daemon *d) {
        for (size_t i = 0; d->was_ok && i < d->sensors->n_temps; i++) {
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

/* What STATUS= says, before it is formatted: the same inputs make the same text. */
static void tick_status_of(struct daemon *d, struct tick_status *ret) {
        const struct temp_sensor *t = sensors_hottest(d->sensors);
        const struct run *r = d->runs ? runs_live(d->runs) : NULL;

        memset(ret, 0, sizeof *ret);
        ret->sent = true;
        if (t) {
                memcpy(ret->hottest, t->id, strnlen(t->id, sizeof ret->hottest - 1));
                ret->temp_mc = t->temp_mc;
        }
        if (r) {
                ret->in_run = true;
                ret->run_id = r->id;
                ret->phase_kind = r->phases[r->phase_index].kind;
        }
}

/* STATUS= goes out when its text changes, not at every tick: each one is a
 * datagram that wakes systemd up, and formatting the text alone was an
 * eighth of the tick's instructions. */
static void tick_notify_status(struct daemon *d) {
        struct tick_status now;
        char run[80] = "", text[sizeof d->status_text];

        tick_status_of(d, &now);
        if (memcmp(&now, &d->status, sizeof now) == 0)
                return;
        d->status = now;
        if (now.in_run)
                snprintf(run, sizeof run, "; run %u: %s", now.run_id, run_phase_kind_to_string(now.phase_kind));
        if (now.hottest[0])
                snprintf(text, sizeof text, "STATUS=Hottest %s %.1f C%s", now.hottest, now.temp_mc / 1000.0, run);
        else
                snprintf(text, sizeof text, "STATUS=No temperature sensor answers%s", run);
        if (strcmp(text, d->status_text) == 0)
                return;
        memcpy(d->status_text, text, sizeof text);
        sd_notify(0, text);
}

/* While a sensor that vanished is missing, the set is probed again this
 * often, so one that comes back (a module reloaded, a USB sensor plugged in
 * again) is found without a SIGHUP. A probe opens and reads a few dozen
 * sysfs files: once in 5 s is noise next to the tick, and nothing is done
 * while every sensor answers. */
#define TICK_MISSING_REPROBE_NS (5 * 1000000000ull)

static bool tick_reprobe_due(const struct daemon *d, uint64_t now_ns) {
        if (d->sensors->need_reprobe)
                return true;
        return d->sensors->n_missing > 0 && now_ns - d->reprobe_ns >= TICK_MISSING_REPROBE_NS;
}

static void tick_reprobe(struct daemon *d, uint64_t now_ns) {
        size_t before = d->sensors->n_temps, missing = d->sensors->n_missing;
        bool vanished = d->sensors->need_reprobe;
        int r = sensors_reprobe(&d->sensors);

        d->reprobe_ns = now_ns;
        if (r < 0) {
                if (vanished)
                        log_warning("Re-probing sensors failed: %s, keeping the old set", strerror(-r));
                d->sensors->need_reprobe = false;
                return;
        }
        if (vanished)
                log_info("A sensor vanished; re-probed: %zu temperature sensors (was %zu)", d->sensors->n_temps, before);
        else if (d->sensors->n_missing < missing)
                log_info("A missing sensor answers again; re-probed: %zu temperature sensors (was %zu)",
                         d->sensors->n_temps, before);
        if (tick_sensors_changed(d) < 0) {
                log_error("Out of memory after a re-probe, ignoring");
                return;
        }
        if (!vanished)
                /* a failing sensor logged before stays logged, not once more every 5 s */
                for (size_t i = 0; i < d->sensors->n_temps; i++)
                        d->was_ok[i] = d->sensors->temps[i].ok;
}

void tick_run(struct daemon *d) {
        struct snapshot snap;
        int64_t now = util_now_ms();
        uint64_t started_ns = util_monotonic_ns();
        int r;

        if (d->sim) {
                simulator_set_load(d->sim, runs_commanded_load(d->runs));
                r = simulator_step(d->sim, now);
                if (r < 0)
                        log_warning("Simulated board: step failed: %s, ignoring", strerror(-r));
        }
        sensors_read(d->sensors, now);
        tick_log_changes(d);
        if (tick_reprobe_due(d, started_ns)) {
                tick_reprobe(d, started_ns);
                sensors_read(d->sensors, now);
        }
        snap = (struct snapshot) {
                .sensors = d->sensors, .time_ms = now, .mono_ms = (int64_t) (started_ns / 1000000u),
                .tick = ++d->ticks, .tick_ns = d->tick_ns, .fans_on = alerts_fans_on(d->alerts),
        };
        for (size_t i = 0; i < d->n_consumers; i++)
                d->consumers[i].on_sample(d->consumers[i].userdata, &snap);
        tick_notify_status(d);
        d->tick_ns = (int64_t) (util_monotonic_ns() - started_ns);
}
