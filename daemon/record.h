/* record.h — the history ring's tick consumer: one column per sensor id, one row per tick. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "history.h"
#include "snapshot.h"

struct recorder {
        struct history *hist;           /* not owned; NULL: nothing is recorded */
        struct sensor_channel *ch;      /* the channels recorded, in the sensors' order */
        size_t *col;                    /* the history column of each */
        size_t n;
        size_t load_cpus;               /* per-CPU load channels: the CPUs load:cpu counts */
        uint64_t interval_ms;           /* the tick's: what a load resolves */
        bool clock_warned;              /* wall clock went backwards; logged once */
};

void recorder_init(struct recorder *rec, struct history *hist, uint64_t interval_ms);
void recorder_done(struct recorder *rec);
/* Map every sensor to its column, after a (re)probe. -ENOMEM. */
int recorder_set_sensors(struct recorder *rec, const struct sensors *s);
/* The tick's interval changed: loads are kept to what the new one resolves. */
void recorder_set_interval(struct recorder *rec, uint64_t interval_ms);

/* Tick consumer callbacks; userdata is the struct recorder. */
void recorder_on_sample(void *userdata, const struct snapshot *snap);
void recorder_on_sensors(void *userdata, const struct sensors *s);
