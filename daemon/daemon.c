/* daemon.c — heatcurved's state object: build it, run the sd-event loop, reload, tear down. */
#include "daemon.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "api.h"
#include "build-config.h"
#include "duration.h"
#include "http.h"
#include "log.h"
#include "run.h"
#include "service-checks.h"
#include "tick.h"
#include "util.h"

int daemon_config_build(const struct options *o, struct config *ret, char *err, size_t errlen) {
        const char *path = o->config_path ? o->config_path : CONFIG_DEFAULT_PATH;
        struct config c;
        int r;

        /* The default file is optional; one named with --config must exist. */
        r = config_read(&c, path, o->config_path != NULL, err, errlen);
        for (size_t i = 0; r >= 0 && i < o->n_overrides; i++) {
                const struct config_override *ov = &o->overrides[i];
                r = config_set_flag(&c, ov->section, ov->key, ov->value, err, errlen);
        }
        if (r >= 0)
                r = config_validate(&c, err, errlen);
        if (r >= 0)
                *ret = c;
        return r;
}

static const char *daemon_boards_dir(void) {
        const char *env = getenv("HEATCURVE_BOARDS_DIR");

        if (env && *env)
                return env;
        /* Running from the build tree: the fixtures of the source tree. */
        if (access(BOARDS_DIR_SOURCE, F_OK) == 0)
                return BOARDS_DIR_SOURCE;
        return BOARDS_DIR_INSTALLED;
}

static int daemon_setup_simulator(struct daemon *d) {
        struct sim_params p = {
                .ambient_c = d->cfg.sim.ambient_c,
                .tau_s = (double) d->cfg.sim.tau_ms / 1000.0,
                .rise_c = d->cfg.sim.rise_c,
                .quantize = d->cfg.sim.quantize,
        };
        const char *boards = daemon_boards_dir();
        int r;

        snprintf(p.board, sizeof p.board, "%s", d->cfg.sim.board);
        r = simulator_new(boards, "/proc", &p, util_now_ms(), &d->sim);
        if (r < 0) {
                log_error("Cannot build the simulated board \"%s\" from %s: %s",
                          p.board, boards, strerror(-r));
                return r;
        }
        r = simulator_step(d->sim, util_now_ms());
        if (r < 0)
                log_warning("Simulated board: first step failed: %s, ignoring", strerror(-r));
        log_info("Simulating board \"%s\" in %s (ambient %.1f C, tau %.0f s, rise %.1f C)",
                 p.board, simulator_sysfs_root(d->sim), p.ambient_c, p.tau_s, p.rise_c);
        return 0;
}

static int daemon_setup_sensors(struct daemon *d) {
        const char *sysfs = d->cfg.sysfs_root, *procfs = d->cfg.procfs_root;
        int r;

        if (d->cfg.simulate) {
                r = daemon_setup_simulator(d);
                if (r < 0)
                        return r;
                sysfs = simulator_sysfs_root(d->sim);
                procfs = simulator_procfs_root(d->sim);
        }
        r = sensors_probe(sysfs, procfs, &d->sensors);
        if (r < 0) {
                log_error("Cannot probe sensors under %s and %s: %s", sysfs, procfs, strerror(-r));
                return r;
        }
        if (d->sensors->n_temps == 0)
                log_warning("No temperature sensor found under %s, continuing with frequencies and load only",
                            sysfs);
        return sample_columns_update(d);
}

static void daemon_setup_state_dir(struct daemon *d) {
        char path[600];
        int r = util_mkdir_p(d->cfg.state_dir, 0755);

        if (r >= 0 && access(d->cfg.state_dir, W_OK) < 0)
                r = -errno;
        d->state_dir_ok = d->state_ok = r >= 0;
        if (r < 0) {
                snprintf(d->state_error, sizeof d->state_error, "%s: %s", d->cfg.state_dir, strerror(-r));
                log_warning("State directory %s is not usable: %s; history will not survive a restart",
                            d->cfg.state_dir, strerror(-r));
                return;
        }
        daemon_history_path(d, path, sizeof path);
        r = history_load(d->hist, path);
        if (r < 0 && r != -ENOENT)
                log_warning("Cannot load history from %s: %s, starting empty", path, strerror(-r));
        else if (r >= 0)
                log_info("Loaded %zu samples of history from %s", history_count(d->hist), path);
}

