/* run-quality.c — how far to trust a run's numbers: phases disturbed by other load on the board, uncertain fits. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json-util.h"
#include "run.h"
#include "util.h"

static const char *const quality_names[] = { "ok", "disturbed", "uncertain", "unknown" };

const char *run_quality_to_string(enum run_quality q) {
        return quality_names[q];
}

double run_phase_own_load(const struct run *r, const struct run_phase *p) {
        const struct stress_spec *st = &p->stress;
        double cpus = r->board.cpus > 0 ? r->board.cpus : 1, workers;

        if (!p->has_stress)
                return 0.0;
        if (!stress_type_cpu_bound(st->type))
                return NAN;
        workers = st->workers ? fmin(st->workers, cpus) : cpus;
        return workers / cpus * st->duty_pct / 100.0;
}

/* The phase of series entry i: where each phase began when the engine
 * noted it, else by the changes of the phase column over every row, kept
 * or not (a run read back). Entries come in order; *by_change follows. */
static size_t phase_of(const struct run *r, const struct run_series *s, size_t i, size_t *by_change) {
        size_t k = 0;

        if (r->host) {
                while (k + 1 <= r->phase_index && i >= r->phase_start[k + 1])
                        k++;
                return k;
        }
        while (*by_change + 1 < s->n_changes && s->t_s[i] >= s->changes[*by_change + 1].t_s)
                (*by_change)++;
        return *by_change;
}

void run_quality_phases(struct run *r, const struct run_series *s) {
        double sum[RUN_PHASES_MAX] = { 0 };
        size_t n[RUN_PHASES_MAX] = { 0 }, by_change = 0;

        for (size_t i = 0; i < s->n; i++) {
                size_t k = phase_of(r, s, i, &by_change);
                if (k < r->n_phases && isfinite(s->load[i])) {
                        sum[k] += s->load[i];
                        n[k]++;
                }
        }
        for (size_t k = 0; k < r->n_phases; k++) {
                double own = run_phase_own_load(r, &r->phases[k]);
                r->phase_load[k] = n[k] && isfinite(own) ? fmax(0.0, sum[k] / (double) n[k] - own) : NAN;
        }
}

bool run_phase_disturbed(const struct run *r, size_t phase) {
        return phase < r->n_phases && isfinite(r->phase_load[phase]) && r->phase_load[phase] > RUN_QUIET_LOAD;
}

/* The phases a metric comes from: the idle before the first load, the load
 * phases, or the cool-down after them. */
static bool run_phases_disturbed(const struct run *r, enum analysis_phase kind) {
        bool seen_stress = false;

        for (size_t k = 0; k < r->n_phases; k++) {
                enum analysis_phase pk = r->phases[k].kind;
                seen_stress |= pk == ANALYSIS_PHASE_STRESS;
                if (pk != kind || (kind == ANALYSIS_PHASE_IDLE && seen_stress) ||
                    (kind == ANALYSIS_PHASE_COOLDOWN && !seen_stress))
                        continue;
                if (run_phase_disturbed(r, k))
                        return true;
        }
        return false;
}

static const char *const idle_metrics[] = { "baseline_c", NULL };
static const char *const cool_metrics[] = { "tau_cool_s", "tau_cool_fast_s", "t_back_to_baseline_s", NULL };

static bool listed(const char *const *names, const char *name) {
        for (size_t i = 0; names[i]; i++)
                if (strcmp(names[i], name) == 0)
                        return true;
        return false;
}

enum run_quality run_metric_quality(const struct run *r, const char *metric) {
        const struct run_metrics *m = &r->metrics;

        if (listed(idle_metrics, metric))
                return run_phases_disturbed(r, ANALYSIS_PHASE_IDLE) ? RUN_QUALITY_DISTURBED : RUN_QUALITY_OK;
        if (listed(cool_metrics, metric)) {
                if (run_phases_disturbed(r, ANALYSIS_PHASE_COOLDOWN))
                        return RUN_QUALITY_DISTURBED;
                return m->cool_fit_residual_c > RUN_FIT_RESIDUAL_POOR_C ? RUN_QUALITY_UNCERTAIN : RUN_QUALITY_OK;
        }
        /* the rest comes from the load phases and the heating fit */
        if (run_phases_disturbed(r, ANALYSIS_PHASE_STRESS))
                return RUN_QUALITY_DISTURBED;
        if (m->fit_residual_c > RUN_FIT_RESIDUAL_POOR_C || m->plateau_ci95_c > RUN_PLATEAU_CI_WIDE_C)
                return RUN_QUALITY_UNCERTAIN;
        return RUN_QUALITY_OK;
}

double run_series_mean_load(const struct run_series *s, size_t first, double window_s) {
        double sum = 0;
        size_t n = 0;

        for (size_t i = s->n; i-- > first && s->t_s[i] >= s->t_s[s->n - 1] - window_s; )
                if (isfinite(s->load[i])) {
                        sum += s->load[i];
                        n++;
                }
        return n ? sum / (double) n : NAN;
}

/* The metrics a quality is given for: those that say something about the board. */
static const char *const rated_metrics[] = {
        "baseline_c", "plateau_c", "rise_c", "rise_over_ambient_c", "tau_heat_s", "t90_heat_s",
        "tau_cool_s", "t_back_to_baseline_s", "throttled_fraction", "work_rate_drop_pct", NULL,
};

json_object *run_quality_to_json(const struct run *r) {
        json_object *o = json_object_new_object(), *phases = json_object_new_array(), *metrics = json_object_new_object();
        bool ok = true;

        for (size_t k = 0; k < r->n_phases; k++) {
                json_object *p = json_object_new_object();
                json_object_object_add(p, "external_load", json_new_number(r->phase_load[k], 3));
                json_object_object_add(p, "disturbed", json_object_new_boolean(run_phase_disturbed(r, k)));
                json_object_array_add(phases, p);
        }
        for (size_t i = 0; rated_metrics[i]; i++) {
                enum run_quality q = run_metric_quality(r, rated_metrics[i]);
                ok &= q == RUN_QUALITY_OK;
                json_object_object_add(metrics, rated_metrics[i], json_object_new_string(quality_names[q]));
        }
        json_object_object_add(o, "ok", json_object_new_boolean(ok));
        json_object_object_add(o, "phases", phases);
        json_object_object_add(o, "metrics", metrics);
        return o;
}

void run_quality_from_json(json_object *o, struct run *r) {
        json_object *phases, *p, *v;

        for (size_t k = 0; k < RUN_PHASES_MAX; k++)
                r->phase_load[k] = NAN;
        if (!json_object_object_get_ex(o, "phases", &phases) || !json_object_is_type(phases, json_type_array))
                return;
        for (size_t k = 0; k < r->n_phases && k < json_object_array_length(phases); k++) {
                p = json_object_array_get_idx(phases, k);
                if (json_object_object_get_ex(p, "external_load", &v) &&
                    (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
                        r->phase_load[k] = json_object_get_double(v);
        }
}
