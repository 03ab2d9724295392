/* query.c — history_query(): the samples of a time range in buckets of equal width, min, max and mean. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "history-internal.h"

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
