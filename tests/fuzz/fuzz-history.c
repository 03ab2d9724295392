/* fuzz-history.c — libFuzzer target: history.bin as the daemon loads it at start, then read back. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "history.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct history *h = NULL;
        struct history_result r;
        size_t cols[4] = { 0, 1, 2, 3 }, n_cols;
        char path[64];
        int fd = memfd_create("history.bin", MFD_CLOEXEC);

        if (fd < 0 || write(fd, data, size) != (ssize_t) size)
                abort();
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        if (history_new(4096, &h) < 0)
                abort();
        /* a column the file may hold, one of another kind under a likely id */
        history_column(h, "thermal_zone0", HISTORY_TEMP);
        history_column(h, "cpufreq:policy0", HISTORY_TEMP);
        (void) history_load(h, path);
        close(fd);

        /* Whatever was kept decodes: every sample, and a query over it all. */
        n_cols = history_n_columns(h) < 4 ? history_n_columns(h) : 4;
        for (size_t i = 0; i < history_count(h); i++)
                for (size_t c = 0; c < n_cols; c++)
                        if (isinf(history_get(h, i, c)))
                                abort();
        if (history_count(h) > 0) {
                if (history_query(h, history_oldest_ms(h), history_newest_ms(h), cols, n_cols, 100, &r) < 0)
                        abort();
                history_result_free(&r);
        }
        /* and takes new samples after it */
        if (history_newest_ms(h) < INT64_C(1) << 60 && history_begin(h, history_newest_ms(h) + 1000) < 0)
                abort();
        history_set(h, 0, 42.0);
        history_free(h);
        return 0;
}
