/* run.c — the run engine: phases driven by the sampling tick, loads, safety aborts, samples.csv, metrics. */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "run-load.h"
#include "samples-csv.h"
#include "util.h"

static void run_log(const struct run *r, int priority, const char *format, ...) __attribute__((format(printf, 3, 4)));
static void run_log(const struct run *r, int priority, const char *format, ...) {
        char field[32], msg[512];
        const char *fields[] = { field, NULL };
        va_list ap;

        va_start(ap, format);
        vsnprintf(msg, sizeof msg, format, ap);
        va_end(ap);
        snprintf(field, sizeof field, "RUN_ID=%u", r->id);
        log_fields(priority, fields, "Run %u: %s", r->id, msg);
}

struct run *run_alloc(void) {
        struct run *r = calloc(1, sizeof *r);

        if (!r)
                return NULL;
        for (size_t k = 0; k < RUN_PHASES_MAX; k++)
                r->phase_load[k] = NAN;
        r->csv_fd = -1;
        r->repeat_count = 1;
        r->ambient_c = r->safety_limit_c = r->baseline_c = NAN;
        r->predicted_plateau_c = r->plateau_ci95_c = r->plateau_low_c = r->plateau_high_c = NAN;
        r->forecast_plateau_c = r->forecast_eta_s = NAN;
        analysis_metrics_init(&r->metrics, NAN);
        run_prior_clear(r);
        return r;
}

void run_free(struct run *r) {
        if (!r)
                return;
        run_load_free(r->load);
        while (r->stopping) {
                struct run_load *l = r->stopping;
                r->stopping = l->next;
                run_load_free(l);
        }
        if (r->csv_fd >= 0)
                close(r->csv_fd);
        for (size_t i = 0; i < r->n_phases; i++) {
                for (size_t j = 0; r->phases[i].command && r->phases[i].command[j]; j++)
                        free(r->phases[i].command[j]);
                free(r->phases[i].command);
                free(r->phases[i].stress_dir);
        }
        run_series_free(&r->series);
        free(r->row);
        free(r->values);
        free(r->csv_ids);
        free(r->csv_ch);
        free(r->notes);
        sd_event_source_unref(r->start_timer);
        free(r);
}

bool run_stress_stopping(const struct run *r) {
        return r->load || r->stopping;
}

/* Frees the stopped loads whose workers have all been reaped (never from
 * inside a child source's callback: this runs from the tick). */
static void run_stress_release(struct run *r) {
        for (struct run_load **p = &r->stopping; *p; ) {
                struct run_load *l = *p;
                if (!run_load_exited(l)) {
                        p = &l->next;
                        continue;
                }
                *p = l->next;
                run_load_free(l);
        }
}

/* The current load stops; it joins the list until its workers are reaped. */
static void run_stress_stop(struct run *r) {
        if (!r->load)
                return;
        run_load_stop(r->load, r->host->event);
        r->load->next = r->stopping;
        r->stopping = r->load;
        r->load = NULL;
}

static int run_stress_start(struct run *r, struct run_phase *p) {
        int ret = run_load_start(r->host->event, &p->stress, r->id, &r->load);

        if (ret < 0)
                return ret;
        snprintf(r->work_unit, sizeof r->work_unit, "%s", stress_work_unit(r->load->stress));
        r->work_prev = 0;
        r->work_prev_ms = 0;
        return 0;
}

static const char *phase_name(const struct run_phase *p) {
        return run_phase_kind_to_string(p->kind);
}

static void run_recording_failed(struct run *r, const char *what, int err) {
        if (!r->recording_ok)
                return;
        r->recording_ok = false;
        snprintf(r->recording_error, sizeof r->recording_error, "%s in %s: %s", what, r->dir, strerror(err));
        run_log(r, LOG_ERR, "recording stopped: %s", r->recording_error);
}

static void run_write_json(struct run *r) {
        int ret = run_store_write(r, r->dir);

        r->unsaved = ret < 0;
        if (ret < 0)
                run_recording_failed(r, "writing run.json", -ret);
}

int run_save_pending(struct run *r) {
        int ret;

        if (!r->unsaved)
                return 0;
        ret = run_store_write(r, r->dir);
        if (ret < 0)
                return ret;
        r->unsaved = false;
        run_log(r, LOG_NOTICE, "run.json written after all");
        return 1;
}

/* Columns are kept by channel id: a re-probe may reorder or drop sensors.
 * After the fixed ones, one per temperature, named by its id (<id>_c), then
 * one per policy's frequency, named by the policy's own name (<policy>_hz). */
