/* action-journal.c — the journal action: a line per transition with ALERT=, SENSOR=, STATE=, PREVIOUS=, TEMP_C= (ETA_S= into forecast). */
#include <math.h>
#include <stdio.h>

#include "alert-action.h"
#include "log.h"

static int state_priority(enum alert_state s) {
        static const int prio[_ALERT_STATE_MAX] = { LOG_NOTICE, LOG_NOTICE, LOG_WARNING, LOG_CRIT, LOG_ERR };
        return prio[s];
}

static void journal_transition(void *self, void *rule, const struct alert_rule_config *cfg,
                               const struct alert_transition *t) {
        char f_alert[ALERT_NAME_MAX + 8], f_sensor[ALERT_SENSOR_MAX + 8], f_state[16], f_prev[20], f_temp[32];
        char f_eta[32];
        const char *fields[] = { f_alert, f_sensor, f_state, f_prev, f_temp, NULL, NULL };
        const char *state = alert_state_to_string(t->state), *previous = alert_state_to_string(t->previous);
        char at[96] = "", thr[48] = "";

        snprintf(f_alert, sizeof f_alert, "ALERT=%s", t->rule);
        snprintf(f_sensor, sizeof f_sensor, "SENSOR=%s", t->sensor);
        snprintf(f_state, sizeof f_state, "STATE=%s", state);
        snprintf(f_prev, sizeof f_prev, "PREVIOUS=%s", previous);
        snprintf(f_temp, sizeof f_temp, "TEMP_C=%.3f", t->value_c);
        snprintf(f_eta, sizeof f_eta, "ETA_S=%.0f", t->eta_s);
        if (isfinite(t->eta_s))
                fields[5] = f_eta;
        if (isnan(t->value_c)) {
                fields[4] = fields[5];
                fields[5] = NULL;
        }
        if (t->sensor[0] && isfinite(t->value_c))
                snprintf(at, sizeof at, ", %s at %.1f C", t->sensor, t->value_c);
        if (isfinite(t->threshold_c) && isfinite(t->eta_s))
                snprintf(thr, sizeof thr, " (reaches %.1f C in about %.0f s)", t->threshold_c, t->eta_s);
        else if (isfinite(t->threshold_c))
                snprintf(thr, sizeof thr, " (level %.1f C)", t->threshold_c);
        log_fields(state_priority(t->state), fields, "Alert %s: %s%s%s, was %s", t->rule,
                   t->state == ALERT_LOST ? "lost, no sensor answers" : state, at, thr, previous);
}

const struct alert_action alert_action_journal = {
        .name = "journal",
        .transition = journal_transition,
};
