/* history.c — bounded in-memory ring of samples, compact per-column encoding, save/load. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "history.h"

#define HISTORY_MISSING INT16_MIN

struct history_column {
        char *id;
        enum history_kind kind;
        int16_t *data;                  /* capacity slots, encoded (see history.h) */
        uint64_t first_seq;             /* samples numbered below this read missing */
};

struct history {
        size_t capacity;                /* samples */
        size_t head;                    /* slot of the oldest sample */
        size_t count;                   /* samples held */
        uint64_t seq;                   /* samples ever appended, i.e. number of the next one */
        bool open;                      /* the newest sample still takes history_set() */
        int64_t epoch_ms;               /* Unix ms that offset 0 stands for */
        uint32_t *offset_ms;            /* per slot: ms since epoch_ms */
        struct history_column *columns;
        size_t n_columns;
};

int history_new(size_t capacity, struct history **ret) {
        struct history *h;

        if (!ret || capacity == 0 || capacity > HISTORY_MAX_CAPACITY)
                return -EINVAL;
        h = calloc(1, sizeof *h);
        if (!h)
                return -ENOMEM;
        /* calloc: pages nobody wrote yet cost no resident memory. */
        h->offset_ms = calloc(capacity, sizeof *h->offset_ms);
        if (!h->offset_ms) {
                free(h);
                return -ENOMEM;
        }
        h->capacity = capacity;
        *ret = h;
        return 0;
}

void history_free(struct history *h) {
        if (!h)
                return;
        for (size_t i = 0; i < h->n_columns; i++) {
                free(h->columns[i].id);
                free(h->columns[i].data);
        }
        free(h->columns);
        free(h->offset_ms);
        free(h);
}

static size_t history_slot(const struct history *h, size_t i) {
        size_t s = h->head + i;

        return s >= h->capacity ? s - h->capacity : s;
}

static int64_t history_time_at(const struct history *h, size_t i) {
        return h->epoch_ms + (int64_t) h->offset_ms[history_slot(h, i)];
}

/* Logical index (0 = oldest) of the column's first sample that may hold a value. */
static size_t history_column_first(const struct history *h, const struct history_column *c) {
        uint64_t base = h->seq - h->count;

        if (c->first_seq <= base)
                return 0;
        return c->first_seq - base >= h->count ? h->count : (size_t) (c->first_seq - base);
}

int history_find_column(const struct history *h, const char *id) {
        if (!h || !id)
                return -EINVAL;
        for (size_t i = 0; i < h->n_columns; i++)
                if (strcmp(h->columns[i].id, id) == 0)
                        return (int) i;
        return -ENOENT;
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
        *c = (struct history_column) { .kind = kind, .first_seq = h->seq };
        c->id = strdup(id);
        c->data = calloc(h->capacity, sizeof *c->data);
        if (!c->id || !c->data) {
                free(c->id);
                free(c->data);
                return -ENOMEM;
        }
        if (h->open) {                  /* the open sample takes values for it too */
                c->first_seq = h->seq - 1;
                c->data[history_slot(h, h->count - 1)] = HISTORY_MISSING;
        }
        return (int) h->n_columns++;
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
        h->head = history_slot(h, 1);
        h->count--;
}

/* Moves the epoch to the oldest sample so offsets fit in 32 bits again (every
 * ~49 days). Samples more than UINT32_MAX ms older than time_ms are dropped:
 * only happens after a long gap, e.g. history loaded from an old file. */
static void history_rebase(struct history *h, int64_t time_ms) {
        int64_t epoch;
        uint32_t delta;

        while (h->count > 0 && (uint64_t) time_ms - (uint64_t) history_time_at(h, 0) > UINT32_MAX)
                history_drop_oldest(h);
        if (h->count == 0) {
                h->epoch_ms = time_ms;
                return;
        }
        epoch = history_time_at(h, 0);
        delta = (uint32_t) (epoch - h->epoch_ms);
        for (size_t i = 0; i < h->count; i++)
                h->offset_ms[history_slot(h, i)] -= delta;
        h->epoch_ms = epoch;
}

