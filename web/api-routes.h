/* api-routes.h — for the API's own files and its unit test: the one table of routes and its dispatch. */
#pragma once

#include <stddef.h>

#include "http.h"

struct api;

/* The methods a route answers. A GET route answers HEAD too, as GET
 * (libmicrohttpd leaves the body out); a route lists HEAD only to name it
 * in its 405 answers. */
enum api_method {
        API_GET = 1 << 0,
        API_HEAD = 1 << 1,
        API_POST = 1 << 2,
        API_DELETE = 1 << 3,
};

/* The route changes state: the dispatch lets through only a client that
 * may (api_trusted()) and answers any other 401 or 403 itself, so the
 * handler never sees it. Every route answering more than GET and HEAD
 * must say so (tests/unit/test-api-routes.c). */
#define API_ROUTE_CHANGES_STATE (1u << 0)
/* The route takes a file: its body may be up to API_IMPORT_BODY_MAX bytes,
 * from a client that may change state (api_body_max()). */
#define API_ROUTE_TAKES_FILE (1u << 1)

/* Answers the request with one http_reply*(), or defers it. id is the run
 * id of a pattern with "{id}", else 0. */
typedef void (*api_handler_t)(struct api *a, struct http_request *r, unsigned id);

struct api_route {
        unsigned methods;               /* enum api_method: those this row answers */
        const char *pattern;            /* the path; "{id}" is one segment holding a run id (below) */
        api_handler_t handler;
        unsigned flags;                 /* API_ROUTE_* */
};

/* The daemon's routes, read-only: *ret_n rows. */
const struct api_route *api_routes_get(size_t *ret_n);

/* Answers r from routes[0..n): the row whose pattern matches the path and
 * whose methods the request's, after the authorisation check when it
 * changes state; 405 naming the methods of the path's rows when only the
 * method is wrong; else 404. A run id is decimal without a sign, space or
 * leading zero, from 1 to UINT_MAX; a path with two is no route's. */
void api_route_dispatch(struct api *a, struct http_request *r, const struct api_route *routes, size_t n);
