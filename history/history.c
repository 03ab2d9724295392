/* history.c — bounded in-memory ring of samples in compressed blocks per column, save/load. */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic-file.h"
#include "history.h"

#define HISTORY_MISSING INT16_MIN
#define HISTORY_BLOCK 1024                      /* samples per compressed block */
#define HISTORY_HEAD 256                        /* samples the head holds before they join a block */
#define HISTORY_TIME_LIMIT (INT64_C(1) << 61)   /* ms; |time| above this is refused */
#define HISTORY_PAD 8                           /* bytes after a block, so the bit reader may look ahead */
#define RICE_FLAG 0x8000u                       /* value stream header: Rice-coded, k follows */
#define RICE_K_BITS 4
#define RICE_ESCAPE 20                          /* zeros that announce a raw z */
#define RICE_RAW_BITS 17                        /* z of a delta of two int16 step counts */

/*
 * A block holds up to HISTORY_BLOCK consecutive samples: one bit stream for
 * the times (delta-of-delta) and one per column that existed when it was
 * encoded (delta of the int16 values). Symbols, most significant bit first:
 *   0                    repeat: delta-of-delta 0 / the same value (or missing again)
 *   10                   -last: the last non-zero delta of the stream, reversed
 *   1100                 last again
 *   1101 s               +r2 or -r2 (s = 1: minus), r2 = the |delta| before
 *                        the last one's, when that differed
 *   1110 u[w]            u in the last explicit width w (u may be shorter: the
 *                        encoder keeps a width while it wastes under 8 bits)
 *   1111 w[7] u[w]       u in w bits (1..64); w = 0 means "missing" (value streams)
 * where u = zigzag(delta) + 1 >= 1. A value stream starts with 16 bits: the
 * block's step, the largest number dividing every value; values are coded
 * in steps. A reading that flickers between two levels goes back where it
 * came from, at two bits; between three, whose steps differ by one (a sensor
 * quantised to 0.487 C is kept in hundredths: steps of 48 and 49), the two
 * step sizes are both at hand. Temperatures that hold still or flicker cost
 * one to three bits a sample. Files written before version 4 have the
 * symbols 0, 10 s (+-r, the last non-zero |delta|), 110 u[w] and
 * 111 w[7] u[w] instead, which are still read (codec.legacy).
 *
 * Values that are noise around a level (loads, ADC temperatures) change by a
 * few steps at every sample, which the symbols above code in 7 to 10 bits.
 * A stream whose step has the top bit set (RICE_FLAG) is Rice-coded instead,
 * with 4 bits of k after the step; per value, z = zigzag(delta):
 *   0[q] 1 z[k]          q = z >> k below RICE_ESCAPE, then the low k bits of z
 *   0[RICE_ESCAPE] z[17] a large delta, raw
 * The encoder takes Rice for a stream when it is at least a fifth shorter
 * (it decodes slower than runs of repeats); a stream with missing values is
 * never Rice-coded.
 */
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
        struct history_column *columns;
        size_t n_columns;
};

static const uint8_t *block_data(const struct history_block *b) {
        return (const uint8_t *) (b->end + b->n_streams);
}

/* ---- bit streams ---- */

struct bit_writer {
        uint8_t *p;                     /* next byte */
        uint64_t acc;                   /* pending bits, the low `bits` of it */
        unsigned bits;
};

static void bw_put(struct bit_writer *w, uint64_t v, unsigned n) {
        if (n > 32) {
                bw_put(w, v >> 32, n - 32);
                n = 32;
        }
        if (n == 0)
                return;
        w->acc = (w->acc << n) | (v & ((UINT64_C(1) << n) - 1));
        w->bits += n;
        while (w->bits >= 8) {
                w->bits -= 8;
                *w->p++ = (uint8_t) (w->acc >> w->bits);
        }
}

static void bw_finish(struct bit_writer *w) {
        if (w->bits > 0)
                *w->p++ = (uint8_t) (w->acc << (8 - w->bits));
        w->bits = 0;
        w->acc = 0;
}

struct bit_reader {
        const uint8_t *p, *end;
        uint64_t win;                   /* next bits, left-aligned */
        unsigned bits;                  /* valid bits in win */
        uint64_t over;                  /* bits read past the end (zeros): corrupt stream */
};

static void br_init(struct bit_reader *r, const uint8_t *p, const uint8_t *end) {
        *r = (struct bit_reader) { .p = p, .end = end };
}

#define HOT static inline __attribute__((always_inline))

HOT void br_refill(struct bit_reader *r) {
        if (r->bits > 56)
                return;
        if (r->end - r->p >= 8) {
                /* Eight bytes at once, big-endian: whole ones are consumed; the
                 * part of the next byte that fits is ORed again, the same bits,
                 * by the next refill. */
                uint64_t w;
                unsigned take = (64 - r->bits) >> 3;

                memcpy(&w, r->p, 8);
                w = be64toh(w);
                r->win |= w >> r->bits;
                r->p += take;
                r->bits += take * 8;
                return;
        }
        while (r->bits <= 56) {
                if (r->p < r->end)
                        r->win |= (uint64_t) *r->p++ << (56 - r->bits);
                else
                        r->over += 8;
                r->bits += 8;
        }
}

/* n in 1..32 */
HOT uint64_t br_get(struct bit_reader *r, unsigned n) {
        uint64_t v;

        if (r->bits < n)
                br_refill(r);
        v = r->win >> (64 - n);
        r->win <<= n;
        r->bits -= n;
        return v;
}

HOT uint64_t br_get64(struct bit_reader *r, unsigned n) {
        if (n > 32) {
                uint64_t hi = br_get(r, n - 32);

                return (hi << 32) | br_get(r, 32);
        }
        return br_get(r, n);
}

/* True when the stream was read past its end. */
static bool br_overrun(const struct bit_reader *r) {
        return r->over > 0 && r->over > (uint64_t) r->bits;
}

/* ---- symbols ---- */

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

static unsigned bit_length(uint64_t u) {
        return u ? 64 - (unsigned) __builtin_clzll(u) : 0;
}

/* 0, -1, 1, -2, ... to 0, 1, 2, 3, ...: small magnitudes, small numbers. */
static inline uint64_t zigzag(int64_t d) {
        return ((uint64_t) d << 1) ^ (uint64_t) (d >> 63);
}

static inline int64_t unzigzag(uint64_t u) {
        return (int64_t) (u >> 1) ^ -(int64_t) (u & 1);
}

static uint64_t magnitude(int64_t d) {
        return d < 0 ? (uint64_t) 0 - (uint64_t) d : (uint64_t) d;
}

/* A non-zero delta was coded: it is the last one now. */
HOT void codec_note(struct codec *c, int64_t d) {
        uint64_t mag = magnitude(d), had = magnitude(c->last);

        if (mag != had)
                c->r2 = had;
        c->last = d;
}

static void enc_delta(struct bit_writer *w, struct codec *c, int64_t d, bool allow_repeat) {
        uint64_t u;
        unsigned n;

        if (d == 0 && allow_repeat) {
                bw_put(w, 0, 1);
                return;
        }
        if (d != 0 && c->last != 0 && d == -c->last) {
                bw_put(w, 2, 2);                        /* 10 */
        } else if (d != 0 && d == c->last) {
                bw_put(w, 12, 4);                       /* 1100 */
        } else if (d != 0 && c->r2 != 0 && magnitude(d) == c->r2) {
                bw_put(w, d < 0 ? 27 : 26, 5);          /* 1101 s */
        } else {
                u = zigzag(d) + 1;
                n = bit_length(u);
                if (n <= c->width && c->width - n < 8) {
                        bw_put(w, 14, 4);               /* 1110: fits the last width, a few bits spare */
                        n = c->width;
                } else {
                        bw_put(w, 15, 4);               /* 1111 */
                        bw_put(w, n, 7);
                        c->width = n;
                }
                bw_put(w, u, n);
        }
        if (d != 0)
                codec_note(c, d);
}

static void enc_value(struct bit_writer *w, struct codec *c, int16_t v) {
        if (v == HISTORY_MISSING) {
                if (c->missing)
                        bw_put(w, 0, 1);
                else {
                        bw_put(w, 15, 4);
                        bw_put(w, 0, 7);
                        c->missing = true;
                }
                return;
        }
        enc_delta(w, c, (int64_t) v - c->prev, !c->missing);
        c->prev = v;
        c->missing = false;
}

enum { SYM_REPEAT, SYM_DELTA, SYM_MISSING, SYM_BAD };

/* Refills the window for a symbol of up to `bits` bits besides a width's
 * value; true, the bit consumed, when it is 0: a repeat, in either set. */
