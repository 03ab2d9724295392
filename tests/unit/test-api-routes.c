/* test-api-routes.c — unit tests for the route table: a route that changes state says so, and who may not is refused. */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "api-routes.h"
#include "api.h"
#include "util.h"

#define TOKEN "s3cret"
#define ROUNDS_MAX 5000                 /* event-loop turns of 1 ms at most for one answer */
#define ANSWER_MAX 4096                 /* bytes */

/* The real dispatch over a copy of the table whose handlers are all the spy,
 * on a real server: requests are what libmicrohttpd makes of the bytes a
 * client sends, headers and all. */
static sd_event *event;
static struct http_server *server;
static struct api *api;
static int port;
static char token[32];                  /* the daemon's: "" for none, replaced in place as at a reload */
static bool remote;                     /* take the client as another host's, not loopback */
static struct api_route *spied;
static size_t n_routes;
static unsigned spy_calls;              /* handlers reached */
static unsigned spy_id;                 /* the id the last one was given */
static size_t body_max;                 /* what api_body_max() said of the last request */

static void spy(struct api *a, struct http_request *r, unsigned id) {
        spy_calls++;
        spy_id = id;
        http_reply(r, 200, "text/plain", "handler", 7);
}

static void test_dispatch(void *userdata, struct http_request *r) {
        if (remote)
                r->from_loopback = false;
        body_max = api_body_max(userdata, r);
        api_route_dispatch(userdata, r, spied, n_routes);
}

static int setup(void **state) {
        const struct api_route *routes = api_routes_get(&n_routes);
        struct api_context ctx = { .token = token };
        int fd;

        if (sd_event_new(&event) < 0)
                return -1;
        ctx.event = event;
        if (api_new(&ctx, &api) < 0 || !(spied = calloc(n_routes, sizeof *spied)))
                return -1;
        for (size_t i = 0; i < n_routes; i++) {
                spied[i] = routes[i];
                spied[i].handler = spy;
        }
        fd = http_listen("127.0.0.1", 0);
        if (fd < 0 || (port = http_local_port(fd)) <= 0)
                return -1;
        return http_new(event, fd, test_dispatch, api, &server) < 0 ? -1 : 0;
}

static int teardown(void **state) {
        http_free(server);
        api_free(api);
        sd_event_unref(event);
        free(spied);
        return 0;
}

struct answer {
        unsigned status;
        const char *body;               /* into text */
        char text[ANSWER_MAX];
};

static int client_connect(void) {
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t) port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

        assert_true(fd >= 0);
        assert_true(connect(fd, (struct sockaddr *) &a, sizeof a) == 0 || errno == EINPROGRESS);
        return fd;
}

/* One request on a connection of its own, the server turning on this thread
 * until it has answered and closed. auth: the Authorization header, NULL
 * for none. */
static void request(const char *method, const char *path, const char *auth, struct answer *ret) {
        char req[512];
        size_t sent = 0, got = 0, len;
        bool eof = false;
        int fd = client_connect();

        len = (size_t) snprintf(req, sizeof req, "%s %s HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"
                                "Connection: close\r\n%s%s%s\r\n", method, path, auth ? "Authorization: " : "",
                                auth ? auth : "", auth ? "\r\n" : "");
        assert_true(len < sizeof req);
        for (int i = 0; i < ROUNDS_MAX && !eof; i++) {
                ssize_t n;

                if (sent < len && (n = send(fd, req + sent, len - sent, MSG_NOSIGNAL)) > 0)
                        sent += (size_t) n;
                sd_event_run(event, 1000);      /* µs */
                while ((n = recv(fd, ret->text + got, sizeof ret->text - 1 - got, 0)) > 0)
                        got += (size_t) n;
                eof = n == 0 || (n < 0 && errno != EAGAIN) || got == sizeof ret->text - 1;
        }
        close(fd);
        for (int i = 0; i < 10 && sd_event_run(event, 0) > 0; i++)
                ;                               /* the server sees the close */
        assert_true(eof);
        ret->text[got] = '\0';
        assert_int_equal(sscanf(ret->text, "HTTP/1.1 %u ", &ret->status), 1);
        ret->body = strstr(ret->text, "\r\n\r\n");
        assert_non_null(ret->body);
        ret->body += 4;
}

/* The row's path with 7 for its run id. */
static void row_path(const struct api_route *row, char *buf, size_t size) {
        const char *id = strstr(row->pattern, "{id}");

        if (!id)
                snprintf(buf, size, "%s", row->pattern);
        else
                snprintf(buf, size, "%.*s7%s", (int) (id - row->pattern), row->pattern, id + strlen("{id}"));
}

