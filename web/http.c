/* http.c — libmicrohttpd in external-epoll mode, driven by the sd-event loop. */
#include "http.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <linux/sockios.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "json-util.h"
#include "text.h"
#include "util.h"

/* One open connection: MHD's timeout restarts on every byte, so a client
 * sending one byte every few seconds would keep its slot for ever; this
 * deadline does not move until the whole request is in. */
struct http_conn {
        struct http_conn *prev, *next;
        int fd;
        uint64_t started_us;            /* CLOCK_MONOTONIC: connect, or the previous answer */
        uint64_t deadline_us;           /* CLOCK_MONOTONIC; 0 while the request is being answered */
        struct http_peer peer;          /* who, as the per-address limit counts: zeroes for loopback */
        bool loopback;
        bool leaving;                   /* shut down by us, MHD closes it at its next run */
};

/* A request whose answer waits for work off the loop (http_defer()). */
struct http_deferral {
        struct http_deferral *prev, *next;
        struct http_request *r;
        http_answer_t answer;
        http_release_t release;
        void *userdata;
        bool asleep;                    /* suspended until http_resume() */
        bool abandoned;                 /* the server stops: 503, without answer() */
};

struct http_server {
        struct MHD_Daemon *mhd;
        sd_event_source *io_source;     /* MHD's epoll fd */
        sd_event_source *timer_source;  /* MHD's connection timeouts and our request deadlines */
        http_dispatch_t dispatch;
        void *userdata;
        struct http_conn *conns;        /* every open connection */
        unsigned n_conns;
        unsigned n_leaving;             /* of which shut down by us, not closed yet */
        struct http_stream *streams;    /* every streamed answer still going */
        struct http_deferral *deferred; /* every deferred request not answered yet */
        bool wake_pending;              /* a stream was resumed: MHD must run soon */
        http_body_max_t body_max;       /* NULL: HTTP_BODY_MAX for every request */
};

struct http_stream {
        struct http_stream *prev, *next;
        struct http_server *server;
        struct MHD_Connection *conn;
        int fd;                         /* the connection's socket, -1 when not known */
        http_stream_read_t read;
        http_stream_done_t done;
        void *userdata;
        bool asleep;                    /* suspended until http_stream_wake() */
        bool closing;                   /* the server stops: end at the next read */
};

/* Binds even to an address that is not configured yet (IP_FREEBIND): a board
 * whose DHCP lease or static address comes up after the service still gets
 * it, instead of a failed unit. Listening on "" (every address) is one
 * dual-stack IPv6 socket, or IPv4 0.0.0.0 on a kernel without IPv6. */
static int http_bind(int family, const struct sockaddr *sa, socklen_t len) {
        int fd, one = 1, zero = 0;

        fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        /* IPV6_FREEBIND is Linux 4.15+; older kernels (vendor 3.14 and 4.9 BSPs)
         * honour IP_FREEBIND on IPv6 sockets too. */
        if (family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_FREEBIND, &one, sizeof one) < 0)
                (void) setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof one);
        if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
            (family == AF_INET && setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof one) < 0) ||
            (family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero) < 0) ||
            bind(fd, sa, len) < 0 || listen(fd, 128) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        return fd;
}

int http_listen(const char *host, uint16_t port) {
        struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(port) };
        struct sockaddr_in6 in6 = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
        int fd;

        if (host[0] == '\0') {
                in6.sin6_addr = in6addr_any;
                fd = http_bind(AF_INET6, (struct sockaddr *) &in6, sizeof in6);
                if (fd != -EAFNOSUPPORT)
                        return fd;
                in.sin_addr.s_addr = htonl(INADDR_ANY);
                return http_bind(AF_INET, (struct sockaddr *) &in, sizeof in);
        }
        if (inet_pton(AF_INET, host, &in.sin_addr) == 1)
                return http_bind(AF_INET, (struct sockaddr *) &in, sizeof in);
        if (inet_pton(AF_INET6, host, &in6.sin6_addr) == 1)
                return http_bind(AF_INET6, (struct sockaddr *) &in6, sizeof in6);
        return -EINVAL;
}

