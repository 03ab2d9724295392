/* file.c — history.bin: the ring saved block by block with CRCs, new samples appended, loaded back in two passes. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "history-internal.h"

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
 *   appended segments, zero or more, each: block records of the samples
 *            begun since the save before (history_append_fd()), then
 *            u32 0, u32 0 again
 * It is written and read one block at a time. A block whose CRC or content
 * does not check out is rejected and the others are kept; so is a block
 * that would make time go backwards. The newest samples of the head are
 * written as one more block. A save appends a segment instead of writing
 * the file again, so an SD card is written the new samples and not the
 * whole ring every few minutes; the file then holds samples older than the
 * ring's, up to one ring more, and a load keeps the newest `capacity`. What
 * a save cut short by a crash leaves at the end (a torn record, zeros,
 * garbage) is left out without counting as damage: the samples of the
 * saves before it are all there, and its whole blocks too. Releases before
 * appended segments read a file up to its first end marker.
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

/* The ring's blocks and its head as block records, then an end marker. */
static int history_write_records(const struct history *h, struct history_writer *w) {
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

static struct history_writer *history_writer_new(int fd) {
        struct history_writer *w = malloc(sizeof *w);

        if (!w)
                return NULL;
        w->fd = fd;
        w->error = 0;
        w->len = 0;
        crc32_table(w->table);
        return w;
}

int history_write_fd(const struct history *h, int fd) {
        struct history_writer *w = history_writer_new(fd);
        int r;

        if (!w)
                return -ENOMEM;
        history_write_header(h, w);
        r = history_write_records(h, w);
        free(w);
        return r;
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
                if (col[0] > HISTORY_POWER || n == 0 || (r = read_full(f->fd, col + 2, n)) < 0)
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
        return 0;
}

/* First pass: check every record, decode it whole, note which are usable
 * and where each column last had a value. Before the first end marker a
 * torn tail counts as a rejected record; after it, in the appended
 * segments, a rejected record counts only when a good one follows it: at
 * the end of the file, followed by nothing, zeros or garbage, it is what a
 * save cut short by a crash or a power cut left, not damage. */
static int history_file_scan(struct history_file *f) {
        int64_t t[HISTORY_BLOCK], last_ms = INT64_MIN;
        int16_t v[HISTORY_BLOCK];
        bool appended = false;                  /* past the first end marker */
        size_t pending = 0;                     /* rejected appended records since the last good one */

        for (;;) {
                struct history_block *b;
                size_t skip;
                bool ok;
                int r = history_file_record(f, &b, &skip);

                if (r == -EIO) {
                        f->rejected += !appended;       /* a torn tail: stop there */
                        return 0;
                }
                if (r < 0 && r != -EBADMSG)
                        return r;
                if (r == 0) {
                        appended = true;
                        continue;
                }
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
                if (!ok && appended) {
                        pending++;
                } else {
                        f->rejected += !ok + pending;
                        pending = 0;
                }
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

                        (void) value_stream_next(&dec[c].r, &dec[c].c, &v);     /* checked by the scan */
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

                while ((r = history_file_record(f, &b, &skip)) == 0)
                        ;                               /* an end marker: the next segment follows */
                if (r == -EIO)
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
                h->serial = g->serial + h->capacity + 1;
                r = (int) (f.rejected > INT_MAX ? INT_MAX : f.rejected);
        }
        history_free(g);
        free(map);
        history_file_done(&f);
        return r;
}

/* The newest n samples of h into g, an empty ring of h's columns in h's
 * order, blocks decoded with the loader's own code. */
static int history_copy_newest(struct history *g, const struct history *h, size_t n,
                               const int *map, struct stream_decoder *dec) {
        size_t first = h->skip + (history_count(h) - n);   /* counted from blocks[0]'s first sample */
        int r = 0;

        for (size_t i = 0; i < h->n_blocks && r >= 0; i++) {
                if (first < h->blocks[i]->n) {
                        r = history_fill_block(g, h->blocks[i], first, map, dec);
                        first = 0;
                } else
                        first -= h->blocks[i]->n;
        }
        for (size_t i = first; r >= 0 && i < h->head_n; i++) {
                r = history_begin(g, h->head_ms[i]);
                for (size_t c = 0; r >= 0 && c < h->n_columns; c++)
                        g->columns[c].head[g->head_n - 1] = h->columns[c].head[i];
        }
        return r;
}

int history_append_fd(const struct history *h, int fd, size_t n) {
        struct stream_decoder *dec = NULL;
        struct history_writer *w = NULL;
        struct history *g = NULL;
        int *map = NULL, r;

        if (!h || n > history_count(h))
                return -EINVAL;
        if (n == 0)
                return 0;
        r = history_new(n, &g);
        for (size_t c = 0; r >= 0 && c < h->n_columns; c++)
                r = history_column(g, h->columns[c].id, h->columns[c].kind);
        if (r >= 0) {
                map = malloc((h->n_columns ? h->n_columns : 1) * sizeof *map);
                dec = calloc(h->n_columns ? h->n_columns : 1, sizeof *dec);
                w = history_writer_new(fd);
                r = map && dec && w ? 0 : -ENOMEM;
        }
        for (size_t c = 0; r >= 0 && c < h->n_columns; c++)
                map[c] = (int) c;
        if (r >= 0)
                r = history_copy_newest(g, h, n, map, dec);
        if (r >= 0)
                r = history_write_records(g, w);
        free(w);
        free(dec);
        free(map);
        history_free(g);
        return r;
}
