/* prometheus.c — GET /metrics: a sensors snapshot in the Prometheus text exposition format 0.0.4. */
#include "prometheus.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "util.h"

/*
 * Names follow the Prometheus conventions: base units in the name
 * (_celsius, _hertz, _seconds, _ratio), counters end in _total, one family
 * per quantity with the sensor id as a label. The family of a line is
 * written once, as HELP and TYPE, before its first sample; the caller must
 * emit all samples of a family together.
 */

struct prom_family {
        const char *name;
        const char *type;               /* "gauge" or "counter" */
        const char *help;
};

struct prom_out {
        char *data;
        size_t len, cap;                /* bytes */
        bool oom;
        const struct prom_family *family;   /* the family whose samples come now */
        bool labels_open;               /* "{" written for the current sample */
};

static void out_put(struct prom_out *o, const char *s, size_t n) {
        if (o->oom)
                return;
        if (o->len + n + 1 > o->cap) {
                size_t cap = o->cap ? o->cap : 4096;
                char *d;

                while (o->len + n + 1 > cap)
                        cap *= 2;
                d = realloc(o->data, cap);
                if (!d) {
                        o->oom = true;
                        return;
                }
                o->data = d;
                o->cap = cap;
        }
        memcpy(o->data + o->len, s, n);
        o->len += n;
        o->data[o->len] = '\0';
}

static void out_puts(struct prom_out *o, const char *s) {
        out_put(o, s, strlen(s));
}

static void out_u64(struct prom_out *o, uint64_t v) {
        char buf[UTIL_DECIMAL_MAX];

        out_put(o, buf, util_decimal_text(v, 0, false, 0, buf));
}