int http_local_port(int fd) {
        union { struct sockaddr sa; struct sockaddr_in in; struct sockaddr_in6 in6; } addr = {};
        socklen_t len = sizeof addr;

        if (getsockname(fd, &addr.sa, &len) < 0)
                return -errno;
        return ntohs(addr.sa.sa_family == AF_INET6 ? addr.in6.sin6_port : addr.in.sin_port);
}

int http_local_address(int fd, char *buf, size_t size) {
        union { struct sockaddr sa; struct sockaddr_in in; struct sockaddr_in6 in6; } addr = {};
        socklen_t len = sizeof addr;
        char ip[INET6_ADDRSTRLEN];
        int n;

        if (getsockname(fd, &addr.sa, &len) < 0)
                return -errno;
        if (addr.sa.sa_family == AF_INET && inet_ntop(AF_INET, &addr.in.sin_addr, ip, sizeof ip))
                n = snprintf(buf, size, "%s:%u", ip, ntohs(addr.in.sin_port));
        else if (addr.sa.sa_family == AF_INET6 && inet_ntop(AF_INET6, &addr.in6.sin6_addr, ip, sizeof ip))
                n = snprintf(buf, size, "[%s]:%u", ip, ntohs(addr.in6.sin6_port));
        else
                return -EAFNOSUPPORT;
        return n < 0 || (size_t) n >= size ? -ENOBUFS : 0;
}

static bool http_peer_of_conn(struct MHD_Connection *conn, struct http_peer *ret) {
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

        return http_peer_of(ci ? ci->client_addr : NULL, ret);
}

static struct http_conn *http_conn_of(struct MHD_Connection *conn) {
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

        return ci ? ci->socket_context : NULL;
}

bool http_admit(unsigned total, unsigned same_address, bool loopback) {
        if (total >= HTTP_CONNECTIONS_MAX)
                return false;
        if (loopback)
                return true;
        return total < HTTP_CONNECTIONS_MAX - HTTP_LOOPBACK_RESERVED && same_address < HTTP_CONNECTIONS_PER_ADDRESS;
}

/* Shuts a connection down; MHD sees it at its next run and closes it. */
static void http_conn_leave(struct http_server *s, struct http_conn *c) {
        if (c->leaving || c->fd < 0)
                return;
        shutdown(c->fd, SHUT_RDWR);
        c->leaving = true;
        c->deadline_us = 0;
        s->n_leaving++;
}

/* The connection whose request has been coming in for the longest (an
 * idle kept-alive one counts from its last answer): the slowest half-sent
 * request, which gives way first when every slot is taken, as nginx
 * reuses idle connections and mod_reqtimeout cuts slow ones. A client
 * that sends its whole request at once is never one. Loopback's are
 * taken only for loopback newcomers: the reserve is theirs. */
static struct http_conn *http_slowest_request(struct http_server *s, bool loopback) {
        struct http_conn *slowest = NULL;

        for (struct http_conn *c = s->conns; c; c = c->next)
                if (!c->leaving && c->deadline_us && c->fd >= 0 && (loopback || !c->loopback) &&
                    (!slowest || c->started_us <= slowest->started_us))
                        slowest = c;
        return slowest;
}

static enum MHD_Result http_on_accept(void *cls, const struct sockaddr *sa, socklen_t len) {
        struct http_server *s = cls;
        struct http_peer p;
        bool loopback = http_peer_of(sa, &p);
        struct http_conn *slowest;
        unsigned same = 0;

        if (!loopback)
                for (struct http_conn *c = s->conns; c; c = c->next)
                        same += !c->leaving && !c->loopback && http_peer_equal(&c->peer, &p);
        if (http_admit(s->n_conns - s->n_leaving, same, loopback))
                return MHD_YES;
        if (!loopback && same >= HTTP_CONNECTIONS_PER_ADDRESS)
                return MHD_NO;
        /* Every slot is taken: the slowest half-sent request makes room. */
        slowest = s->n_leaving < HTTP_CONNECTIONS_LEAVING ? http_slowest_request(s, loopback) : NULL;
        if (!slowest)
                return MHD_NO;
        http_conn_leave(s, slowest);
        return MHD_YES;
}