static void daemon_setup_runs(struct daemon *d) {
        char warn[800];
        int r;

        d->next_run_id = 1;
        if (!d->state_dir_ok)
                return;
        r = run_store_load_all(d->cfg.state_dir, &d->runs, &d->n_runs, warn, sizeof warn);
        if (r < 0)
                log_warning("Cannot read the runs in %s/runs: %s, ignoring", d->cfg.state_dir, strerror(-r));
        if (warn[0])
                log_warning("%s", warn);
        for (size_t i = 0; i < d->n_runs; i++) {
                json_object *v = json_object_object_get(d->runs[i], "id");
                const char *state = json_object_get_string(json_object_object_get(d->runs[i], "state"));
                unsigned id = (unsigned) json_object_get_int64(v);

                if (id >= d->next_run_id)
                        d->next_run_id = id + 1;
                if (state && strcmp(state, "interrupted") == 0 &&
                    json_object_get_string(json_object_object_get(d->runs[i], "abort_reason")))
                        log_notice("Run %u was interrupted: %s", id,
                                   json_object_get_string(json_object_object_get(d->runs[i], "abort_reason")));
        }
}

/* The token protecting mutating requests: read at start and on reload. */
static int daemon_read_token(const struct config *c, char *buf, size_t size) {
        FILE *f;
        size_t n;

        buf[0] = '\0';
        if (!c->token_file[0])
                return 0;
        f = fopen(c->token_file, "re");
        if (!f)
                return -errno;
        n = fread(buf, 1, size - 1, f);
        fclose(f);
        buf[n] = '\0';
        buf[strcspn(buf, "\r\n")] = '\0';
        return buf[0] ? 0 : -ENODATA;
}

static int daemon_setup_history(struct daemon *d) {
        size_t cap = config_history_samples(&d->cfg);
        int r;

        r = history_new(cap, &d->hist);
        if (r < 0) {
                log_error("Cannot allocate history for %zu samples: %s", cap, strerror(-r));
                return r;
        }
        daemon_setup_state_dir(d);
        daemon_setup_runs(d);
        return sample_columns_update(d);
}

void daemon_history_path(const struct daemon *d, char *buf, size_t size) {
        snprintf(buf, size, "%s/history.bin", d->cfg.state_dir);
}

static void daemon_save_history(struct daemon *d) {
        char path[600];
        int r;

        if (!d->hist || !d->state_dir_ok)
                return;
        daemon_history_path(d, path, sizeof path);
        r = history_save(d->hist, path);
        if (r < 0) {
                if (d->state_ok)
                        log_warning("Cannot save history to %s: %s, will retry", path, strerror(-r));
                d->state_ok = false;
                snprintf(d->state_error, sizeof d->state_error, "saving history to %s: %s", path, strerror(-r));
                return;
        }
        if (!d->state_ok)
                log_notice("History saved to %s again", path);
        d->state_ok = true;
        d->state_error[0] = '\0';
        d->history_saved_ms = util_now_ms();
}

static int daemon_on_save(sd_event_source *es, uint64_t usec, void *userdata) {
        struct daemon *d = userdata;

        daemon_save_history(d);
        sd_event_source_set_time(es, usec + d->cfg.history_save_ms * 1000u);
        return 0;
}

static int daemon_on_tick(sd_event_source *es, uint64_t usec, void *userdata) {
        struct daemon *d = userdata;
        uint64_t next = usec + d->cfg.interval_ms * 1000u, now = util_monotonic_us();

        sample_tick(d);
        /* Keep the cadence; after a stall (suspend, slow sensor) start afresh instead of bursting. */
        if (next <= now)
                next = now + d->cfg.interval_ms * 1000u;
        sd_event_source_set_time(es, next);
        return 0;
}

static uint64_t daemon_timer_accuracy(uint64_t interval_ms) {
        /* Slack lets the kernel batch wake-ups; a twentieth of the interval, at most 50 ms. */
        uint64_t us = interval_ms * 1000u / 20u;

        return us > 50000u ? 50000u : us;
}

static int daemon_setup_timers(struct daemon *d) {
        uint64_t now = util_monotonic_us();
        int r;

        r = sd_event_add_time(d->event, &d->tick_source, CLOCK_MONOTONIC, now + d->cfg.interval_ms * 1000u,
                              daemon_timer_accuracy(d->cfg.interval_ms), daemon_on_tick, d);
        if (r >= 0)
                r = sd_event_source_set_enabled(d->tick_source, SD_EVENT_ON);
        if (r >= 0)
                r = sd_event_add_time(d->event, &d->save_source, CLOCK_MONOTONIC,
                                      now + d->cfg.history_save_ms * 1000u, 1000000u, daemon_on_save, d);
        if (r >= 0)
                r = sd_event_source_set_enabled(d->save_source, SD_EVENT_ON);
        if (r < 0)
                log_error("Cannot set up timers: %s", strerror(-r));
        return r;
}