static int run_csv_header(struct run *r) {
        const struct sensors *s = r->host->sensors;
        struct sensors_iter it = SENSORS_ITER_INIT;
        struct sensor_channel ch;
        size_t temps = 0, freqs = 0, t = 0, f = 0;
        const char **names;
        char *header;
        int ret;

        while (sensors_channel_next(s, &it, &ch)) {
                temps += ch.kind == SENSOR_KIND_TEMPERATURE;
                freqs += ch.kind == SENSOR_KIND_FREQUENCY;
                if (ch.kind == SENSOR_KIND_POWER_DRAW && !r->power_id[0]) {
                        snprintf(r->power_id, sizeof r->power_id, "%s", ch.id);
                        r->power_ch = ch;
                }
        }
        names = calloc(temps + freqs + 1, sizeof *names);
        r->csv_ids = calloc(temps + freqs + 1, sizeof *r->csv_ids);
        r->csv_ch = calloc(temps + freqs + 1, sizeof *r->csv_ch);
        r->row_size = samples_row_size(temps, freqs);
        r->row = malloc(r->row_size);
        r->values = calloc(temps + freqs + 1, sizeof *r->values);
        if (!names || !r->csv_ids || !r->csv_ch || !r->row || !r->values) {
                free(names);
                return -ENOMEM;
        }
        r->csv_temps = temps;
        r->csv_policies = freqs;
        it = (struct sensors_iter) SENSORS_ITER_INIT;
        while (sensors_channel_next(s, &it, &ch)) {
                size_t k;

                if (ch.kind == SENSOR_KIND_TEMPERATURE)
                        k = t++;
                else if (ch.kind == SENSOR_KIND_FREQUENCY)
                        k = temps + f++;
                else
                        continue;
                snprintf(r->csv_ids[k], sizeof r->csv_ids[k], "%s", ch.id);
                r->csv_ch[k] = ch;
                names[k] = ch.kind == SENSOR_KIND_FREQUENCY ? s->policies[ch.index].id : ch.id;
        }
        header = samples_header_power(names, temps, names + temps, freqs, r->power_id[0] != '\0');
        free(names);
        if (!header)
                return -ENOMEM;
        ret = util_write_all(r->csv_fd, header, strlen(header));
        free(header);
        return ret;
}

/* Degrees C of the sensor with this id, NaN when it is gone or not answering. */
static double temp_by_id(const struct sensors *s, const char *id) {
        for (size_t i = 0; i < s->n_temps; i++)
                if (strcmp(s->temps[i].id, id) == 0)
                        return s->temps[i].ok ? s->temps[i].temp_mc / 1000.0 : NAN;
        return NAN;
}

void run_sensors_changed(struct run *r) {
        for (size_t k = 0; r->csv_ch && k < r->csv_temps + r->csv_policies; k++)
                if (sensors_channel_find(r->host->sensors, r->csv_ids[k], &r->csv_ch[k]) < 0)
                        r->csv_ch[k] = (struct sensor_channel) { .kind = _SENSOR_KIND_MAX };   /* gone */
        if (r->power_id[0] && sensors_channel_find(r->host->sensors, r->power_id, &r->power_ch) < 0)
                r->power_ch = (struct sensor_channel) { .kind = _SENSOR_KIND_MAX };
}

/* A column's value: its channel's, NaN when it is gone or not answering. */
static double run_csv_value(const struct sensors *s, const struct sensor_channel *ch) {
        double v;

        return sensors_channel_read(s, ch, &v) >= 0 ? v : NAN;
}

/* samples.csv to the disk, at the end of the run. */
static void run_sync(struct run *r) {
        if (r->csv_fd < 0 || !r->recording_ok)
                return;
        if (fdatasync(r->csv_fd) < 0)
                run_recording_failed(r, "writing samples.csv", errno);
}

static int run_phase_begin(struct run *r, struct run_now now) {
        struct run_phase *p = &r->phases[r->phase_index];
        int ret;

        p->started_ms = now.wall_ms;
        p->started_mono_ms = now.mono_ms;
        r->phase_start[r->phase_index] = r->series.n;
        if (p->has_stress) {
                ret = run_stress_start(r, p);
                if (ret < 0)
                        return ret;
        }
        run_log(r, LOG_INFO, "phase %zu (%s) started%s%s", r->phase_index, phase_name(p),
                p->has_stress ? ", load " : "", p->has_stress ? stress_type_to_string(p->stress.type) : "");
        run_write_json(r);
        return 0;
}