HOT bool dec_repeat(struct bit_reader *r, unsigned bits) {
        if (r->bits < bits)
                br_refill(r);
        if (r->win >> 63)
                return false;
        r->win <<= 1;
        r->bits--;
        return true;
}

/* The delta of a width symbol, its prefix read: u in the last explicit
 * width, or (explicit_width) in the w[7] bits that follow, where w = 0 says
 * "missing". Either symbol set's; the caller notes the delta. */
HOT int dec_width(struct bit_reader *r, struct codec *c, bool explicit_width, int64_t *d) {
        unsigned n = c->width;

        if (explicit_width) {
                n = (unsigned) br_get(r, 7);
                if (n == 0)
                        return SYM_MISSING;
                if (n > 64)
                        return SYM_BAD;
                c->width = n;
        }
        if (n == 0)
                return SYM_BAD;
        *d = unzigzag(br_get64(r, n) - 1);
        return *d == INT64_MIN ? SYM_BAD : SYM_DELTA;   /* no magnitude for it */
}

/* The symbols of version 2 and 3 files; their r is the magnitude of last. */
static int dec_delta_legacy(struct bit_reader *r, struct codec *c, int64_t *d) {
        bool explicit_width;
        int sym;

        if (dec_repeat(r, 10))
                return SYM_REPEAT;
        if (!((r->win >> 62) & 1)) {
                uint64_t s = (r->win >> 61) & 1, m = magnitude(c->last);

                r->win <<= 3;
                r->bits -= 3;
                *d = s ? -(int64_t) m : (int64_t) m;    /* 10 s: +-r, the last |delta| */
                return m ? SYM_DELTA : SYM_BAD;
        }
        explicit_width = (r->win >> 61) & 1;
        r->win <<= 3;
        r->bits -= 3;
        sym = dec_width(r, c, explicit_width, d);
        if (sym == SYM_DELTA && *d != 0)
                c->last = *d;
        return sym;
}

HOT int dec_delta(struct bit_reader *r, struct codec *c, int64_t *d) {
        unsigned top;

        if (c->legacy)
                return dec_delta_legacy(r, c, d);
        if (dec_repeat(r, 11))
                return SYM_REPEAT;
        if (!((r->win >> 62) & 1)) {
                r->win <<= 2;
                r->bits -= 2;
                *d = -c->last;                  /* 10 */
        } else {
                top = (unsigned) (r->win >> 60);
                r->win <<= 4;
                r->bits -= 4;
                if (top == 12) {
                        *d = c->last;           /* 1100 */
                } else if (top == 13) {
                        if (c->r2 == 0)
                                return SYM_BAD;
                        *d = r->win >> 63 ? -(int64_t) c->r2 : (int64_t) c->r2;   /* 1101 s */
                        r->win <<= 1;
                        r->bits--;
                } else {
                        int sym = dec_width(r, c, top == 15, d);        /* 1110 u, 1111 w u */

                        if (sym == SYM_DELTA && *d != 0)
                                codec_note(c, *d);
                        return sym;
                }
        }
        if (*d == 0)
                return SYM_BAD;         /* 10 or 1100 before any delta */
        codec_note(c, *d);
        return SYM_DELTA;
}

/* Next value of a Rice-coded value stream; -1 on a corrupt stream. After a
 * refill the window holds at least 57 bits, and a value takes at most 37.
 * |x| <= rice_lim is |x| <= INT16_MAX and |x * step| <= INT16_MAX at once. */
HOT int dec_rice(struct bit_reader *r, struct codec *c, int16_t *v) {
        const unsigned k = c->rice_k;
        uint64_t z;
        unsigned q;
        int64_t x;

        if (r->bits < RICE_ESCAPE + RICE_RAW_BITS)
                br_refill(r);
        q = r->win ? (unsigned) __builtin_clzll(r->win) : 64;
        if (q < RICE_ESCAPE) {
                z = ((uint64_t) q << k) | (r->win << (q + 1) >> 1 >> (63 - k));
                r->win <<= q + 1 + k;
                r->bits -= q + 1 + k;
        } else {
                z = r->win << RICE_ESCAPE >> (64 - RICE_RAW_BITS);
                r->win <<= RICE_ESCAPE + RICE_RAW_BITS;
                r->bits -= RICE_ESCAPE + RICE_RAW_BITS;
        }
        x = c->prev + unzigzag(z);
        if (x < -c->rice_lim || x > c->rice_lim)
                return -1;
        c->prev = x;
        *v = (int16_t) (x * c->scale);
        return 0;
}

/* x, in steps, as the stream's next value into *v; false, nothing taken,
 * when x or x times the step is beyond int16 (a corrupt stream). */
HOT bool value_take(struct codec *c, int64_t x, int16_t *v) {
        if (x < -INT16_MAX || x > INT16_MAX || x * c->scale < -INT16_MAX || x * c->scale > INT16_MAX)
                return false;
        c->prev = x;
        c->missing = false;
        *v = (int16_t) (x * c->scale);
        return true;
}

/* Next value of a value stream; -1 on a corrupt stream. */
HOT int dec_value(struct bit_reader *r, struct codec *c, int16_t *v) {
        int64_t d = 0, x;

        if (c->rice)
                return dec_rice(r, c, v);
        switch (dec_delta(r, c, &d)) {
        case SYM_REPEAT:
                *v = c->missing ? HISTORY_MISSING : (int16_t) (c->prev * c->scale);
                return 0;
        case SYM_MISSING:
                c->missing = true;
                *v = HISTORY_MISSING;
                return 0;
        case SYM_DELTA:
                return __builtin_add_overflow(c->prev, d, &x) || !value_take(c, x, v) ? -1 : 0;
        }
        return -1;
}

/* Next time of a time stream (after the first, which is the block's first_ms). */
HOT int dec_time(struct bit_reader *r, struct codec *c, int64_t *t) {
        int64_t d = 0;

        switch (dec_delta(r, c, &d)) {
        case SYM_REPEAT:
                d = 0;
                break;
        case SYM_DELTA:
                break;
        default:
                return -1;
        }
        /* d of a corrupt stream may be near +-2^63 */
        if (__builtin_add_overflow(c->prev_delta, d, &c->prev_delta) || c->prev_delta < 0 ||
            c->prev_delta > 2 * HISTORY_TIME_LIMIT)
                return -1;
        c->prev += c->prev_delta;
        if (c->prev > HISTORY_TIME_LIMIT)
                return -1;
        *t = c->prev;
        return 0;
}

/* A value stream starts with its step: 16 bits, every value is a multiple
 * of it (whole degrees are steps of 100 centidegrees, loads from 100 Hz
 * jiffies steps of 100 or 25), and the symbols count steps. With RICE_FLAG
 * set, k follows and the stream is Rice-coded. */
static int value_stream_init(struct bit_reader *r, struct codec *c, const uint8_t *p, const uint8_t *end,
                             bool legacy) {
        unsigned head;

        br_init(r, p, end);
        head = (unsigned) br_get(r, 16);
        *c = (struct codec) { .scale = (int64_t) (head & ~RICE_FLAG), .rice = head & RICE_FLAG, .legacy = legacy };
        if (c->scale <= 0)
                return -1;
        if (c->rice) {
                c->rice_k = (unsigned) br_get(r, RICE_K_BITS);
                c->rice_lim = INT16_MAX / c->scale;
        }
        return 0;
}

/* Decodes the times of a block into t[0..b->n). 0, or -EBADMSG when corrupt. */
static int block_times(const struct history_block *b, int64_t *t) {
        const uint8_t *data = block_data(b);
        struct codec c = { .prev = b->first_ms, .legacy = b->legacy };
        struct bit_reader r;

        br_init(&r, data, data + b->end[0]);
        t[0] = b->first_ms;
        for (uint32_t i = 1; i < b->n; i++)
                if (dec_time(&r, &c, &t[i]) < 0)
                        return -EBADMSG;
        return br_overrun(&r) || t[b->n - 1] != b->last_ms ? -EBADMSG : 0;
}

/* Decodes column col's values of a block into v[0..b->n); missing when the
 * block predates the column. 0, or -EBADMSG when corrupt. */