static const struct {
        unsigned method;
        const char *name;
} methods[] = { { API_GET, "GET" }, { API_HEAD, "HEAD" }, { API_POST, "POST" }, { API_DELETE, "DELETE" } };

/* The table itself: what is not a read says that it changes state. */
static void test_rows_that_write_change_state(void **state) {
        size_t n;
        const struct api_route *routes = api_routes_get(&n);

        assert_true(n > 0);
        for (size_t i = 0; i < n; i++) {
                const struct api_route *row = &routes[i];

                if ((row->methods & ~(unsigned) (API_GET | API_HEAD)) && !(row->flags & API_ROUTE_CHANGES_STATE))
                        fail_msg("%s answers more than GET and HEAD, and is not marked as changing state",
                                 row->pattern);
                if ((row->flags & API_ROUTE_TAKES_FILE) && !(row->flags & API_ROUTE_CHANGES_STATE))
                        fail_msg("%s takes a file from anyone: it must change state", row->pattern);
                assert_non_null(row->handler);
                assert_true(row->methods != 0 && row->pattern[0] == '/');
                for (size_t j = 0; j < i; j++)
                        if (strcmp(routes[j].pattern, row->pattern) == 0 && (routes[j].methods & row->methods))
                                fail_msg("%s: two rows answer the same method", row->pattern);
        }
}

/* Every row is reached by its own methods and path (HEAD too for GET),
 * given the run id of its path, from a client that may change state. */
static void test_every_row_reaches_its_handler(void **state) {
        struct answer ans;
        char path[128];

        strcpy(token, TOKEN);
        remote = false;
        for (size_t i = 0; i < n_routes; i++) {
                unsigned want = spied[i].methods | (spied[i].methods & API_GET ? API_HEAD : 0);

                row_path(&spied[i], path, sizeof path);
                for (size_t m = 0; m < ELEMENTSOF(methods); m++) {
                        unsigned before = spy_calls;

                        if (!(want & methods[m].method))
                                continue;
                        request(methods[m].name, path, "Bearer " TOKEN, &ans);
                        if (ans.status != 200 || spy_calls != before + 1)
                                fail_msg("%s %s: %u %s", methods[m].name, path, ans.status, ans.body);
                        assert_int_equal(spy_id, strstr(spied[i].pattern, "{id}") ? 7 : 0);
                }
        }
}

/* Every row that changes state answers 401 or 403, the errors byte for
 * byte, to a client that may not, and its handler never runs. */
static void test_state_changing_rows_refuse(void **state) {
        static const struct {
                const char *token, *auth;
                bool remote;
                unsigned status;
                const char *body;
        } cases[] = {
                { TOKEN, NULL, false, 401, "{\"error\":{\"code\":\"unauthorized\",\"message\":"
                  "\"this request needs an Authorization: Bearer <token> header\"}}" },
                { TOKEN, "Bearer nope", false, 401,
                  "{\"error\":{\"code\":\"unauthorized\",\"message\":\"wrong bearer token\"}}" },
                { TOKEN, "Basic " TOKEN, true, 401,
                  "{\"error\":{\"code\":\"unauthorized\",\"message\":\"wrong bearer token\"}}" },
                { "", NULL, true, 403, "{\"error\":{\"code\":\"forbidden\",\"message\":\"without a token_file, "
                  "requests that change state are accepted from loopback only\"}}" },
                { "", "Bearer " TOKEN, true, 403, "{\"error\":{\"code\":\"forbidden\",\"message\":\"without a "
                  "token_file, requests that change state are accepted from loopback only\"}}" },
        };
        struct answer ans;
        char path[128];
        size_t checked = 0;

        for (size_t i = 0; i < n_routes; i++) {
                if (!(spied[i].flags & API_ROUTE_CHANGES_STATE))
                        continue;
                row_path(&spied[i], path, sizeof path);
                for (size_t m = 0; m < ELEMENTSOF(methods); m++)
                        for (size_t c = 0; (spied[i].methods & methods[m].method) && c < ELEMENTSOF(cases); c++) {
                                unsigned before = spy_calls;

                                strcpy(token, cases[c].token);
                                remote = cases[c].remote;
                                request(methods[m].name, path, cases[c].auth, &ans);
                                if (ans.status != cases[c].status || strcmp(ans.body, cases[c].body) != 0 ||
                                    spy_calls != before)
                                        fail_msg("%s %s (case %zu): %u %s, handler reached %u times",
                                                 methods[m].name, path, c, ans.status, ans.body,
                                                 spy_calls - before);
                                checked++;
                        }
        }
        remote = false;
        assert_true(checked >= 4 * ELEMENTSOF(cases));  /* start, import, stop, delete at least */
}