static void http_on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                               enum MHD_ConnectionNotificationCode code) {
        struct http_server *s = cls;
        struct http_conn *c = *socket_context;

        if (code == MHD_CONNECTION_NOTIFY_STARTED) {
                const union MHD_ConnectionInfo *fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
                const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
                c = calloc(1, sizeof *c);
                if (!c)
                        return;         /* then only MHD's idle timeout applies to it */
                c->fd = fd ? fd->connect_fd : -1;
                c->loopback = http_peer_of(ci ? ci->client_addr : NULL, &c->peer);
                c->started_us = util_monotonic_us();
                c->deadline_us = c->started_us + HTTP_REQUEST_DEADLINE_S * UINT64_C(1000000);
                c->next = s->conns;
                if (s->conns)
                        s->conns->prev = c;
                s->conns = c;
                s->n_conns++;
                *socket_context = c;
                return;
        }
        if (!c)
                return;
        if (c->prev)
                c->prev->next = c->next;
        else
                s->conns = c->next;
        if (c->next)
                c->next->prev = c->prev;
        s->n_conns--;
        s->n_leaving -= c->leaving;
        free(c);
        *socket_context = NULL;
}

/* Cuts connections whose request is not in by its deadline; MHD sees the
 * shut-down socket at its next run and closes it. Returns how many. */
static unsigned http_enforce_deadlines(struct http_server *s) {
        uint64_t now = util_monotonic_us();
        unsigned cut = 0;

        for (struct http_conn *c = s->conns; c; c = c->next)
                if (c->deadline_us && c->deadline_us <= now && c->fd >= 0) {
                        http_conn_leave(s, c);
                        cut++;
                }
        return cut;
}

static void http_schedule(struct http_server *s) {
        MHD_UNSIGNED_LONG_LONG timeout_ms;
        uint64_t next = UINT64_MAX;

        if (MHD_get_timeout(s->mhd, &timeout_ms) == MHD_YES)
                next = util_monotonic_us() + (uint64_t) timeout_ms * 1000u;
        if (s->wake_pending)
                next = util_monotonic_us();
        for (struct http_conn *c = s->conns; c; c = c->next)
                if (c->deadline_us && c->deadline_us < next)
                        next = c->deadline_us;
        if (next == UINT64_MAX) {
                sd_event_source_set_enabled(s->timer_source, SD_EVENT_OFF);
                return;
        }
        sd_event_source_set_time(s->timer_source, next);
        sd_event_source_set_enabled(s->timer_source, SD_EVENT_ONESHOT);
}

static unsigned http_connections(struct http_server *s) {
        const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);

        return info ? info->num_connections : 0;
}

static void http_run(struct http_server *s) {
        unsigned before;

        /* At the connection limit MHD takes the listening socket out of its
         * epoll set and puts it back only at the start of a later run, after
         * closing connections freed slots. Nothing would wake us for that run
         * and new clients would wait for ever: so run again while a run
         * closed connections (a few times at most). */
        s->wake_pending = false;
        for (int i = 0; i < 4; i++) {
                before = http_connections(s);
                MHD_run(s->mhd);
                if (http_connections(s) >= before)
                        break;
        }
        http_schedule(s);
}

static int http_on_io(sd_event_source *es, int fd, uint32_t revents, void *userdata) {
        http_run(userdata);
        return 0;
}

static int http_on_timer(sd_event_source *es, uint64_t usec, void *userdata) {
        struct http_server *s = userdata;

        http_enforce_deadlines(s);
        http_run(s);
        return 0;
}

struct http_framing {
        const char *values[4];          /* the first Content-Length values */
        size_t n;
        bool te;
        bool expect;                    /* an Expect header came */
};

static enum MHD_Result http_collect_framing(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
        struct http_framing *f = cls;

        if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0)
                f->te = true;
        else if (strcasecmp(key, MHD_HTTP_HEADER_EXPECT) == 0)
                f->expect = true;
        else if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0 && f->n < ELEMENTSOF(f->values))
                f->values[f->n++] = value;
        return MHD_YES;
}

