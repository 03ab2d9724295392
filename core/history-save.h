/* history-save.h — history.bin kept on disk: replaced atomically when whole, the new samples appended in between. */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "history.h"

/* Writes h to path.tmp, fsyncs, renames it over path and fsyncs the
 * directory: a crash leaves the old file or the new one, whole. -errno. */
int history_save(const struct history *h, const char *path);

/* One history file saved again and again from one ring. The first save
 * writes it whole (history_save()); a later one appends the samples begun
 * since the one before as a segment (history_append_fd()) and fdatasyncs,
 * a few KiB where the whole ring is hundreds. The file is written whole
 * again when the ring's columns changed, its samples were replaced, more
 * samples were begun than it holds, the file was replaced or removed by
 * someone else, the save before failed, or the samples that left the ring
 * would outnumber the ones in it (the file at most about twice the ring).
 * A crash during an append leaves the file as the save before left it plus
 * a cut-short segment that the load leaves out. */
struct history_saver {
        char *path;
        int fd;                         /* open on the file saved last, -1: the next save writes it whole */
        dev_t dev;                      /* ... and its identity, to see it replaced */
        ino_t ino;
        off_t size;                     /* bytes of the file after the last save */
        uint64_t serial;                /* history_serial() at the last save */
        uint64_t samples;               /* samples in the file, the ones the ring dropped since included */
        size_t n_columns;               /* columns in the file's header */
        uint64_t full_saves, appends;   /* counts, for tests and benchmarks */
};

/* -ENOMEM, or 0 with nothing written yet. */
int history_saver_init(struct history_saver *s, const char *path);
/* Saves h as above. -errno; the next save then writes the file whole. */
int history_saver_save(struct history_saver *s, const struct history *h);
/* Closes the file; accepts a zeroed or already done saver. */
void history_saver_done(struct history_saver *s);