/* Without an ambient given, the room's sensor over the idle phase: its
 * median, so a draught or a door does not make the number. */
static void run_ambient_from_sensor(struct run *r, const struct run_series *s) {
        size_t first = r->phase_start[r->phase_index];
        double median;

        if (!r->ambient_sensor[0] || !isnan(r->ambient_c) || s->n <= first)
                return;
        if (analysis_median(s->t_s + first, s->ambient_c + first, s->n - first, s->t_s[s->n - 1] - s->t_s[first],
                            &median) >= 0 && isfinite(median)) {
                r->ambient_c = median;
                run_log(r, LOG_INFO, "ambient %.2f C, the median of %s over the idle phase", median, r->ambient_sensor);
        }
}

static void run_phase_end(struct run *r, struct run_now now, const char *reason) {
        struct run_phase *p = &r->phases[r->phase_index];
        const struct run_series *s = &r->series;

        p->ended_ms = now.wall_ms;
        snprintf(p->end_reason, sizeof p->end_reason, "%s", reason);
        run_stress_stop(r);
        if (p->kind == ANALYSIS_PHASE_IDLE && s->n) {
                analysis_median(s->t_s, s->temp_c, s->n, ANALYSIS_BASELINE_IDLE_S, &r->baseline_c);
                run_ambient_from_sensor(r, s);
        }
        /* what is known so far (baseline after idle, the heating fit after stress) */
        run_series_metrics_prior(s, r->ambient_c, run_plateau_horizon_s(r), run_prior(r), &r->metrics);
        run_quality_phases(r, s);
        run_log(r, LOG_INFO, "phase %zu (%s) ended: %s", r->phase_index, phase_name(p), reason);
}

static void run_finish(struct run *r, struct run_now now, enum run_state state) {
        r->state = state;
        r->ended_ms = now.wall_ms;
        run_series_metrics_prior(&r->series, r->ambient_c, run_plateau_horizon_s(r), run_prior(r), &r->metrics);
        run_quality_phases(r, &r->series);
        run_sync(r);
        if (r->csv_fd >= 0) {
                close(r->csv_fd);
                r->csv_fd = -1;
        }
        /* what a finished run keeps is its record; the engine's memory goes */
        run_series_free(&r->series);
        free(r->row);
        free(r->values);
        free(r->csv_ids);
        free(r->csv_ch);
        r->row = NULL;
        r->values = NULL;
        r->csv_ids = NULL;
        r->csv_ch = NULL;
        run_write_json(r);
        if (state == RUN_FINISHED && analysis_regulated(&r->metrics)) {
                char held[128];

                analysis_regulated_text(&r->metrics, "C", held, sizeof held);
                run_log(r, LOG_NOTICE, "finished: %s", held);
        } else if (state == RUN_FINISHED)
                run_log(r, LOG_NOTICE, "finished: plateau %.1f C, rise %.1f C, tau %.0f s",
                        r->metrics.plateau_c, r->metrics.rise_c, r->metrics.tau_heat_s);
        else
                run_log(r, LOG_WARNING, "%s: %s", run_state_to_string(state), r->abort_reason);
        r->host->ended(r->host, r);
}

static struct run_now run_now(void) {
        return (struct run_now) { util_now_ms(), (int64_t) (util_monotonic_ns() / 1000000u) };
}

static void run_end_early(struct run *r, struct run_now now, enum run_state state, const char *end_reason,
                          const char *reason) {
        if (r->state != RUN_RUNNING)
                return;
        r->start_timer = sd_event_source_unref(r->start_timer);
        r->waiting = false;
        snprintf(r->abort_reason, sizeof r->abort_reason, "%s", reason);
        run_phase_end(r, now, end_reason);
        run_finish(r, now, state);
}

void run_abort(struct run *r, const char *reason) {
        run_end_early(r, run_now(), RUN_ABORTED, "aborted", reason);
}

void run_stop(struct run *r) {
        run_end_early(r, run_now(), RUN_ABORTED, "stopped", "stopped on request");
}

void run_interrupt(struct run *r, const char *reason) {
        run_end_early(r, run_now(), RUN_INTERRUPTED, "interrupted", reason);
}

