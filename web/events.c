/* events.c — server-sent events: a ring of the latest events and the clients streaming them.
 *
 * Each event is formatted once into its slot of the ring; a client is only
 * a position in it (the next id and the bytes of that event already sent),
 * so fifty clients cost fifty positions, not fifty copies. A client that
 * falls EVENTS_RING events behind is closed: the daemon never waits for a
 * reader and never holds more than the ring.
 *
 * The slots are shared out by client address (http_peer: IPv6 per /64,
 * loopback as one): an address holds at most half of them (loopback, where
 * a reverse proxy brings every client from, more while slots are free).
 * When every slot is taken, a newcomer takes the slot of a client of the
 * address holding the most, the one whose socket has not drained for the
 * longest; and a client stalled for EVENTS_STALL_S gives way to any
 * newcomer of its own address. So neither many streams from one address
 * nor clients that never read keep another dashboard off. */
#include "events.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct event {
        uint64_t id;                    /* 0 for an empty slot */
        bool sample;
        char *text;                     /* the whole frame: "id: ...\nevent: ...\ndata: ...\n\n" */
        size_t len;                     /* bytes */
};

struct events_client {
        struct events_client *prev, *next;
        struct events *ev;
        struct http_stream *stream;
        uint64_t next_id;               /* the event it gets next */
        size_t offset;                  /* bytes of that event already sent */
        size_t hello_sent;              /* bytes of EVENTS_HELLO already sent */
        bool keepalive;                 /* a keep-alive comment is due */
        bool dropped;                   /* closed (too slow, or its slot taken), not gone yet */
        struct http_peer peer;          /* its address, as the slots are shared out */
        uint64_t stalled_us;            /* CLOCK_MONOTONIC: since when its socket has not drained; 0 drained */
};

struct events {
        struct event ring[EVENTS_RING];
        uint64_t last_id;
        uint64_t last_sample_id;
        struct events_client *clients;
        unsigned n_clients;
        uint64_t last_client_left_us;   /* CLOCK_MONOTONIC, 0 for never */
        uint64_t dropped, refused;
        sd_event_source *keepalive;
};

/* The reconnection delay EventSource waits after a lost stream, ms. */
#define EVENTS_HELLO "retry: 2000\n\n"
#define EVENTS_KEEPALIVE_TEXT ": keep-alive\n\n"
/* Seconds a client's socket stays full before any newcomer of its address may take its slot. */
#define EVENTS_STALL_S 3

static uint64_t events_oldest_id(const struct events *ev) {
        return ev->last_id >= EVENTS_RING ? ev->last_id - EVENTS_RING + 1 : 1;
}

static const struct event *events_get(const struct events *ev, uint64_t id) {
        const struct event *e = &ev->ring[id % EVENTS_RING];

        return e->id == id ? e : NULL;
}

/* Fills buf with what the client has not had yet: the hello, then events
 * (as many as fit, the last one perhaps in part), else a keep-alive. */
static ssize_t events_client_read(void *userdata, char *buf, size_t max) {
        struct events_client *c = userdata;
        struct events *ev = c->ev;
        const struct event *e;
        size_t n = 0;

        if (c->hello_sent < strlen(EVENTS_HELLO))
                n += util_copy_part(buf, max, EVENTS_HELLO, strlen(EVENTS_HELLO), &c->hello_sent);
        while (n < max && c->next_id <= ev->last_id) {
                e = events_get(ev, c->next_id);
                if (!e)
                        return HTTP_STREAM_ERROR;       /* overwritten before it was sent: too slow */
                /* keep-alives only between events, never inside one */
                c->keepalive = false;
                n += util_copy_part(buf + n, max - n, e->text, e->len, &c->offset);
                if (c->offset == e->len) {
                        c->next_id++;
                        c->offset = 0;
                }
        }
        if (n == 0 && c->keepalive && max >= strlen(EVENTS_KEEPALIVE_TEXT)) {
                c->keepalive = false;
                memcpy(buf, EVENTS_KEEPALIVE_TEXT, strlen(EVENTS_KEEPALIVE_TEXT));
                n = strlen(EVENTS_KEEPALIVE_TEXT);
        }
        return (ssize_t) n;
}

static void events_client_done(void *userdata) {
        struct events_client *c = userdata;
        struct events *ev = c->ev;

        if (c->prev)
                c->prev->next = c->next;
        else
                ev->clients = c->next;
        if (c->next)
                c->next->prev = c->prev;
        ev->n_clients--;
        if (ev->n_clients == 0) {
                ev->last_client_left_us = util_monotonic_us();
                sd_event_source_set_enabled(ev->keepalive, SD_EVENT_OFF);
        }
        free(c);
}

