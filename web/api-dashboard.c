/* api-dashboard.c — the dashboard at /: its files, compiled into the binary. */
#include <stdbool.h>
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

/* The files change only with the binary: a browser keeps them and asks
 * each time whether they are still the same (ETag), so a page load after an
 * upgrade never mixes old and new files, and otherwise costs 304s. */
#define DASHBOARD_HEADERS(etag) \
        "Content-Security-Policy", DASHBOARD_CSP, "X-Content-Type-Options", "nosniff", \
        "Referrer-Policy", "no-referrer", "Cache-Control", "no-cache", "ETag", (etag), NULL

/* Whether an If-None-Match header names this ETag (a list, weak or not, or "*"). */
static bool etag_matches(const char *header, const char *etag) {
        size_t len = strlen(etag);

        for (const char *p = header; p && *p; ) {
                p += strspn(p, " \t,");
                if (*p == '*')
                        return true;
                if (strncmp(p, "W/", 2) == 0)
                        p += 2;
                if (strncmp(p, etag, len) == 0 && (p[len] == '\0' || p[len] == ',' || p[len] == ' ' ||
                                                   p[len] == '\t'))
                        return true;
                p = strchr(p, ',');
        }
        return false;
}

static const struct dashboard_file *dashboard_find(const char *path) {
        for (size_t i = 0; i < dashboard_files_count; i++)
                if (strcmp(dashboard_files[i].path, path) == 0)
                        return &dashboard_files[i];
        return NULL;
}

void api_dashboard_get(struct api *a, struct http_request *r, unsigned id) {
        const struct dashboard_file *f = dashboard_find(r->url);

        if (!f) {               /* a row of the route table without its file */
                http_reply_error(r, 404, "not_found", "no such resource: %s", r->url);
                return;
        }
        const char *const headers[] = { DASHBOARD_HEADERS(f->etag) };
        const char *want = http_header(r, "If-None-Match");
        /* libmicrohttpd leaves the body out of the answer to HEAD itself. */
        if (want && etag_matches(want, f->etag))
                http_reply_static(r, 304, f->content_type, "", 0, headers);
        else
                http_reply_static(r, 200, f->content_type, f->data, f->size, headers);
}