/* The policy with the highest hardware max: the big cores on big.LITTLE. */
static const struct cpufreq_policy *run_policy(const struct sensors *s) {
        const struct cpufreq_policy *best = NULL;

        for (size_t i = 0; i < s->n_policies; i++)
                if (!best || s->policies[i].max_khz > best->max_khz)
                        best = &s->policies[i];
        return best;
}

static bool run_cooling_active(const struct sensors *s) {
        for (size_t i = 0; i < s->n_cooling; i++)
                if (s->cooling[i].ok && s->cooling[i].cur_state > 0)
                        return true;
        return false;
}

static double run_work_rate(struct run *r, int64_t mono_ms) {
        uint64_t work;
        double rate = NAN;

        if (!r->load)
                return NAN;
        work = stress_work_done(r->load->stress);
        if (r->work_prev_ms && mono_ms > r->work_prev_ms)
                rate = (double) (work - r->work_prev) * 1000.0 / (double) (mono_ms - r->work_prev_ms);
        r->work_prev = work;
        r->work_prev_ms = mono_ms;
        return rate;
}

/* s from the start of the first stress phase to elapsed_s, on the monotonic
 * clock like elapsed_s; NaN while no load has started. */
static double run_since_load_s(const struct run *r, double elapsed_s) {
        for (size_t k = 0; k <= r->phase_index && k < r->n_phases; k++)
                if (r->phases[k].kind == ANALYSIS_PHASE_STRESS && r->phases[k].started_ms)
                        return elapsed_s - (double) (r->phases[k].started_mono_ms - r->created_mono_ms) / 1000.0;
        return NAN;
}

/* One whole row per write(): a crash never leaves half a row behind, and a
 * write cut short (a full disk) is taken back. */
static void run_csv_row(struct run *r, int64_t now_ms, const struct run_sample *x, double hottest) {
        const struct sensors *sn = r->host->sensors;
        double *values = r->values;
        struct samples_row row = {
                .time_ms = now_ms, .elapsed_s = x->t_s, .phase = phase_name(&r->phases[r->phase_index]),
                .temp_c = x->temp_c, .hottest_c = hottest, .freq_hz = x->freq_hz,
                .max_allowed_hz = x->max_hz, .cooling_active = x->cooling, .load = x->load,
                .work_rate = x->work_rate, .work_unit = isfinite(x->work_rate) ? r->work_unit : "",
                .t_since_load_s = run_since_load_s(r, x->t_s),
                .firmware_arm_hz = sn->firmware.present && sn->firmware.ok ? (double) sn->firmware.arm_hz : NAN,
                .firmware_throttled = x->firmware_throttled,
                .has_power = x->has_power, .power_w = x->power_w,
        };
        off_t end;
        int len, ret;

        if (r->csv_fd < 0 || !r->recording_ok)
                return;
        /* the header's columns; a sensor gone since reads empty */
        for (size_t k = 0; k < r->csv_temps + r->csv_policies; k++)
                values[k] = run_csv_value(sn, &r->csv_ch[k]);
        len = samples_format_row(&row, values, r->csv_temps, values + r->csv_temps, r->csv_policies,
                                 r->row, r->row_size);
        if (len < 0) {
                run_recording_failed(r, "formatting a row of samples.csv", -len);
                return;
        }
        end = lseek(r->csv_fd, 0, SEEK_END);
        ret = util_write_all(r->csv_fd, r->row, (size_t) len);
        if (ret < 0) {
                if (end >= 0 && ftruncate(r->csv_fd, end) < 0)
                        ret = -errno;
                run_recording_failed(r, "writing samples.csv", -ret);
                return;
        }
        r->n_samples++;
}

static void run_record(struct run *r, struct run_now now) {
        const struct sensors *s = r->host->sensors;
        const struct cpufreq_policy *p = run_policy(s);
        const struct temp_sensor *hot = sensors_hottest(s);
        double t = (double) (now.mono_ms - r->created_mono_ms) / 1000.0;
        int halved;

        r->work_rate = run_work_rate(r, now.mono_ms);
        if (r->sampled && t <= r->last.t_s)
                return;         /* two ticks within a millisecond */
        struct run_sample x = {
                t, temp_by_id(s, r->sensor), p ? p->cur_khz * 1000.0 : NAN, r->max_allowed_hz, r->work_rate,
                s->load.ok && s->load.have_prev ? s->load.total : NAN,
                r->ambient_sensor[0] ? temp_by_id(s, r->ambient_sensor) : NAN,
                run_cooling_active(s) || r->host->fans_on > 0,
                sensors_firmware_throttled(s),
                r->phases[r->phase_index].kind,
                r->power_id[0] != '\0', r->power_id[0] ? run_csv_value(s, &r->power_ch) : NAN,
        };
        halved = run_series_append(&r->series, &x);
        if (halved < 0) {
                run_recording_failed(r, "keeping samples in memory", ENOMEM);
                return;
        }
        if (halved) {
                /* a long run: the indices into the series follow what it kept */
                for (size_t k = 0; k <= r->phase_index; k++)
                        r->phase_start[k] = (r->phase_start[k] + 1) / 2;
        }
        /* the other metrics wait for the phase's end; the peak is known at once */
        if (r->series.peak_known)
                r->metrics.peak_c = r->series.peak_c;
        r->last = x;
        r->sampled = true;
        run_csv_row(r, now.wall_ms, &x, hot ? hot->temp_mc / 1000.0 : NAN);
}

