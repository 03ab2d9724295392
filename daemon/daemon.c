/* daemon.c — heatcurved's state object: build it, run the sd-event loop, reload, tear down. */
#include "daemon.h"

#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#include <pthread.h>
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "alerts.h"
#include "api.h"
#include "build-config.h"
#include "history-save.h"
#include "http.h"
#include "json-sensors.h"
#include "log.h"
#include "runs.h"
#include "service-checks.h"
#include "token.h"
#include "util.h"

int daemon_config_build(const struct options *o, struct config *ret, char *err, size_t errlen) {
        const char *path = o->config_path ? o->config_path : CONFIG_DEFAULT_PATH;
        int r;

        /* The default file is optional; one named with --config must exist. */
        r = config_read(ret, path, o->config_path != NULL, err, errlen);
        for (size_t i = 0; r >= 0 && i < o->n_overrides; i++) {
                const struct config_override *ov = &o->overrides[i];
                r = config_set_flag(ret, ov->section, ov->key, ov->value, err, errlen);
        }
        if (r >= 0)
                r = config_validate(ret, err, errlen);
        return r;
}

/* The simulated boards: HEATCURVE_BOARDS_DIR (a build run in place, the
 * tests), else where the package installed them. */
static const char *daemon_boards_dir(void) {
        const char *env = getenv("HEATCURVE_BOARDS_DIR");

        if (env && *env)
                return env;
        return BOARDS_DIR_INSTALLED;
}

static int daemon_setup_simulator(struct daemon *d) {
        struct sim_params p = {
                .ambient_c = d->cfg.sim.ambient_c,
                .tau_s = (double) d->cfg.sim.tau_ms / 1000.0,
                .rise_c = d->cfg.sim.rise_c,
                .quantize = d->cfg.sim.quantize,
                .own_load = strcmp(d->cfg.sim.load_source, "own") == 0,
                .power_idle_w = d->cfg.sim.power_idle_w,
                .power_load_w = d->cfg.sim.power_load_w,
        };
        const char *boards = daemon_boards_dir();
        char power[96] = "";
        double idle_w = 0;
        int r;

        snprintf(p.board, sizeof p.board, "%s", d->cfg.sim.board);
        r = simulator_new(boards, "/proc", &p, util_now_ms(), &d->sim);
        if (r < 0) {
                log_error("Cannot build the simulated board \"%s\" from %s: %s%s",
                          p.board, boards, strerror(-r),
                          r == -ENOENT ? " (set HEATCURVE_BOARDS_DIR to the boards' folder, e.g. data/boards of the source)" : "");
                return r;
        }
        r = simulator_step(d->sim, util_now_ms());
        if (r < 0)
                log_warning("Simulated board: first step failed: %s, ignoring", strerror(-r));
        if (simulator_power_meters(d->sim, &idle_w) > 0)
                snprintf(power, sizeof power, ", power %.1f W idle + %.1f W at full load", idle_w, p.power_load_w);
        log_info("Simulating board \"%s\" in %s (ambient %.1f C, tau %.0f s, rise %.1f C, heated by %s%s)",
                 p.board, simulator_sysfs_root(d->sim), p.ambient_c, p.tau_s, p.rise_c,
                 p.own_load ? "its own runs' loads" : "this machine's CPU load", power);
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
        return 0;
}

/* History file path in the state directory. */
static void daemon_history_path(const struct daemon *d, char *buf, size_t size) {
        snprintf(buf, size, "%s/history.bin", d->cfg.state_dir);
}

/* What history_load() said about a file it could not read back whole, without its path. */
static void daemon_history_damage(const struct daemon *d, int r, char *buf, size_t size) {
        if (r > 0)
                snprintf(buf, size, "%d damaged or truncated block%s dropped, %zu samples kept",
                         r, r == 1 ? "" : "s", history_count(d->hist));
        else if (r == -EBADMSG)
                snprintf(buf, size, "not a heatcurved history file: bad header, or not a regular file");
        else if (r == -EPROTONOSUPPORT)
                snprintf(buf, size, "written in another format version");
        else if (r == -EFBIG)
                snprintf(buf, size, "larger than a history file can be");
        else if (r == -EISDIR)
                snprintf(buf, size, "a directory, not a file");
        else
                snprintf(buf, size, "%s", strerror(-r));
}

