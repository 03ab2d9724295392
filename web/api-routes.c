/* api-routes.c — the API's one table of routes: which handler answers a method and path, and who may change state. */
#include "api-routes.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "api-internal.h"
#include "token.h"
#include "util.h"

/* bytes: more than any pattern, so a longer path is no route's */
#define API_ROUTE_PATH_MAX 64

/* Every method and path the daemon answers. A row that answers anything but
 * GET and HEAD changes state, and says so: the dispatch checks the client
 * before its handler runs, as chrony's cmdmon.c does for its read-write
 * commands. */
static const struct api_route api_routes[] = {
        { API_GET, "/api/v1/status", api_get_status, 0 },
        { API_GET, "/api/v1/sensors", api_get_sensors, 0 },
        { API_GET, "/api/v1/history", api_get_history, 0 },
        { API_GET, "/api/v1/history.svg", api_plot_history, 0 },
        { API_GET, "/api/v1/alerts", api_get_alerts, 0 },
        { API_GET, "/metrics", api_get_metrics, 0 },
        { API_GET, "/api/v1/events", api_events_get, 0 },
        { API_GET, "/api/v1/runs", api_runs_list, 0 },
        { API_POST, "/api/v1/runs", api_runs_start, API_ROUTE_CHANGES_STATE },
        { API_POST, "/api/v1/runs/import", api_runs_import, API_ROUTE_CHANGES_STATE | API_ROUTE_TAKES_FILE },
        { API_GET, "/api/v1/runs/{id}", api_run_get, 0 },
        { API_DELETE, "/api/v1/runs/{id}", api_run_delete, API_ROUTE_CHANGES_STATE },
        { API_GET, "/api/v1/runs/{id}/samples", api_run_samples, 0 },
        { API_GET, "/api/v1/runs/{id}/export", api_run_export, 0 },
        { API_GET, "/api/v1/runs/{id}/plot.svg", api_plot_run, 0 },
        { API_POST, "/api/v1/runs/{id}/stop", api_run_stop, API_ROUTE_CHANGES_STATE },
        { API_POST, "/api/v1/runs/{id}/continue", api_run_continue, API_ROUTE_CHANGES_STATE },
        { API_GET, "/api/v1/compare", api_compare, 0 },
        { API_GET, "/api/v1/compare.svg", api_plot_compare, 0 },
        /* the dashboard's files (dashboard/, compiled in): index.html at "/" */
        { API_GET | API_HEAD, "/", api_dashboard_get, 0 },
        { API_GET | API_HEAD, "/dashboard.css", api_dashboard_get, 0 },
        { API_GET | API_HEAD, "/dashboard.js", api_dashboard_get, 0 },
};

static const struct {
        unsigned method;
        const char *name;
} api_method_names[] = {
        { API_GET, "GET" }, { API_HEAD, "HEAD" }, { API_POST, "POST" }, { API_DELETE, "DELETE" },
};

const struct api_route *api_routes_get(size_t *ret_n) {
        *ret_n = ELEMENTSOF(api_routes);
        return api_routes;
}

bool api_trusted(const struct api *a, struct http_request *r) {
        const char *auth = http_header(r, "Authorization"), *token = a->ctx.token;

        if (!token[0])
                return r->from_loopback;
        return token_check_authorization(auth, token);
}

/* Requests that change state: the bearer token when one is configured, else
 * loopback only. Answers the others and returns false. */
static bool api_route_authorized(const struct api *a, struct http_request *r) {
        if (api_trusted(a, r))
                return true;
        if (!a->ctx.token[0])
                http_reply_error(r, 403, "forbidden",
                                 "without a token_file, requests that change state are accepted from loopback only");
        else
                http_reply_error(r, 401, "unauthorized", http_header(r, "Authorization") ? "wrong bearer token" :
                                 "this request needs an Authorization: Bearer <token> header");
        return false;
}

/* The rows a request's method may take, 0 for none. */
static unsigned api_route_wanted(const char *method) {
        if (strcmp(method, "HEAD") == 0)
                return API_GET | API_HEAD;
        for (size_t i = 0; i < ELEMENTSOF(api_method_names); i++)
                if (strcmp(method, api_method_names[i].name) == 0)
                        return api_method_names[i].method;
        return 0;
}

