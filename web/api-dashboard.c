/* api-dashboard.c — the dashboard at /: its files, compiled into the binary. */
#include <string.h>

#include "api-internal.h"
#include "dashboard-files.h"

/* The page loads nothing but its own files, talks to this daemon only, and
 * shows plots as blob: images of the SVG it fetched. No inline script or
 * style is allowed, so text that a run's label or a sensor brings in can
 * never run as code, whatever the page's own escaping. */
#define DASHBOARD_CSP \
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; " \
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

static const char *const dashboard_headers[] = {
        "Content-Security-Policy", DASHBOARD_CSP,
        "X-Content-Type-Options", "nosniff",
        "Referrer-Policy", "no-referrer",
        NULL,
};

static const struct dashboard_file *dashboard_find(const char *path) {
        for (size_t i = 0; i < dashboard_files_count; i++)
                if (strcmp(dashboard_files[i].path, path) == 0)
                        return &dashboard_files[i];
        return NULL;
}

bool api_dashboard_dispatch(struct api *a, struct http_request *r) {
        const struct dashboard_file *f = dashboard_find(r->url);

        (void) a;
        if (!f)
                return false;
        if (strcmp(r->method, "GET") != 0 && strcmp(r->method, "HEAD") != 0) {
                api_method_not_allowed(r, "GET, HEAD");
                return true;
        }
        /* libmicrohttpd leaves the body out of the answer to HEAD itself. */
        http_reply_static(r, 200, f->content_type, f->data, f->size, dashboard_headers);
        return true;
}