static int block_values(const struct history_block *b, size_t col, int16_t *v) {
        const uint8_t *data = block_data(b);
        struct codec c = {};
        struct bit_reader r;

        if (col + 1 >= b->n_streams) {
                for (uint32_t i = 0; i < b->n; i++)
                        v[i] = HISTORY_MISSING;
                return 0;
        }
        if (value_stream_init(&r, &c, data + b->end[col], data + b->end[col + 1], b->legacy) < 0)
                return -EBADMSG;
        if (c.rice || c.legacy) {
                for (uint32_t i = 0; i < b->n; i++)
                        if ((c.rice ? dec_rice(&r, &c, &v[i]) : dec_value(&r, &c, &v[i])) < 0)
                                return -EBADMSG;
                return br_overrun(&r) ? -EBADMSG : 0;
        }
        for (uint32_t i = 0; i < b->n;) {
                if (r.bits < 11)
                        br_refill(&r);
                if (!(r.win >> 63)) {
                        /* A run of repeats: as many as the window shows at once. */
                        unsigned z = r.win ? (unsigned) __builtin_clzll(r.win) : 64;
                        int16_t x = c.missing ? HISTORY_MISSING : (int16_t) (c.prev * c.scale);

                        if (z > r.bits)
                                z = r.bits;
                        if (z > b->n - i)
                                z = b->n - i;
                        r.win = z >= 64 ? 0 : r.win << z;
                        r.bits -= z;
                        while (z-- > 0)
                                v[i++] = x;
                        continue;
                }
                if (!((r.win >> 62) & 1) && c.last != 0) {
                        /* 10: back by the last delta, the other common case */
                        r.win <<= 2;
                        r.bits -= 2;
                        if (!value_take(&c, c.prev - c.last, &v[i++]))
                                return -EBADMSG;
                        c.last = -c.last;               /* the same size: r2 stays */
                        continue;
                }
                if ((r.win >> 61) == 6 && (c.last != 0 || c.r2 != 0)) {
                        /* 1100: the last delta again; 1101 s: +-r2 */
                        bool again = !((r.win >> 60) & 1);
                        int64_t d = again ? c.last : (r.win >> 59) & 1 ? -(int64_t) c.r2 : (int64_t) c.r2;

                        r.win <<= 5 - again;
                        r.bits -= 5 - again;
                        if (d == 0 || !value_take(&c, c.prev + d, &v[i++]))
                                return -EBADMSG;
                        codec_note(&c, d);
                        continue;
                }
                if ((r.win >> 60) == 14 && c.width > 0 && c.width <= 32) {
                        /* 1110 u: a delta in the last width */
                        uint64_t u;
                        int64_t d;

                        if (r.bits < 4 + c.width)
                                br_refill(&r);
                        u = ((r.win << 4) >> (64 - c.width)) - 1;
                        d = unzigzag(u);
                        r.win <<= 4 + c.width;
                        r.bits -= 4 + c.width;
                        if (!value_take(&c, c.prev + d, &v[i++]))
                                return -EBADMSG;
                        if (d != 0)
                                codec_note(&c, d);
                        continue;
                }
                if (dec_value(&r, &c, &v[i++]) < 0)
                        return -EBADMSG;
        }
        return br_overrun(&r) ? -EBADMSG : 0;
}

static unsigned gcd_u(unsigned a, unsigned b) {
        while (b) {
                unsigned t = a % b;

                a = b;
                b = t;
        }
        return a;
}

/* The largest step that divides every present value (1..32767). */
static unsigned value_step(const int16_t *v, size_t n) {
        unsigned g = 0;

        for (size_t i = 0; i < n && g != 1; i++)
                if (v[i] != HISTORY_MISSING)
                        g = gcd_u(g, (unsigned) (v[i] < 0 ? -v[i] : v[i]));
        return g ? g : 1;
}

static unsigned rice_bits(uint64_t z, unsigned k) {
        return (z >> k) < RICE_ESCAPE ? (unsigned) (z >> k) + 1 + k : RICE_ESCAPE + RICE_RAW_BITS;
}

/* z of each of n values in steps (delta to the one before, the first to 0)
 * into z[]; false when a value is missing, as no Rice stream can say so. */
static bool rice_deltas(const int16_t *v, size_t n, unsigned step, uint32_t *z) {
        int64_t prev = 0;

        for (size_t i = 0; i < n; i++) {
                int64_t x = v[i] / (int) step;

                if (v[i] == HISTORY_MISSING)
                        return false;
                z[i] = (uint32_t) zigzag(x - prev);
                prev = x;
        }
        return true;
}

/* The k that codes the n values of z[] shortest, and its length in bits,
 * header included. The best k is near log2 of the mean z: that one and
 * the two below it are tried. */
static uint64_t rice_best(const uint32_t *z, size_t n, unsigned *ret_k) {
        uint64_t best = UINT64_MAX, sum = 0;
        unsigned top;

        for (size_t i = 0; i < n; i++)
                sum += z[i];
        top = bit_length(n ? sum / n : 0);
        if (top >= 1u << RICE_K_BITS)
                top = (1u << RICE_K_BITS) - 1;
        for (unsigned k = top > 2 ? top - 2 : 0; k <= top; k++) {
                uint64_t bits = 16 + RICE_K_BITS;

                for (size_t i = 0; i < n && bits < best; i++)
                        bits += rice_bits(z[i], k);
                if (bits < best) {
                        best = bits;
                        *ret_k = k;
                }
        }
        return best;
}

static void enc_rice(struct bit_writer *w, const uint32_t *z, size_t n, unsigned step, unsigned k) {
        bw_put(w, RICE_FLAG | step, 16);
        bw_put(w, k, RICE_K_BITS);
        for (size_t i = 0; i < n; i++) {
                if ((z[i] >> k) < RICE_ESCAPE) {
                        bw_put(w, 1, (z[i] >> k) + 1);
                        bw_put(w, z[i], k);
                } else {
                        bw_put(w, 0, RICE_ESCAPE);
                        bw_put(w, z[i], RICE_RAW_BITS);
                }
        }
}

/* Bytes of a block with n_streams streams of size bytes in all. */
static size_t block_bytes(size_t n_streams, size_t size) {
        return sizeof(struct history_block) + n_streams * sizeof(uint32_t) + size + HISTORY_PAD;
}

/* Encodes the samples of old (the ring's newest block, or NULL) followed
 * by the head of h into a block; old + head are at most HISTORY_BLOCK. On
 * success old is reallocated into *ret, which replaces it. The open block
 * of the ring grows this way a head at a time, so the head holds only a
 * quarter of a block uncompressed, and a full block's bytes are the same
 * as if it had been encoded from 1024 samples at once. The streams are
 * written into a mapping of their worst case, given back at the end, so
 * the heap holds only blocks, and the newest one grows in place. */
