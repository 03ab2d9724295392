/* sample.h — one tick of heatcurved: read, log changes, record history, cache the snapshot. */
#pragma once

struct daemon;

void sample_tick(struct daemon *d);
/* Rebuild the cached sensors document from the last read. */
void sample_snapshot(struct daemon *d);
/* Map every sensor to its history column; after a (re)probe. */
int sample_columns_update(struct daemon *d);
void sample_columns_free(struct daemon *d);
