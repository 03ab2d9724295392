/* sample.h — one tick of heatcurved: read, log changes, record history, cache the snapshot. */
#pragma once

#include <stddef.h>

struct daemon;

void sample_tick(struct daemon *d);
/* The sensors document of the last read, serialised once per tick when first
 * asked for (building it costs far more than the reads, so a daemon nobody
 * asks pays nothing for it). NULL when out of memory. */
const char *sample_sensors_json(struct daemon *d, size_t *ret_len);
/* Map every sensor to its history column; after a (re)probe. */
int sample_columns_update(struct daemon *d);
void sample_columns_free(struct daemon *d);
