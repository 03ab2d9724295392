/* http.h — libmicrohttpd in external-epoll mode, driven by the sd-event loop. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#define HTTP_BODY_MAX (64 * 1024)       /* bytes; larger bodies get 413, unless http_set_body_max() says more */
#define HTTP_BODY_DISCARD_MAX (256 * 1024) /* bytes of a too large chunked body read before closing */
#define HTTP_CONNECTIONS_MAX 128
#define HTTP_CONNECTIONS_PER_ADDRESS 16 /* per remote address (IPv6: per /64); loopback clients are not counted */
#define HTTP_LOOPBACK_RESERVED 8        /* slots that only loopback clients may take */
#define HTTP_CONNECTIONS_LEAVING 16     /* connections shut down to make room, beyond the limit until closed */
#define HTTP_HEADERS_MAX (16 * 1024)    /* bytes of memory per connection for the request line and headers */
#define HTTP_REQUEST_DEADLINE_S 10      /* seconds: from connect (or the previous answer) to a whole request */
#define HTTP_BODY_RATE_MIN (256 * 1024) /* bytes a second: a body's Content-Length adds its time at this rate */
#define HTTP_REQUEST_DEADLINE_MAX_S 300 /* seconds: the deadline however large the body */
#define HTTP_IDLE_TIMEOUT_S 30          /* seconds without a byte either way, while answering too */
#define HTTP_STREAM_SNDBUF (32 * 1024)  /* bytes: kernel send buffer of a streamed answer */
#define HTTP_LARGE_ANSWER (64 * 1024)   /* bytes: a JSON answer this large gives the heap back once sent */

struct MHD_Connection;

/* A client as the limits count it (http-limits.c): IPv4 per address, IPv6
 * per /64, every loopback address as one (all zeroes). */
struct http_peer {
        uint8_t family;                 /* AF_INET, AF_INET6; 0 for loopback or unknown */
        uint8_t bytes[16];              /* IPv4: the address; IPv6: its /64 prefix, the rest zero */
};
/* The peer of sa (NULL: unknown, all zeroes); returns whether it is loopback
 * (127/8, ::1, ::ffff:127.0.0.0/104). */
bool http_peer_of(const struct sockaddr *sa, struct http_peer *ret);
bool http_peer_equal(const struct http_peer *a, const struct http_peer *b);

struct http_request {
        struct MHD_Connection *conn;
        struct http_server *server;     /* the server it came to */
        const char *method;
        const char *url;                /* path only; the query is read with http_arg() */
        size_t body_max;                /* bytes of body this request may have */
        char *body;                     /* NUL-terminated, NULL when none */
        size_t body_len;                /* bytes */
        bool body_too_large;
        size_t body_discarded;          /* bytes of a too large body read and dropped */
        bool from_loopback;
        struct http_peer peer;          /* who sent it, as the limits count clients */
        bool replied;
        bool close;                     /* close the connection after the answer */
        struct http_deferral *deferral; /* http_defer()'s, NULL for none */
};

/* Called once per complete request; must answer with one http_reply*(). */
typedef void (*http_dispatch_t)(void *userdata, struct http_request *r);

struct http_server;

/* Serve on listen_fd (a bound, listening socket; ownership passes to the server). */
int http_new(sd_event *event, int listen_fd, http_dispatch_t dispatch, void *userdata,
             struct http_server **ret);
void http_free(struct http_server *s);

/* The body a request may carry, asked when its headers are in (userdata is
 * http_new()'s): a route that takes files may take more than HTTP_BODY_MAX,
 * from a client it trusts. */
typedef size_t (*http_body_max_t)(void *userdata, struct http_request *r);
void http_set_body_max(struct http_server *s, http_body_max_t body_max);

/* Bind and listen on "host" (numeric IPv4/IPv6, "" for every address) and port,
 * even when that address is not up yet; returns the fd or -errno. */
int http_listen(const char *host, uint16_t port);
/* "ADDR:PORT" or "[ADDR6]:PORT" of a bound socket into buf, or -errno. */
int http_local_address(int fd, char *buf, size_t size);
/* The port a listening socket is bound to (for port 0), or -errno. */
int http_local_port(int fd);

int http_reply(struct http_request *r, unsigned status, const char *content_type,
               const char *body, size_t len);
/* The same, with headers: NULL-terminated name, value pairs (NULL for none). */
int http_reply_with(struct http_request *r, unsigned status, const char *content_type,
                    const char *body, size_t len, const char *const *headers);