int history_begin(struct history *h, int64_t time_ms) {
        size_t slot;

        if (!h)
                return -EINVAL;
        if (h->count > 0 && time_ms < history_newest_ms(h))
                return -EINVAL;
        if (h->count == 0)
                h->epoch_ms = time_ms;
        else if ((uint64_t) time_ms - (uint64_t) h->epoch_ms > UINT32_MAX)
                history_rebase(h, time_ms);

        if (h->count == h->capacity)
                history_drop_oldest(h);
        slot = history_slot(h, h->count);
        h->offset_ms[slot] = (uint32_t) ((uint64_t) time_ms - (uint64_t) h->epoch_ms);
        for (size_t i = 0; i < h->n_columns; i++)
                h->columns[i].data[slot] = HISTORY_MISSING;
        h->count++;
        h->seq++;
        h->open = true;
        return 0;
}

static int16_t history_encode(enum history_kind kind, double value) {
        double x;

        switch (kind) {
        case HISTORY_TEMP:
                x = value * 100.0;      /* degrees C -> centidegrees */
                break;
        case HISTORY_FREQ:
                x = value / 1e6;        /* Hz -> MHz */
                break;
        case HISTORY_LOAD:
                x = value * 10000.0;    /* fraction -> 1/10000 */
                break;
        default:
                return HISTORY_MISSING;
        }
        if (isnan(x))
                return HISTORY_MISSING;
        if (x >= INT16_MAX)
                return INT16_MAX;
        if (x <= -INT16_MAX)            /* INT16_MIN stays the missing marker */
                return -INT16_MAX;
        return (int16_t) lround(x);
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
        h->columns[col].data[history_slot(h, h->count - 1)] = history_encode(h->columns[col].kind, value);
}

size_t history_count(const struct history *h) {
        return h ? h->count : 0;
}

size_t history_capacity(const struct history *h) {
        return h ? h->capacity : 0;
}

int64_t history_oldest_ms(const struct history *h) {
        return h && h->count > 0 ? history_time_at(h, 0) : 0;
}

int64_t history_newest_ms(const struct history *h) {
        return h && h->count > 0 ? history_time_at(h, h->count - 1) : 0;
}

int64_t history_time_ms(const struct history *h, size_t i) {
        return h && i < h->count ? history_time_at(h, i) : 0;
}

double history_get(const struct history *h, size_t i, size_t col) {
        const struct history_column *c;
        int16_t v;

        if (!h || i >= h->count || col >= h->n_columns)
                return NAN;
        c = &h->columns[col];
        if (i < history_column_first(h, c))
                return NAN;
        v = c->data[history_slot(h, i)];
        return v == HISTORY_MISSING ? NAN : history_decode(c->kind, v);
}

void history_reset(struct history *h) {
        if (!h)
                return;
        h->head = 0;
        h->count = 0;
        h->open = false;
        for (size_t i = 0; i < h->n_columns; i++)
                h->columns[i].first_seq = h->seq;
}

size_t history_memory_bytes(const struct history *h) {
        size_t n;

        if (!h)
                return 0;
        n = sizeof *h + h->capacity * sizeof *h->offset_ms + h->n_columns * sizeof *h->columns;
        for (size_t i = 0; i < h->n_columns; i++)
                n += h->capacity * sizeof(int16_t) + strlen(h->columns[i].id) + 1;
        return n;
}