const char *http_check_framing(const char *const *values, size_t n, bool te, size_t max, unsigned *status) {
        *status = 400;
        if (n > 0 && te)
                return "both Content-Length and Transfer-Encoding: the body length is ambiguous";
        for (size_t i = 1; i < n; i++)
                if (strcmp(values[i], values[0]) != 0)
                        return "two different Content-Length headers: the body length is ambiguous";
        if (n > 0) {
                const char *v = values[0] + strspn(values[0], "0");
                size_t digits = strspn(v, "0123456789");
                /* MHD refuses what is not a number itself; a length is too
                 * large as soon as it has more digits than any limit. */
                if (v[digits] == '\0' &&
                    (digits > 10 || strtoull(v, NULL, 10) > max)) {
                        *status = 413;
                        return NULL;
                }
        }
        *status = 0;
        return NULL;
}

uint64_t http_request_deadline_us(uint64_t content_length) {
        uint64_t max = HTTP_REQUEST_DEADLINE_MAX_S * UINT64_C(1000000), us;

        if (content_length / HTTP_BODY_RATE_MIN >= HTTP_REQUEST_DEADLINE_MAX_S)
                return max;
        us = HTTP_REQUEST_DEADLINE_S * UINT64_C(1000000) + content_length / HTTP_BODY_RATE_MIN * UINT64_C(1000000) +
             content_length % HTTP_BODY_RATE_MIN * UINT64_C(1000000) / HTTP_BODY_RATE_MIN;
        return us < max ? us : max;
}

/* The dispatcher replies or defers; a request it did neither with is a bug, answered as one. */
static void http_dispatch(struct http_server *s, struct http_request *r) {
        s->dispatch(s->userdata, r);
        if (!r->replied && !r->deferral)
                http_reply_error(r, 500, "internal", "no response");
}

static void http_deferral_unlink(struct http_server *s, struct http_deferral *d) {
        if (d->prev)
                d->prev->next = d->next;
        else
                s->deferred = d->next;
        if (d->next)
                d->next->prev = d->prev;
        d->prev = d->next = NULL;
}

/* The handler's call after http_resume(): the answer, or 503 when the server stops. */
static void http_answer_deferred(struct http_server *s, struct http_request *r) {
        struct http_deferral *d = r->deferral;

        if (d->asleep) {                /* MHD called again without a resume: keep sleeping */
                MHD_suspend_connection(r->conn);
                return;
        }
        http_deferral_unlink(s, d);
        if (d->abandoned) {
                r->close = true;
                http_reply_error(r, 503, "unavailable", "the daemon is stopping");
        } else
                d->answer(d->userdata, r);
        if (!r->replied)
                http_reply_error(r, 500, "internal", "no response");
}

/* Refuses, before any body byte is read and before "100 Continue", a body
 * that is too large or whose length is ambiguous. An answer queued now
 * makes MHD close the connection after it, without reading the body.
 * Returns true when the request is answered. */
static bool http_answer_early(struct http_server *s, struct http_request *r) {
        struct http_framing f = {};
        const char *msg;
        unsigned status;

        MHD_get_connection_values(r->conn, MHD_HEADER_KIND, http_collect_framing, &f);
        msg = http_check_framing(f.values, f.n, f.te, r->body_max, &status);
        if (status == 0 && f.expect && !f.te && (f.n == 0 || f.values[0][strspn(f.values[0], "0")] == '\0')) {
                /* "Expect: 100-continue" without a body (or with an empty
                 * one): MHD 0.9.75 sends 100 Continue and, when more bytes
                 * follow, never the answer (the slot is held until the idle
                 * timeout). There is no body to wait for: answer now. */
                http_dispatch(s, r);
                return true;
        }
        if (status == 0) {
                struct http_conn *c = http_conn_of(r->conn);
                /* a body it may send has the time it takes at a minimum rate (status 0: a number up to max) */
                if (c && c->deadline_us && f.n > 0)
                        c->deadline_us = c->started_us + http_request_deadline_us(strtoull(f.values[0], NULL, 10));
                return false;
        }
        r->close = true;
        if (status == 413)
                http_reply_error(r, 413, "body_too_large", "request body is larger than %zu bytes", r->body_max);
        else
                http_reply_error(r, 400, "bad_request", "%s", msg);
        return true;
}