/* Streams size bytes of fd (ownership passes to the server). */
int http_reply_fd(struct http_request *r, unsigned status, const char *content_type, int fd, uint64_t size);
/* Takes ownership of body (malloc'd) and frees it once sent; from
 * HTTP_LARGE_ANSWER bytes on, gives the heap back then too. */
int http_reply_owned(struct http_request *r, unsigned status, const char *content_type, char *body, size_t len);
/* Takes ownership of o. */
int http_reply_json(struct http_request *r, unsigned status, json_object *o);
int http_reply_error(struct http_request *r, unsigned status, const char *code, const char *format, ...)
        __attribute__((format(printf, 4, 5)));

/* A streamed answer of unknown length (server-sent events, documents too
 * large to build in memory). read() is asked for more whenever the client
 * can take it: it returns the bytes it wrote into buf (at most max), 0 when
 * it has nothing now, HTTP_STREAM_END when the answer is complete, or
 * HTTP_STREAM_ERROR to cut it (the client sees a truncated answer). After a
 * 0 the connection sleeps, costing no CPU, until http_stream_wake(); done()
 * runs once when the connection is gone, or at once when this fails:
 * userdata is handed over either way. */
#define HTTP_STREAM_END (-1)
#define HTTP_STREAM_ERROR (-2)
struct http_stream;
typedef ssize_t (*http_stream_read_t)(void *userdata, char *buf, size_t max);
typedef void (*http_stream_done_t)(void *userdata);
int http_reply_stream(struct http_request *r, unsigned status, const char *content_type, http_stream_read_t read,
                      http_stream_done_t done, void *userdata, struct http_stream **ret);
/* Asks read() again soon; harmless when the stream is not asleep. */
void http_stream_wake(struct http_stream *st);
/* Bytes written to the stream's socket that the client has not taken yet
 * (the kernel's send queue), or -errno. */
int http_stream_unsent(struct http_stream *st);
/* Ends the stream now, whatever the client has not read yet. */
void http_stream_close(struct http_stream *st);

/* An answer that needs work off the event loop first: instead of replying,
 * the dispatcher defers the request and the connection sleeps, costing no
 * CPU, until http_resume(); then answer(userdata, r) runs on the loop and
 * replies as the dispatcher would have. release(userdata) runs once, when
 * the request is gone: after the answer, or without one when the client or
 * the server went first (a server that stops answers 503 to what still
 * sleeps). */
typedef void (*http_answer_t)(void *userdata, struct http_request *r);
typedef void (*http_release_t)(void *userdata);
int http_defer(struct http_request *r, http_answer_t answer, http_release_t release, void *userdata);
/* Wakes a deferred request: its answer() runs at the server's next turn. */
void http_resume(struct http_request *r);

const char *http_arg(struct http_request *r, const char *name);
const char *http_header(struct http_request *r, const char *name);
/* The first query parameter not in the NULL-terminated list, or NULL. */
const char *http_unknown_arg(struct http_request *r, const char *const *known);

/* Whether a new connection has a free slot: total connections open, those
 * from the same address (IPv6: the same /64), and whether it comes from
 * loopback. Loopback clients may take every slot; others leave
 * HTTP_LOOPBACK_RESERVED free and hold at most HTTP_CONNECTIONS_PER_ADDRESS
 * each. When there is no free slot but the address is under its limit, the
 * slowest half-sent request is closed to make one. */
bool http_admit(unsigned total, unsigned same_address, bool loopback);

/* Checks the request's framing headers before its body is read: NULL when
 * fine, else the status to answer (400 or 413) and a message. values are
 * the Content-Length values as sent (n of them), te whether a
 * Transfer-Encoding header came too, max the body this request may have. */
const char *http_check_framing(const char *const *values, size_t n, bool te, size_t max, unsigned *status);

/* Microseconds a request of this Content-Length has from connect to its
 * last byte: HTTP_REQUEST_DEADLINE_S, and the body's time at
 * HTTP_BODY_RATE_MIN, at most HTTP_REQUEST_DEADLINE_MAX_S. A large import
 * on a slow link goes on as long as it moves. */
uint64_t http_request_deadline_us(uint64_t content_length);

/* Like http_reply() for a body that outlives every answer (static data), so
 * it is not copied; headers are NULL-terminated name, value pairs added to
 * the answer (NULL for none). */
int http_reply_static(struct http_request *r, unsigned status, const char *content_type,
                      const void *body, size_t len, const char *const *headers);
