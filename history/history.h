/* history.h — bounded in-memory ring of samples, compact per-column encoding, save/load. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Each column is one series (a temperature, a policy's frequency, the load)
 * quantised to int16 per sample:
 *   HISTORY_TEMP  centidegrees C   (-327.67 .. 327.67 C)
 *   HISTORY_FREQ  MHz              (0 .. 32767 MHz)
 *   HISTORY_LOAD  1/10000          (0 .. 1), kept to 0.1 % or a coarser step
 *   HISTORY_POWER centiwatts       (0 .. 327.67 W)
 * INT16_MIN marks a missing value (sensor not ok, or column not yet present).
 * Values are clamped to -32767..32767 on the way in (INT16_MIN stays the
 * marker) and come back in the column's unit: degrees C, Hz, fraction.
 * Times are Unix ms (int64), kept exactly.
 * Memory: the newest samples (up to 256) sit uncompressed in a head of
 * 8 + 2 x columns bytes a sample; older ones in compressed blocks of up to
 * 1024 samples, one bit stream per column (delta-of-delta for times, delta
 * for values, a few bits a sample for slow, quantised temperatures; see
 * history.c). A full head joins the newest block while it has room, which
 * is encoded again with it. A ring smaller than a block is all head.
 * Queries decode only the blocks in range; history_get()/history_time_ms()
 * decode one block, so they are for tests and single lookups, not for
 * loops over the ring.
 */

#define HISTORY_MAX_CAPACITY (UINT32_C(1) << 26)   /* samples */
#define HISTORY_MAX_COLUMNS 1024
#define HISTORY_ID_MAX 255                           /* bytes in a column id */

enum history_kind {
        HISTORY_TEMP,
        HISTORY_FREQ,
        HISTORY_LOAD,
        HISTORY_POWER,
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
/* Keep the column's values from now on to multiples of step (in its unit:
 * degrees C, Hz, fraction), where that is coarser than its stored unit or,
 * for a load, than 0.1 %. What a series cannot resolve is noise that costs
 * bits in the ring: a load of busy over total jiffies is no finer than one
 * jiffy of its total (cpu_load_step()). A load's step is lowered to one that
 * divides 10000, so a whole load stays exact. -EINVAL for a column out of
 * range or a step that is not above 0. */
int history_column_step(struct history *h, size_t col, double step);

/* Start a new sample at time_ms (must not go backwards: -EINVAL, nothing
 * changed; equal times are fine; |time_ms| above 2^61 is -EINVAL too); all columns read missing until
 * history_set() gives them a value (in the column's unit: degrees C, Hz,
 * fraction; NaN = missing). When full, the oldest sample goes. A caller that
 * sees the wall clock step back may history_reset() and begin again. */
int history_begin(struct history *h, int64_t time_ms);
/* Sets a value of the newest sample; ignored when no sample is open (none
 * yet, or right after history_load()) or col is out of range. */
void history_set(struct history *h, size_t col, double value);

/* Drops every sample; columns stay. */
void history_reset(struct history *h);

/* A count that grows by one at every history_begin() and by more than the
 * capacity when the samples are replaced (history_reset(), history_load()):
 * for a value s read earlier, d = history_serial() - s is at most
 * history_count() exactly when the newest d samples are the ones begun since
 * s was read and the older ones are unchanged. A saver appends those. */
uint64_t history_serial(const struct history *h);

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

/* The ring as a history.bin file, written to fd from its offset one block
 * at a time. Format: see file.c (version 4; 3 and 2 are read); little-endian
 * whatever the host, so it moves between armhf and arm64; a CRC-32 for the
 * header and one per block. Making it replace a file atomically is the
 * caller's: history_save() (core/history-save.h). -errno. */
int history_write_fd(const struct history *h, int fd);
/* The newest n samples of h appended to a file history_write_fd() wrote with
 * the same columns, at fd's offset (its end): their blocks, then an end
 * marker, as one more segment (see file.c). What a crash leaves of a
 * segment it cuts short is left out at load, silently, but for its whole
 * blocks; the samples before it stay. Nothing
 * is written for n == 0. -EINVAL when n is above history_count(h). -errno. */
int history_append_fd(const struct history *h, int fd, size_t n);
/* Loads samples into h (columns matched by id, capacity kept), reading the
 * file one block at a time (two passes, no whole-file buffer). -ENOENT when
 * absent. Replaces h's samples (the newest `capacity` of the file are kept);
 * columns of h the file lacks read missing; file columns h lacks are added
 * if they hold a value among the kept samples; a file column whose id exists
 * with another kind is skipped. A block that fails its CRC or its checks (or
 * a torn end) is rejected and the others are kept: the return value is then
 * the number of rejected blocks (> 0); 0 when the whole file was good.
 * Errors, with h's samples unchanged: -EBADMSG for a bad header (or not a
 * regular file), -EPROTONOSUPPORT for another format version (version 1
 * files of earlier releases included), -EFBIG above 256 MiB. No sample is
 * open afterwards. */
int history_load(struct history *h, const char *path);