static int events_on_keepalive(sd_event_source *es, uint64_t usec, void *userdata) {
        struct events *ev = userdata;

        /* It also lets MHD notice clients that went away while their
         * connection slept: the comment's write fails. */
        for (struct events_client *c = ev->clients; c; c = c->next) {
                c->keepalive = true;
                http_stream_wake(c->stream);
        }
        sd_event_source_set_time(es, usec + EVENTS_KEEPALIVE_S * UINT64_C(1000000));
        return 0;
}

int events_new(sd_event *event, struct events **ret) {
        struct events *ev = calloc(1, sizeof *ev);
        int r;

        if (!ev)
                return -ENOMEM;
        r = sd_event_add_time(event, &ev->keepalive, CLOCK_MONOTONIC, UINT64_MAX, 0, events_on_keepalive, ev);
        if (r < 0) {
                free(ev);
                return r;
        }
        sd_event_source_set_enabled(ev->keepalive, SD_EVENT_OFF);
        *ret = ev;
        return 0;
}

static void events_clear(struct events *ev) {
        for (size_t i = 0; i < EVENTS_RING; i++) {
                free(ev->ring[i].text);
                ev->ring[i] = (struct event) {};
        }
}

void events_free(struct events *ev) {
        if (!ev)
                return;
        sd_event_source_disable_unref(ev->keepalive);
        events_clear(ev);
        free(ev);
}

bool events_want_samples(struct events *ev) {
        if (ev->n_clients > 0)
                return true;
        if (ev->last_client_left_us &&
            util_monotonic_us() - ev->last_client_left_us < EVENTS_LINGER_S * UINT64_C(1000000))
                return true;
        if (ev->last_client_left_us) {
                /* Nobody came back: give the memory back too. Ids go on. */
                ev->last_client_left_us = 0;
                events_clear(ev);
        }
        return false;
}

/* Before each event: a client has drained when it took every event so far
 * and its socket's send queue is empty. */
static void events_note_stalls(struct events *ev) {
        uint64_t now = util_monotonic_us();

        for (struct events_client *c = ev->clients; c; c = c->next) {
                if (c->next_id > ev->last_id && c->offset == 0 && http_stream_unsent(c->stream) == 0)
                        c->stalled_us = 0;
                else if (c->stalled_us == 0)
                        c->stalled_us = now;
        }
}

int events_publish(struct events *ev, const char *type, const char *data, size_t len) {
        uint64_t id = ev->last_id + 1;
        struct event *e = &ev->ring[id % EVENTS_RING];
        char head[96];
        int n = snprintf(head, sizeof head, "id: %" PRIu64 "\nevent: %s\ndata: ", id, type);
        char *text;

        if (n < 0 || (size_t) n >= sizeof head || memchr(data, '\n', len))
                return -EINVAL;
        text = malloc((size_t) n + len + 2);
        if (!text)
                return -ENOMEM;
        memcpy(text, head, (size_t) n);
        memcpy(text + n, data, len);
        memcpy(text + n + len, "\n\n", 2);

        events_note_stalls(ev);
        free(e->text);
        *e = (struct event) { .id = id, .sample = strcmp(type, "sample") == 0, .text = text,
                              .len = (size_t) n + len + 2 };
        ev->last_id = id;
        if (e->sample)
                ev->last_sample_id = id;

        for (struct events_client *c = ev->clients, *next; c; c = next) {
                next = c->next;
                if (c->dropped)
                        continue;
                if (c->next_id < events_oldest_id(ev)) {
                        /* It still had an event to send that is now gone. */
                        c->dropped = true;
                        ev->dropped++;
                        http_stream_close(c->stream);
                } else
                        http_stream_wake(c->stream);
        }
        return 0;
}

/* Where a client starts: after the event it last saw when the ring still
 * holds everything since, else at the newest sample (or what comes next). */
static uint64_t events_start_id(const struct events *ev, const char *last_event_id) {
        uint64_t start = ev->last_sample_id && events_get(ev, ev->last_sample_id) ? ev->last_sample_id
                                                                                   : ev->last_id + 1;
        char *end;

        if (!last_event_id || !*last_event_id)
                return start;
        errno = 0;
        unsigned long long seen = strtoull(last_event_id, &end, 10);
        if (errno || *end || last_event_id[0] < '0' || last_event_id[0] > '9' || seen > ev->last_id)
                return start;   /* not ours: another daemon's ids */
        if (seen == ev->last_id)
                return seen + 1;
        if (!events_get(ev, seen + 1))
                return start;   /* what followed it is gone */
        return seen + 1;
}

/* The slots one address may hold: half of them (at least one). */
static unsigned events_share(unsigned max_clients) {
        return max_clients / 2 > 0 ? max_clients / 2 : 1;
}