/* Settings that need sockets, trees or memory rebuilt: reported, applied at the next start. */
static void daemon_reload_report_restart(const struct config *old, const struct config *new) {
        if (strcmp(old->listen_host, new->listen_host) || old->listen_port != new->listen_port)
                log_warning("Reload: listen address changed; takes effect after a restart");
        if (old->simulate != new->simulate || memcmp(&old->sim, &new->sim, sizeof old->sim) ||
            strcmp(old->sysfs_root, new->sysfs_root) || strcmp(old->procfs_root, new->procfs_root))
                log_warning("Reload: sensor roots or simulation changed; takes effect after a restart");
        if (strcmp(old->state_dir, new->state_dir) || old->history_ms != new->history_ms)
                log_warning("Reload: state directory or history length changed; takes effect after a restart");
}

static void daemon_reload(struct daemon *d) {
        char err[512];
        struct config c;
        int r;

        sd_notify(0, "RELOADING=1");
        r = daemon_config_build(d->opts, &c, err, sizeof err);
        if (r < 0) {
                log_error("Reload failed, keeping the running configuration: %s", err);
                sd_notify(0, "READY=1");
                return;
        }
        char token[sizeof d->token];
        r = daemon_read_token(&c, token, sizeof token);
        if (r < 0) {
                log_error("Reload failed, keeping the running configuration: cannot read the token from %s: %s",
                          c.token_file, r == -ENODATA ? "the file is empty" : strerror(-r));
                sd_notify(0, "READY=1");
                return;
        }
        memcpy(d->token, token, sizeof token);
        daemon_reload_report_restart(&d->cfg, &c);
        /* Keep what only a restart can change, so status tells the truth. */
        memcpy(c.listen_host, d->cfg.listen_host, sizeof c.listen_host);
        c.listen_port = d->cfg.listen_port;
        c.simulate = d->cfg.simulate;
        c.sim = d->cfg.sim;
        memcpy(c.sysfs_root, d->cfg.sysfs_root, sizeof c.sysfs_root);
        memcpy(c.procfs_root, d->cfg.procfs_root, sizeof c.procfs_root);
        memcpy(c.state_dir, d->cfg.state_dir, sizeof c.state_dir);
        c.history_ms = d->cfg.history_ms;
        if (c.interval_ms != d->cfg.interval_ms)
                sd_event_source_set_time_accuracy(d->tick_source, daemon_timer_accuracy(c.interval_ms));
        d->cfg = c;

        r = sensors_reprobe(&d->sensors);
        if (r < 0)
                log_warning("Reload: re-probing sensors failed: %s, keeping the old set", strerror(-r));
        sample_columns_update(d);
        log_info("Reloaded configuration; %zu temperature sensors", d->sensors->n_temps);
        sd_notify(0, "READY=1");
}

static int daemon_on_signal(sd_event_source *es, const struct signalfd_siginfo *si, void *userdata) {
        struct daemon *d = userdata;

        if (si->ssi_signo == SIGHUP)
                daemon_reload(d);
        else
                sd_event_exit(d->event, 0);
        return 0;
}

static int daemon_setup_signals(struct daemon *d) {
        static const int sigs[] = { SIGTERM, SIGINT, SIGHUP };
        int r = 0;

        /* The signals were blocked in main() before anything could start a thread. */
        for (size_t i = 0; i < ELEMENTSOF(sigs) && r >= 0; i++)
                r = sd_event_add_signal(d->event, NULL, sigs[i], daemon_on_signal, d);
        if (r < 0)
                log_error("Cannot set up signal handling: %s", strerror(-r));
        return r;
}

/* A socket passed by systemd (heatcurved.socket) wins over `listen`: say so,
 * or an edited `listen` would seem to be ignored for no reason. */
