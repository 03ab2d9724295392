/* codec.c — the bit codec of the history blocks: one stream of times and one per column, encoded and decoded. */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "history-internal.h"

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
int value_stream_init(struct bit_reader *r, struct codec *c, const uint8_t *p, const uint8_t *end,
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

int value_stream_next(struct bit_reader *r, struct codec *c, int16_t *v) {
        return dec_value(r, c, v);
}

int block_times(const struct history_block *b, int64_t *t) {
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

int block_values(const struct history_block *b, size_t col, int16_t *v) {
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

size_t block_bytes(size_t n_streams, size_t size) {
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
int block_encode(const struct history *h, struct history_block *old, struct history_block **ret) {
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
