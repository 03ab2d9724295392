/* prometheus.h — GET /metrics: a sensors snapshot in the Prometheus text exposition format 0.0.4. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "sensors.h"

#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* The run in progress, as /metrics shows it. Strings are borrowed. */
struct prom_run {
        unsigned id;
        const char *label;
        const char *phase;              /* "idle", "stress", "cooldown" */
        int64_t started_ms;             /* Unix ms */
        double work_rate;               /* work units per second at the last tick; NaN without a load */
        const char *work_unit;          /* "ops", "bytes", "ios", "none"; NULL without a load */
        double baseline_c;              /* C, NaN until the idle phase has ended */
        double predicted_plateau_c;     /* C, NaN until the fit knows it */
        double forecast_plateau_c;      /* C, where the stress phase settles; NaN when not known */
        double forecast_eta_s;          /* s until that is known within 0.5 C; NaN when not known */
};

enum prom_alert_state {
        PROM_ALERT_OK,
        PROM_ALERT_FORECAST,
        PROM_ALERT_WARN,
        PROM_ALERT_CRIT,
        PROM_ALERT_LOST,
        _PROM_ALERT_STATE_MAX,
};

/* One alert rule and its state now. Strings are borrowed. */
struct prom_alert {
        const char *name;               /* the rule's name ([alert NAME]) */
        const char *sensor;             /* id of the sensor it watches now, "" for none */
        enum prom_alert_state state;
        double eta_s;                   /* s until the forecast reaches its level, in the forecast state; else NaN */
};

/* What /metrics shows besides the snapshot. Strings are borrowed. */
struct prom_info {
        const char *version;
        int64_t started_ms;             /* Unix ms the daemon started */
        uint64_t interval_ms;           /* sampling interval; 0: not shown */
        uint64_t ticks;                 /* sampling ticks since the start */
        int64_t tick_ns;                /* ns the last whole tick took; < 0: not measured, not shown */
        const struct prom_run *run;     /* NULL when no run is in progress */
        const struct prom_alert *alerts;        /* n_alerts rules; none: the family is left out */
        size_t n_alerts;
        size_t size_hint;               /* bytes the last answer took, 0 for none: the text is
                                         * built in one buffer of about that size, not grown */
};

/*
 * Render the snapshot and info as exposition text. Formats only: reads no
 * file and keeps no state, so it is safe to call per request. Every family
 * has HELP and TYPE; a family without samples is left out. *ret is
 * malloc()ed, NUL-terminated, *ret_len bytes without the NUL. Returns 0 or
 * -ENOMEM.
 */
int prom_render(const struct sensors *s, const struct prom_info *info, char **ret, size_t *ret_len);

/* The alert state as its label value ("ok", "warn", "crit", "lost"). */
const char *prom_alert_state_to_string(enum prom_alert_state st);