/* Streams open (not on their way out) from peer, or from everyone for NULL. */
static unsigned events_count(const struct events *ev, const struct http_peer *peer) {
        unsigned n = 0;

        for (const struct events_client *c = ev->clients; c; c = c->next)
                n += !c->dropped && (!peer || http_peer_equal(&c->peer, peer));
        return n;
}

/* Whether a stalled longer than b: never stalled counts as the shortest;
 * between equals, a wins (the older client: the list is newest first). */
static bool events_stalled_longer(const struct events_client *a, const struct events_client *b) {
        if (!b)
                return true;
        if (a->stalled_us != b->stalled_us)
                return a->stalled_us && (!b->stalled_us || a->stalled_us < b->stalled_us);
        return true;
}

/* The address holding the most streams, and its longest-stalled client;
 * between addresses holding as many, the one with the longest stall. */
static struct events_client *events_biggest_holder(const struct events *ev, unsigned *ret_count) {
        struct events_client *best = NULL, *v;
        unsigned best_n = 0, n;

        for (struct events_client *c = ev->clients; c; c = c->next) {
                if (c->dropped)
                        continue;
                n = 0;
                v = NULL;
                for (struct events_client *o = ev->clients; o; o = o->next)
                        if (!o->dropped && http_peer_equal(&o->peer, &c->peer)) {
                                n++;
                                if (events_stalled_longer(o, v))
                                        v = o;
                        }
                if (n > best_n || (n == best_n && events_stalled_longer(v, best) && v != best)) {
                        best = v;
                        best_n = n;
                }
        }
        *ret_count = best_n;
        return best;
}

/* Whose slot a newcomer from peer, which holds mine streams, takes when
 * all are taken: NULL for none (the newcomer gets 503). */
static struct events_client *events_pick_slot(const struct events *ev, const struct http_peer *peer,
                                              unsigned mine, unsigned share) {
        uint64_t stall_us = EVENTS_STALL_S * UINT64_C(1000000), now = util_monotonic_us();
        struct events_client *v, *stalled = NULL;
        unsigned most;

        /* From the biggest holder, when that leaves it no smaller than the newcomer. */
        v = events_biggest_holder(ev, &most);
        if (v && mine < share && most >= mine + 2)
                return v;
        for (struct events_client *c = ev->clients; c; c = c->next)
                if (!c->dropped && c->stalled_us && now - c->stalled_us >= stall_us &&
                    (mine < share || http_peer_equal(&c->peer, peer)) && events_stalled_longer(c, stalled))
                        stalled = c;
        return stalled;
}

/* Whether a newcomer gets a slot, closing the client whose slot it takes; answers 503 when not. */
static bool events_admit(struct events *ev, struct http_request *r, unsigned max_clients) {
        unsigned open = events_count(ev, NULL), mine = events_count(ev, &r->peer), share = events_share(max_clients);
        struct events_client *v;

        if (max_clients > 0 && open < max_clients) {
                if (r->from_loopback || mine < share)
                        return true;
                ev->refused++;
                http_reply_error(r, 503, "too_many_clients",
                                 "%u event streams are open from this address, the most one address holds "
                                 "(half of [daemon] event_clients)", mine);
                return false;
        }
        v = max_clients > 0 ? events_pick_slot(ev, &r->peer, mine, share) : NULL;
        if (!v) {
                ev->refused++;
                http_reply_error(r, 503, "too_many_clients",
                                 "%u event streams are open, the most this daemon serves "
                                 "([daemon] event_clients)", ev->n_clients);
                return false;
        }
        v->dropped = true;
        http_stream_close(v->stream);
        return true;
}

void events_serve(struct events *ev, struct http_request *r, const char *last_event_id, unsigned max_clients) {
        struct events_client *c;

        if (!events_admit(ev, r, max_clients))
                return;
        c = calloc(1, sizeof *c);
        if (!c) {
                http_reply_error(r, 500, "internal", "out of memory");
                return;
        }
        c->ev = ev;
        c->peer = r->peer;
        c->next_id = events_start_id(ev, last_event_id);
        c->next = ev->clients;
        if (c->next)
                c->next->prev = c;
        ev->clients = c;
        if (ev->n_clients++ == 0 &&
            sd_event_source_set_time_relative(ev->keepalive, EVENTS_KEEPALIVE_S * UINT64_C(1000000)) >= 0)
                (void) sd_event_source_set_enabled(ev->keepalive, SD_EVENT_ON);
        /* On failure events_client_done() has run already. */
        (void) http_reply_stream(r, 200, "text/event-stream; charset=utf-8", events_client_read, events_client_done,
                                 c, &c->stream);
}

void events_stats(const struct events *ev, struct events_stats *ret) {
        *ret = (struct events_stats) {
                .clients = ev->n_clients,
                .published = ev->last_id,
                .last_id = ev->last_id,
                .dropped = ev->dropped,
                .refused = ev->refused,
        };
}