/* First logical index in [lo, hi) whose time is >= t (or > t when after). Times never go down. */
static size_t history_search(const struct history *h, size_t lo, size_t hi, int64_t t, bool after) {
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int64_t tm = history_time_at(h, mid);

                if (after ? tm <= t : tm < t)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

struct history_stats {
        int min, max;
        int64_t sum;
        size_t n;
};

static void history_stats_add(struct history_stats *s, const int16_t *v, size_t n) {
        for (size_t i = 0; i < n; i++) {
                if (v[i] == HISTORY_MISSING)
                        continue;
                if (v[i] < s->min)
                        s->min = v[i];
                if (v[i] > s->max)
                        s->max = v[i];
                s->sum += v[i];
                s->n++;
        }
}

/* min/max/mean of one column over logical samples [a, b), in the column's unit. */
static size_t history_column_stats(const struct history *h, size_t col, size_t a, size_t b,
                                   double *ret_min, double *ret_max, double *ret_mean) {
        const struct history_column *c = &h->columns[col];
        struct history_stats s = { .min = INT_MAX, .max = INT_MIN };
        size_t first = history_column_first(h, c), start, len1;

        if (a < first)
                a = first;
        if (a < b) {
                start = history_slot(h, a);
                len1 = h->capacity - start < b - a ? h->capacity - start : b - a;
                history_stats_add(&s, c->data + start, len1);
                history_stats_add(&s, c->data, b - a - len1);   /* wrapped part */
        }
        if (s.n == 0) {
                *ret_min = *ret_max = *ret_mean = NAN;
                return 0;
        }
        *ret_min = history_decode(c->kind, s.min);
        *ret_max = history_decode(c->kind, s.max);
        *ret_mean = history_decode(c->kind, (double) s.sum / (double) s.n);
        return s.n;
}

/* Fills bucket b from samples [a, e); false when no requested column has a value. */
static bool history_bucket_fill(const struct history *h, const size_t *cols, size_t n_cols,
                                size_t a, size_t e, struct history_bucket *b) {
        size_t n = 0;

        for (size_t k = 0; k < n_cols; k++)
                n += history_column_stats(h, cols[k], a, e, &b->min[k], &b->max[k], &b->mean[k]);
        b->n_samples = (uint32_t) (e - a);
        return n > 0 || n_cols == 0;
}

/* First logical index in [l, u) that falls in a later bucket than bk. */
static size_t history_bucket_end(const struct history *h, size_t l, size_t u, int64_t from_ms,
                                 uint64_t width, uint64_t bk) {
        while (l < u) {
                size_t mid = l + (u - l) / 2;

                if (((uint64_t) history_time_at(h, mid) - (uint64_t) from_ms) / width == bk)
                        l = mid + 1;
                else
                        u = mid;
        }
        return l;
}

static int history_result_alloc(struct history_result *r, size_t n_buckets, size_t n_cols) {
        r->buckets = calloc(n_buckets ? n_buckets : 1, sizeof *r->buckets);
        r->values = n_cols ? calloc(n_buckets * n_cols * 3, sizeof *r->values) : NULL;
        if (!r->buckets || (n_cols && n_buckets && !r->values)) {
                history_result_free(r);
                return -ENOMEM;
        }
        r->n_cols = n_cols;
        return 0;
}

int history_query(const struct history *h, int64_t from_ms, int64_t to_ms,
                  const size_t *cols, size_t n_cols, size_t points,
                  struct history_result *ret) {
        struct history_result r = {};
        uint64_t width, n_buckets;
        size_t lo, hi, max_kept;
        int k;

        if (!h || !ret || from_ms > to_ms || points == 0 || (n_cols > 0 && !cols))
                return -EINVAL;
        for (size_t i = 0; i < n_cols; i++)
                if (cols[i] >= h->n_columns)
                        return -EINVAL;

        /* Equal integer widths: ceil((to - from + 1) / points), without overflow. */
        width = ((uint64_t) to_ms - (uint64_t) from_ms) / points;
        if (width < UINT64_MAX)
                width++;
        n_buckets = ((uint64_t) to_ms - (uint64_t) from_ms) / width + 1;
        lo = history_search(h, 0, h->count, from_ms, false);
        hi = history_search(h, lo, h->count, to_ms, true);
        max_kept = hi - lo < n_buckets ? hi - lo : (size_t) n_buckets;

        k = history_result_alloc(&r, max_kept, n_cols);
        if (k < 0)
                return k;
        r.bucket_ms = width > INT64_MAX ? INT64_MAX : (int64_t) width;

        for (size_t a = lo; a < hi;) {
                struct history_bucket *b = &r.buckets[r.n_buckets];
                uint64_t bk = ((uint64_t) history_time_at(h, a) - (uint64_t) from_ms) / width;
                size_t e = history_bucket_end(h, a + 1, hi, from_ms, width, bk);

                b->t_ms = (int64_t) ((uint64_t) from_ms + bk * width);
                if (n_cols > 0) {
                        b->min = r.values + r.n_buckets * n_cols * 3;
                        b->max = b->min + n_cols;
                        b->mean = b->max + n_cols;
                }
                if (history_bucket_fill(h, cols, n_cols, a, e, b))
                        r.n_buckets++;
                a = e;
        }
        *ret = r;
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
 * File format, version 1, every integer little-endian whatever the host:
 *   "HCHIST"  6 bytes magic
 *   u16       version (1)
 *   i64       epoch, Unix ms
 *   u32       count, samples
 *   u32       n_columns
 *   n_columns x { u8 kind, u8 id_len, id_len bytes id }
 *   count x u32       ms since epoch, oldest first, never decreasing
 *   n_columns x count x i16   values (INT16_MIN = missing), column by column
 *   u32       CRC-32 (IEEE 802.3) of everything before it
 */
#define HISTORY_MAGIC "HCHIST"
#define HISTORY_VERSION 1
#define HISTORY_HEADER_SIZE 24
#define HISTORY_FILE_MAX (256u << 20)   /* bytes; far above 30 d x 16 columns at 1 s */

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

struct history_writer {
        int fd;
        int error;                      /* first -errno */
        uint32_t crc;                   /* of everything flushed so far */
        size_t len;                     /* bytes in buf */
        uint32_t table[256];
        uint8_t buf[65536];
};

static void writer_flush(struct history_writer *w) {
        size_t done = 0;

        if (w->error == 0)
                w->crc = crc32_update(w->table, w->crc, w->buf, w->len);
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

static void writer_le(struct history_writer *w, uint64_t v, size_t bytes) {
        if (w->len + bytes > sizeof w->buf)
                writer_flush(w);
        for (size_t i = 0; i < bytes; i++)
                w->buf[w->len++] = (uint8_t) (v >> (8 * i));
}

static void writer_bytes(struct history_writer *w, const char *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                writer_le(w, (uint8_t) p[i], 1);
}

static void history_write(const struct history *h, struct history_writer *w) {
        writer_bytes(w, HISTORY_MAGIC, 6);
        writer_le(w, HISTORY_VERSION, 2);
        writer_le(w, (uint64_t) h->epoch_ms, 8);
        writer_le(w, h->count, 4);
        writer_le(w, h->n_columns, 4);
        for (size_t c = 0; c < h->n_columns; c++) {
                size_t n = strlen(h->columns[c].id);

                writer_le(w, (uint64_t) h->columns[c].kind, 1);
                writer_le(w, n, 1);
                writer_bytes(w, h->columns[c].id, n);
        }
        for (size_t i = 0; i < h->count; i++)
                writer_le(w, h->offset_ms[history_slot(h, i)], 4);
        for (size_t c = 0; c < h->n_columns; c++) {
                const struct history_column *col = &h->columns[c];
                size_t first = history_column_first(h, col);

                for (size_t i = 0; i < h->count; i++) {
                        int16_t v = i < first ? HISTORY_MISSING : col->data[history_slot(h, i)];

                        writer_le(w, (uint16_t) v, 2);
                }
        }
        writer_flush(w);
        writer_le(w, w->crc, 4);
        writer_flush(w);
}

static int fsync_parent_dir(const char *path) {
        const char *slash = strrchr(path, '/');
        char *dir;
        int fd, r = 0;

        if (!slash)
                dir = strdup(".");
        else
                dir = strndup(path, slash == path ? 1 : (size_t) (slash - path));
        if (!dir)
                return -ENOMEM;
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        free(dir);
        if (fd < 0)
                return -errno;
        if (fsync(fd) < 0)
                r = -errno;
        close(fd);
        return r;
}

/* Writes the ring to an open file and fsyncs it; closes fd. */
static int history_write_fd(const struct history *h, int fd) {
        struct history_writer *w;
        int r;

        w = malloc(sizeof *w);
        if (!w) {
                close(fd);
                return -ENOMEM;
        }
        w->fd = fd;
        w->error = 0;
        w->crc = 0;
        w->len = 0;
        crc32_table(w->table);
        history_write(h, w);
        r = w->error;
        free(w);
        if (r == 0 && fsync(fd) < 0)
                r = -errno;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        return r;
}

int history_save(const struct history *h, const char *path) {
        char *tmp;
        int fd, r;

        if (!h || !path || path[0] == '\0')
                return -EINVAL;
        if (asprintf(&tmp, "%s.tmp", path) < 0)
                return -ENOMEM;
        /* A stale temp file goes first; O_EXCL then never opens a FIFO or
         * device someone put in its place (open() would block on a FIFO). */
        if (unlink(tmp) < 0 && errno != ENOENT) {
                r = -errno;
                free(tmp);
                return r;
        }
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0) {
                r = -errno;
                free(tmp);
                return r;
        }
        r = history_write_fd(h, fd);
        if (r == 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0)
                unlink(tmp);
        free(tmp);
        if (r < 0)
                return r;
        return fsync_parent_dir(path);
}

struct history_file {
        uint8_t *data;                  /* whole file */
        size_t size;                    /* bytes */
        int64_t epoch_ms;
        size_t count;                   /* samples */
        size_t n_columns;
        char **ids;                     /* n_columns, NUL-terminated copies */
        uint8_t *kinds;                 /* n_columns */
        const uint8_t *offsets;         /* count x u32 */
        const uint8_t *values;          /* n_columns x count x i16 */
};

static uint64_t get_le(const uint8_t *p, size_t bytes) {
        uint64_t v = 0;

        for (size_t i = 0; i < bytes; i++)
                v |= (uint64_t) p[i] << (8 * i);
        return v;
}

static void history_file_done(struct history_file *f) {
        for (size_t i = 0; f->ids && i < f->n_columns; i++)
                free(f->ids[i]);
        free(f->ids);
        free(f->kinds);
        free(f->data);
}

static int history_file_read(const char *path, struct history_file *f) {
        struct stat st;
        size_t done = 0;
        int fd, r = 0;

        /* O_NONBLOCK: a FIFO at the path must not block open(); it is then
         * refused below as not a regular file. */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                r = -errno;
        else if (!S_ISREG(st.st_mode))
                r = S_ISDIR(st.st_mode) ? -EISDIR : -EBADMSG;
        else if ((uint64_t) st.st_size > HISTORY_FILE_MAX)
                r = -EFBIG;
        else if (!(f->data = malloc(st.st_size > 0 ? (size_t) st.st_size : 1)))
                r = -ENOMEM;
        while (r == 0 && done < (size_t) st.st_size) {
                ssize_t k = read(fd, f->data + done, (size_t) st.st_size - done);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        r = -errno;
                else if (k == 0)
                        break;          /* shrank under us: the checks below catch it */
                else
                        done += (size_t) k;
        }
        close(fd);
        f->size = done;
        return r;
}

/* Column table at *pos; ids must be unique, non-empty, without NUL. */
static int history_file_parse_columns(struct history_file *f, size_t *pos, size_t end) {
        f->ids = calloc(f->n_columns ? f->n_columns : 1, sizeof *f->ids);
        f->kinds = calloc(f->n_columns ? f->n_columns : 1, 1);
        if (!f->ids || !f->kinds)
                return -ENOMEM;
        for (size_t c = 0; c < f->n_columns; c++) {
                size_t n;

                if (end - *pos < 2)
                        return -EBADMSG;
                f->kinds[c] = f->data[*pos];
                n = f->data[*pos + 1];
                *pos += 2;
                if (f->kinds[c] > HISTORY_LOAD || n == 0 || end - *pos < n ||
                    memchr(f->data + *pos, 0, n))
                        return -EBADMSG;
                f->ids[c] = strndup((const char *) f->data + *pos, n);
                if (!f->ids[c])
                        return -ENOMEM;
                *pos += n;
                for (size_t k = 0; k < c; k++)
                        if (strcmp(f->ids[k], f->ids[c]) == 0)
                                return -EBADMSG;
        }
        return 0;
}

static int history_file_parse(struct history_file *f) {
        uint32_t table[256], last = 0;
        size_t pos = HISTORY_HEADER_SIZE, end;
        uint64_t need;
        int r;

        if (f->size < HISTORY_HEADER_SIZE + 4 || memcmp(f->data, HISTORY_MAGIC, 6) != 0)
                return -EBADMSG;
        end = f->size - 4;
        crc32_table(table);
        if (crc32_update(table, 0, f->data, end) != (uint32_t) get_le(f->data + end, 4))
                return -EBADMSG;
        if (get_le(f->data + 6, 2) != HISTORY_VERSION)
                return -EPROTONOSUPPORT;
        f->epoch_ms = (int64_t) get_le(f->data + 8, 8);
        f->count = (size_t) get_le(f->data + 16, 4);
        f->n_columns = (size_t) get_le(f->data + 20, 4);
        if (f->n_columns > HISTORY_MAX_COLUMNS)
                return -EBADMSG;
        r = history_file_parse_columns(f, &pos, end);
        if (r < 0)
                return r;

        need = (uint64_t) f->count * 4 + (uint64_t) f->count * f->n_columns * 2;
        if (need != end - pos)
                return -EBADMSG;
        f->offsets = f->data + pos;
        f->values = f->offsets + f->count * 4;
        for (size_t i = 0; i < f->count; i++) {
                uint32_t o = (uint32_t) get_le(f->offsets + 4 * i, 4);

                if (o < last)
                        return -EBADMSG;        /* time went backwards */
                last = o;
        }
        if (f->epoch_ms > INT64_MAX - (int64_t) last)
                return -EBADMSG;
        return 0;
}

/* Ring column for each file column, -1 to skip; adds columns that have data. */
static int history_file_map(struct history *h, const struct history_file *f, size_t skip, int *map) {
        for (size_t c = 0; c < f->n_columns; c++) {
                const uint8_t *v = f->values + (c * f->count + skip) * 2;
                bool any = false;
                int idx;

                for (size_t i = 0; i < f->count - skip && !any; i++)
                        any = (int16_t) get_le(v + 2 * i, 2) != HISTORY_MISSING;
                idx = history_find_column(h, f->ids[c]);
                if (idx < 0 && any)
                        idx = history_column(h, f->ids[c], (enum history_kind) f->kinds[c]);
                if (idx == -ENOMEM)
                        return idx;
                if (idx >= 0 && h->columns[idx].kind != (enum history_kind) f->kinds[c])
                        idx = -1;       /* same id, other unit: not the same series */
                map[c] = idx < 0 ? -1 : idx;
        }
        return 0;
}

/* Replaces the ring's samples with the newest `capacity` samples of the file. */
static void history_file_apply(struct history *h, const struct history_file *f, size_t skip, const int *map) {
        size_t keep = f->count - skip;
        uint32_t base = keep > 0 ? (uint32_t) get_le(f->offsets + 4 * skip, 4) : 0;

        h->head = 0;
        h->count = keep;
        h->seq = keep;
        h->open = false;
        h->epoch_ms = f->epoch_ms + (int64_t) base;
        for (size_t i = 0; i < keep; i++)
                h->offset_ms[i] = (uint32_t) get_le(f->offsets + 4 * (skip + i), 4) - base;

        for (size_t c = 0; c < h->n_columns; c++)
                h->columns[c].first_seq = keep;         /* not in the file: missing */
        for (size_t c = 0; c < f->n_columns; c++) {
                struct history_column *col;
                const uint8_t *v = f->values + (c * f->count + skip) * 2;

                if (map[c] < 0)
                        continue;
                col = &h->columns[map[c]];
                col->first_seq = 0;
                for (size_t i = 0; i < keep; i++)
                        col->data[i] = (int16_t) get_le(v + 2 * i, 2);
        }
}

int history_load(struct history *h, const char *path) {
        struct history_file f = {};
        size_t skip;
        int *map = NULL;
        int r;

        if (!h || !path)
                return -EINVAL;
        r = history_file_read(path, &f);
        if (r >= 0)
                r = history_file_parse(&f);
        if (r >= 0) {
                map = calloc(f.n_columns ? f.n_columns : 1, sizeof *map);
                r = map ? 0 : -ENOMEM;
        }
        if (r >= 0) {
                skip = f.count > h->capacity ? f.count - h->capacity : 0;
                r = history_file_map(h, &f, skip, map);
        }
        if (r >= 0)
                history_file_apply(h, &f, skip, map);
        free(map);
        history_file_done(&f);
        return r;
}