/* A run id of len bytes: decimal without a sign, space or leading zero, 1..UINT_MAX. */
static bool api_route_id(const char *s, size_t len, unsigned *ret) {
        unsigned long long v = 0;

        if (len == 0 || len > 10 || s[0] < '1' || s[0] > '9')
                return false;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return false;
                v = v * 10 + (unsigned) (s[i] - '0');
        }
        if (v > UINT_MAX)
                return false;
        *ret = (unsigned) v;
        return true;
}

/* The path as the patterns spell it, its run id parsed: "/api/v1/runs/12/stop"
 * is "/api/v1/runs/{id}/stop" with id 12. False for a path that is no
 * route's: one with two ids, or longer than any pattern. */
static bool api_route_shape(const char *url, char *shape, unsigned *id) {
        size_t out = 0, ids = 0;

        *id = 0;
        for (const char *p = url; *p; ) {
                size_t len = *p == '/' ? 1 : strcspn(p, "/"), text_len = len;
                const char *text = p;

                if (*p != '/' && api_route_id(p, len, id)) {
                        if (ids++)
                                return false;
                        text = "{id}";
                        text_len = strlen(text);
                }
                if (out + text_len >= API_ROUTE_PATH_MAX)
                        return false;
                memcpy(shape + out, text, text_len);
                out += text_len;
                p += len;
        }
        shape[out] = '\0';
        return true;
}

/* The row of routes[0..n) for the method and path, or NULL; *allowed gets
 * the methods of every row with that path, 0 when none has it. */
static const struct api_route *api_route_find(const struct api_route *routes, size_t n, const char *method,
                                              const char *url, unsigned *id, unsigned *allowed) {
        unsigned wanted = api_route_wanted(method);
        const struct api_route *found = NULL;
        char shape[API_ROUTE_PATH_MAX];

        *allowed = 0;
        if (!api_route_shape(url, shape, id))
                return NULL;
        for (size_t i = 0; i < n; i++) {
                if (strcmp(routes[i].pattern, shape) != 0)
                        continue;
                *allowed |= routes[i].methods;
                if (!found && (routes[i].methods & wanted))
                        found = &routes[i];
        }
        return found;
}

static void api_route_not_allowed(struct http_request *r, unsigned allowed) {
        char names[64] = "";
        size_t len = 0;

        for (size_t i = 0; i < ELEMENTSOF(api_method_names) && len < sizeof names; i++)
                if (allowed & api_method_names[i].method)
                        len += (size_t) snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "",
                                                 api_method_names[i].name);
        http_reply_error(r, 405, "method_not_allowed", "%s does not take %s (only %s)", r->url, r->method, names);
}

void api_route_dispatch(struct api *a, struct http_request *r, const struct api_route *routes, size_t n) {
        unsigned id, allowed;
        const struct api_route *row = api_route_find(routes, n, r->method, r->url, &id, &allowed);

        if (!row && allowed)
                api_route_not_allowed(r, allowed);
        else if (!row)
                http_reply_error(r, 404, "not_found", "no such resource: %s", r->url);
        else if (!(row->flags & API_ROUTE_CHANGES_STATE) || api_route_authorized(a, r))
                row->handler(a, r, id);
}

void api_dispatch(void *userdata, struct http_request *r) {
        struct api *a = userdata;

        api_route_dispatch(a, r, api_routes, ELEMENTSOF(api_routes));
        /* a run started or stopped is told at once, not a tick later */
        api_events_check_runs(a);
}

size_t api_body_max(void *userdata, struct http_request *r) {
        const struct api_route *row;
        struct api *a = userdata;
        unsigned id, allowed;

        row = api_route_find(api_routes, ELEMENTSOF(api_routes), r->method, r->url, &id, &allowed);
        if (row && (row->flags & API_ROUTE_TAKES_FILE) && api_trusted(a, r))
                return API_IMPORT_BODY_MAX;
        return HTTP_BODY_MAX;
}