/* A history file that cannot be read back whole is renamed, never saved
 * over: what it holds can still be looked at by hand, and the next save
 * starts a good file. The samples of its good blocks, if any, stay loaded. */
static void daemon_history_aside(struct daemon *d, const char *path, int r) {
        char why[sizeof d->history_damage];
        int e;

        daemon_history_damage(d, r, why, sizeof why);
        e = util_rename_aside(path, "corrupt", d->history_aside, sizeof d->history_aside);
        if (e < 0) {
                d->history_aside[0] = '\0';
                d->history_blocked = true;
                d->state_ok = false;
                snprintf(d->state_error, sizeof d->state_error, "history file %s cannot be read back (%s) and "
                         "cannot be moved aside: %s; history is not saved until it is moved away",
                         path, why, strerror(-e));
                log_error("History file %s cannot be read back (%s) and cannot be moved aside: %s; history is "
                          "not saved until it is moved away", path, why, strerror(-e));
                return;
        }
        snprintf(d->history_damage, sizeof d->history_damage, "%s", why);
        log_warning("History file %s cannot be read back (%s); moved it to %s, starting %s",
                    path, why, d->history_aside, r > 0 ? "with the samples it still held" : "with an empty history");
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
        if (r == 0)
                log_info("Loaded %zu samples of history from %s", history_count(d->hist), path);
        else if (r != -ENOENT)
                daemon_history_aside(d, path, r);
}

static void daemon_runs_settings(const struct daemon *d, struct runs_settings *ret) {
        *ret = (struct runs_settings) { .safety_limit_c = d->cfg.safety_limit_c,
                                        .keep = d->cfg.runs_keep, .keep_ms = d->cfg.runs_keep_ms };
        snprintf(ret->state_dir, sizeof ret->state_dir, "%s", d->cfg.state_dir);
        snprintf(ret->stress_dir, sizeof ret->stress_dir, "%s", d->cfg.stress_dir);
        snprintf(ret->ambient_sensor, sizeof ret->ambient_sensor, "%s", d->cfg.ambient_sensor);
        ret->commands_allowed = d->token[0] != '\0';
        ret->root_loads_refused = geteuid() == 0 && !d->cfg.allow_root;
        ret->own_load_only = d->cfg.simulate && strcmp(d->cfg.sim.load_source, "own") == 0;
        if (!d->state_dir_ok)
                snprintf(ret->unusable, sizeof ret->unusable, "%s", d->state_error);
}

static int daemon_setup_runs(struct daemon *d) {
        struct runs_settings set;
        char warn[800];
        int r;

        daemon_runs_settings(d, &set);
        r = runs_new(d->event, &set, &d->runs, warn, sizeof warn);
        if (r < 0) {
                log_error("Cannot set up runs: %s", strerror(-r));
                return r;
        }
        if (warn[0])
                log_warning("%s", warn);
        /* said once at start, so a refused run is no surprise and an allowed one is on record */
        if (geteuid() == 0)
                log_notice("%s", d->cfg.allow_root ?
                           "Running as root with [runs] allow_root = yes: loads run as root" :
                           "Running as root: runs with a load are refused unless [runs] allow_root = yes");
        return 0;
}

/* An alert reached crit: a run's load stops, so the board is protected the
 * same way inside and outside runs. */
static void daemon_on_alert(void *userdata, const struct alert_transition *t) {
        struct daemon *d = userdata;
        char reason[300];

        if (t->state != ALERT_CRIT || !runs_live(d->runs))
                return;
        snprintf(reason, sizeof reason, "alert %s reached crit: %s at %.1f C", t->rule, t->sensor, t->value_c);
        runs_abort(d->runs, reason);
}

