/* http.h — libmicrohttpd in external-epoll mode, driven by the sd-event loop. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#define HTTP_BODY_MAX (64 * 1024)       /* bytes; larger bodies get 413 */
#define HTTP_CONNECTIONS_MAX 128
#define HTTP_HEADERS_MAX (16 * 1024)    /* bytes of memory per connection for the request line and headers */

struct MHD_Connection;

struct http_request {
        struct MHD_Connection *conn;
        const char *method;
        const char *url;                /* path only; the query is read with http_arg() */
        char *body;                     /* NUL-terminated, NULL when none */
        size_t body_len;                /* bytes */
        bool body_too_large;
        bool from_loopback;
        bool replied;
};

/* Called once per complete request; must answer with one http_reply*(). */
typedef void (*http_dispatch_t)(void *userdata, struct http_request *r);

struct http_server;

/* Serve on listen_fd (a bound, listening socket; ownership passes to the server). */
int http_new(sd_event *event, int listen_fd, http_dispatch_t dispatch, void *userdata,
             struct http_server **ret);
void http_free(struct http_server *s);

/* Bind and listen on "host" (numeric IPv4/IPv6, "" for every address) and port,
 * even when that address is not up yet; returns the fd or -errno. */
int http_listen(const char *host, uint16_t port);
/* "ADDR:PORT" or "[ADDR6]:PORT" of a bound socket into buf, or -errno. */
int http_local_address(int fd, char *buf, size_t size);
/* The port a listening socket is bound to (for port 0), or -errno. */
int http_local_port(int fd);

int http_reply(struct http_request *r, unsigned status, const char *content_type,
               const char *body, size_t len);
/* Streams size bytes of fd (ownership passes to the server). */
int http_reply_fd(struct http_request *r, unsigned status, const char *content_type, int fd, uint64_t size);
/* Takes ownership of o. */
int http_reply_json(struct http_request *r, unsigned status, json_object *o);
int http_reply_error(struct http_request *r, unsigned status, const char *code, const char *format, ...)
        __attribute__((format(printf, 4, 5)));

const char *http_arg(struct http_request *r, const char *name);
const char *http_header(struct http_request *r, const char *name);
/* The first query parameter not in the NULL-terminated list, or NULL. */
const char *http_unknown_arg(struct http_request *r, const char *const *known);