/* A body beyond the cap is read and dropped up to HTTP_BODY_DISCARD_MAX
 * (a chunked one, whose size is not known in advance), then the 413 goes
 * out with Connection: close; beyond that the connection is closed. */
static enum MHD_Result http_take_body(struct http_request *r, const char *data, size_t n) {
        if (!r->body_too_large && r->body_len + n > r->body_max) {
                r->body_too_large = true;
                free(r->body);
                r->body = NULL;
                r->body_discarded = r->body_len;
                r->body_len = 0;
        }
        if (r->body_too_large) {
                r->body_discarded += n;
                return r->body_discarded > HTTP_BODY_DISCARD_MAX ? MHD_NO : MHD_YES;
        }
        char *b = realloc(r->body, r->body_len + n + 1);
        if (!b)
                return MHD_NO;
        memcpy(b + r->body_len, data, n);
        r->body_len += n;
        b[r->body_len] = '\0';
        r->body = b;
        return MHD_YES;
}

/* Gather the body (capped), then hand the whole request to the dispatcher once. */
static enum MHD_Result http_on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                       const char *method, const char *version,
                                       const char *upload_data, size_t *upload_data_size,
                                       void **req_cls) {
        struct http_server *s = cls;
        struct http_request *r = *req_cls;

        if (!r) {
                r = calloc(1, sizeof *r);
                if (!r)
                        return MHD_NO;
                r->conn = conn;
                r->server = s;
                r->method = method;
                r->url = url;
                r->from_loopback = http_peer_of_conn(conn, &r->peer);
                r->body_max = s->body_max ? s->body_max(s->userdata, r) : HTTP_BODY_MAX;
                *req_cls = r;
                http_answer_early(s, r);
                return MHD_YES;
        }
        if (*upload_data_size > 0) {
                size_t n = *upload_data_size;
                *upload_data_size = 0;
                return http_take_body(r, upload_data, n);
        }
        if (r->replied)
                return MHD_YES;
        if (r->deferral)
                http_answer_deferred(s, r);
        else if (r->body_too_large) {
                r->close = true;
                http_reply_error(r, 413, "body_too_large", "request body is larger than %zu bytes", r->body_max);
        } else
                http_dispatch(s, r);
        return MHD_YES;
}

/* A client that closed its side while its request was answered (shutdown
 * after sending, as HTTP/1.0 tools do): libmicrohttpd 0.9.75 in epoll mode
 * does not always notice that end of file and kept the slot until a
 * timeout. A peek that reads 0 bytes means nothing more will come. */
static void http_close_if_client_done(struct http_conn *c) {
        char b;

        if (c->fd >= 0 && recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0)
                shutdown(c->fd, SHUT_RDWR);
}

static void http_on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
                              enum MHD_RequestTerminationCode toe) {
        struct http_request *r = *req_cls;
        struct http_conn *c = http_conn_of(conn);

        /* The next request on a kept-alive connection gets its own deadline. */
        if (c && toe == MHD_REQUEST_TERMINATED_COMPLETED_OK) {
                c->started_us = util_monotonic_us();
                c->deadline_us = c->started_us + HTTP_REQUEST_DEADLINE_S * UINT64_C(1000000);
                http_close_if_client_done(c);
        }
        if (r) {
                if (r->deferral) {
                        struct http_server *s = cls;
                        if (r->deferral->prev || s->deferred == r->deferral)
                                http_deferral_unlink(s, r->deferral);
                        r->deferral->release(r->deferral->userdata);
                        free(r->deferral);
                }
                free(r->body);
                free(r);
                *req_cls = NULL;
        }
}

/* Debian's libmicrohttpd is built with HTTPS, so loading it initialises
 * GnuTLS twice (GnuTLS's constructor, then MHD's), and GnuTLS builds its
 * ASN.1 trees, about 100 KB, in our heap. This server never speaks TLS:
 * the two inits are undone. GnuTLS counts them and a deinit past zero does
 * nothing, so MHD's own deinit at exit stays harmless. A libmicrohttpd
 * without HTTPS does not load GnuTLS, and there is nothing to undo. */
