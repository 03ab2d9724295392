/* slowfs.c — test helper: a FUSE directory with one slow hwmon chip, to show that a slow sensor never blocks the tick.
 *
 *   slowfs MOUNTPOINT GATE
 *       Serves "name" (slowchip) and "temp1_input" (45000). Every read of
 *       temp1_input answers after 50 ms; from the third on it also waits
 *       until the file GATE exists, so a test can hold a read for as long as
 *       it likes and show the caller is not waiting for it. Runs in the
 *       foreground, single-threaded, until unmounted (fusermount3 -u).
 */
#define FUSE_USE_VERSION 31

#include <errno.h>
#include <fuse.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *gate;
static unsigned reads;

static const char *content(const char *path) {
        if (strcmp(path, "/name") == 0)
                return "slowchip\n";
        if (strcmp(path, "/temp1_input") == 0)
                return "45000\n";
        return NULL;
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
        memset(st, 0, sizeof(*st));
        if (strcmp(path, "/") == 0) {
                st->st_mode = S_IFDIR | 0755;
                st->st_nlink = 2;
                return 0;
        }
        if (!content(path))
                return -ENOENT;
        st->st_mode = S_IFREG | 0444;
        st->st_nlink = 1;
        st->st_size = 4096;             /* like sysfs: a page, whatever the text */
        return 0;
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags) {
        if (strcmp(path, "/") != 0)
                return -ENOENT;
        fill(buf, ".", NULL, 0, 0);
        fill(buf, "..", NULL, 0, 0);
        fill(buf, "name", NULL, 0, 0);
        fill(buf, "temp1_input", NULL, 0, 0);
        return 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi) {
        if (!content(path))
                return -ENOENT;
        fi->direct_io = 1;              /* every pread reaches us, as with sysfs */
        return 0;
}

static int fs_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi) {
        const char *text = content(path);
        size_t len;

        if (!text)
                return -ENOENT;
        if (strcmp(path, "/temp1_input") == 0) {
                struct timespec d = { 0, 50 * 1000 * 1000 };

                nanosleep(&d, NULL);
                if (++reads > 2)
                        while (access(gate, F_OK) != 0) {
                                struct timespec p = { 0, 10 * 1000 * 1000 };

                                nanosleep(&p, NULL);
                        }
        }
        len = strlen(text);
        if ((size_t) off >= len)
                return 0;
        if (size > len - (size_t) off)
                size = len - (size_t) off;
        memcpy(buf, text + off, size);
        return (int) size;
}

static const struct fuse_operations ops = {
        .getattr = fs_getattr,
        .readdir = fs_readdir,
        .open = fs_open,
        .read = fs_read,
};

int main(int argc, char *argv[]) {
        char *args[] = { argv[0], "-f", "-s", "-o", "default_permissions", argc > 1 ? argv[1] : NULL, NULL };

        if (argc != 3) {
                fprintf(stderr, "usage: slowfs MOUNTPOINT GATE\n");
                return 2;
        }
        gate = argv[2];
        return fuse_main(6, args, &ops, NULL);
}
