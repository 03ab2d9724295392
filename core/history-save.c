/* history-save.c — history.bin replaced atomically: the ring's file format written through core's atomic file. */
#include "history-save.h"

#include <errno.h>

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
