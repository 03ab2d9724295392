/* tick.h — the sampling tick: read the sensors, log changes of state, hand the snapshot to every consumer. */
#pragma once

#include "snapshot.h"

struct daemon;

#define TICK_CONSUMERS_MAX 8

/* Register a consumer; they are called in order of registration. -E2BIG when full. */
int tick_add_consumer(struct daemon *d, const struct tick_consumer *c);
/* One tick. */
void tick_run(struct daemon *d);
/* The sensors were (re)probed: tell every consumer. -ENOMEM. */
int tick_sensors_changed(struct daemon *d);
void tick_free(struct daemon *d);
