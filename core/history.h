/* history.h — bounded in-memory ring of samples, compact per-column encoding, save/load. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Each column is one series (a temperature, a policy's frequency, the load)
 * stored as int16 per sample, 2 bytes per sensor per sample:
 *   HISTORY_TEMP  centidegrees C   (-327.67 .. 327.67 C)
 *   HISTORY_FREQ  MHz              (0 .. 32767 MHz)
 *   HISTORY_LOAD  1/10000          (0 .. 1)
 * INT16_MIN marks a missing value (sensor not ok, or column not yet present).
 * Timestamps are one uint32 per sample: ms since the ring's epoch. The epoch
 * moves forward when an offset would not fit (every ~49 days); samples more
 * than 2^32 ms older than the newest are dropped then.
 * Values are clamped to -32767..32767 on the way in (INT16_MIN stays the
 * marker) and come back in the column's unit: degrees C, Hz, fraction.
 * Memory: capacity x (4 + 2 x columns) bytes, allocated with calloc so pages
 * not yet written cost no resident memory; a column added later is not
 * filled with markers: slots older than its first sample read as missing.
 */

#define HISTORY_MAX_CAPACITY (UINT32_C(1) << 26)   /* samples */
#define HISTORY_MAX_COLUMNS 1024
#define HISTORY_ID_MAX 255                           /* bytes in a column id */

enum history_kind {
        HISTORY_TEMP,
        HISTORY_FREQ,
        HISTORY_LOAD,
};

struct history;

int history_new(size_t capacity, struct history **ret);
void history_free(struct history *h);

/* Find or add the column; returns its index (>= 0) or -errno. Columns added
 * later read as missing for older samples; added while a sample is open
 * (after history_begin()), they take a value for that sample. -EEXIST when
 * the id exists with another kind, -EINVAL for an empty id or one longer
 * than HISTORY_ID_MAX, -E2BIG beyond HISTORY_MAX_COLUMNS. */
int history_column(struct history *h, const char *id, enum history_kind kind);
size_t history_n_columns(const struct history *h);
const char *history_column_id(const struct history *h, size_t col);
enum history_kind history_column_kind(const struct history *h, size_t col);
int history_find_column(const struct history *h, const char *id);   /* index or -ENOENT */

/* Start a new sample at time_ms (must not go backwards: -EINVAL, nothing
 * changed; equal times are fine); all columns read missing until
 * history_set() gives them a value (in the column's unit: degrees C, Hz,
 * fraction; NaN = missing). When full, the oldest sample goes. A caller that
 * sees the wall clock step back may history_reset() and begin again. */
int history_begin(struct history *h, int64_t time_ms);
/* Sets a value of the newest sample; ignored when no sample is open (none
 * yet, or right after history_load()) or col is out of range. */
void history_set(struct history *h, size_t col, double value);

/* Drops every sample; columns stay. */
void history_reset(struct history *h);

size_t history_count(const struct history *h);
int64_t history_oldest_ms(const struct history *h);   /* 0 when empty */
int64_t history_newest_ms(const struct history *h);
size_t history_capacity(const struct history *h);
/* Sample i (0 = oldest): its time (0 when out of range), and its value in
 * the column's unit, NaN when missing. */
int64_t history_time_ms(const struct history *h, size_t i);
double history_get(const struct history *h, size_t i, size_t col);
/* Bytes allocated (not necessarily resident) for the ring and its columns. */
size_t history_memory_bytes(const struct history *h);

struct history_bucket {
        int64_t t_ms;           /* bucket start, Unix ms */
        double *min, *max, *mean;  /* per requested column, NaN when no data */
        uint32_t n_samples;     /* samples that fell in the bucket */
};

struct history_result {
        size_t n_buckets, n_cols;
        struct history_bucket *buckets;
        int64_t bucket_ms;      /* width of every bucket, ms */
        double *values;         /* storage behind the buckets' min/max/mean */
};

/* Samples with from_ms <= t <= to_ms, downsampled to at most `points` buckets
 * of equal width. cols are indices from history_column().
 * Buckets: width w = ceil((to - from + 1) / points) ms (an integer), bucket k
 * covers [from + k w, from + (k + 1) w); so there are at most `points`, the
 * last may reach past to. A bucket is left out when no requested column has
 * a value in it (no samples: daemon down; or all missing); so consumers see a
 * gap as consecutive t_ms more than bucket_ms apart. With n_cols == 0 every
 * bucket holding samples is kept. Values are in the column's unit. -EINVAL
 * when from > to, points == 0 or a column index is out of range. */
int history_query(const struct history *h, int64_t from_ms, int64_t to_ms,
                  const size_t *cols, size_t n_cols, size_t points,
                  struct history_result *ret);
void history_result_free(struct history_result *r);

/* Binary file, replaced atomically (temp file, fsync, rename). Format: see
 * history.c; little-endian whatever the host, so it moves between armhf and
 * arm64; CRC-32 at the end. */
int history_save(const struct history *h, const char *path);
/* Loads samples into h (columns matched by id, capacity kept). -ENOENT when absent.
 * Replaces h's samples (the newest `capacity` of the file are kept); columns
 * of h the file lacks read missing; file columns h lacks are added if they
 * hold a value among the kept samples; a file column whose id exists with
 * another kind is skipped. -EBADMSG for a truncated or corrupt file,
 * -EPROTONOSUPPORT for another format version, -EFBIG above 256 MiB; on any
 * error h's samples are unchanged. No sample is open afterwards. */
int history_load(struct history *h, const char *path);