/* Returns true when the run was aborted. */
static bool run_check_safety(struct run *r, struct run_now now) {
        const struct sensors *s = r->host->sensors;
        const struct run_phase *p = &r->phases[r->phase_index];
        char reason[256], why[48];

        for (size_t i = 0; i < s->n_temps; i++) {
                const struct temp_sensor *t = &s->temps[i];
                if (!t->ok || t->temp_mc / 1000.0 < r->safety_limit_c)
                        continue;
                snprintf(reason, sizeof reason, "%s reached %.1f C, the safety limit is %.1f C",
                         t->id, t->temp_mc / 1000.0, r->safety_limit_c);
                run_end_early(r, now, RUN_ABORTED, "aborted", reason);
                return true;
        }
        r->sensor_failures = isnan(r->last.temp_c) ? r->sensor_failures + 1 : 0;
        if (p->has_stress && r->sensor_failures >= RUN_SENSOR_LOSS_TICKS) {
                snprintf(reason, sizeof reason, "temperature sensor %s stopped answering during the load", r->sensor);
                run_end_early(r, now, RUN_ABORTED, "aborted", reason);
                return true;
        }
        if (r->load && run_load_failed(r->load, why, sizeof why)) {
                snprintf(reason, sizeof reason, "the %s load ended by itself (%s)",
                         stress_type_to_string(p->stress.type), why);
                run_end_early(r, now, RUN_ABORTED, "aborted", reason);
                return true;
        }
        return false;
}

/* The phase's tolerance for its plateau: its own, or the default. */
double run_phase_tolerance_c(const struct run_phase *p) {
        return p->tolerance_c > 0 ? p->tolerance_c : ANALYSIS_PLATEAU_TOLERANCE_C;
}

/* Under a stress phase's load: where the temperature settles and when that
 * is known within the phase's tolerance, from the phase's samples.
 * A fit per second at most, on a bounded number of points. */
static void run_update_forecast(struct run *r, struct run_now now) {
        const struct run_series *s = &r->series;
        size_t first = r->phase_start[r->phase_index];
        struct analysis_forecast f;

        if (r->phases[r->phase_index].kind != ANALYSIS_PHASE_STRESS || now.mono_ms - r->last_forecast_ms < 1000)
                return;
        r->last_forecast_ms = now.mono_ms;
        if (first >= s->n || analysis_forecast(s->t_s + first, s->temp_c + first, s->n - first,
                                               run_phase_tolerance_c(&r->phases[r->phase_index]), &f) < 0) {
                r->forecast_plateau_c = r->forecast_eta_s = NAN;
                return;
        }
        r->forecast_plateau_c = f.plateau_c;
        r->forecast_eta_s = f.eta_s;
}

/* What the prior did to the last plateau check, in the metrics; the
 * journal is told once when the data contradict it. */
static void run_prior_note(struct run *r, enum analysis_prior_use use) {
        r->metrics.prior_use = use;
        if (use != ANALYSIS_PRIOR_CONTRADICTED || r->prior_contradiction_said)
                return;
        r->prior_contradiction_said = true;
        run_log(r, LOG_NOTICE, "the samples contradict the time constant of the earlier runs (%.1f s, %.1f-%.1f s): "
                "the plateau is fitted without it", r->prior.tau_s, r->prior.low_s, r->prior.high_s);
}