static void http_release_tls(void) {
        void (*deinit)(void);
        void *sym = dlsym(RTLD_DEFAULT, "gnutls_global_deinit");

        if (!sym)
                return;
        memcpy(&deinit, &sym, sizeof deinit);   /* POSIX: a data pointer that holds code */
        deinit();
        deinit();
#ifdef __GLIBC__
        malloc_trim(0);
#endif
}

int http_new(sd_event *event, int listen_fd, http_dispatch_t dispatch, void *userdata,
             struct http_server **ret) {
        struct http_server *s = calloc(1, sizeof *s);
        const union MHD_DaemonInfo *info;
        int r;

        if (!s) {
                close(listen_fd);
                return -ENOMEM;
        }
        s->dispatch = dispatch;
        s->userdata = userdata;
        /* External epoll mode: no thread of MHD's own, the sd-event loop drives it. */
        s->mhd = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_TURBO | MHD_ALLOW_SUSPEND_RESUME, 0, http_on_accept, s,
                                  http_on_request, s,
                                  MHD_OPTION_LISTEN_SOCKET, (MHD_socket) listen_fd,
                                  MHD_OPTION_CONNECTION_LIMIT,
                                  (unsigned) (HTTP_CONNECTIONS_MAX + HTTP_CONNECTIONS_LEAVING),
                                  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned) HTTP_IDLE_TIMEOUT_S,
                                  MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t) HTTP_HEADERS_MAX,
                                  MHD_OPTION_NOTIFY_COMPLETED, http_on_completed, s,
                                  MHD_OPTION_NOTIFY_CONNECTION, http_on_connection, s,
                                  MHD_OPTION_END);
        if (!s->mhd) {
                close(listen_fd);
                free(s);
                return -EIO;
        }
        http_release_tls();
        info = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_EPOLL_FD);
        r = info ? sd_event_add_io(event, &s->io_source, info->epoll_fd, EPOLLIN, http_on_io, s) : -EIO;
        if (r >= 0)
                /* accuracy 1 us, not sd-event's default of 250 ms: MHD asks
                 * for "at once" (timeout 0) to go on writing a large answer
                 * the socket has room for, and would get a piece per 250 ms */
                r = sd_event_add_time(event, &s->timer_source, CLOCK_MONOTONIC, UINT64_MAX, 1,
                                      http_on_timer, s);
        if (r < 0) {
                http_free(s);
                return r;
        }
        http_schedule(s);
        *ret = s;
        return 0;
}

void http_set_body_max(struct http_server *s, http_body_max_t body_max) {
        s->body_max = body_max;
}

void http_free(struct http_server *s) {
        if (!s)
                return;
        /* MHD must not stop with suspended connections: wake every stream
         * so that its next read ends it, every deferred request so that it
         * gets its 503, and let MHD see that once. */
        if (s->mhd && (s->streams || s->deferred)) {
                for (struct http_stream *st = s->streams; st; st = st->next) {
                        st->closing = true;
                        http_stream_wake(st);
                }
                for (struct http_deferral *d = s->deferred; d; d = d->next) {
                        d->abandoned = true;
                        http_resume(d->r);
                }
                MHD_run(s->mhd);
        }
        sd_event_source_disable_unref(s->io_source);
        sd_event_source_disable_unref(s->timer_source);
        if (s->mhd)
                MHD_stop_daemon(s->mhd);        /* closes the listening socket too */
        free(s);
}

/* Headers every answer carries, then queue it; the response is ours to drop.
 * Answers are live data, never to be kept, unless the caller said otherwise. */
static int http_queue(struct http_request *r, unsigned status, const char *content_type,
                      struct MHD_Response *resp) {
        struct http_conn *c = http_conn_of(r->conn);
        enum MHD_Result ok;

        if (c)
                c->deadline_us = 0;     /* answered: sending it has MHD's idle timeout only */
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
        if (!MHD_get_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL))
                MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
        if (r->close)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
        ok = MHD_queue_response(r->conn, status, resp);
        MHD_destroy_response(resp);
        r->replied = true;
        return ok == MHD_YES ? 0 : -EIO;
}

/* NULL-terminated name, value pairs; NULL for none. */
static void http_add_headers(struct MHD_Response *resp, const char *const *headers) {
        for (size_t i = 0; headers && headers[i] && headers[i + 1]; i += 2)
                MHD_add_response_header(resp, headers[i], headers[i + 1]);
}