static int daemon_setup_alerts(struct daemon *d) {
        struct alerts_host host = {
                .event = d->event, .state_dir = d->state_dir_ok ? d->cfg.state_dir : NULL,
                .transition = daemon_on_alert, .userdata = d,
        };
        char err[256];
        int r = alerts_new(&host, &d->cfg.alerts, &d->alerts, err, sizeof err);

        if (r < 0)
                log_error("Cannot set up alerts: %s", err);
        else
                log_info("%zu alert rule%s%s", alerts_count(d->alerts), alerts_count(d->alerts) == 1 ? "" : "s",
                         d->cfg.alerts.n_rules ? "" : " (the default, from the trip points)");
        return r;
}


static int daemon_setup_history(struct daemon *d) {
        size_t cap = config_history_samples(&d->cfg);
        char path[600];
        int r;

        r = history_new(cap, &d->hist);
        if (r < 0) {
                log_error("Cannot allocate history for %zu samples: %s", cap, strerror(-r));
                return r;
        }
        daemon_history_path(d, path, sizeof path);
        r = history_saver_init(&d->saver, path);
        if (r < 0) {
                log_error("Cannot set up the history file %s: %s", path, strerror(-r));
                return r;
        }
        daemon_setup_state_dir(d);
        recorder_init(&d->recorder, d->hist, d->cfg.interval_ms);
        r = daemon_setup_runs(d);
        return r < 0 ? r : daemon_setup_alerts(d);
}


static void daemon_save_history(struct daemon *d) {
        char path[600];
        int r;

        if (!d->hist || !d->state_dir_ok)
                return;
        daemon_history_path(d, path, sizeof path);
        if (d->history_blocked) {
                struct stat st;

                /* the unreadable file is still there: not saved over */
                if (lstat(path, &st) == 0 || errno != ENOENT)
                        return;
                d->history_blocked = false;
        }
        r = history_saver_save(&d->saver, d->hist);
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

/* The tick is not an event source: it is the timeout of the loop's wait
 * (daemon_loop), which costs a wake-up nothing more. A timerfd in the epoll
 * set costs its read and the re-arm of its timer on top, about a third more
 * CPU a wake-up on the x86 VM of bench/README.md. The cadence is on the wall
 * clock's grid of the interval (util_grid_next_ns): at 1 s every sample is
 * taken on a whole second, so the samples of boards whose clocks are set line
 * up, and the tick wakes with whatever else on the board wakes on the second
 * rather than on a phase of its own. The grid is taken at start, at a reload
 * of a new interval, and when the wall clock is set (daemon_on_clock_set: NTP
 * at boot on a board without an RTC); the first tick on a grid comes at least
 * half an interval after the one before it. */
static void daemon_arm_tick(struct daemon *d, uint64_t interval_ms) {
        /* at least half an interval after the tick before: a load is a rate over the gap */
        d->tick_next_ns = util_grid_next_now_ns(interval_ms * 1000000u, interval_ms * 500000u);
}

/* sd_event_loop(), with the tick run between two iterations once it is due.
 * The wait ends on the millisecond after the tick's instant (epoll_wait()
 * counts in milliseconds), or a little later where the kernel groups timers
 * of a long sleep (0.1 % of it). After a stall (suspend, a slow sensor) the
 * ticks missed are dropped: one tick, then the next on the same grid, never
 * a burst. Once an exit is asked for, no tick runs. Never inlined: bench/run.sh
 * counts the warm ticks' instructions by collecting inside it. */
__attribute__((noinline)) static int daemon_loop(struct daemon *d) {
        int code = 0, r;

        while (sd_event_get_state(d->event) != SD_EVENT_FINISHED) {
                uint64_t now = util_monotonic_ns();

                if (now >= d->tick_next_ns && sd_event_get_exit_code(d->event, &code) == -ENODATA) {
                        tick_run(d);
                        d->tick_next_ns = util_grid_after_ns(d->tick_next_ns, now, d->cfg.interval_ms * 1000000u);
                        continue;
                }
                r = sd_event_run(d->event, now >= d->tick_next_ns ? 0 : (d->tick_next_ns - now + 999u) / 1000u);
                if (r < 0)
                        return r;
        }
        r = sd_event_get_exit_code(d->event, &code);
        return r < 0 ? r : code;
}

/* A realtime timerfd that never expires, armed to be cancelled when the wall
 * clock is set (TFD_TIMER_CANCEL_ON_SET): a Raspberry Pi without an RTC boots
 * on the time it saved and is set by NTP seconds or days later. */
static int daemon_arm_clock_watch(int fd) {
        /* the largest time_t: 2038 where it has 32 bits */
        struct itimerspec its = { .it_value = { .tv_sec = (time_t) ((UINTMAX_C(1) << (sizeof(time_t) * 8 - 1)) - 1) } };

        return timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &its, NULL) < 0 ? -errno : 0;
}

