/* events.h — server-sent events: a ring of the latest events and the clients streaming them. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "http.h"

#define EVENTS_RING 64                  /* events kept for Last-Event-ID and slow readers */
#define EVENTS_KEEPALIVE_S 15           /* seconds between comments to an idle stream */
#define EVENTS_LINGER_S 60              /* seconds samples are still kept after the last client left */

/* Counters for /api/v1/status and the tests. */
struct events_stats {
        unsigned clients;               /* streams open now */
        uint64_t published;             /* events put in the ring since start */
        uint64_t last_id;               /* the newest event's id, 0 for none */
        uint64_t dropped;               /* clients closed for falling EVENTS_RING events behind */
        uint64_t refused;               /* clients refused at the limit */
};

struct events;

int events_new(sd_event *event, struct events **ret);
/* After the HTTP server is gone (its streams reach back here until then). */
void events_free(struct events *ev);

/* Whether anyone reads samples: a client is connected or left less than
 * EVENTS_LINGER_S ago (it may come back with Last-Event-ID). */
bool events_want_samples(struct events *ev);

/* Appends an event to the ring and wakes every client. data is one line of
 * JSON (a newline in it would end the field). */
int events_publish(struct events *ev, const char *type, const char *data, size_t len);

/* Answers r with the stream: 503 beyond max_clients, or beyond its
 * address's share of them (events.c says how they are shared). last_event_id (the
 * header, NULL when absent) resumes after that event when the ring still
 * holds what follows; otherwise the stream starts at the newest sample. */
void events_serve(struct events *ev, struct http_request *r, const char *last_event_id, unsigned max_clients);

void events_stats(const struct events *ev, struct events_stats *ret);
