/* ring.c — the bounded ring of samples: columns, the uncompressed head, blocks encoded as the head fills. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "history-internal.h"

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
        case HISTORY_POWER:
                return value * 100.0;   /* W -> centiwatts */
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
            (kind != HISTORY_TEMP && kind != HISTORY_FREQ && kind != HISTORY_LOAD && kind != HISTORY_POWER))
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
        h->serial++;
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

double history_decode(enum history_kind kind, double v) {
        switch (kind) {
        case HISTORY_TEMP:
                return v / 100.0;
        case HISTORY_FREQ:
                return v * 1e6;
        case HISTORY_LOAD:
                return v / 10000.0;
        case HISTORY_POWER:
                return v / 100.0;
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
        h->serial += h->capacity + 1;
}

uint64_t history_serial(const struct history *h) {
        return h ? h->serial : 0;
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
