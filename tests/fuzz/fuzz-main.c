/* fuzz-main.c — a main for a fuzz target built without libFuzzer: its seeds as an ordinary test. */
/* Each file named, or each file of each directory named, goes to LLVMFuzzerTestOneInput() once, in a
 * buffer of its own size, so a build with gcc and the sanitizers replays the seeds (systemd's
 * src/fuzz/fuzz-main.c does the same). A crash or an abort() in the target fails the program. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FUZZ_FILE_MAX (16 * 1024 * 1024)     /* bytes: a seed is small, and so fits a 32-bit size_t */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A whole file in a buffer of exactly its size, so that a sanitizer sees a read past the input's end. */
static int fuzz_read_file(const char *path, uint8_t **ret, size_t *ret_size) {
        struct stat st;
        uint8_t *buf;
        size_t got = 0;
        int fd = open(path, O_RDONLY | O_CLOEXEC), r = 0;

        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0) {
                r = -errno;
                goto close_fd;
        }
        if (st.st_size > FUZZ_FILE_MAX) {
                r = -EFBIG;
                goto close_fd;
        }
        buf = malloc(st.st_size > 0 ? (size_t) st.st_size : 1);
        if (!buf) {
                r = -ENOMEM;
                goto close_fd;
        }
        while (got < (size_t) st.st_size) {
                ssize_t n = read(fd, buf + got, (size_t) st.st_size - got);
                if (n <= 0) {
                        r = n < 0 ? -errno : -EIO;      /* shrank while read */
                        free(buf);
                        goto close_fd;
                }
                got += (size_t) n;
        }
        *ret = buf;
        *ret_size = got;
close_fd:
        close(fd);
        return r;
}

static int fuzz_run_file(const char *path) {
        uint8_t *data = NULL;
        size_t size = 0;
        int r = fuzz_read_file(path, &data, &size);

        if (r < 0) {
                fprintf(stderr, "%s: %s\n", path, strerror(-r));
                return r;
        }
        printf("%s (%zu bytes)... ", path, size);
        fflush(stdout);         /* the name is out before a crash */
        LLVMFuzzerTestOneInput(data, size);
        printf("ok\n");
        free(data);
        return 0;
}

static int fuzz_by_name(const struct dirent **a, const struct dirent **b) {
        return strcmp((*a)->d_name, (*b)->d_name);
}

static int fuzz_not_hidden(const struct dirent *d) {
        return d->d_name[0] != '.';
}

/* Every regular file of dir, in name order; an empty directory is an error: its seeds went missing. */
static int fuzz_run_dir(const char *dir) {
        struct dirent **names;
        int n = scandir(dir, &names, fuzz_not_hidden, fuzz_by_name), ran = 0, r = 0;

        if (n < 0) {
                r = -errno;
                fprintf(stderr, "%s: %s\n", dir, strerror(-r));
                return r;
        }
        for (int i = 0; i < n; i++) {
                char path[4096];
                struct stat st;

                if (r >= 0 && (size_t) snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name) < sizeof path &&
                    stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
                        r = fuzz_run_file(path);
                        ran++;
                }
                free(names[i]);
        }
        free(names);
        if (r >= 0 && ran == 0) {
                fprintf(stderr, "%s: no seeds\n", dir);
                r = -ENOENT;
        }
        return r;
}

int main(int argc, char **argv) {
        if (argc < 2) {
                fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
                return EXIT_FAILURE;
        }
        for (int i = 1; i < argc; i++) {
                struct stat st;
                int r;

                if (stat(argv[i], &st) < 0) {
                        fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
                        return EXIT_FAILURE;
                }
                r = S_ISDIR(st.st_mode) ? fuzz_run_dir(argv[i]) : fuzz_run_file(argv[i]);
                if (r < 0)
                        return EXIT_FAILURE;
        }
        return EXIT_SUCCESS;
}