/* The reason the current phase is over, or NULL. */
static const char *run_phase_done(struct run *r, struct run_now now) {
        struct run_phase *p = &r->phases[r->phase_index];
        const struct run_series *s = &r->series;
        uint64_t elapsed = (uint64_t) (now.mono_ms - p->started_mono_ms);
        size_t first = r->phase_start[r->phase_index];
        const double *t = s->t_s + first, *y = s->temp_c + first;
        size_t n = s->n - first;
        double window = (double) p->window_ms / 1000.0;
        struct analysis_plateau pl;

        if (p->until == UNTIL_DURATION)
                return elapsed >= p->duration_ms ? "duration" : NULL;
        if (elapsed >= p->max_ms)
                return "max";
        if (p->until == UNTIL_PLATEAU && now.mono_ms - r->last_plateau_check_ms >= 1000 &&
            analysis_check_plateau_prior(t, y, n, window, (double) p->max_ms / 1000.0, p->tolerance_c, run_prior(r),
                                         &pl) >= 0) {
                /* a fit per second at most: it costs milliseconds on long phases */
                r->last_plateau_check_ms = now.mono_ms;
                run_prior_note(r, pl.fit.prior_use);
                r->predicted_plateau_c = pl.plateau_c;
                r->plateau_ci95_c = pl.ci95_c;
                r->plateau_low_c = pl.low_c;
                r->plateau_high_c = pl.high_c;
                if (pl.reached && elapsed >= p->min_ms) {
                        r->prior_stopped = pl.fit.prior_use == ANALYSIS_PRIOR_USED;
                        return "plateau";
                }
        }
        if (elapsed < p->min_ms)
                return NULL;
        /* stable on a quiet board: other programs' load (a cron job, apt) would fake a baseline */
        if (p->until == UNTIL_STABLE && analysis_is_stable(t, y, n, window, ANALYSIS_STABLE_SLOPE_C_PER_S) &&
            (p->has_stress || !(run_series_mean_load(s, first, window) > RUN_QUIET_LOAD)))
                return "stable";
        if (p->until == UNTIL_BASELINE && isfinite(r->baseline_c) &&
            analysis_is_at_baseline(t, y, n, r->baseline_c, ANALYSIS_BASELINE_TOLERANCE_C))
                return "baseline";
        return NULL;
}

static void run_next_phase(struct run *r, struct run_now now, const char *reason) {
        char msg[1100];
        int ret;

        run_phase_end(r, now, reason);
        if (r->phase_index + 1 == r->n_phases) {
                run_finish(r, now, RUN_FINISHED);
                return;
        }
        r->phase_index++;
        r->predicted_plateau_c = r->plateau_ci95_c = r->plateau_low_c = r->plateau_high_c = NAN;
        r->forecast_plateau_c = r->forecast_eta_s = NAN;
        ret = run_phase_begin(r, now);
        if (ret < 0) {
                snprintf(msg, sizeof msg, "cannot start the load of phase %zu: %s", r->phase_index, strerror(-ret));
                run_end_early(r, now, RUN_ABORTED, "aborted", msg);
        }
}

/* Boards without an RTC step their wall clock (NTP after boot): the run is
 * timed on the monotonic clock, and a step is only noted. */
static void run_note_clock_step(struct run *r, struct run_now now) {
        int64_t offset = now.wall_ms - now.mono_ms, step = offset - r->clock_offset_ms;

        if (step > -RUN_CLOCK_STEP_MS && step < RUN_CLOCK_STEP_MS)
                return;
        r->clock_offset_ms = offset;
        r->clock_steps++;
        run_log(r, LOG_NOTICE, "the wall clock stepped by %+.1f s; phases and fits go on the monotonic clock",
                (double) step / 1000.0);
}

void run_tick(struct run *r, int64_t wall_ms, int64_t mono_ms) {
        struct run_now now = { wall_ms, mono_ms };
        const char *reason;

        run_stress_release(r);
        if (r->state != RUN_RUNNING || r->waiting)
                return;
        run_note_clock_step(r, now);
        run_record(r, now);
        if (!r->sampled || run_check_safety(r, now))
                return;
        if (!r->recording_ok) {
                char msg[1100];
                snprintf(msg, sizeof msg, "recording failed: %s", r->recording_error);
                run_end_early(r, now, RUN_ABORTED, "aborted", msg);
                return;
        }
        run_update_forecast(r, now);
        reason = run_phase_done(r, now);
        if (reason)
                run_next_phase(r, now, reason);
}

