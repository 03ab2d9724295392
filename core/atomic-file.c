/* atomic-file.c — replace a file atomically: write PATH.tmp, fsync, rename over PATH, fsync the directory. */
#include "atomic-file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

static void atomic_file_clear(struct atomic_file *f) {
        free(f->tmp);
        free(f->path);
        *f = (struct atomic_file) { .fd = -1 };
}

int atomic_file_open(struct atomic_file *f, const char *path, int mode) {
        *f = (struct atomic_file) { .fd = -1 };
        if (!path || !*path)
                return -EINVAL;
        f->path = strdup(path);
        if (!f->path || asprintf(&f->tmp, "%s.tmp", path) < 0) {
                f->tmp = NULL;
                atomic_file_clear(f);
                return -ENOMEM;
        }
        /* a stale temp file goes first; O_EXCL then never opens a FIFO or a
         * device someone put in its place (open() would block on a FIFO) */
        if (unlink(f->tmp) < 0 && errno != ENOENT) {
                int r = -errno;
                atomic_file_clear(f);
                return r;
        }
        f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
        if (f->fd < 0) {
                int r = -errno;
                atomic_file_clear(f);
                return r;
        }
        return 0;
}

int atomic_file_write(struct atomic_file *f, const void *data, size_t len) {
        return util_write_all(f->fd, data, len);
}

static int fsync_parent_dir(const char *path) {
        const char *slash = strrchr(path, '/');
        char *dir = !slash ? strdup(".") : strndup(path, slash == path ? 1 : (size_t) (slash - path));
        int fd, r = 0;

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

int atomic_file_commit(struct atomic_file *f) {
        int r = 0;

        if (fsync(f->fd) < 0)
                r = -errno;
        if (close(f->fd) < 0 && r == 0)
                r = -errno;
        f->fd = -1;
        if (r == 0 && rename(f->tmp, f->path) < 0)
                r = -errno;
        if (r < 0)
                unlink(f->tmp);
        else
                r = fsync_parent_dir(f->path);
        atomic_file_clear(f);
        return r;
}

void atomic_file_discard(struct atomic_file *f) {
        if (f->fd >= 0)
                close(f->fd);
        if (f->tmp)
                unlink(f->tmp);
        atomic_file_clear(f);
}

int atomic_file_replace(const char *path, const void *data, size_t len, int mode) {
        struct atomic_file f;
        int r = atomic_file_open(&f, path, mode);

        if (r < 0)
                return r;
        r = atomic_file_write(&f, data, len);
        if (r < 0) {
                atomic_file_discard(&f);
                return r;
        }
        return atomic_file_commit(&f);
}
