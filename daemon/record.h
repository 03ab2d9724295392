/* record.h — the history ring's tick consumer: one column per sensor id, one row per tick. */
#pragma once

#include <stdbool.h>

#include "history.h"
#include "snapshot.h"

struct recorder {
        struct history *hist;           /* not owned; NULL: nothing is recorded */
        int *temp_col, *freq_col, *cpu_col;     /* history column of each sensor, -1 for none */
        int load_col;
        bool clock_warned;              /* wall clock went backwards; logged once */
};

void recorder_init(struct recorder *rec, struct history *hist);
void recorder_done(struct recorder *rec);
/* Map every sensor to its column, after a (re)probe. -ENOMEM. */
int recorder_set_sensors(struct recorder *rec, const struct sensors *s);

/* Tick consumer callbacks; userdata is the struct recorder. */
void recorder_on_sample(void *userdata, const struct snapshot *snap);
void recorder_on_sensors(void *userdata, const struct sensors *s);