static int block_encode(const struct history *h, struct history_block *old, struct history_block **ret) {
        size_t n_old = old ? old->n : 0, n = n_old + h->head_n, n_cols = h->n_columns;
        /* Worst case per symbol: 3 + 7 + 64 bits for times, 3 + 7 + 18 for values. */
        size_t worst = (n * 74 + 7) / 8 + 1 + n_cols * ((n * 28 + 7) / 8 + 3);
        size_t scratch_len = n * (sizeof(int64_t) + sizeof(int16_t) + sizeof(uint32_t)) +
                             (n_cols + 1) * sizeof(uint32_t) + worst;
        const int64_t *t = h->head_ms;
        struct history_block *b;
        int64_t *joined_t;                      /* old's times, then the head's */
        int16_t *joined_v;                      /* a column's values, likewise */
        uint32_t *z, *end;                      /* z: a value stream's Rice deltas */
        uint8_t *data, *p;
        void *scratch;
        int r = 0;

        if (n == 0 || n > HISTORY_BLOCK)
                return -EINVAL;
        scratch = mmap(NULL, scratch_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (scratch == MAP_FAILED)
                return -ENOMEM;
        joined_t = scratch;
        z = (uint32_t *) (joined_t + n);
        end = z + n;
        joined_v = (int16_t *) (end + n_cols + 1);
        p = data = (uint8_t *) (joined_v + n);
        if (old) {
                r = block_times(old, joined_t);
                memcpy(joined_t + n_old, h->head_ms, h->head_n * sizeof *joined_t);
                t = joined_t;
        }
        if (r == 0) {
                struct bit_writer w = { .p = p };
                struct codec c = { .prev = t[0] };

                for (size_t i = 1; i < n; i++) {
                        int64_t delta = t[i] - c.prev;

                        enc_delta(&w, &c, delta - c.prev_delta, true);
                        c.prev_delta = delta;
                        c.prev = t[i];
                }
                bw_finish(&w);
                p = w.p;
                end[0] = (uint32_t) (p - data);
        }
        for (size_t k = 0; k < n_cols && r == 0; k++) {
                struct bit_writer w = { .p = p };
                struct codec c = {};
                const int16_t *v = h->columns[k].head;
                unsigned step;

                if (old) {
                        if ((r = block_values(old, k, joined_v)) < 0)
                                break;
                        memcpy(joined_v + n_old, v, h->head_n * sizeof *joined_v);
                        v = joined_v;
                }
                step = value_step(v, n);
                bw_put(&w, step, 16);
                for (size_t i = 0; i < n; i++)
                        enc_value(&w, &c, v[i] == HISTORY_MISSING ? v[i] : (int16_t) (v[i] / (int) step));
                if (rice_deltas(v, n, step, z)) {
                        unsigned rice_k = 0;
                        uint64_t symbols = (uint64_t) (w.p - p) * 8 + w.bits;

                        /* Rice decodes a repeat in more instructions than
                         * the symbols do: it is taken when a fifth shorter. */
                        if (rice_best(z, n, &rice_k) * 5 < symbols * 4) {
                                w = (struct bit_writer) { .p = p };
                                enc_rice(&w, z, n, step, rice_k);
                        }
                }
                bw_finish(&w);
                p = w.p;
                end[k + 1] = (uint32_t) (p - data);
        }
        b = r < 0 ? NULL : realloc(old, block_bytes(n_cols + 1, (size_t) (p - data)));
        if (b) {
                b->first_ms = t[0];
                b->last_ms = t[n - 1];
                b->n = (uint32_t) n;
                b->n_streams = (uint32_t) (n_cols + 1);
                b->size = (uint32_t) (p - data);
                b->legacy = 0;
                memcpy(b->end, end, (n_cols + 1) * sizeof *end);
                memcpy((uint8_t *) block_data(b), data, b->size);
                memset((uint8_t *) block_data(b) + b->size, 0, HISTORY_PAD);
                *ret = b;
        } else if (r == 0)
                r = -ENOMEM;
        munmap(scratch, scratch_len);
        return r;
}

/* ---- the ring ---- */

int history_new(size_t capacity, struct history **ret) {
        struct history *h;

        if (!ret || capacity == 0 || capacity > HISTORY_MAX_CAPACITY)
                return -EINVAL;
        h = calloc(1, sizeof *h);
        if (!h)
                return -ENOMEM;
        h->capacity = capacity;
        h->head_cap = capacity < HISTORY_BLOCK ? capacity : HISTORY_HEAD;
        h->head_ms = malloc(h->head_cap * sizeof *h->head_ms);
        if (!h->head_ms) {
                free(h);
                return -ENOMEM;
        }
        *ret = h;
        return 0;
}

static void history_drop_blocks(struct history *h) {
        for (size_t i = 0; i < h->n_blocks; i++)
                free(h->blocks[i]);
        h->n_blocks = 0;
        h->block_samples = 0;
        h->skip = 0;
}

void history_free(struct history *h) {
        if (!h)
                return;
        history_drop_blocks(h);
        free(h->blocks);
        for (size_t i = 0; i < h->n_columns; i++) {
                free(h->columns[i].id);
                free(h->columns[i].head);
        }
        free(h->columns);
        free(h->head_ms);
        free(h);
}

size_t history_count(const struct history *h) {
        return h ? h->block_samples - h->skip + h->head_n : 0;
}

size_t history_capacity(const struct history *h) {
        return h ? h->capacity : 0;
}

int history_find_column(const struct history *h, const char *id) {
        if (!h || !id)
                return -EINVAL;
        for (size_t i = 0; i < h->n_columns; i++)
                if (strcmp(h->columns[i].id, id) == 0)
                        return (int) i;
        return -ENOENT;
}

/* A value in the column's unit (degrees C, Hz, fraction) in stored units,
 * not yet rounded; NaN for an unknown kind. */
static double history_units(enum history_kind kind, double value) {
        switch (kind) {
        case HISTORY_TEMP:
                return value * 100.0;   /* degrees C -> centidegrees */
        case HISTORY_FREQ:
                return value / 1e6;     /* Hz -> MHz */
        case HISTORY_LOAD:
                return value * 10000.0; /* fraction -> 1/10000 */
        }
        return NAN;
}

/* Stored units of one step when nothing else is said: a load is kept to
 * 0.1 %, the finest a load of a second on ten CPUs resolves. */
static int16_t history_default_step(enum history_kind kind) {
        return kind == HISTORY_LOAD ? 10 : 1;
}

int history_column(struct history *h, const char *id, enum history_kind kind) {
        struct history_column *cols, *c;
        int idx;

        if (!h || !id || id[0] == '\0' || strlen(id) > HISTORY_ID_MAX ||
            (kind != HISTORY_TEMP && kind != HISTORY_FREQ && kind != HISTORY_LOAD))
                return -EINVAL;
        idx = history_find_column(h, id);
        if (idx >= 0)
                return h->columns[idx].kind == kind ? idx : -EEXIST;
        if (h->n_columns >= HISTORY_MAX_COLUMNS)
                return -E2BIG;

        cols = realloc(h->columns, (h->n_columns + 1) * sizeof *cols);
        if (!cols)
                return -ENOMEM;
        h->columns = cols;
        c = &cols[h->n_columns];
        *c = (struct history_column) { .kind = kind, .step = history_default_step(kind) };
        c->id = strdup(id);
        c->head = malloc(h->head_cap * sizeof *c->head);
        if (!c->id || !c->head) {
                free(c->id);
                free(c->head);
                return -ENOMEM;
        }
        /* Older samples read missing; an open sample takes a value. */
        for (size_t i = 0; i < h->head_n; i++)
                c->head[i] = HISTORY_MISSING;
        return (int) h->n_columns++;
}

int history_column_step(struct history *h, size_t col, double step) {
        struct history_column *c;
        double u;
        int16_t d;

        if (!h || col >= h->n_columns || !(step > 0.0))
                return -EINVAL;
        c = &h->columns[col];
        d = history_default_step(c->kind);
        u = floor(history_units(c->kind, step) + 1e-9);        /* 1/400 is 25 units, not 24.999... */
        if (u > INT16_MAX)
                u = INT16_MAX;
        c->step = u > d ? (int16_t) u : d;
        /* a whole load stays exact: the step divides 10000 */
        while (c->kind == HISTORY_LOAD && 10000 % c->step != 0)
                c->step--;
        return 0;
}

size_t history_n_columns(const struct history *h) {
        return h ? h->n_columns : 0;
}

const char *history_column_id(const struct history *h, size_t col) {
        return h && col < h->n_columns ? h->columns[col].id : NULL;
}

enum history_kind history_column_kind(const struct history *h, size_t col) {
        return h && col < h->n_columns ? h->columns[col].kind : HISTORY_TEMP;
}

static void history_drop_oldest(struct history *h) {
        if (h->n_blocks == 0) {
                /* Only when capacity is below a block: shift the head. */
                memmove(h->head_ms, h->head_ms + 1, (h->head_n - 1) * sizeof *h->head_ms);
                for (size_t c = 0; c < h->n_columns; c++)
                        memmove(h->columns[c].head, h->columns[c].head + 1,
                                (h->head_n - 1) * sizeof *h->columns[c].head);
                h->head_n--;
                return;
        }
        if (++h->skip < h->blocks[0]->n)
                return;
        h->block_samples -= h->blocks[0]->n;
        h->skip = 0;
        free(h->blocks[0]);
        memmove(h->blocks, h->blocks + 1, (h->n_blocks - 1) * sizeof *h->blocks);
        h->n_blocks--;
}

static int history_push_block(struct history *h, struct history_block *b) {
        if (h->n_blocks == h->blocks_cap) {
                size_t cap = h->blocks_cap ? h->blocks_cap * 2 : 8;
                struct history_block **nb = realloc(h->blocks, cap * sizeof *nb);

                if (!nb)
                        return -ENOMEM;
                h->blocks = nb;
                h->blocks_cap = cap;
        }
        h->blocks[h->n_blocks++] = b;
        h->block_samples += b->n;
        return 0;
}

/* Encodes the full head into the open block (the newest, while it has
 * room for it) or into a new one. */
static int history_flush_head(struct history *h) {
        struct history_block *last = h->n_blocks > 0 ? h->blocks[h->n_blocks - 1] : NULL, *b;
        bool join = last && last->n + h->head_n <= HISTORY_BLOCK;
        int r;

        r = block_encode(h, join ? last : NULL, &b);
        if (r < 0)
                return r;
        if (join) {
                h->blocks[h->n_blocks - 1] = b;
                h->block_samples += h->head_n;
        } else if ((r = history_push_block(h, b)) < 0) {
                free(b);
                return r;
        }
        h->head_n = 0;
        return 0;
}

int history_begin(struct history *h, int64_t time_ms) {
        int r;

        if (!h || time_ms > HISTORY_TIME_LIMIT || time_ms < -HISTORY_TIME_LIMIT)
                return -EINVAL;
        if (history_count(h) > 0 && time_ms < history_newest_ms(h))
                return -EINVAL;
        if (h->head_n == h->head_cap && h->capacity >= HISTORY_BLOCK) {
                r = history_flush_head(h);
                if (r < 0)
                        return r;
        }
        /* Below a block of capacity the head is the whole ring and never encoded. */
        if (history_count(h) == h->capacity)
                history_drop_oldest(h);
        h->head_ms[h->head_n] = time_ms;
        for (size_t i = 0; i < h->n_columns; i++)
                h->columns[i].head[h->head_n] = HISTORY_MISSING;
        h->head_n++;
        h->open = true;
        return 0;
}

/* lround() for |x| < INT16_MAX, without a call into libm at every value of
 * every tick: the integer part and the rest are exact in that range, and
 * halves go away from zero. */
static int16_t history_round(double x) {
        int i = (int) x;
        double rest = x - (double) i;

        if (rest >= 0.5)
                i++;
        else if (rest <= -0.5)
                i--;
        return (int16_t) i;
}

static int16_t history_encode(const struct history_column *c, double value) {
        double x = history_units(c->kind, value);

        if (isnan(x))
                return HISTORY_MISSING;
        if (c->step > 1)
                x = round(x / c->step) * c->step;
        if (x >= INT16_MAX)
                return INT16_MAX;
        if (x <= -INT16_MAX)            /* INT16_MIN stays the missing marker */
                return -INT16_MAX;
        return history_round(x);
}

static double history_decode(enum history_kind kind, double v) {
        switch (kind) {
        case HISTORY_TEMP:
                return v / 100.0;
        case HISTORY_FREQ:
                return v * 1e6;
        case HISTORY_LOAD:
                return v / 10000.0;
        }
        return NAN;
}

void history_set(struct history *h, size_t col, double value) {
        if (!h || !h->open || col >= h->n_columns)
                return;
        h->columns[col].head[h->head_n - 1] = history_encode(&h->columns[col], value);
}

/* Where logical sample i (0 = oldest) lives: a block and an index in it, or
 * the head (*ret_block NULL). */
static size_t history_locate(const struct history *h, size_t i, const struct history_block **ret_block) {
        size_t k = i + h->skip;

        for (size_t b = 0; b < h->n_blocks; b++) {
                if (k < h->blocks[b]->n) {
                        *ret_block = h->blocks[b];
                        return k;
                }
                k -= h->blocks[b]->n;
        }
        *ret_block = NULL;
        return k;
}

static int64_t history_time_at(const struct history *h, size_t i) {
        const struct history_block *b;
        size_t k = history_locate(h, i, &b);
        int64_t t[HISTORY_BLOCK];

        if (!b)
                return h->head_ms[k];
        if (k == 0)
                return b->first_ms;
        if (k == b->n - 1)
                return b->last_ms;
        if (block_times(b, t) < 0)
                return 0;
        return t[k];
}

int64_t history_oldest_ms(const struct history *h) {
        return h && history_count(h) > 0 ? history_time_at(h, 0) : 0;
}

int64_t history_newest_ms(const struct history *h) {
        if (!h || history_count(h) == 0)
                return 0;
        return h->head_n > 0 ? h->head_ms[h->head_n - 1] : h->blocks[h->n_blocks - 1]->last_ms;
}

int64_t history_time_ms(const struct history *h, size_t i) {
        return h && i < history_count(h) ? history_time_at(h, i) : 0;
}

double history_get(const struct history *h, size_t i, size_t col) {
        const struct history_block *b;
        int16_t v[HISTORY_BLOCK];
        size_t k;

        if (!h || i >= history_count(h) || col >= h->n_columns)
                return NAN;
        k = history_locate(h, i, &b);
        if (!b)
                v[0] = h->columns[col].head[k], k = 0;
        else if (block_values(b, col, v) < 0)
                return NAN;
        return v[k] == HISTORY_MISSING ? NAN : history_decode(h->columns[col].kind, v[k]);
}

void history_reset(struct history *h) {
        if (!h)
                return;
        history_drop_blocks(h);
        h->head_n = 0;
        h->open = false;
}

size_t history_memory_bytes(const struct history *h) {
        size_t n;

        if (!h)
                return 0;
        n = sizeof *h + h->head_cap * sizeof *h->head_ms + h->blocks_cap * sizeof *h->blocks +
            h->n_columns * (sizeof *h->columns + h->head_cap * sizeof(int16_t));
        for (size_t i = 0; i < h->n_columns; i++)
                n += strlen(h->columns[i].id) + 1;
        for (size_t i = 0; i < h->n_blocks; i++)
                n += block_bytes(h->blocks[i]->n_streams, h->blocks[i]->size);
        return n;
}

/* ---- queries ---- */

/* One run of samples of a block or of the head: times, and the values of
 * requested columns decoded on demand. */
struct history_span {
        const struct history_block *block;      /* NULL: the head */
        size_t first, n;                        /* samples [first, n) of it are in the ring */
};

struct query_state {
        const struct history *h;
        const size_t *cols;
        size_t n_cols;
        int64_t from_ms, to_ms;
        uint64_t width;
        struct history_result *r;
        uint32_t *counts;               /* per kept bucket and column: values seen */
        size_t n_slots;                 /* buckets opened so far */
        uint64_t last_bk;               /* bucket index of the last opened slot */
        int64_t *t;                     /* HISTORY_BLOCK times */
        int16_t *v;                     /* HISTORY_BLOCK values */
        uint32_t *run_a, *run_b;        /* HISTORY_BLOCK: runs [a, b) of a span in one bucket */
        uint32_t *run_slot;             /* HISTORY_BLOCK: the run's bucket slot */
        size_t n_runs;
};

static size_t history_spans(const struct history *h, struct history_span *spans) {
        size_t n = 0;

        for (size_t b = 0; b < h->n_blocks; b++)
                spans[n++] = (struct history_span) { h->blocks[b], b == 0 ? h->skip : 0, h->blocks[b]->n };
        if (h->head_n > 0)
                spans[n++] = (struct history_span) { NULL, 0, h->head_n };
        return n;
}

static bool span_overlaps(const struct history *h, const struct history_span *s, int64_t from, int64_t to) {
        int64_t first = s->block ? s->block->first_ms : h->head_ms[0];
        int64_t last = s->block ? s->block->last_ms : h->head_ms[h->head_n - 1];

        return last >= from && first <= to;
}

/* Times of a span into q->t, cut into runs of samples that share a bucket;
 * opens a slot for each new bucket. */
static int query_times(struct query_state *q, const struct history_span *s) {
        const int64_t *t = q->t;
        int64_t bucket_end = 0;         /* first time past the current bucket */
        int r;

        if (s->block) {
                r = block_times(s->block, q->t);
                if (r < 0)
                        return r;
        } else
                t = q->h->head_ms;
        q->n_runs = 0;
        for (size_t i = s->first; i < s->n; i++) {
                uint64_t bk;

                if (t[i] < q->from_ms || t[i] > q->to_ms)
                        continue;
                if (q->n_runs > 0 && q->run_b[q->n_runs - 1] == i && t[i] < bucket_end) {
                        q->run_b[q->n_runs - 1]++;      /* same bucket, next sample */
                        q->r->buckets[q->n_slots - 1].n_samples++;
                        continue;
                }
                bk = ((uint64_t) t[i] - (uint64_t) q->from_ms) / q->width;
                if (q->n_slots == 0 || bk != q->last_bk) {
                        q->r->buckets[q->n_slots].t_ms = (int64_t) ((uint64_t) q->from_ms + bk * q->width);
                        q->n_slots++;
                        q->last_bk = bk;
                }
                /* bucket_end may overflow only for the last bucket of the range: then nothing follows */
                bucket_end = (int64_t) ((uint64_t) q->from_ms + (bk + 1) * q->width);
                if (bucket_end <= t[i])
                        bucket_end = INT64_MAX;
                q->run_a[q->n_runs] = (uint32_t) i;
                q->run_b[q->n_runs] = (uint32_t) i + 1;
                q->run_slot[q->n_runs] = (uint32_t) (q->n_slots - 1);
                q->n_runs++;
                q->r->buckets[q->n_slots - 1].n_samples++;
        }
        return 0;
}

/* Adds one slot's run of values to its bucket. */
static void query_add(struct query_state *q, size_t k, uint32_t slot, int mn, int mx, int64_t sum, uint32_t n) {
        size_t nc = q->n_cols;
        double *val = q->r->values + (size_t) slot * nc * 3;
        uint32_t *cnt = &q->counts[(size_t) slot * nc + k];

        if (n == 0)
                return;
        if (*cnt == 0 || mn < val[k])
                val[k] = mn;
        if (*cnt == 0 || mx > val[nc + k])
                val[nc + k] = mx;
        val[2 * nc + k] += (double) sum;        /* the sum, until the mean is made */
        *cnt += n;
}

static void query_values(struct query_state *q, const struct history_span *s, size_t k) {
        const int16_t *v = q->v;
        size_t col = q->cols[k];

        if (q->n_runs == 0)
                return;
        if (s->block) {
                if (block_values(s->block, col, q->v) < 0)
                        return;         /* corrupt in memory: cannot happen, reads missing */
        } else
                v = q->h->columns[col].head;
        for (size_t j = 0; j < q->n_runs; j++) {
                int mn = INT16_MAX, mx = -INT16_MAX;
                int64_t sum = 0;
                uint32_t n = 0;

                for (uint32_t i = q->run_a[j]; i < q->run_b[j]; i++) {
                        int x = v[i];

                        if (x == HISTORY_MISSING)
                                continue;
                        mn = x < mn ? x : mn;
                        mx = x > mx ? x : mx;
                        sum += x;
                        n++;
                }
                query_add(q, k, q->run_slot[j], mn, mx, sum, n);
        }
}

/* Turns raw sums into the column's unit, drops buckets without a value. */
static void query_finish(struct query_state *q) {
        struct history_result *r = q->r;
        size_t nc = q->n_cols, kept = 0;

        for (size_t s = 0; s < q->n_slots; s++) {
                struct history_bucket b = r->buckets[s];
                double *src = r->values + s * nc * 3, *dst = r->values + kept * nc * 3;
                size_t n = 0;

                for (size_t k = 0; k < nc; k++) {
                        uint32_t c = q->counts[s * nc + k];
                        enum history_kind kind = q->h->columns[q->cols[k]].kind;

                        n += c;
                        dst[k] = c ? history_decode(kind, src[k]) : NAN;
                        dst[nc + k] = c ? history_decode(kind, src[nc + k]) : NAN;
                        dst[2 * nc + k] = c ? history_decode(kind, src[2 * nc + k] / c) : NAN;
                }
                if (n == 0 && nc > 0)
                        continue;
                if (nc > 0) {
                        b.min = dst;
                        b.max = dst + nc;
                        b.mean = dst + 2 * nc;
                }
                r->buckets[kept++] = b;
        }
        r->n_buckets = kept;
}

static int history_result_alloc(struct history_result *r, size_t n_buckets, size_t n_cols) {
        r->buckets = calloc(n_buckets ? n_buckets : 1, sizeof *r->buckets);
        r->values = n_cols ? calloc(n_buckets * n_cols * 3 + 1, sizeof *r->values) : NULL;
        if (!r->buckets || (n_cols && !r->values)) {
                history_result_free(r);
                return -ENOMEM;
        }
        r->n_cols = n_cols;
        return 0;
}

static int history_query_run(struct query_state *q, struct history_span *spans, size_t n_spans,
                             uint64_t n_buckets) {
        uint64_t samples = 0;
        size_t max_slots;
        int r;

        /* At most one bucket per sample in range, and at most n_buckets. */
        for (size_t s = 0; s < n_spans; s++)
                if (span_overlaps(q->h, &spans[s], q->from_ms, q->to_ms))
                        samples += spans[s].n - spans[s].first;
        max_slots = (size_t) (samples < n_buckets ? samples : n_buckets);
        r = history_result_alloc(q->r, max_slots, q->n_cols);
        if (r < 0)
                return r;
        q->counts = calloc(max_slots * q->n_cols + 1, sizeof *q->counts);
        if (!q->counts)
                return -ENOMEM;
        /* Decode only the spans in range, and of them only the requested columns. */
        q->n_slots = 0;
        for (size_t s = 0; s < n_spans; s++) {
                if (!span_overlaps(q->h, &spans[s], q->from_ms, q->to_ms))
                        continue;
                r = query_times(q, &spans[s]);
                if (r < 0)
                        return r;
                for (size_t k = 0; k < q->n_cols; k++)
                        query_values(q, &spans[s], k);
        }
        query_finish(q);
        return 0;
}

int history_query(const struct history *h, int64_t from_ms, int64_t to_ms,
                  const size_t *cols, size_t n_cols, size_t points,
                  struct history_result *ret) {
        struct history_result res = {};
        struct query_state q = { .h = h, .cols = cols, .n_cols = n_cols, .r = &res };
        struct history_span *spans;
        size_t n_spans;
        int r;

        if (!h || !ret || from_ms > to_ms || points == 0 || (n_cols > 0 && !cols))
                return -EINVAL;
        for (size_t i = 0; i < n_cols; i++)
                if (cols[i] >= h->n_columns)
                        return -EINVAL;

        /* Equal integer widths: ceil((to - from + 1) / points), without overflow. */
        q.width = ((uint64_t) to_ms - (uint64_t) from_ms) / points;
        if (q.width < UINT64_MAX)
                q.width++;
        q.from_ms = from_ms;
        q.to_ms = to_ms;
        spans = malloc((h->n_blocks + 1) * sizeof *spans);
        q.t = malloc(HISTORY_BLOCK * sizeof *q.t);
        q.v = malloc(HISTORY_BLOCK * sizeof *q.v);
        q.run_a = malloc(HISTORY_BLOCK * sizeof *q.run_a);
        q.run_b = malloc(HISTORY_BLOCK * sizeof *q.run_b);
        q.run_slot = malloc(HISTORY_BLOCK * sizeof *q.run_slot);
        r = spans && q.t && q.v && q.run_a && q.run_b && q.run_slot ? 0 : -ENOMEM;
        if (r == 0) {
                n_spans = history_spans(h, spans);
                r = history_query_run(&q, spans, n_spans,
                                      ((uint64_t) to_ms - (uint64_t) from_ms) / q.width + 1);
        }
        res.bucket_ms = q.width > INT64_MAX ? INT64_MAX : (int64_t) q.width;
        free(spans);
        free(q.t);
        free(q.v);
        free(q.run_a);
        free(q.run_b);
        free(q.run_slot);
        free(q.counts);
        if (r < 0) {
                history_result_free(&res);
                return r;
        }
        *ret = res;
        return 0;
}

void history_result_free(struct history_result *r) {
        if (!r)
                return;
        free(r->buckets);
        free(r->values);
        *r = (struct history_result) {};
}

/*
 * File format, version 4, every integer little-endian whatever the host:
 *   header:  "HCHIST", u16 version (4; 3 and 2 are read too: their symbols
 *            are the older ones, and 2 has no Rice-coded streams; they are
 *            otherwise the same), u32 n_columns,
 *            n_columns x { u8 kind, u8 id_len, id_len bytes id },
 *            u32 CRC-32 (IEEE 802.3) of the header before it
 *   blocks, oldest first, each one record:
 *            u32 length of the payload, u32 CRC-32 of the payload, payload:
 *            u32 skip (samples at its start that are not in the ring),
 *            i64 first_ms, i64 last_ms, u32 n, u32 n_streams, u32 size,
 *            u32 0 (reserved), n_streams x u32 stream end offsets, size
 *            bytes of streams
 *            (as in memory; stream k + 1 is file column k)
 *   end:     u32 0, u32 0
 * It is written and read one block at a time. A block whose CRC or content
 * does not check out is rejected and the others are kept; so is a block
 * that would make time go backwards. The newest samples of the head are
 * written as one more block.
 */
#define HISTORY_MAGIC "HCHIST"
#define HISTORY_VERSION 4       /* 4: the symbols of codec; 3: Rice-coded value streams; 2, 3 are read too */
#define HISTORY_FILE_MAX (256u << 20)   /* bytes; far above 30 d x 16 columns at 1 s */
#define HISTORY_RECORD_HEAD 36          /* payload bytes before the end offsets */
#define HISTORY_RECORD_MAX (HISTORY_RECORD_HEAD + 4 * (HISTORY_MAX_COLUMNS + 1) + \
                            10 * HISTORY_BLOCK + (HISTORY_MAX_COLUMNS + 1) * 4 * HISTORY_BLOCK)