int http_reply(struct http_request *r, unsigned status, const char *content_type,
               const char *body, size_t len) {
        return http_reply_with(r, status, content_type, body, len, NULL);
}

int http_reply_with(struct http_request *r, unsigned status, const char *content_type,
                    const char *body, size_t len, const char *const *headers) {
        struct MHD_Response *resp = MHD_create_response_from_buffer(len, (void *) body, MHD_RESPMEM_MUST_COPY);

        if (!resp)
                return -ENOMEM;
        http_add_headers(resp, headers);
        return http_queue(r, status, content_type, resp);
}

/* Frees a large answer's body once it is sent, then gives the heap back:
 * a json-c tree takes many times the answer's size (17 times for a history
 * answer, when it was built as one), and glibc keeps freed memory for later
 * use, so without a trim the daemon stayed that much larger for good after
 * one such answer. */
static void http_free_large(void *body) {
        free(body);
#ifdef __GLIBC__
        malloc_trim(0);
#endif
}

int http_reply_owned(struct http_request *r, unsigned status, const char *content_type, char *body, size_t len) {
        struct MHD_Response *resp;

        resp = MHD_create_response_from_buffer_with_free_callback(len, body,
                                                                  len < HTTP_LARGE_ANSWER ? free : http_free_large);
        if (!resp) {
                free(body);
                return -ENOMEM;
        }
        return http_queue(r, status, content_type, resp);
}

int http_reply_json(struct http_request *r, unsigned status, json_object *o) {
        size_t len;
        const char *text = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);
        char *body;
        int ret;

        if (text && len < HTTP_LARGE_ANSWER) {
                ret = http_reply(r, status, "application/json", text, len);
                json_object_put(o);
                return ret;
        }
        body = text ? malloc(len) : NULL;
        if (body)
                memcpy(body, text, len);
        json_object_put(o);
        if (!body)
                return -ENOMEM;
        return http_reply_owned(r, status, "application/json", body, len);
}

int http_reply_error(struct http_request *r, unsigned status, const char *code, const char *format, ...) {
        char message[512], clean[3 * sizeof message];
        va_list ap;
        int ret;

        va_start(ap, format);
        vsnprintf(message, sizeof message, format, ap);
        va_end(ap);

        /* Messages quote the URL and arguments as the client sent them:
         * JSON must stay valid UTF-8 whatever the bytes. */
        _cleanup_free_ char *body = json_error_body(code, text_utf8_sanitize(message, clean, sizeof clean));
        if (!body)
                return -ENOMEM;
        ret = http_reply(r, status, "application/json", body, strlen(body));
        return ret;
}

const char *http_arg(struct http_request *r, const char *name) {
        return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
}

const char *http_header(struct http_request *r, const char *name) {
        return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

struct http_arg_check {
        const char *const *known;
        const char *unknown;
};

static enum MHD_Result http_check_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
        struct http_arg_check *c = cls;

        for (size_t i = 0; c->known[i]; i++)
                if (strcmp(key, c->known[i]) == 0)
                        return MHD_YES;
        c->unknown = key;
        return MHD_NO;
}

const char *http_unknown_arg(struct http_request *r, const char *const *known) {
        struct http_arg_check c = { known, NULL };

        MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, http_check_arg, &c);
        return c.unknown;
}

int http_reply_fd(struct http_request *r, unsigned status, const char *content_type, int fd, uint64_t size) {
        struct MHD_Response *resp = MHD_create_response_from_fd64(size, fd);

        if (!resp) {
                close(fd);
                return -ENOMEM;
        }
        return http_queue(r, status, content_type, resp);
}

static ssize_t http_stream_on_read(void *cls, uint64_t pos, char *buf, size_t max) {
        struct http_stream *st = cls;
        ssize_t n;

        if (st->closing)
                return MHD_CONTENT_READER_END_WITH_ERROR;
        n = st->read(st->userdata, buf, max);
        if (n == HTTP_STREAM_END)
                return MHD_CONTENT_READER_END_OF_STREAM;
        if (n < 0)
                return MHD_CONTENT_READER_END_WITH_ERROR;
        if (n == 0) {
                /* Returning 0 alone would have MHD ask again at once, a busy
                 * loop: the connection sleeps until there is more. */
                MHD_suspend_connection(st->conn);
                st->asleep = true;
        }
        return n;
}

