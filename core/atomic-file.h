/* atomic-file.h — replace a file atomically: write PATH.tmp, fsync, rename over PATH, fsync the directory. */
#pragma once

#include <stddef.h>

/* A file being written in place of another. After atomic_file_open() the
 * caller writes to fd (atomic_file_write() or its own writes), then either
 * atomic_file_commit() or atomic_file_discard(); both close fd and free. A
 * crash at any moment leaves PATH either whole and old or whole and new. */
struct atomic_file {
        int fd;                         /* open on tmp, O_CLOEXEC */
        char *tmp;                      /* PATH.tmp */
        char *path;
};

/* Creates PATH.tmp afresh (a stale one is removed first, so a FIFO or a
 * symlink put there is never opened). -errno. */
int atomic_file_open(struct atomic_file *f, const char *path, int mode);
/* Every byte, retrying short writes and EINTR. -errno. */
int atomic_file_write(struct atomic_file *f, const void *data, size_t len);
/* fsync, close, rename over PATH, fsync PATH's directory. On failure the
 * temporary file is removed and PATH is untouched. -errno. */
int atomic_file_commit(struct atomic_file *f);
/* Close and remove the temporary file. Accepts a never-opened (zeroed) f. */
void atomic_file_discard(struct atomic_file *f);

/* The whole of data into PATH, atomically. -errno. */
int atomic_file_replace(const char *path, const void *data, size_t len, int mode);