static int daemon_on_clock_set(sd_event_source *es, int fd, uint32_t revents, void *userdata) {
        struct daemon *d = userdata;
        uint64_t expirations;
        int r;

        if (read(fd, &expirations, sizeof expirations) >= 0 || errno != ECANCELED)
                return 0;
        daemon_arm_tick(d, d->cfg.interval_ms);
        r = daemon_arm_clock_watch(fd);
        if (r < 0)
                log_warning("The wall clock was set; samples are taken on its grid again, "
                            "but a next step of it will not be seen: %s", strerror(-r));
        else
                log_info("The wall clock was set: samples are taken on its grid again");
        return 0;
}

static int daemon_setup_timers(struct daemon *d) {
        /* without it the tick keeps its grid until the next start: not fatal */
        int cfd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
        int r = cfd < 0 ? -errno : daemon_arm_clock_watch(cfd);

        if (r >= 0)
                r = sd_event_add_io(d->event, &d->clock_source, cfd, EPOLLIN, daemon_on_clock_set, d);
        if (r >= 0)
                r = sd_event_source_set_io_fd_own(d->clock_source, true);
        if (r < 0) {
                log_warning("Cannot watch the wall clock: %s; a step of it moves the samples off "
                            "the grid until the next start", strerror(-r));
                d->clock_source = sd_event_source_disable_unref(d->clock_source);
                if (cfd >= 0)
                        close(cfd);
        }
        /* the tick is armed by daemon_run(), after the first one */
        r = sd_event_add_time(d->event, &d->save_source, CLOCK_MONOTONIC,
                              util_monotonic_us() + d->cfg.history_save_ms * 1000u, 1000000u, daemon_on_save, d);
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
        char token[sizeof d->token] = "";
        r = c.token_file[0] ? token_read_file(c.token_file, token, sizeof token) : 0;
        if (r < 0) {
                log_error("Reload failed, keeping the running configuration: cannot read the token from %s: %s",
                          c.token_file, token_strerror(r));
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
        if (c.interval_ms != d->cfg.interval_ms) {
                daemon_arm_tick(d, c.interval_ms);
                recorder_set_interval(&d->recorder, c.interval_ms);
        }
        d->cfg = c;
        struct runs_settings set;
        daemon_runs_settings(d, &set);
        runs_set_settings(d->runs, &set);
        char aerr[256];
        if (alerts_configure(d->alerts, &d->cfg.alerts, aerr, sizeof aerr) < 0)
                log_error("Reload: alert rules not changed: %s", aerr);

        r = sensors_reprobe(&d->sensors);
        if (r < 0)
                log_warning("Reload: re-probing sensors failed: %s, keeping the old set", strerror(-r));
        if (tick_sensors_changed(d) < 0)
                log_error("Reload: out of memory after re-probing sensors, ignoring");
        log_info("Reloaded configuration; %zu temperature sensors", d->sensors->n_temps);
        sd_notify(0, "READY=1");
}

static int daemon_on_signal(sd_event_source *es, const struct signalfd_siginfo *si, void *userdata) {
        struct daemon *d = userdata;

        if (si->ssi_signo == SIGHUP)
                daemon_reload(d);
        else {
                d->stop_signal = (int) si->ssi_signo;
                sd_event_exit(d->event, 0);
        }
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

static void daemon_api_status(void *userdata, struct api_daemon_status *ret) {
        const struct daemon *d = userdata;

        *ret = (struct api_daemon_status) {
                .storage_ok = d->state_ok,
                .storage_error = d->state_error,
                .history_saved_ms = d->history_saved_ms,
                .history_moved_to = d->history_aside,
                .history_damage = d->history_damage,
        };
}

/* A socket passed by systemd (heatcurved.socket) wins over `listen`: say so,
 * or an edited `listen` would seem to be ignored for no reason. */
static int daemon_setup_http(struct daemon *d) {
        struct api_context ctx = {
                .event = d->event, .cfg = &d->cfg, .token = d->token, .runs = d->runs, .alerts = d->alerts, .hist = d->hist, .sim = d->sim,
                .started_ms = d->started_ms, .status = daemon_api_status, .userdata = d,
        };
        char where[80], want[80];      /* "[IPv6]:PORT" fits */
        bool activated = sd_listen_fds(1) >= 1;
        int fd, r;

        r = api_new(&ctx, &d->api);
        if (r < 0) {
                log_error("Cannot set up the API: %s", strerror(-r));
                return r;
        }
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
        r = http_new(d->event, fd, api_dispatch, d->api, &d->http);
        if (r < 0) {
                log_error("Cannot start the HTTP server: %s", strerror(-r));
                return r;
        }
        http_set_body_max(d->http, api_body_max);
        if (activated)
                log_info("Listening on http://%s/ (socket activation: the socket unit's ListenStream= "
                         "wins; listen = %s is not used)", where, want);
        else
                log_info("Listening on http://%s/", where);
        return 0;
}

/* Who gets each snapshot, in this order: the history, the alerts (so a crit
 * stops a run's load at this very tick), the runs, the API. */
static int daemon_setup_consumers(struct daemon *d) {
        const struct tick_consumer consumers[] = {
                { "history", &d->recorder, recorder_on_sample, recorder_on_sensors },
                { "alerts", d->alerts, alerts_on_sample, alerts_on_sensors },
                { "runs", d->runs, runs_on_sample, runs_on_sensors },
                { "api", d->api, api_on_sample, api_on_sensors },
        };
        int r = 0;

        for (size_t i = 0; i < ELEMENTSOF(consumers) && r >= 0; i++)
                r = tick_add_consumer(d, &consumers[i]);
        if (r >= 0)
                r = tick_sensors_changed(d);
        if (r < 0)
                log_error("Cannot set up the sampling tick: %s", strerror(-r));
        return r;
}

int daemon_new(const struct options *o, const struct config *cfg, bool serve, struct daemon **ret) {
        struct daemon *d = calloc(1, sizeof *d);
        int r;

        if (!d)
                return -ENOMEM;
        d->opts = o;
        d->cfg = *cfg;
        d->started_ms = util_now_ms();
        d->tick_ns = -1;
        r = d->cfg.token_file[0] ? token_read_file(d->cfg.token_file, d->token, sizeof d->token) : 0;
        if (r < 0)
                log_error("Cannot read the token from %s: %s", d->cfg.token_file, token_strerror(r));
        if (r >= 0)
                r = daemon_setup_sensors(d);
        if (r >= 0 && serve) {
                service_checks_log(&d->cfg);
                /* Not sd_event_default(): the default loop checks it runs in
                 * its thread with a gettid() system call at every iteration,
                 * that is at every tick. The daemon has one loop and hands it
                 * to whoever needs it. */
                r = sd_event_new(&d->event);
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
                if (r >= 0)
                        r = daemon_setup_consumers(d);
        }
        if (r < 0) {
                daemon_free(d);
                return r;
        }
        *ret = d;
        return 0;
}

/* Start-up also runs code the loop never runs again: the probe, the
 * configuration, the history load, and the initialisation of GnuTLS and
 * p11-kit inside libmicrohttpd. The kernel maps each page run with up to 15
 * neighbours from the page cache, and they stay in the daemon's page tables
 * for its life. Here every read-only private file mapping (code, read-only
 * data) is dropped from the page tables, unless one of its pages is a
 * private copy, as text relocated in place or a debugger's breakpoint would
 * be: then it is left alone. The pages stay in the page cache. The loop
 * faults back those it runs, and the kernel may reclaim the others under
 * memory pressure like any file page no process maps. */
static void daemon_unmap_start_up_code(void) {
        struct range { uintptr_t start, end; } drop[128];
        uintptr_t start = 0, end = 0;
        bool candidate = false, line_start = true;
        char line[256];
        size_t n = 0;
        FILE *f;

        f = fopen("/proc/self/smaps", "re");
        if (!f)
                return;
        while (fgets(line, sizeof line, f)) {
                bool at_start = line_start;
                unsigned long long inode;
                uintptr_t s, e;
                unsigned kb;
                char perms[5];

                line_start = strchr(line, '\n') != NULL;
                if (!at_start)
                        continue;       /* the rest of a long path */
                if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %4s %*s %*s %llu", &s, &e, perms, &inode) == 4) {
                        start = s;
                        end = e;
                        candidate = perms[1] != 'w' && perms[3] == 'p' && inode != 0;
                } else if (candidate && sscanf(line, "Anonymous: %u kB", &kb) == 1) {
                        if (kb == 0 && n < ELEMENTSOF(drop))
                                drop[n++] = (struct range) { start, end };
                        candidate = false;
                }
        }
        fclose(f);
        for (size_t i = 0; i < n; i++)
                (void) madvise((void *) drop[i].start, drop[i].end - drop[i].start, MADV_DONTNEED);
}

/* Start-up goes deeper into the stack than the loop does: the probe
 * resolving links, the configuration, the history and the run store read
 * through buffers on the stack, about 40 kB down against under 16 kB for a
 * tick or an answer. Those pages would stay resident for the daemon's life,
 * so they are given back here, with what start-up left free in the heap
 * (the history file re-encoded through buffers of up to 100 KB, the empty
 * ring it replaced). Only pages two or more below this frame go: nothing
 * there is live, and a later deep call faults in zeroed pages, as on a
 * fresh stack. */
static __attribute__((noinline)) void daemon_give_back_start_up(void) {
        daemon_unmap_start_up_code();
#ifdef __GLIBC__
        const uintptr_t page = (uintptr_t) sysconf(_SC_PAGESIZE);
        uintptr_t low = 0, high;
        pthread_attr_t attr;
        size_t size;
        void *addr;

        if (pthread_getattr_np(pthread_self(), &attr) == 0) {
                if (pthread_attr_getstack(&attr, &addr, &size) == 0)
                        low = ((uintptr_t) addr + page - 1) & ~(page - 1);
                pthread_attr_destroy(&attr);
        }
        high = ((uintptr_t) &attr & ~(page - 1)) - 2 * page;
        if (low > 0 && high > low)
                (void) madvise((void *) low, high - low, MADV_DONTNEED);
        malloc_trim(0);
#endif
}

int daemon_run(struct daemon *d) {
        int r;

        tick_run(d);            /* a first sample before anyone can ask */
        daemon_arm_tick(d, d->cfg.interval_ms);
        daemon_give_back_start_up();
        sd_notify(0, "READY=1");
        r = daemon_loop(d);
        sd_notify(0, "STOPPING=1");
        log_info("Stopping");
        return r;
}

void daemon_free(struct daemon *d) {
        if (!d)
                return;
        char reason[160];
        snprintf(reason, sizeof reason, "heatcurved was stopped (%s%s: a stop, restart, upgrade or shutdown) "
                 "during the run", d->stop_signal ? "SIG" : "", d->stop_signal ? sigabbrev_np(d->stop_signal) : "an error");
        runs_free(d->runs, reason);
        alerts_free(d->alerts);
        if (d->event)
                daemon_save_history(d);
        history_saver_done(&d->saver);
        http_free(d->http);
        api_free(d->api);
        sd_event_source_disable_unref(d->save_source);
        sd_event_source_disable_unref(d->clock_source);
        sd_event_source_disable_unref(d->watch_source);
        sd_event_unref(d->event);
        history_free(d->hist);
        sensors_free(d->sensors);
        simulator_free(d->sim);
        recorder_done(&d->recorder);
        tick_free(d);
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
        json_object *doc = json_sensors_document(d->sensors);
        size_t len;
        const char *json = json_object_to_json_string_length(doc, JSON_C_TO_STRING_PLAIN, &len);
        int r = 0;

        if (!json)
                r = -ENOMEM;
        else if (fwrite(json, 1, len, stdout) != len || fputc('\n', stdout) == EOF || fflush(stdout) != 0)
                r = -errno;
        json_object_put(doc);
        return r;
}