static int run_resolve_defaults(struct run *r, const struct run_settings *set, char *err, size_t errlen) {
        const struct sensors *s = r->host->sensors;
        const struct temp_sensor *hot = sensors_hottest(s);
        const struct cpufreq_policy *p = run_policy(s);
        int32_t trip_mc;

        if (!r->sensor[0]) {
                if (!hot) {
                        snprintf(err, errlen, "sensor: no temperature sensor answers, nothing to follow");
                        return -EINVAL;
                }
                snprintf(r->sensor, sizeof r->sensor, "%s", hot->id);
        }
        if (isnan(r->safety_limit_c))
                r->safety_limit_c = set->safety_limit_c > 0 ? set->safety_limit_c :
                        sensors_lowest_hot_trip(s, &trip_mc) ? trip_mc / 1000.0 - RUN_SAFETY_MARGIN_C :
                        RUN_SAFETY_DEFAULT_C;
        if (hot && hot->temp_mc / 1000.0 >= r->safety_limit_c) {
                snprintf(err, errlen, "safety_limit_c: %s is already at %.1f C, at or above the limit %.1f C",
                         hot->id, hot->temp_mc / 1000.0, r->safety_limit_c);
                return -EINVAL;
        }
        r->max_allowed_hz = p && p->scaling_max_khz ? p->scaling_max_khz * 1000.0 : NAN;
        r->board = s->board;
        if (set->ambient_sensor && set->ambient_sensor[0]) {
                if (isnan(temp_by_id(s, set->ambient_sensor))) {
                        snprintf(err, errlen, "ambient_sensor: \"%s\" (from the configuration) is not a temperature "
                                 "sensor that answers", set->ambient_sensor);
                        return -EINVAL;
                }
                snprintf(r->ambient_sensor, sizeof r->ambient_sensor, "%s", set->ambient_sensor);
        }
        return 0;
}

static int run_resolve_io(struct run *r, const struct run_settings *set, char *err, size_t errlen) {
        const char *dir = set->stress_dir && set->stress_dir[0] ? set->stress_dir : set->state_dir;
        char msg[256];

        for (size_t i = 0; i < r->n_phases; i++) {
                struct run_phase *p = &r->phases[i];
                if (!p->has_stress || !stress_type_needs_dir(p->stress.type))
                        continue;
                free(p->stress_dir);
                p->stress_dir = strdup(dir);
                if (!p->stress_dir)
                        return -ENOMEM;
                p->stress.io_dir = p->stress_dir;
                if (stress_spec_validate(&p->stress, msg, sizeof msg) < 0) {
                        snprintf(err, errlen, "phases[%zu].%s", i, msg);
                        return -EINVAL;
                }
        }
        return 0;
}

static int run_open_files(struct run *r, const struct run_settings *set, char *err, size_t errlen) {
        char path[700];
        int ret;

        ret = run_store_dir(set->state_dir, r->id, r->dir, sizeof r->dir);
        if (ret >= 0) {
                /* runs/ may be made; the run's own directory must be new: an
                 * entry already there (a planted symlink) is nobody's run */
                char *slash = strrchr(r->dir, '/');
                *slash = '\0';
                ret = util_mkdir_p(r->dir, 0755);
                *slash = '/';
                if (ret >= 0 && mkdir(r->dir, 0755) < 0)
                        ret = -errno;
        }
        if (ret == -EEXIST) {
                snprintf(err, errlen, "cannot create %s: something of that name is already there, "
                         "which heatcurved did not make; move it away", r->dir);
                return ret;
        }
        if (ret < 0) {
                snprintf(err, errlen, "cannot create %s: %s", r->dir, strerror(-ret));
                return ret;
        }
        snprintf(path, sizeof path, "%s/samples.csv", r->dir);
        r->csv_fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (r->csv_fd < 0) {
                ret = -errno;
                snprintf(err, errlen, "cannot create %s: %s", path, strerror(-ret));
                rmdir(r->dir);          /* made just now, empty */
                return ret == -EEXIST ? -EIO : ret;
        }
        r->recording_ok = true;
        ret = run_csv_header(r);
        if (ret < 0) {
                snprintf(err, errlen, "cannot write %s: %s", path, strerror(-ret));
                close(r->csv_fd);
                r->csv_fd = -1;
                unlink(path);
                rmdir(r->dir);
                return ret;
        }
        ret = run_store_reserve(r->dir);
        if (ret == -ENOSPC || ret == -EDQUOT) {
                /* without its spare, a run that fills the disk would read as a
                 * crash after a restart: better not to start it */
                snprintf(err, errlen, "not enough free space in %s: a run sets %d KiB aside so that the reason "
                         "it ends is kept when the disk fills (%s); free some space and start it again",
                         r->dir, RUN_JSON_SPARE_BYTES / 1024, strerror(-ret));
                close(r->csv_fd);
                r->csv_fd = -1;
                unlink(path);
                rmdir(r->dir);
                return ret;
        }
        if (ret < 0)
                run_log(r, LOG_WARNING, "cannot set room aside for run.json in %s: %s; if the disk fills, "
                        "the reason the run ended is written only once there is room", r->dir, strerror(-ret));
        return 0;
}