/* Reading is open: another host without a token reaches every read. */
static void test_reads_need_no_token(void **state) {
        struct answer ans;
        char path[128];

        strcpy(token, TOKEN);
        remote = true;
        for (size_t i = 0; i < n_routes; i++) {
                unsigned before = spy_calls;

                if (spied[i].flags & API_ROUTE_CHANGES_STATE)
                        continue;
                row_path(&spied[i], path, sizeof path);
                request("GET", path, NULL, &ans);
                assert_int_equal(ans.status, 200);
                assert_int_equal(spy_calls, before + 1);
        }
        remote = false;
}

static void assert_answer(const char *method, const char *path, unsigned status, const char *part) {
        unsigned before = spy_calls;
        struct answer ans;

        request(method, path, NULL, &ans);
        if (ans.status != status || !strstr(ans.body, part))
                fail_msg("%s %s: %u %s, not %u with %s", method, path, ans.status, ans.body, status, part);
        assert_int_equal(spy_calls, before);
}

/* A wrong method is 405 naming the path's methods, before any token is
 * asked for; an unknown path, or a run id that is none, 404. */
static void test_not_allowed_and_not_found(void **state) {
        struct answer ans;

        strcpy(token, TOKEN);
        assert_answer("GET", "/api/v1/runs/7/stop", 405, "does not take GET (only POST)\"");
        assert_answer("HEAD", "/api/v1/runs/import", 405, "");
        assert_answer("PUT", "/api/v1/runs", 405, "does not take PUT (only GET, POST)\"");
        assert_answer("POST", "/api/v1/runs/7", 405, "(only GET, DELETE)\"");
        assert_answer("POST", "/", 405, "(only GET, HEAD)\"");
        assert_answer("POST", "/api/v1/events", 405, "(only GET)\"");
        assert_answer("get", "/api/v1/status", 405, "(only GET)\"");
        assert_answer("GET", "/api/v1/nothing", 404, "{\"error\":{\"code\":\"not_found\"");
        assert_answer("POST", "/api/v1/runs/7/stop/", 404, "no such resource");
        assert_answer("GET", "/api/v1/runs/0", 404, "no such resource");
        assert_answer("GET", "/api/v1/runs/07", 404, "no such resource");
        assert_answer("GET", "/api/v1/runs/+7", 404, "no such resource");
        assert_answer("GET", "/api/v1/runs/-1", 404, "no such resource");
        assert_answer("GET", "/api/v1/runs/4294967296", 404, "no such resource");
        assert_answer("GET", "/api/v1/runs/99999999999999999999/plot.svg", 404, "no such resource");
        assert_answer("GET", "/api/v1/runs/7/8", 404, "no such resource");
        assert_answer("GET", "/index.html", 404, "no such resource");
        request("GET", "/api/v1/runs/4294967295/samples", NULL, &ans);
        assert_int_equal(ans.status, 200);
        assert_int_equal(spy_id, UINT_MAX);
}

/* Only a route that takes a file takes a large body, and only from a
 * client that may change state. */
static void test_body_max(void **state) {
        struct answer ans;

        strcpy(token, TOKEN);
        request("POST", "/api/v1/runs/import", "Bearer " TOKEN, &ans);
        assert_int_equal(body_max, API_IMPORT_BODY_MAX);
        request("POST", "/api/v1/runs/import", NULL, &ans);
        assert_int_equal(body_max, HTTP_BODY_MAX);
        request("POST", "/api/v1/runs", "Bearer " TOKEN, &ans);
        assert_int_equal(body_max, HTTP_BODY_MAX);
        request("GET", "/api/v1/runs/import", "Bearer " TOKEN, &ans);
        assert_int_equal(body_max, HTTP_BODY_MAX);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_rows_that_write_change_state),
                cmocka_unit_test(test_every_row_reaches_its_handler),
                cmocka_unit_test(test_state_changing_rows_refuse),
                cmocka_unit_test(test_reads_need_no_token),
                cmocka_unit_test(test_not_allowed_and_not_found),
                cmocka_unit_test(test_body_max),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
