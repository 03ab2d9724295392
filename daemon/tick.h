/* tick.h — the sampling tick: read the sensors, log changes of state, hand the snapshot to every consumer. */
#pragma once

#include <stdbool.h>

#include "analysis.h"
#include "snapshot.h"

struct daemon;

#define TICK_CONSUMERS_MAX 8

/* The inputs of the last STATUS= sent; memset before filling, so it compares with memcmp. */
struct tick_status {
        bool sent;                      /* false before the first */
        char hottest[SENSORS_ID_MAX];   /* id of the hottest answering sensor, "" for none */
        int32_t temp_mc;                /* millidegrees C, its temperature */
        bool in_run;
        unsigned run_id;
        enum analysis_phase phase_kind; /* the live run's current phase */
};

/* Register a consumer; they are called in order of registration. -E2BIG when full. */
int tick_add_consumer(struct daemon *d, const struct tick_consumer *c);
/* One tick. */
void tick_run(struct daemon *d);
/* The sensors were (re)probed: tell every consumer. -ENOMEM. */
int tick_sensors_changed(struct daemon *d);
void tick_free(struct daemon *d);
