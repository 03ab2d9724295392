/* history-save.c — history.bin kept on disk: replaced atomically when whole, the new samples appended in between. */
#include "history-save.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic-file.h"

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

int history_saver_init(struct history_saver *s, const char *path) {
        *s = (struct history_saver) { .fd = -1 };
        s->path = strdup(path);
        return s->path ? 0 : -ENOMEM;
}

static void history_saver_close(struct history_saver *s) {
        if (s->fd >= 0)
                close(s->fd);
        s->fd = -1;
}

void history_saver_done(struct history_saver *s) {
        if (!s || !s->path)
                return;                 /* zeroed: its fd 0 is not its own */
        history_saver_close(s);
        free(s->path);
        s->path = NULL;
}

/* Whole, then open for the appends to come; a file that cannot be opened
 * again is written whole next time too, the save itself went through. */
static int history_saver_full(struct history_saver *s, const struct history *h) {
        struct stat st;
        int r;

        history_saver_close(s);
        r = history_save(h, s->path);
        if (r < 0)
                return r;
        s->full_saves++;
        s->fd = open(s->path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        if (s->fd >= 0 && (fstat(s->fd, &st) < 0 || !S_ISREG(st.st_mode)))
                history_saver_close(s);
        if (s->fd < 0)
                return 0;
        s->dev = st.st_dev;
        s->ino = st.st_ino;
        s->size = st.st_size;
        s->serial = history_serial(h);
        s->samples = history_count(h);
        s->n_columns = history_n_columns(h);
        return 0;
}

/* Whether the samples begun since the last save can go at the end of the
 * file: the same file, the same columns, the older samples unchanged. */
static bool history_saver_can_append(const struct history_saver *s, const struct history *h, uint64_t n) {
        uint64_t count = history_count(h), dead;
        struct stat st;

        if (s->fd < 0 || s->n_columns != history_n_columns(h) || n > count)
                return false;
        /* once the samples the ring dropped (dead) outnumber those it holds, a file written whole is smaller */
        dead = s->samples + n - count;
        if (dead > 0 && dead >= count)
                return false;
        return stat(s->path, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino && st.st_size == s->size;
}

int history_saver_save(struct history_saver *s, const struct history *h) {
        uint64_t n;
        int r;

        if (!s || !s->path || !h)
                return -EINVAL;
        n = history_serial(h) - s->serial;
        if (!history_saver_can_append(s, h, n))
                return history_saver_full(s, h);
        if (n == 0)
                return 0;
        r = lseek(s->fd, s->size, SEEK_SET) < 0 ? -errno : history_append_fd(h, s->fd, (size_t) n);
        if (r >= 0 && fdatasync(s->fd) < 0)
                r = -errno;
        if (r < 0) {
                /* What was written is a cut-short segment, left out at load
                 * if it cannot be cut off here; the next save starts afresh. */
                int e = ftruncate(s->fd, s->size);

                (void) e;
                history_saver_close(s);
                return r;
        }
        s->size = lseek(s->fd, 0, SEEK_CUR);
        s->serial += n;
        s->samples += n;
        s->appends++;
        return 0;
}