static void crc32_table(uint32_t t[256]) {
        for (uint32_t i = 0; i < 256; i++) {
                uint32_t c = i;

                for (int k = 0; k < 8; k++)
                        c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
                t[i] = c;
        }
}

static uint32_t crc32_update(const uint32_t t[256], uint32_t crc, const uint8_t *p, size_t n) {
        crc = ~crc;
        for (size_t i = 0; i < n; i++)
                crc = t[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
        return ~crc;
}

static void put_le(uint8_t *p, uint64_t v, size_t bytes) {
        for (size_t i = 0; i < bytes; i++)
                p[i] = (uint8_t) (v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, size_t bytes) {
        uint64_t v = 0;

        for (size_t i = 0; i < bytes; i++)
                v |= (uint64_t) p[i] << (8 * i);
        return v;
}

struct history_writer {
        int fd;
        int error;                      /* first -errno */
        size_t len;                     /* bytes in buf */
        uint32_t table[256];
        uint8_t buf[65536];
};

static void writer_flush(struct history_writer *w) {
        size_t done = 0;

        while (w->error == 0 && done < w->len) {
                ssize_t k = write(w->fd, w->buf + done, w->len - done);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        w->error = k < 0 ? -errno : -EIO;
                else
                        done += (size_t) k;
        }
        w->len = 0;
}

static void writer_bytes(struct history_writer *w, const uint8_t *p, size_t n) {
        while (n > 0) {
                size_t k = sizeof w->buf - w->len < n ? sizeof w->buf - w->len : n;

                memcpy(w->buf + w->len, p, k);
                w->len += k;
                p += k;
                n -= k;
                if (w->len == sizeof w->buf)
                        writer_flush(w);
        }
}

static void writer_le(struct history_writer *w, uint64_t v, size_t bytes) {
        uint8_t b[8];

        put_le(b, v, bytes);
        writer_bytes(w, b, bytes);
}

static void history_write_header(const struct history *h, struct history_writer *w) {
        uint8_t head[12];
        uint32_t crc;

        memcpy(head, HISTORY_MAGIC, 6);
        put_le(head + 6, HISTORY_VERSION, 2);
        put_le(head + 8, h->n_columns, 4);
        writer_bytes(w, head, 12);
        crc = crc32_update(w->table, 0, head, 12);
        for (size_t c = 0; c < h->n_columns; c++) {
                size_t n = strlen(h->columns[c].id);

                head[0] = (uint8_t) h->columns[c].kind;
                head[1] = (uint8_t) n;
                writer_bytes(w, head, 2);
                writer_bytes(w, (const uint8_t *) h->columns[c].id, n);
                crc = crc32_update(w->table, crc, head, 2);
                crc = crc32_update(w->table, crc, (const uint8_t *) h->columns[c].id, n);
        }
        writer_le(w, crc, 4);
}

static void history_write_block(struct history_writer *w, const struct history_block *b, size_t skip) {
        size_t ends = b->n_streams * 4, len = HISTORY_RECORD_HEAD + ends + b->size;
        uint8_t head[HISTORY_RECORD_HEAD], e[4];
        uint32_t crc;

        put_le(head, skip, 4);
        put_le(head + 4, (uint64_t) b->first_ms, 8);
        put_le(head + 12, (uint64_t) b->last_ms, 8);
        put_le(head + 20, b->n, 4);
        put_le(head + 24, b->n_streams, 4);
        put_le(head + 28, b->size, 4);
        put_le(head + 32, 0, 4);                        /* reserved */
        crc = crc32_update(w->table, 0, head, sizeof head);
        for (uint32_t k = 0; k < b->n_streams; k++) {
                put_le(e, b->end[k], 4);
                crc = crc32_update(w->table, crc, e, 4);
        }
        crc = crc32_update(w->table, crc, block_data(b), b->size);
        writer_le(w, len, 4);
        writer_le(w, crc, 4);
        writer_bytes(w, head, sizeof head);
        for (uint32_t k = 0; k < b->n_streams; k++)
                writer_le(w, b->end[k], 4);
        writer_bytes(w, block_data(b), b->size);
}

static int history_write(const struct history *h, struct history_writer *w) {
        history_write_header(h, w);
        for (size_t i = 0; i < h->n_blocks; i++)
                history_write_block(w, h->blocks[i], i == 0 ? h->skip : 0);
        if (h->head_n > 0) {
                struct history_block *b;
                int r = block_encode(h, NULL, &b);

                if (r < 0)
                        return r;
                history_write_block(w, b, 0);
                free(b);
        }
        writer_le(w, 0, 4);
        writer_le(w, 0, 4);
        writer_flush(w);
        return w->error;
}

/* Writes the ring to an open file; the caller commits or discards it. */
static int history_write_fd(const struct history *h, int fd) {
        struct history_writer *w;
        int r;

        w = malloc(sizeof *w);
        if (!w)
                return -ENOMEM;
        w->fd = fd;
        w->error = 0;
        w->len = 0;
        crc32_table(w->table);
        r = history_write(h, w);
        free(w);
        return r;
}

int history_save(const struct history *h, const char *path) {
        struct atomic_file f;
        int r;

        if (!h || !path || path[0] == '\0')
                return -EINVAL;
        r = atomic_file_open(&f, path, 0644);
        if (r < 0)
                return r;
        r = history_write_fd(h, f.fd);
        if (r < 0) {
                atomic_file_discard(&f);
                return r;
        }
        return atomic_file_commit(&f);
}

struct history_file {
        int fd;
        unsigned version;               /* of the format: 2 and 3 have the older symbols */
        uint32_t table[256];
        size_t n_columns;
        char **ids;                     /* n_columns, NUL-terminated copies */
        uint8_t *kinds;                 /* n_columns */
        off_t records;                  /* offset of the first block record */
        bool *ok;                       /* per record: passed the checks of the first pass */
        size_t n_records, cap_records;
        uint64_t *last_value;           /* per file column: 1 + global index of its newest value, 0 = none */
        uint64_t samples;               /* in accepted records, skips excluded */
        size_t rejected;                /* records rejected */
};

static void history_file_done(struct history_file *f) {
        for (size_t i = 0; f->ids && i < f->n_columns; i++)
                free(f->ids[i]);
        free(f->ids);
        free(f->kinds);
        free(f->ok);
        free(f->last_value);
        if (f->fd >= 0)
                close(f->fd);
}

/* Reads exactly n bytes: 0, -EBADMSG at end of file, or -errno. */
static int read_full(int fd, void *buf, size_t n) {
        size_t done = 0;

        while (done < n) {
                ssize_t k = read(fd, (uint8_t *) buf + done, n - done);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        return -EBADMSG;
                done += (size_t) k;
        }
        return 0;
}

static int history_file_open(const char *path, struct history_file *f) {
        struct stat st;

        /* O_NONBLOCK: a FIFO at the path must not block open(); it is then
         * refused below as not a regular file. */
        f->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (f->fd < 0)
                return -errno;
        if (fstat(f->fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return S_ISDIR(st.st_mode) ? -EISDIR : -EBADMSG;
        if ((uint64_t) st.st_size > HISTORY_FILE_MAX)
                return -EFBIG;
        return 0;
}

/* Magic, version and column table; ids unique, non-empty, without NUL. */
static int history_file_header(struct history_file *f) {
        uint8_t head[12], col[2 + 255], crcb[4];
        uint32_t crc;
        int r;

        r = read_full(f->fd, head, sizeof head);
        if (r < 0)
                return r;
        if (memcmp(head, HISTORY_MAGIC, 6) != 0)
                return -EBADMSG;
        f->version = (unsigned) get_le(head + 6, 2);
        if (f->version < 2 || f->version > HISTORY_VERSION)
                return -EPROTONOSUPPORT;
        crc = crc32_update(f->table, 0, head, sizeof head);
        f->n_columns = (size_t) get_le(head + 8, 4);
        if (f->n_columns > HISTORY_MAX_COLUMNS)
                return -EBADMSG;
        f->ids = calloc(f->n_columns ? f->n_columns : 1, sizeof *f->ids);
        f->kinds = calloc(f->n_columns ? f->n_columns : 1, 1);
        f->last_value = calloc(f->n_columns ? f->n_columns : 1, sizeof *f->last_value);
        if (!f->ids || !f->kinds || !f->last_value)
                return -ENOMEM;
        for (size_t c = 0; c < f->n_columns; c++) {
                size_t n;

                if ((r = read_full(f->fd, col, 2)) < 0)
                        return r;
                n = col[1];
                if (col[0] > HISTORY_LOAD || n == 0 || (r = read_full(f->fd, col + 2, n)) < 0)
                        return r < 0 ? r : -EBADMSG;
                if (memchr(col + 2, 0, n))
                        return -EBADMSG;
                crc = crc32_update(f->table, crc, col, 2 + n);
                f->kinds[c] = col[0];
                f->ids[c] = strndup((const char *) col + 2, n);
                if (!f->ids[c])
                        return -ENOMEM;
                for (size_t k = 0; k < c; k++)
                        if (strcmp(f->ids[k], f->ids[c]) == 0)
                                return -EBADMSG;
        }
        if ((r = read_full(f->fd, crcb, 4)) < 0)
                return r;
        if ((uint32_t) get_le(crcb, 4) != crc)
                return -EBADMSG;
        f->records = lseek(f->fd, 0, SEEK_CUR);
        return f->records < 0 ? -errno : 0;
}

/* One record: *ret_block (malloc()ed, NULL at the end marker), its skip.
 * -EBADMSG for a record that fails its checks but could be stepped over;
 * -EIO when the file cannot be followed any further. */
static int history_file_record(struct history_file *f, struct history_block **ret_block, size_t *ret_skip) {
        uint8_t lc[8], *p = NULL;
        struct history_block *b;
        uint32_t len, n_streams, size, prev = 0;
        int r;

        *ret_block = NULL;
        r = read_full(f->fd, lc, 8);
        if (r < 0)
                return r == -EBADMSG ? -EIO : r;        /* truncated: no end marker */
        len = (uint32_t) get_le(lc, 4);
        if (len == 0)
                return 0;
        if (len < HISTORY_RECORD_HEAD + 4 || len > HISTORY_RECORD_MAX)
                return -EIO;
        p = malloc(len);
        if (!p)
                return -ENOMEM;
        r = read_full(f->fd, p, len);
        if (r < 0) {
                free(p);
                return r == -EBADMSG ? -EIO : r;
        }
        n_streams = (uint32_t) get_le(p + 24, 4);
        size = (uint32_t) get_le(p + 28, 4);
        if (crc32_update(f->table, 0, p, len) != (uint32_t) get_le(lc + 4, 4) ||
            n_streams == 0 || n_streams > f->n_columns + 1 ||
            (uint64_t) HISTORY_RECORD_HEAD + 4 * (uint64_t) n_streams + size != len) {
                free(p);
                return -EBADMSG;
        }
        b = malloc(block_bytes(n_streams, size));
        if (!b) {
                free(p);
                return -ENOMEM;
        }
        *ret_skip = (size_t) get_le(p, 4);
        b->first_ms = (int64_t) get_le(p + 4, 8);
        b->last_ms = (int64_t) get_le(p + 12, 8);
        b->n = (uint32_t) get_le(p + 20, 4);
        b->n_streams = n_streams;
        b->size = size;
        b->legacy = f->version < 4;
        for (uint32_t k = 0; k < n_streams; k++) {
                b->end[k] = (uint32_t) get_le(p + HISTORY_RECORD_HEAD + 4 * k, 4);
                if (b->end[k] < prev || b->end[k] > size)
                        r = -EBADMSG;
                prev = b->end[k];
        }
        memcpy((uint8_t *) block_data(b), p + HISTORY_RECORD_HEAD + 4 * n_streams, size);
        memset((uint8_t *) block_data(b) + size, 0, HISTORY_PAD);
        free(p);
        if (r == 0 && (b->n == 0 || b->n > HISTORY_BLOCK || *ret_skip >= b->n ||
                       b->first_ms < -HISTORY_TIME_LIMIT || b->first_ms > HISTORY_TIME_LIMIT ||
                       prev != size))
                r = -EBADMSG;
        if (r < 0) {
                free(b);
                return r;
        }
        *ret_block = b;
        return 1;
}

static int history_file_note(struct history_file *f, bool ok) {
        if (f->n_records == f->cap_records) {
                size_t cap = f->cap_records ? f->cap_records * 2 : 64;
                bool *n = realloc(f->ok, cap * sizeof *n);

                if (!n)
                        return -ENOMEM;
                f->ok = n;
                f->cap_records = cap;
        }
        f->ok[f->n_records++] = ok;
        f->rejected += !ok;
        return 0;
}

/* First pass: check every record, decode it whole, note which are usable
 * and where each column last had a value. */
static int history_file_scan(struct history_file *f) {
        int64_t t[HISTORY_BLOCK], last_ms = INT64_MIN;
        int16_t v[HISTORY_BLOCK];

        for (;;) {
                struct history_block *b;
                size_t skip;
                bool ok;
                int r = history_file_record(f, &b, &skip);

                if (r == -EIO) {
                        f->rejected++;                  /* a torn tail: stop there */
                        return 0;
                }
                if (r < 0 && r != -EBADMSG)
                        return r;
                if (r == 0)
                        return 0;
                ok = r > 0 && block_times(b, t) == 0 && t[skip] >= last_ms;
                for (size_t c = 0; ok && c + 1 < b->n_streams; c++) {
                        ok = block_values(b, c, v) == 0;
                        for (size_t i = b->n; ok && i-- > skip;)
                                if (v[i] != HISTORY_MISSING) {
                                        f->last_value[c] = f->samples + (i - skip) + 1;
                                        break;
                                }
                }
                if (ok) {
                        last_ms = b->last_ms;
                        f->samples += b->n - skip;
                }
                free(b);
                if ((r = history_file_note(f, ok)) < 0)
                        return r;
        }
}

/* Columns of the new ring g for each file column (-1: not kept). */
static int history_file_map(struct history *g, const struct history_file *f, uint64_t keep_from, int *map) {
        for (size_t c = 0; c < f->n_columns; c++) {
                bool any = f->last_value[c] > keep_from;
                int idx = history_find_column(g, f->ids[c]);

                if (idx < 0 && any)
                        idx = history_column(g, f->ids[c], (enum history_kind) f->kinds[c]);
                if (idx == -ENOMEM)
                        return idx;
                if (idx >= 0 && g->columns[idx].kind != (enum history_kind) f->kinds[c])
                        idx = -1;       /* same id, other unit: not the same series */
                map[c] = idx < 0 ? -1 : idx;
        }
        return 0;
}

struct stream_decoder {
        struct bit_reader r;
        struct codec c;
};

/* Samples [first, n) of a checked block into g, values of every file column
 * decoded in step so each sample is complete before the next begins. */
static int history_fill_block(struct history *g, const struct history_block *b, size_t first,
                              const int *map, struct stream_decoder *dec) {
        const uint8_t *data = block_data(b);
        size_t n_cols = b->n_streams - 1;
        int64_t t[HISTORY_BLOCK];
        int r;

        if (block_times(b, t) < 0)
                return 0;
        for (size_t c = 0; c < n_cols; c++)
                (void) value_stream_init(&dec[c].r, &dec[c].c, data + b->end[c], data + b->end[c + 1], b->legacy);
        for (size_t i = 0; i < b->n; i++) {
                if (i >= first && (r = history_begin(g, t[i])) < 0)
                        return r;
                for (size_t c = 0; c < n_cols; c++) {
                        int16_t v = HISTORY_MISSING;

                        (void) dec_value(&dec[c].r, &dec[c].c, &v);     /* checked by the scan */
                        if (i >= first && map[c] >= 0)
                                g->columns[map[c]].head[g->head_n - 1] = v;
                }
        }
        return 0;
}

/* Second pass: the usable records' samples from keep_from on, into g. */
static int history_file_fill(struct history *g, struct history_file *f, uint64_t keep_from, const int *map) {
        struct stream_decoder *dec;
        uint64_t seen = 0;
        int r = 0;

        if (lseek(f->fd, f->records, SEEK_SET) < 0)
                return -errno;
        dec = calloc(f->n_columns ? f->n_columns : 1, sizeof *dec);
        if (!dec)
                return -ENOMEM;
        for (size_t rec = 0; rec < f->n_records && r >= 0; rec++) {
                struct history_block *b;
                size_t skip, first, n;

                r = history_file_record(f, &b, &skip);
                if (r == -EIO || r == 0)
                        r = -EBADMSG;                   /* the file changed under us */
                if (r == -EBADMSG && !f->ok[rec])
                        r = 0;
                if (r <= 0 || !f->ok[rec]) {
                        free(b);
                        continue;
                }
                n = b->n - skip;
                first = seen + n <= keep_from ? b->n : skip + (keep_from > seen ? (size_t) (keep_from - seen) : 0);
                seen += n;
                r = first < b->n ? history_fill_block(g, b, first, map, dec) : 0;
                free(b);
        }
        free(dec);
        return r;
}

int history_load(struct history *h, const char *path) {
        struct history_file f = { .fd = -1 };
        struct history *g = NULL;
        uint64_t keep_from;
        int *map = NULL;
        int r;

        if (!h || !path)
                return -EINVAL;
        crc32_table(f.table);
        r = history_file_open(path, &f);
        if (r >= 0)
                r = history_file_header(&f);
        if (r >= 0)
                r = history_file_scan(&f);
        if (r >= 0)
                r = history_new(h->capacity, &g);
        for (size_t c = 0; r >= 0 && c < h->n_columns; c++)
                if ((r = history_column(g, h->columns[c].id, h->columns[c].kind)) >= 0)
                        g->columns[r].step = h->columns[c].step;
        if (r >= 0) {
                keep_from = f.samples > h->capacity ? f.samples - h->capacity : 0;
                map = calloc(f.n_columns ? f.n_columns : 1, sizeof *map);
                r = map ? history_file_map(g, &f, keep_from, map) : -ENOMEM;
        }
        if (r >= 0)
                r = history_file_fill(g, &f, keep_from, map);
        if (r >= 0) {
                struct history tmp = *h;

                *h = *g;
                *g = tmp;
                h->open = false;
                r = (int) (f.rejected > INT_MAX ? INT_MAX : f.rejected);
        }
        history_free(g);
        free(map);
        history_file_done(&f);
        return r;
}