/* Length of the valid UTF-8 sequence at p (1..4), 0 when it is not one. */
static size_t utf8_len(const unsigned char *p) {
        size_t n;
        uint32_t c;

        if (p[0] < 0x80)
                return 1;
        if ((p[0] & 0xe0) == 0xc0)
                n = 2, c = p[0] & 0x1f;
        else if ((p[0] & 0xf0) == 0xe0)
                n = 3, c = p[0] & 0x0f;
        else if ((p[0] & 0xf8) == 0xf0)
                n = 4, c = p[0] & 0x07;
        else
                return 0;
        for (size_t i = 1; i < n; i++) {
                if ((p[i] & 0xc0) != 0x80)
                        return 0;       /* also stops at the NUL */
                c = c << 6 | (p[i] & 0x3f);
        }
        if ((n == 2 && c < 0x80) || (n == 3 && c < 0x800) || (n == 4 && c < 0x10000) ||
            c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
                return 0;               /* overlong, out of range, surrogate */
        return n;
}

/* A byte that needs no escaping and starts no multi-byte sequence. */
static bool plain_ascii(unsigned char c) {
        return c >= 0x20 && c < 0x80 && c != '\\' && c != '"';
}

/* A label value: backslash, double quote and line feed escaped as the
 * format says; bytes that are not UTF-8 (a vendor label, a run label) become
 * U+FFFD, because one invalid byte makes Prometheus drop the whole scrape.
 * Runs of plain bytes are copied at once: labels are most of the output. */
static void out_label_value(struct prom_out *o, const char *v) {
        const unsigned char *p = (const unsigned char *) v;

        while (*p) {
                const unsigned char *run = p;
                size_t n;

                while (plain_ascii(*p))
                        p++;
                if (p > run)
                        out_put(o, (const char *) run, (size_t) (p - run));
                if (!*p)
                        break;
                n = utf8_len(p);
                if (n == 0)
                        out_puts(o, "\xef\xbf\xbd");
                else if (*p == '\\')
                        out_puts(o, "\\\\");
                else if (*p == '"')
                        out_puts(o, "\\\"");
                else if (*p == '\n')
                        out_puts(o, "\\n");
                else
                        out_put(o, (const char *) p, n);
                p += n ? n : 1;
        }
}

/* Starts a sample line, with HELP and TYPE when its family starts here. */
static void sample(struct prom_out *o, const struct prom_family *f) {
        if (o->family != f) {
                out_puts(o, "# HELP ");
                out_puts(o, f->name);
                out_puts(o, " ");
                out_puts(o, f->help);
                out_puts(o, "\n# TYPE ");
                out_puts(o, f->name);
                out_puts(o, " ");
                out_puts(o, f->type);
                out_puts(o, "\n");
                o->family = f;
        }
        out_puts(o, f->name);
        o->labels_open = false;
}

static void label(struct prom_out *o, const char *name, const char *value) {
        out_puts(o, o->labels_open ? "," : "{");
        out_puts(o, name);
        out_puts(o, "=\"");
        out_label_value(o, value ? value : "");
        out_puts(o, "\"");
        o->labels_open = true;
}

static void label_uint(struct prom_out *o, const char *name, uint64_t value) {
        char buf[UTIL_DECIMAL_MAX];

        util_decimal_text(value, 0, false, 0, buf);
        label(o, name, buf);
}

static void value_begin(struct prom_out *o) {
        out_puts(o, o->labels_open ? "} " : " ");
}

static void value_text(struct prom_out *o, const char *text) {
        value_begin(o);
        out_puts(o, text);
        out_puts(o, "\n");
}

static void value_uint(struct prom_out *o, uint64_t v) {
        value_begin(o);
        out_u64(o, v);
        out_puts(o, "\n");
}

/* v / 10^decimals (decimals 0..9) written exactly, trailing zeros dropped:
 * 48686 mC is "48.686", 31000 mC is "31". No float rounding on the way. */
static void value_fixed(struct prom_out *o, int64_t v, int decimals) {
        char buf[UTIL_DECIMAL_MAX];

        value_begin(o);
        out_put(o, buf, util_decimal_text(v < 0 ? (uint64_t) -(v + 1) + 1 : (uint64_t) v, decimals, v < 0, 0, buf));
        out_puts(o, "\n");
}

static void value_double(struct prom_out *o, double v) {
        char buf[32];

        snprintf(buf, sizeof buf, "%.10g", v);
        value_text(o, buf);
}

/* ---- the daemon ---- */

static const struct prom_family
        F_BUILD = { "heatcurve_build_info", "gauge", "Always 1; the version of heatcurved." },
        F_BOARD = { "heatcurve_board_info", "gauge",
                    "Always 1; the board model (device tree or DMI), kernel release and host name." },
        F_START = { "heatcurve_start_time_seconds", "gauge", "When heatcurved started, Unix time." },
        F_INTERVAL = { "heatcurve_sampling_interval_seconds", "gauge", "Configured time between two sampling ticks." },
        F_TICKS = { "heatcurve_ticks_total", "counter", "Sampling ticks since heatcurved started." },
        F_TICK_DUR = { "heatcurve_tick_duration_seconds", "gauge",
                       "Time the last sampling tick took (read, record, run)." },
        F_READ_DUR = { "heatcurve_sensors_read_duration_seconds", "gauge",
                       "Time the last tick spent reading every sensor." },
        F_READ_TIME = { "heatcurve_sensors_read_timestamp_seconds", "gauge",
                        "When the sensors were last read, Unix time; /metrics shows that reading." };

static void render_daemon(struct prom_out *o, const struct sensors *s, const struct prom_info *info) {
        sample(o, &F_BUILD);
        label(o, "version", info->version);
        value_text(o, "1");
        sample(o, &F_BOARD);
        label(o, "model", s->board.model);
        label(o, "kernel", s->board.kernel);
        label(o, "hostname", s->board.hostname);
        value_text(o, "1");
        sample(o, &F_START);
        value_fixed(o, info->started_ms, 3);    /* ms -> s */
        if (info->interval_ms) {
                sample(o, &F_INTERVAL);
                value_fixed(o, (int64_t) info->interval_ms, 3);
        }
        sample(o, &F_TICKS);
        value_uint(o, info->ticks);
        if (info->tick_ns >= 0) {
                sample(o, &F_TICK_DUR);
                value_fixed(o, info->tick_ns, 9);       /* ns -> s */
        }
        if (s->time_ms > 0) {
                sample(o, &F_READ_DUR);
                value_fixed(o, (int64_t) s->read_ns, 9);
                sample(o, &F_READ_TIME);
                value_fixed(o, s->time_ms, 3);
        }
}

/* ---- temperatures ---- */

static const struct prom_family
        F_TEMP = { "heatcurve_temperature_celsius", "gauge",
                   "Temperature of a thermal zone or hwmon sensor; absent while the sensor fails (see heatcurve_sensor_ok)." },
        F_TEMP_MAX = { "heatcurve_temperature_max_celsius", "gauge", "hwmon tempN_max limit of a sensor." },
        F_TEMP_CRIT = { "heatcurve_temperature_crit_celsius", "gauge", "hwmon tempN_crit limit of a sensor." },
        F_TRIP = { "heatcurve_trip_point_celsius", "gauge",
                   "Trip point of a thermal zone; type is passive, active, hot or critical." },
        F_TRIP_HYST = { "heatcurve_trip_point_hysteresis_celsius", "gauge", "Hysteresis of a trip point." };

static void render_temps(struct prom_out *o, const struct sensors *s) {
        for (size_t i = 0; i < s->n_temps; i++) {
                const struct temp_sensor *t = &s->temps[i];
                bool hwmon = t->source == TEMP_SOURCE_HWMON;

                if (!t->ok)
                        continue;
                sample(o, &F_TEMP);
                label(o, "sensor", t->id);
                label(o, "source", hwmon ? "hwmon" : "thermal");
                label(o, "type", hwmon ? "" : t->type);
                label(o, "chip", t->chip);
                label(o, "label", t->label);
                value_fixed(o, t->temp_mc, 3);          /* mC -> C */
        }
        for (size_t i = 0; i < s->n_temps; i++)
                if (s->temps[i].has_max) {
                        sample(o, &F_TEMP_MAX);
                        label(o, "sensor", s->temps[i].id);
                        value_fixed(o, s->temps[i].max_mc, 3);
                }
        for (size_t i = 0; i < s->n_temps; i++)
                if (s->temps[i].has_crit) {
                        sample(o, &F_TEMP_CRIT);
                        label(o, "sensor", s->temps[i].id);
                        value_fixed(o, s->temps[i].crit_mc, 3);
                }
}

static void trip_labels(struct prom_out *o, const struct temp_sensor *t, const struct trip_point *tp) {
        label(o, "sensor", t->id);
        label_uint(o, "trip", (uint64_t) tp->index);
        label(o, "type", tp->type);
}

static void render_trips(struct prom_out *o, const struct sensors *s) {
        for (size_t i = 0; i < s->n_temps; i++)
                for (size_t k = 0; k < s->temps[i].n_trips; k++)
                        if (s->temps[i].trips[k].has_temp) {
                                sample(o, &F_TRIP);
                                trip_labels(o, &s->temps[i], &s->temps[i].trips[k]);
                                value_fixed(o, s->temps[i].trips[k].temp_mc, 3);
                        }
        for (size_t i = 0; i < s->n_temps; i++)
                for (size_t k = 0; k < s->temps[i].n_trips; k++)
                        if (s->temps[i].trips[k].has_hyst) {
                                sample(o, &F_TRIP_HYST);
                                trip_labels(o, &s->temps[i], &s->temps[i].trips[k]);
                                value_fixed(o, s->temps[i].trips[k].hyst_mc, 3);
                        }
}

/* ---- health of every sensor, by the ids of /api/v1/sensors and the history ---- */

static const struct prom_family
        F_SENSOR_OK = { "heatcurve_sensor_ok", "gauge",
                 "1 when the last read of the sensor succeeded, else 0. Ids as in /api/v1/history." },
        F_ERRORS = { "heatcurve_sensor_read_errors_total", "counter", "Failed reads of the sensor." };

/* Calls emit(o, id, ok, errors) for every channel with a health of its own:
 * every sensor, cooling device and policy, and the load. */
static void each_sensor(struct prom_out *o, const struct sensors *s,
                        void (*emit)(struct prom_out *o, const char *id, bool ok, uint64_t errors)) {
        struct sensors_iter it = SENSORS_ITER_INIT;
        struct sensor_channel ch;

        while (sensors_channel_next(s, &it, &ch))
                if (ch.counts_errors)
                        emit(o, ch.id, ch.ok, ch.read_errors);
}

static void emit_ok(struct prom_out *o, const char *id, bool ok, uint64_t errors) {
        sample(o, &F_SENSOR_OK);
        label(o, "sensor", id);
        value_text(o, ok ? "1" : "0");
}

static void emit_errors(struct prom_out *o, const char *id, bool ok, uint64_t errors) {
        sample(o, &F_ERRORS);
        label(o, "sensor", id);
        value_uint(o, errors);
}

/* ---- cooling devices ---- */

static const struct prom_family
        F_COOL_CUR = { "heatcurve_cooling_device_cur_state", "gauge",
                       "Current state of a thermal cooling device (0 is off; steps are device-specific)." },
        F_COOL_MAX = { "heatcurve_cooling_device_max_state", "gauge", "Highest state of a thermal cooling device." };

static void render_cooling(struct prom_out *o, const struct sensors *s) {
        for (size_t i = 0; i < s->n_cooling; i++)
                if (s->cooling[i].ok) {
                        sample(o, &F_COOL_CUR);
                        label(o, "device", s->cooling[i].id);
                        label(o, "type", s->cooling[i].type);
                        value_uint(o, (uint64_t) s->cooling[i].cur_state);
                }
        for (size_t i = 0; i < s->n_cooling; i++)
                if (s->cooling[i].max_state >= 0) {
                        sample(o, &F_COOL_MAX);
                        label(o, "device", s->cooling[i].id);
                        label(o, "type", s->cooling[i].type);
                        value_uint(o, (uint64_t) s->cooling[i].max_state);
                }
}

/* ---- cpufreq ---- */

static const struct prom_family
        F_POLICY = { "heatcurve_cpufreq_policy_info", "gauge",
                     "Always 1; a cpufreq policy with its driver, governor and CPUs." },
        F_FREQ_SCALING = { "heatcurve_cpu_scaling_frequency_hertz", "gauge",
                           "Current frequency of a cpufreq policy (scaling_cur_freq)." },
        F_FREQ_HW = { "heatcurve_cpu_frequency_hertz", "gauge",
                      "Frequency the hardware reports (cpuinfo_cur_freq), where readable." },
        F_FREQ_MIN = { "heatcurve_cpu_frequency_min_hertz", "gauge", "Lowest frequency of the hardware." },
        F_FREQ_MAX = { "heatcurve_cpu_frequency_max_hertz", "gauge", "Highest frequency of the hardware." },
        F_SCALING_MIN = { "heatcurve_cpu_scaling_frequency_min_hertz", "gauge",
                          "Lowest frequency the policy allows now." },
        F_SCALING_MAX = { "heatcurve_cpu_scaling_frequency_max_hertz", "gauge",
                          "Highest frequency the policy allows now." },
        F_THROTTLED = { "heatcurve_cpu_throttled", "gauge",
                        "1 while a thermal cooling device holds the policy's CPUs back, else 0." },
        F_TIME_IN_STATE = { "heatcurve_cpu_frequency_time_seconds_total", "counter",
                            "Time the policy spent at each frequency (stats/time_in_state)." };

/* One policy-labelled sample of a frequency in kHz; 0 means "not known" and is skipped. */
static void freq_sample(struct prom_out *o, const struct prom_family *f, const struct cpufreq_policy *p,
                        uint32_t khz) {
        if (!khz)
                return;
        sample(o, f);
        label(o, "policy", p->id);
        value_uint(o, (uint64_t) khz * 1000);   /* kHz -> Hz */
}

static void render_policy_info(struct prom_out *o, const struct cpufreq_policy *p) {
        char cpus[SENSORS_CPUS_MAX * 4] = "";
        size_t n = 0;

        for (size_t i = 0; i < p->n_cpus && n < sizeof cpus - 12; i++)
                n += (size_t) snprintf(cpus + n, sizeof cpus - n, "%s%d", i ? "," : "", p->cpus[i]);
        sample(o, &F_POLICY);
        label(o, "policy", p->id);
        label(o, "driver", p->driver);
        label(o, "governor", p->governor);
        label(o, "cpus", cpus);
        value_text(o, "1");
}

static void render_time_in_state(struct prom_out *o, const struct cpufreq_policy *p) {
        for (size_t k = 0; k < p->n_tis; k++) {
                sample(o, &F_TIME_IN_STATE);
                label(o, "policy", p->id);
                label_uint(o, "frequency_hertz", (uint64_t) p->tis_khz[k] * 1000);
                value_fixed(o, (int64_t) p->tis_10ms[k], 2);    /* the kernel counts 10 ms units */
        }
}

static void render_cpufreq(struct prom_out *o, const struct sensors *s) {
        const struct cpufreq_policy *P = s->policies;
        size_t n = s->n_policies;

        for (size_t i = 0; i < n; i++)
                render_policy_info(o, &P[i]);
        for (size_t i = 0; i < n; i++)
                freq_sample(o, &F_FREQ_SCALING, &P[i], P[i].ok ? P[i].cur_khz : 0);
        for (size_t i = 0; i < n; i++)
                freq_sample(o, &F_FREQ_HW, &P[i], P[i].ok && P[i].has_cpuinfo_cur ? P[i].cpuinfo_cur_khz : 0);
        for (size_t i = 0; i < n; i++)
                freq_sample(o, &F_FREQ_MIN, &P[i], P[i].min_khz);
        for (size_t i = 0; i < n; i++)
                freq_sample(o, &F_FREQ_MAX, &P[i], P[i].max_khz);
        for (size_t i = 0; i < n; i++)
                freq_sample(o, &F_SCALING_MIN, &P[i], P[i].scaling_min_khz);
        for (size_t i = 0; i < n; i++)
                freq_sample(o, &F_SCALING_MAX, &P[i], P[i].scaling_max_khz);
        for (size_t i = 0; i < n; i++) {
                sample(o, &F_THROTTLED);
                label(o, "policy", P[i].id);
                value_text(o, sensors_policy_throttled(s, &P[i]) ? "1" : "0");
        }
        for (size_t i = 0; i < n; i++)
                render_time_in_state(o, &P[i]);
}

/* ---- load ---- */

static const struct prom_family
        F_LOAD_CPU = { "heatcurve_cpu_load_ratio", "gauge", "Busy fraction of a CPU between the last two ticks." },
        F_LOAD = { "heatcurve_load_ratio", "gauge", "Busy fraction of all CPUs together between the last two ticks." };

static void render_load(struct prom_out *o, const struct sensors *s) {
        const struct cpu_load *l = &s->load;

        if (!l->ok || !l->have_prev)
                return;         /* the first read has nothing to compare with */
        for (size_t i = 0; i < l->n_cpus; i++) {
                sample(o, &F_LOAD_CPU);
                label_uint(o, "cpu", (uint64_t) l->cpu_index[i]);
                value_double(o, l->per_cpu[i]);
        }
        sample(o, &F_LOAD);
        value_double(o, l->total);
}

/* ---- the supply and the Raspberry Pi firmware ---- */

static const struct prom_family
        F_UNDERVOLT = { "heatcurve_under_voltage", "gauge",
                        "1 while the supply is too low (the power source or the Pi firmware says so), else 0." },
        F_FW_ARM = { "heatcurve_firmware_arm_frequency_hertz", "gauge",
                     "ARM clock as the Raspberry Pi firmware measures it; cpufreq shows the one the kernel asked for." },
        F_FW_FLAG = { "heatcurve_firmware_throttled_flag", "gauge",
                      "A get_throttled bit of the Raspberry Pi firmware: 1 when set now, or at any time since boot." };

static const struct prom_family
        F_POWER_DRAW = { "heatcurve_power_watts", "gauge",
                         "Power the board draws, from an hwmon power meter. Ids as in /api/v1/history." };

/* Every power meter that answered at the last read. */
static void render_power_draw(struct prom_out *o, const struct sensors *s) {
        struct sensors_iter it = SENSORS_ITER_INIT;
        struct sensor_channel ch;

        while (sensors_channel_next(s, &it, &ch))
                if (ch.kind == SENSOR_KIND_POWER_DRAW && ch.has_value) {
                        sample(o, &F_POWER_DRAW);
                        label(o, "sensor", ch.id);
                        value_double(o, ch.value);
                }
}

static void render_power(struct prom_out *o, const struct sensors *s) {
        static const char *const flags[] = { "under_voltage", "frequency_capped", "throttled", "soft_temperature_limit" };
        const struct firmware_info *fw = &s->firmware;
        int low = sensors_undervoltage(s);

        if (low >= 0) {
                sample(o, &F_UNDERVOLT);
                value_text(o, low ? "1" : "0");
        }
        render_power_draw(o, s);
        if (!fw->present || !fw->ok)
                return;         /* no firmware, or it did not answer: unknown, not 0 */
        sample(o, &F_FW_ARM);
        value_uint(o, fw->arm_hz);
        for (unsigned since_boot = 0; since_boot <= 1; since_boot++)
                for (unsigned bit = 0; bit < sizeof flags / sizeof flags[0]; bit++) {
                        sample(o, &F_FW_FLAG);
                        label(o, "flag", flags[bit]);
                        label(o, "period", since_boot ? "since_boot" : "now");
                        value_text(o, fw->throttled & (UINT32_C(1) << (bit + 16 * since_boot)) ? "1" : "0");
                }
}

/* ---- the run in progress ---- */

static const struct prom_family
        F_RUN_RUNNING = { "heatcurve_run_running", "gauge", "1 while a run (idle, stress, cooldown) is in progress." },
        F_RUN_INFO = { "heatcurve_run_info", "gauge", "Always 1; the run in progress, its label and current phase." },
        F_RUN_START = { "heatcurve_run_start_time_seconds", "gauge", "When the run in progress started, Unix time." },
        F_RUN_WORK = { "heatcurve_run_work_rate_per_second", "gauge",
                       "Work the run's load did per second at the last tick, in the unit of the label." },
        F_RUN_BASELINE = { "heatcurve_run_baseline_celsius", "gauge", "Idle baseline of the run in progress." },
        F_RUN_PLATEAU = { "heatcurve_run_predicted_plateau_celsius", "gauge",
                          "Plateau the run in progress is heading for under load, as fitted so far." },
        F_RUN_FC_PLATEAU = { "heatcurve_run_forecast_plateau_celsius", "gauge",
                             "Where the stress phase of the run in progress settles, as forecast from it so far." },
        F_RUN_FC_ETA = { "heatcurve_run_forecast_eta_seconds", "gauge",
                         "Time until that plateau is known within 0.5 C, as forecast; 0 once it is." };

static void run_sample(struct prom_out *o, const struct prom_family *f, const struct prom_run *r) {
        sample(o, f);
        label_uint(o, "run_id", r->id);
}

static void render_run(struct prom_out *o, const struct prom_run *r) {
        sample(o, &F_RUN_RUNNING);
        value_text(o, r ? "1" : "0");
        if (!r)
                return;
        run_sample(o, &F_RUN_INFO, r);
        label(o, "label", r->label);
        label(o, "phase", r->phase);
        value_text(o, "1");
        run_sample(o, &F_RUN_START, r);
        value_fixed(o, r->started_ms, 3);
        if (r->work_unit && isfinite(r->work_rate)) {
                run_sample(o, &F_RUN_WORK, r);
                label(o, "unit", r->work_unit);
                value_double(o, r->work_rate);
        }
        if (isfinite(r->baseline_c)) {
                run_sample(o, &F_RUN_BASELINE, r);
                value_double(o, r->baseline_c);
        }
        if (isfinite(r->predicted_plateau_c)) {
                run_sample(o, &F_RUN_PLATEAU, r);
                value_double(o, r->predicted_plateau_c);
        }
        if (isfinite(r->forecast_plateau_c)) {
                run_sample(o, &F_RUN_FC_PLATEAU, r);
                value_double(o, r->forecast_plateau_c);
        }
        if (isfinite(r->forecast_eta_s)) {
                run_sample(o, &F_RUN_FC_ETA, r);
                value_double(o, r->forecast_eta_s);
        }
}

/* ---- alerts ---- */

static const struct prom_family F_ALERT = {
        "heatcurve_alert_state", "gauge",
        "1 for the state an alert rule is in (ok, forecast, warn, crit, lost), 0 for the others.",
};

static const struct prom_family F_ALERT_ETA = {
        "heatcurve_alert_forecast_eta_seconds", "gauge",
        "Time until an alert rule in the forecast state reaches its level, as forecast at the last sample.",
};

const char *prom_alert_state_to_string(enum prom_alert_state st) {
        static const char *const names[_PROM_ALERT_STATE_MAX] = {
                [PROM_ALERT_OK] = "ok", [PROM_ALERT_FORECAST] = "forecast", [PROM_ALERT_WARN] = "warn",
                [PROM_ALERT_CRIT] = "crit", [PROM_ALERT_LOST] = "lost",
        };

        return (int) st >= 0 && st < _PROM_ALERT_STATE_MAX ? names[st] : "unknown";
}

/* One line per rule and state, so alerting rules and panels select by state. */
static void render_alerts(struct prom_out *o, const struct prom_alert *a, size_t n) {
        for (size_t i = 0; i < n; i++)
                for (int st = 0; st < _PROM_ALERT_STATE_MAX; st++) {
                        sample(o, &F_ALERT);
                        label(o, "alert", a[i].name);
                        label(o, "sensor", a[i].sensor);
                        label(o, "state", prom_alert_state_to_string(st));
                        value_text(o, a[i].state == (enum prom_alert_state) st ? "1" : "0");
                }
        for (size_t i = 0; i < n; i++)
                if (a[i].state == PROM_ALERT_FORECAST && isfinite(a[i].eta_s)) {
                        sample(o, &F_ALERT_ETA);
                        label(o, "alert", a[i].name);
                        label(o, "sensor", a[i].sensor);
                        value_double(o, a[i].eta_s);
                }
}

int prom_render(const struct sensors *s, const struct prom_info *info, char **ret, size_t *ret_len) {
        struct prom_out o = {};

        if (info->size_hint > 0) {
                /* An answer a few values longer than the last still fits. */
                o.cap = info->size_hint + info->size_hint / 8 + 64;
                o.data = malloc(o.cap);
                if (!o.data)
                        return -ENOMEM;
        }
        render_daemon(&o, s, info);
        render_temps(&o, s);
        render_trips(&o, s);
        each_sensor(&o, s, emit_ok);
        each_sensor(&o, s, emit_errors);
        render_cooling(&o, s);
        render_cpufreq(&o, s);
        render_load(&o, s);
        render_power(&o, s);
        render_run(&o, info->run);
        render_alerts(&o, info->alerts, info->n_alerts);
        if (o.oom || !o.data) {
                free(o.data);
                return -ENOMEM;
        }
        *ret = o.data;
        *ret_len = o.len;
        return 0;
}