static int daemon_setup_http(struct daemon *d) {
        char where[80], want[80];      /* "[IPv6]:PORT" fits */
        bool activated = sd_listen_fds(1) >= 1;
        int fd, r;

        snprintf(want, sizeof want, "%s%s%s:%u", strchr(d->cfg.listen_host, ':') ? "[" : "",
                 d->cfg.listen_host[0] ? d->cfg.listen_host : "*",
                 strchr(d->cfg.listen_host, ':') ? "]" : "", d->cfg.listen_port);
        if (activated)
                fd = SD_LISTEN_FDS_START;       /* socket activation: systemd bound it */
        else {
                fd = http_listen(d->cfg.listen_host, d->cfg.listen_port);
                if (fd < 0) {
                        log_error("Cannot listen on %s: %s", want, strerror(-fd));
                        return fd;
                }
        }
        d->listen_port = http_local_port(fd);
        if (http_local_address(fd, where, sizeof where) < 0)
                snprintf(where, sizeof where, "%s", want);
        r = http_new(d->event, fd, api_dispatch, d, &d->http);
        if (r < 0) {
                log_error("Cannot start the HTTP server: %s", strerror(-r));
                return r;
        }
        if (activated)
                log_info("Listening on http://%s/ (socket activation: the socket unit's ListenStream= "
                         "wins; listen = %s is not used)", where, want);
        else
                log_info("Listening on http://%s/", where);
        return 0;
}

int daemon_new(const struct options *o, const struct config *cfg, bool serve, struct daemon **ret) {
        struct daemon *d = calloc(1, sizeof *d);
        int r;

        if (!d)
                return -ENOMEM;
        d->opts = o;
        d->cfg = *cfg;
        d->started_ms = util_now_ms();
        d->load_col = -1;
        r = daemon_read_token(&d->cfg, d->token, sizeof d->token);
        if (r < 0)
                log_error("Cannot read the token from %s: %s", d->cfg.token_file,
                          r == -ENODATA ? "the file is empty" : strerror(-r));
        if (r >= 0)
                r = daemon_setup_sensors(d);
        if (r >= 0 && serve) {
                service_checks_log(&d->cfg);
                r = sd_event_default(&d->event);
                if (r >= 0)
                        r = sd_event_set_watchdog(d->event, true);
                if (r >= 0)
                        r = daemon_setup_history(d);
                if (r >= 0)
                        r = daemon_setup_signals(d);
                if (r >= 0)
                        r = daemon_setup_timers(d);
                if (r >= 0)
                        r = daemon_setup_http(d);
        }
        if (r < 0) {
                daemon_free(d);
                return r;
        }
        *ret = d;
        return 0;
}

int daemon_run(struct daemon *d) {
        int r;

        sample_tick(d);         /* a first sample before anyone can ask */
        sd_notify(0, "READY=1");
        r = sd_event_loop(d->event);
        sd_notify(0, "STOPPING=1");
        log_info("Stopping");
        return r;
}

void daemon_free(struct daemon *d) {
        if (!d)
                return;
        if (d->run) {
                run_abort(d->run, "heatcurved is shutting down", util_now_ms());
                run_free(d->run);
        }
        for (size_t i = 0; i < d->n_runs; i++)
                json_object_put(d->runs[i]);
        free(d->runs);
        if (d->event)
                daemon_save_history(d);
        http_free(d->http);
        sd_event_source_disable_unref(d->tick_source);
        sd_event_source_disable_unref(d->save_source);
        sd_event_unref(d->event);
        history_free(d->hist);
        sensors_free(d->sensors);
        simulator_free(d->sim);
        sample_columns_free(d);
        free(d->sensors_json);
        free(d);
}

int daemon_print_once(struct daemon *d) {
        struct timespec gap = { 0, 250 * 1000 * 1000 };

        /* CPU load is a rate: two reads a quarter second apart (outside the loop,
         * so a plain sleep is fine here). */
        sensors_read(d->sensors, util_now_ms());
        nanosleep(&gap, NULL);
        if (d->sim)
                simulator_step(d->sim, util_now_ms());
        sensors_read(d->sensors, util_now_ms());
        size_t len;
        const char *json = sample_sensors_json(d, &len);
        if (!json)
                return -ENOMEM;
        fwrite(json, 1, len, stdout);
        fputc('\n', stdout);
        return fflush(stdout) == 0 ? 0 : -errno;
}

void daemon_run_ended(struct daemon *d, struct run *r) {
        json_object **p = realloc(d->runs, (d->n_runs + 1) * sizeof *p);

        if (!p) {
                log_error("Out of memory keeping run %u in the list", r->id);
                return;
        }
        d->runs = p;
        d->runs[d->n_runs++] = run_to_json(r, false);
}

json_object *daemon_run_document(struct daemon *d, unsigned id) {
        if (d->run && d->run->id == id && d->run->state == RUN_RUNNING)
                return run_to_json(d->run, true);
        for (size_t i = 0; i < d->n_runs; i++)
                if (json_object_get_int64(json_object_object_get(d->runs[i], "id")) == (int64_t) id)
                        return json_object_get(d->runs[i]);
        return NULL;
}
