/* api-events.c — GET /api/v1/events: what the tick and the runs publish as server-sent events.
 *
 * The sample event carries the /api/v1/sensors document of the tick; run,
 * phase, forecast and alert events say what changed since the last look,
 * which is each tick and after each request that may start or stop a run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alerts.h"
#include "api-internal.h"
#include "config.h"
#include "events.h"
#include "runs.h"

static void api_events_publish_json(struct api *a, const char *type, json_object *o) {
        size_t len;
        const char *text = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);

        if (events_publish(a->events, type, text, len) < 0)
                a->events_failed++;
        json_object_put(o);
}

static void api_events_run(struct api *a, const struct run *run) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "id", json_object_new_int64(run->id));
        json_object_object_add(o, "label", json_object_new_string(run->label));
        json_object_object_add(o, "state", json_object_new_string(run_state_name(run)));
        api_events_publish_json(a, "run", o);
}

static void api_events_phase(struct api *a, const struct run *run) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "run", json_object_new_int64(run->id));
        json_object_object_add(o, "phase",
                               json_object_new_string(run_phase_kind_to_string(run->phases[run->phase_index].kind)));
        json_object_object_add(o, "phase_index", json_object_new_int64((int64_t) run->phase_index));
        api_events_publish_json(a, "phase", o);
}

void api_events_check_runs(struct api *a) {
        const struct run *live = runs_live(a->ctx.runs), *ended;

        if (a->events_run_id && (!live || live->id != a->events_run_id)) {
                ended = runs_find(a->ctx.runs, a->events_run_id);
                if (ended)
                        api_events_run(a, ended);
                a->events_run_id = 0;
        }
        if (!live)
                return;
        if (live->id != a->events_run_id) {
                a->events_run_id = live->id;
                a->events_phase_index = live->phase_index;
                api_events_run(a, live);
                api_events_phase(a, live);
        } else if (live->phase_index != a->events_phase_index) {
                a->events_phase_index = live->phase_index;
                api_events_phase(a, live);
        }
}

/* The set of active alerts changes seldom; it is compared as text. */
static void api_events_check_alerts(struct api *a) {
        json_object *o = json_object_new_object();
        size_t len;
        const char *text;

        json_object_object_add(o, "active", alerts_active_to_json(a->ctx.alerts));
        text = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);
        if (a->events_alerts && strcmp(a->events_alerts, text) == 0) {
                json_object_put(o);
                return;
        }
        free(a->events_alerts);
        a->events_alerts = strdup(text);
        api_events_publish_json(a, "alert", o);
}

/* The forecast of a run under load, when it changes: where the phase
 * settles and in how long that is known. */
static void api_events_check_forecast(struct api *a) {
        const struct run *live = runs_live(a->ctx.runs);
        json_object *o = live ? run_forecast_to_json(live) : NULL;
        size_t len;
        const char *text;

        if (!o) {
                free(a->events_forecast);
                a->events_forecast = NULL;
                return;
        }
        json_object_object_add(o, "run", json_object_new_int64(live->id));
        text = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);
        if (a->events_forecast && strcmp(a->events_forecast, text) == 0) {
                json_object_put(o);
                return;
        }
        free(a->events_forecast);
        a->events_forecast = strdup(text);
        api_events_publish_json(a, "forecast", o);
}

void api_events_tick(struct api *a) {
        api_events_check_runs(a);
        if (!events_want_samples(a->events)) {
                /* Said again to the next client, whatever it was. */
                free(a->events_alerts);
                a->events_alerts = NULL;
                free(a->events_forecast);
                a->events_forecast = NULL;
                return;
        }
        api_events_check_alerts(a);
        api_events_check_forecast(a);

        size_t len;
        const char *json = api_sensors_json(a, &len);
        if (!json || events_publish(a->events, "sample", json, len) < 0)
                a->events_failed++;
}

void api_events_get(struct api *a, struct http_request *r, unsigned id) {
        static const char *const known[] = { NULL };
        const char *bad;

        if (strcmp(r->method, "HEAD") == 0)
                http_reply(r, 200, "text/event-stream; charset=utf-8", "", 0);
        else if ((bad = http_unknown_arg(r, known)))
                http_reply_error(r, 400, "bad_request", "unknown parameter \"%s\" (this stream takes none; "
                                 "resume with the Last-Event-ID header)", bad);
        else
                events_serve(a->events, r, http_header(r, "Last-Event-ID"), a->ctx.cfg->event_clients);
}
