/* history-internal.h — what the history library's files share; for internal library use only. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "history.h"

#define HISTORY_MISSING INT16_MIN
#define HISTORY_BLOCK 1024                      /* samples per compressed block */
#define HISTORY_HEAD 256                        /* samples the head holds before they join a block */
#define HISTORY_TIME_LIMIT (INT64_C(1) << 61)   /* ms; |time| above this is refused */
#define HISTORY_PAD 8                           /* bytes after a block, so the bit reader may look ahead */

/* Up to HISTORY_BLOCK consecutive samples, one bit stream for the times
 * and one per column (codec.c describes the streams). */
struct history_block {
        int64_t first_ms, last_ms;      /* times of the first and last sample */
        uint32_t n;                     /* samples */
        uint32_t n_streams;             /* 1 (times) + columns that existed at encoding */
        uint32_t size;                  /* bytes of stream data after end[] */
        uint32_t legacy;                /* 1: read from a file before version 4, its symbols (codec) */
        uint32_t end[];                 /* per stream: end offset (bytes) in the data */
};

struct history_column {
        char *id;
        enum history_kind kind;
        int16_t step;                   /* values are kept to multiples of it, in stored units */
        int16_t *head;                  /* head_cap values of the newest, uncompressed samples */
};

struct history {
        size_t capacity;                /* samples */
        size_t head_cap;                /* samples the uncompressed head holds before it is encoded */
        struct history_block **blocks;  /* oldest first */
        size_t n_blocks, blocks_cap;
        size_t block_samples;           /* samples in all blocks, the skipped ones included */
        size_t skip;                    /* samples of blocks[0] already dropped from the ring */
        int64_t *head_ms;               /* head_cap times, Unix ms */
        size_t head_n;                  /* samples in the head */
        bool open;                      /* the newest sample still takes history_set() */
        uint64_t serial;                /* see history_serial() */
        struct history_column *columns;
        size_t n_columns;
};

static inline const uint8_t *block_data(const struct history_block *b) {
        return (const uint8_t *) (b->end + b->n_streams);
}

/* ---- the block codec (codec.c) ---- */

struct bit_reader {
        const uint8_t *p, *end;
        uint64_t win;                   /* next bits, left-aligned */
        unsigned bits;                  /* valid bits in win */
        uint64_t over;                  /* bits read past the end (zeros): corrupt stream */
};

struct codec {
        int64_t last;                   /* the last non-zero delta; 0 for none yet */
        uint64_t r2;                    /* the |delta| before last's, when it differed; 0 for none */
        bool legacy;                    /* the symbols of files before version 4 */
        unsigned width;                 /* last explicit width */
        int64_t prev;                   /* previous value (values) or time (times) */
        int64_t prev_delta;             /* times: previous delta */
        bool missing;                   /* values: the previous symbol was "missing" */
        int64_t scale;                  /* values: the stream's step (prev is in steps) */
        bool rice;                      /* values: Rice-coded stream */
        unsigned rice_k;
        int64_t rice_lim;               /* INT16_MAX / scale: the largest |prev| */
};

/* Opens the value stream [p, end) at its step; -1 when the step is not
 * above 0. */
int value_stream_init(struct bit_reader *r, struct codec *c, const uint8_t *p, const uint8_t *end,
                      bool legacy);
/* The stream's next value into *v; -1 on a corrupt stream. */
int value_stream_next(struct bit_reader *r, struct codec *c, int16_t *v);

/* Decodes the times of a block into t[0..b->n). 0, or -EBADMSG when corrupt. */
int block_times(const struct history_block *b, int64_t *t);
/* Decodes column col's values of a block into v[0..b->n); missing when the
 * block predates the column. 0, or -EBADMSG when corrupt. */
int block_values(const struct history_block *b, size_t col, int16_t *v);
/* Bytes of a block with n_streams streams of size bytes in all. */
size_t block_bytes(size_t n_streams, size_t size);
/* Encodes the samples of old (the ring's newest block, or NULL) followed
 * by the head of h into a block; on success old is reallocated into
 * *ret, which replaces it. */
int block_encode(const struct history *h, struct history_block *old, struct history_block **ret);

/* ---- the ring (ring.c) ---- */

/* A stored value (or a sum of them) back in the column's unit. */
double history_decode(enum history_kind kind, double v);