/* Phase 0 begins; a load that cannot start ends the run, which exists on
 * disk by now, aborted with the reason. */
static void run_begin(struct run *r, struct run_now now) {
        int ret = run_phase_begin(r, now);

        if (ret < 0) {
                char msg[1100];
                snprintf(msg, sizeof msg, "cannot start the load of phase 0: %s", strerror(-ret));
                run_end_early(r, now, RUN_ABORTED, "aborted", msg);
        }
}

/* start_at, on the wall clock: the run's time starts now. */
static int run_wait_over(sd_event_source *src, uint64_t usec, void *userdata) {
        struct run *r = userdata;
        struct run_now now = run_now();

        r->start_timer = sd_event_source_unref(r->start_timer);
        r->waiting = false;
        r->created_mono_ms = now.mono_ms;
        r->clock_offset_ms = now.wall_ms - now.mono_ms;
        run_begin(r, now);
        return 0;
}

/* "start_at" within RUN_START_AT_LATE_MS before now and
 * RUN_START_AT_AHEAD_MS after; a series' later runs start when it says. */
static int run_check_start_at(struct run *r, struct run_now now, char *err, size_t errlen) {
        if (r->repeat_index > 1)
                r->start_at_ms = 0;
        if (!r->start_at_ms)
                return 0;
        if (r->start_at_ms < now.wall_ms - RUN_START_AT_LATE_MS)
                return util_errorf(err, errlen, -EINVAL, "start_at: %.3f s in the past",
                                   (double) (now.wall_ms - r->start_at_ms) / 1000.0);
        if (r->start_at_ms > now.wall_ms + RUN_START_AT_AHEAD_MS)
                return util_errorf(err, errlen, -EINVAL, "start_at: %.3f s ahead, more than %d s",
                                   (double) (r->start_at_ms - now.wall_ms) / 1000.0, RUN_START_AT_AHEAD_MS / 1000);
        if (r->start_at_ms <= now.wall_ms)
                return 0;
        if (!r->host->event)
                return util_errorf(err, errlen, -EINVAL, "start_at: no event loop to wait on");
        r->waiting = true;
        return 0;
}

int run_start(struct run *r, struct run_host *host, const struct run_settings *set, unsigned id,
              char *err, size_t errlen) {
        struct run_now now = run_now();
        int ret;

        r->host = host;
        r->id = id;
        r->created_ms = now.wall_ms;
        r->created_mono_ms = now.mono_ms;
        r->clock_offset_ms = now.wall_ms - now.mono_ms;
        r->state = RUN_RUNNING;
        if (!r->label[0])
                snprintf(r->label, sizeof r->label, "run %u", r->id);
        run_series_limit(&r->series, RUN_SERIES_MAX);
        if ((ret = run_check_start_at(r, now, err, errlen)) < 0 ||
            (ret = run_resolve_defaults(r, set, err, errlen)) < 0 ||
            (ret = run_resolve_io(r, set, err, errlen)) < 0 ||
            (ret = run_open_files(r, set, err, errlen)) < 0)
                return ret;
        run_log(r, LOG_NOTICE, "started \"%s\": %zu phases, following %s, safety limit %.1f C",
                r->label, r->n_phases, r->sensor, r->safety_limit_c);
        if (r->waiting) {
                /* on the event loop: the wall clock's second, whatever the ticks */
                ret = sd_event_add_time(host->event, &r->start_timer, CLOCK_REALTIME,
                                        (uint64_t) r->start_at_ms * 1000u, 1000, run_wait_over, r);
                if (ret >= 0) {
                        run_log(r, LOG_INFO, "waits %.3f s for start_at",
                                (double) (r->start_at_ms - now.wall_ms) / 1000.0);
                        return 0;
                }
                r->waiting = false;
                run_end_early(r, now, RUN_ABORTED, "aborted", "cannot wait for start_at: no timer");
                return 0;
        }
        run_begin(r, now);
        return 0;
}