static void http_stream_on_free(void *cls) {
        struct http_stream *st = cls;
        struct http_server *s = st->server;

        if (st->prev)
                st->prev->next = st->next;
        else
                s->streams = st->next;
        if (st->next)
                st->next->prev = st->prev;
        st->done(st->userdata);
        free(st);
}

int http_reply_stream(struct http_request *r, unsigned status, const char *content_type, http_stream_read_t read,
                      http_stream_done_t done, void *userdata, struct http_stream **ret) {
        struct http_stream *st = calloc(1, sizeof *st);
        struct MHD_Response *resp = NULL;

        if (st)
                resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, http_stream_on_read, st,
                                                         http_stream_on_free);
        if (!resp) {
                free(st);
                done(userdata);
                return -ENOMEM;
        }
        struct http_conn *c = http_conn_of(r->conn);
        *st = (struct http_stream) { .server = r->server, .conn = r->conn, .fd = c ? c->fd : -1,
                                     .read = read, .done = done, .userdata = userdata };
        /* What a reader does not take stays in a small kernel buffer, so a
         * stalled one is noticed (and closed) after seconds, not megabytes. */
        if (st->fd >= 0)
                (void) setsockopt(st->fd, SOL_SOCKET, SO_SNDBUF, &(int) { HTTP_STREAM_SNDBUF }, sizeof(int));
        st->next = st->server->streams;
        if (st->next)
                st->next->prev = st;
        st->server->streams = st;
        /* Proxies (nginx) hold back a response they may buffer. */
        MHD_add_response_header(resp, "X-Accel-Buffering", "no");
        *ret = st;
        return http_queue(r, status, content_type, resp);
}

void http_stream_wake(struct http_stream *st) {
        if (!st->asleep)
                return;
        st->asleep = false;
        MHD_resume_connection(st->conn);
        /* MHD picks resumed connections up at its next run, and nothing
         * else may come to start one soon. */
        st->server->wake_pending = true;
        http_schedule(st->server);
}

int http_stream_unsent(struct http_stream *st) {
        int n;

        if (st->fd < 0)
                return -EBADF;
        if (ioctl(st->fd, SIOCOUTQ, &n) < 0)
                return -errno;
        return n;
}

void http_stream_close(struct http_stream *st) {
        st->closing = true;
        /* A client that reads nothing never lets MHD write, so never
         * reaches the read that would end it: MHD sees the shut-down
         * socket at its next run. */
        if (st->fd >= 0)
                shutdown(st->fd, SHUT_RDWR);
        http_stream_wake(st);
}

int http_defer(struct http_request *r, http_answer_t answer, http_release_t release, void *userdata) {
        struct http_server *s = r->server;
        struct http_conn *c = http_conn_of(r->conn);
        struct http_deferral *d = calloc(1, sizeof *d);

        if (!d)
                return -ENOMEM;
        *d = (struct http_deferral) { .next = s->deferred, .r = r, .answer = answer, .release = release,
                                      .userdata = userdata, .asleep = true };
        if (d->next)
                d->next->prev = d;
        s->deferred = d;
        r->deferral = d;
        if (c)
                c->deadline_us = 0;     /* the request is in: what it waits for now is ours */
        MHD_suspend_connection(r->conn);
        return 0;
}

void http_resume(struct http_request *r) {
        struct http_deferral *d = r->deferral;

        if (!d || !d->asleep)
                return;
        d->asleep = false;
        MHD_resume_connection(r->conn);
        r->server->wake_pending = true;
        http_schedule(r->server);
}

int http_reply_static(struct http_request *r, unsigned status, const char *content_type,
                      const void *body, size_t len, const char *const *headers) {
        struct MHD_Response *resp = MHD_create_response_from_buffer(len, (void *) body, MHD_RESPMEM_PERSISTENT);

        if (!resp)
                return -ENOMEM;
        http_add_headers(resp, headers);
        return http_queue(r, status, content_type, resp);
}
