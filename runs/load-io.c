/* load-io.c — the io load: workers doing random 4 KiB reads and writes on an unlinked file each; work in I/Os. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "load-driver.h"
#include "util.h"

#define IO_LAYOUT_CHUNK (UINT64_C(1) << 20)     /* bytes per write while laying out the file */

/* One worker's state; lives only in the child. */
struct io_worker {
        struct load_worker *w;
        int fd;                         /* the unlinked file */
        uint8_t *buf;                   /* one aligned block */
        uint64_t blocks, ios;           /* file size in blocks, I/Os so far */
};

static int io_validate(const struct stress_spec *spec, unsigned workers, char *err, size_t n) {
        struct statvfs sv;
        struct stat st;
        uint64_t need, avail;

        if (!spec->io_dir || spec->io_dir[0] != '/')
                return util_errorf(err, n, -EINVAL, "load.dir: must be an absolute path");
        if (stat(spec->io_dir, &st) < 0)
                return util_errorf(err, n, -EINVAL, "load.dir: %s: %s", spec->io_dir, strerror(errno));
        if (!S_ISDIR(st.st_mode))
                return util_errorf(err, n, -EINVAL, "load.dir: %s: not a directory", spec->io_dir);
        if (faccessat(AT_FDCWD, spec->io_dir, W_OK | X_OK, AT_EACCESS) < 0)
                return util_errorf(err, n, -EINVAL, "load.dir: %s: %s", spec->io_dir, strerror(errno));
        if (spec->io_file_bytes < STRESS_IO_FILE_MIN || spec->io_file_bytes > STRESS_IO_FILE_MAX ||
            spec->io_file_bytes % STRESS_IO_BLOCK != 0)
                return util_errorf(err, n, -EINVAL, "load.file_size: must be a multiple of 4 KiB between %" PRIu64
                                   " and %" PRIu64 " MiB", STRESS_IO_FILE_MIN >> 20, STRESS_IO_FILE_MAX >> 20);
        need = spec->io_file_bytes * workers;
        if (statvfs(spec->io_dir, &sv) == 0) {
                avail = (uint64_t) sv.f_bavail * (uint64_t) sv.f_frsize;
                if (need > avail)
                        return util_errorf(err, n, -EINVAL, "load.file_size: %" PRIu64 " MiB needed, %" PRIu64
                                           " MiB free in %s", need >> 20, avail >> 20, spec->io_dir);
        }
        return 0;
}

/* ---- the files (parent side) ---- */

/* A named file, removed at once, for filesystems without O_TMPFILE. A crash
 * between open and unlink can leave a name behind: skip over it. */
static int io_open_named(const char *dir, int flags) {
        char path[PATH_MAX];

        for (unsigned i = 0; i < 100; i++) {
                if (snprintf(path, sizeof path, "%s/.heatcurve-io-%d-%u", dir, (int) getpid(), i) >= (int) sizeof path)
                        return -ENAMETOOLONG;
                int fd = open(path, flags | O_CREAT | O_EXCL, 0600);
                if (fd >= 0) {
                        (void) unlink(path);
                        return fd;
                }
                if (errno != EEXIST)
                        return -errno;
        }
        return -EEXIST;
}

/* An unlinked file in dir: O_TMPFILE where supported, else a named file.
 * O_DIRECT unless refused (EINVAL: tmpfs before Linux 6.6, some FUSE, ...). */
static int io_open(const struct stress_spec *spec, struct stress_slot *slot) {
        for (int direct = !spec->io_buffered; direct >= 0; direct--) {
                int flags = O_RDWR | O_CLOEXEC | O_DSYNC | (direct ? O_DIRECT : 0);
                int fd = open(spec->io_dir, flags | O_TMPFILE, 0600);

                if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR))
                        fd = io_open_named(spec->io_dir, flags);
                else if (fd < 0)
                        fd = -errno;
                if (fd >= 0) {
                        atomic_store_explicit(&slot->io_direct, direct, memory_order_relaxed);
                        return fd;
                }
                if (fd != -EINVAL)
                        return fd;
        }
        return -EINVAL;
}

/* ---- the worker (child side) ---- */

/* The filesystem took O_DIRECT at open but refuses it on I/O: go on without. */
static void io_drop_direct(struct io_worker *o) {
        int flags = fcntl(o->fd, F_GETFL);

        if (flags < 0 || !(flags & O_DIRECT) || fcntl(o->fd, F_SETFL, flags & ~O_DIRECT) < 0)
                _exit(EXIT_FAILURE);
        atomic_store_explicit(&o->w->slot->io_direct, 0, memory_order_relaxed);
}

static void io_one(struct io_worker *o, void *buf, size_t size, uint64_t off, bool write) {
        for (;;) {
                ssize_t r = write ? pwrite(o->fd, buf, size, (off_t) off) : pread(o->fd, buf, size, (off_t) off);
                if (r == (ssize_t) size)
                        return;
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0 && errno == EINVAL) {
                        io_drop_direct(o);
                        continue;
                }
                _exit(EXIT_FAILURE);    /* I/O error, ENOSPC, short I/O: the load has failed */
        }
}

/* Random 4 KiB blocks, writes and reads alternating. */
static uint64_t io_work(void *state, uint64_t n) {
        struct io_worker *o = state;

        for (uint64_t i = 0; i < n; i++) {
                uint64_t off = (load_xorshift64(&o->w->rng) % o->blocks) * STRESS_IO_BLOCK;
                io_one(o, o->buf, STRESS_IO_BLOCK, off, (o->ios++ & 1) == 0);
        }
        return n;
}

/* Write the whole file once, so that reads hit the device rather than holes. */
static void io_layout(struct io_worker *o, uint64_t bytes) {
        void *p;

        o->blocks = bytes / STRESS_IO_BLOCK;
        if (posix_memalign(&p, STRESS_IO_BLOCK, IO_LAYOUT_CHUNK) != 0)
                _exit(EXIT_FAILURE);
        for (size_t i = 0; i < IO_LAYOUT_CHUNK; i++)
                ((uint8_t *) p)[i] = (uint8_t) load_xorshift64(&o->w->rng);
        for (uint64_t off = 0; off < bytes; off += IO_LAYOUT_CHUNK) {
                uint64_t len = bytes - off < IO_LAYOUT_CHUNK ? bytes - off : IO_LAYOUT_CHUNK;
                io_one(o, p, (size_t) len, off, true);
        }
        o->buf = p;     /* its first block serves the random I/Os */
}

static void io_run(const struct stress_spec *spec, struct load_worker *w) {
        struct io_worker o = { .w = w, .fd = w->fd };

        load_worker_setup(w);
        io_layout(&o, spec->io_file_bytes);
        load_worker_loop(w, spec->duty_pct, io_work, &o);
}

bool stress_io_direct(const struct stress *s) {
        if (stress_get_type(s) != STRESS_IO)
                return false;
        for (size_t i = 0; i < stress_n_pids(s); i++)
                if (!atomic_load_explicit(&load_slot(s, i)->io_direct, memory_order_relaxed))
                        return false;
        return true;
}

const struct load_driver load_io_driver = {
        .name = "io",
        .unit = "ios",
        .pinned = true,
        .needs_dir = true,
        .validate = io_validate,
        .open = io_open,
        .run = io_run,
};
