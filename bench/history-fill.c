/* history-fill.c — bench helper: the cost of a full history ring, built against daemon/libhccore.a.
 *
 *   history-fill ring CAPACITY COLUMNS REPS
 *       Creates a ring of CAPACITY samples with COLUMNS temperature columns,
 *       fills it completely at 1 s steps, and prints key=value lines:
 *       VmRSS before / after history_new+columns / after the fill, the
 *       ring's history_memory_bytes(), and the time of history_query() over
 *       the whole ring downsampled to 1000 points, all columns (REPS runs:
 *       min, median, max).
 *
 *   history-fill write PATH CAPACITY END_MS ID:KIND...
 *       Writes a full ring of CAPACITY samples at 1 s steps ending at END_MS
 *       (Unix ms) with the given columns (KIND: temp, freq, load) to PATH
 *       with history_save(), the daemon's own format, so heatcurved can load
 *       it from its state directory. Values are synthetic (slow sine waves
 *       plus a little deterministic jitter), not a recording.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "history.h"

#define QUERY_POINTS 1000

static long vm_kib(const char *key) {
        char line[256];
        size_t n = strlen(key);
        long v = -1;
        FILE *f = fopen("/proc/self/status", "re");

        if (!f)
                return -1;
        while (fgets(line, sizeof line, f))
                if (strncmp(line, key, n) == 0 && line[n] == ':') {
                        v = strtol(line + n + 1, NULL, 10);
                        break;
                }
        fclose(f);
        return v;
}

static double now_s(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return x < y ? -1 : x > y;
}

static uint32_t jitter_state = 12345u;

static double jitter(void) {           /* deterministic, -0.5 .. 0.5 */
        jitter_state = jitter_state * 1664525u + 1013904223u;
        return (double) (jitter_state >> 8) / (double) (1u << 24) - 0.5;
}

static double synth(enum history_kind kind, size_t col, size_t i) {
        double phase = (double) i / 3600.0 * 2.0 * M_PI + (double) col;

        switch (kind) {
        case HISTORY_TEMP:
                return 45.0 + 15.0 * sin(phase) + jitter();
        case HISTORY_FREQ:
                return (1.4e9 + 0.8e9 * sin(phase)) + 1e7 * jitter();
        case HISTORY_LOAD:
                return 0.5 + 0.45 * sin(phase) + 0.01 * jitter();
        }
        return NAN;
}

static int fill(struct history *h, size_t capacity, int64_t end_ms) {
        size_t n_cols = history_n_columns(h);
        int64_t start = end_ms - (int64_t) (capacity - 1) * 1000;

        for (size_t i = 0; i < capacity; i++) {
                int r = history_begin(h, start + (int64_t) i * 1000);

                if (r < 0)
                        return r;
                for (size_t c = 0; c < n_cols; c++)
                        history_set(h, c, synth(history_column_kind(h, c), c, i));
        }
        return 0;
}

static int cmd_ring(size_t capacity, size_t n_cols, int reps) {
        struct history *h = NULL;
        size_t *cols;
        double *t;
        long rss0, rss1, rss2, hwm;
        int64_t end_ms = INT64_C(1700000000000);
        char id[32];
        int r;

        rss0 = vm_kib("VmRSS");
        r = history_new(capacity, &h);
        if (r < 0) {
                fprintf(stderr, "history_new: %s\n", strerror(-r));
                return 1;
        }
        for (size_t c = 0; c < n_cols; c++) {
                snprintf(id, sizeof id, "temp%zu", c);
                r = history_column(h, id, HISTORY_TEMP);
                if (r < 0) {
                        fprintf(stderr, "history_column: %s\n", strerror(-r));
                        return 1;
                }
        }
        rss1 = vm_kib("VmRSS");
        r = fill(h, capacity, end_ms);
        if (r < 0) {
                fprintf(stderr, "history_begin: %s\n", strerror(-r));
                return 1;
        }
        rss2 = vm_kib("VmRSS");

        cols = calloc(n_cols ? n_cols : 1, sizeof *cols);
        t = calloc((size_t) reps, sizeof *t);
        if (!cols || !t)
                return 1;
        for (size_t c = 0; c < n_cols; c++)
                cols[c] = c;
        for (int k = 0; k < reps; k++) {
                struct history_result res;
                double t0 = now_s();

                r = history_query(h, history_oldest_ms(h), history_newest_ms(h), cols, n_cols,
                                  QUERY_POINTS, &res);
                t[k] = now_s() - t0;
                if (r < 0) {
                        fprintf(stderr, "history_query: %s\n", strerror(-r));
                        return 1;
                }
                if (k == 0)
                        printf("query_buckets=%zu\nquery_bucket_ms=%lld\n", res.n_buckets,
                               (long long) res.bucket_ms);
                history_result_free(&res);
        }
        qsort(t, (size_t) reps, sizeof *t, cmp_double);
        hwm = vm_kib("VmHWM");

        printf("capacity=%zu\ncolumns=%zu\nsamples=%zu\n", capacity, n_cols, history_count(h));
        printf("memory_bytes=%zu\n", history_memory_bytes(h));
        printf("rss_before_kib=%ld\nrss_allocated_kib=%ld\nrss_full_kib=%ld\nhwm_kib=%ld\n",
               rss0, rss1, rss2, hwm);
        printf("ring_resident_kib=%ld\n", rss2 - rss0);
        printf("query_reps=%d\nquery_min_ms=%.3f\nquery_median_ms=%.3f\nquery_max_ms=%.3f\n",
               reps, t[0] * 1e3, t[reps / 2] * 1e3, t[reps - 1] * 1e3);
        free(t);
        free(cols);
        history_free(h);
        return 0;
}

static int parse_kind(const char *s, enum history_kind *k) {
        if (strcmp(s, "temp") == 0)
                *k = HISTORY_TEMP;
        else if (strcmp(s, "freq") == 0)
                *k = HISTORY_FREQ;
        else if (strcmp(s, "load") == 0)
                *k = HISTORY_LOAD;
        else
                return -EINVAL;
        return 0;
}

static int cmd_write(const char *path, size_t capacity, int64_t end_ms, int n, char **specs) {
        struct history *h = NULL;
        int r = history_new(capacity, &h);

        if (r < 0) {
                fprintf(stderr, "history_new: %s\n", strerror(-r));
                return 1;
        }
        for (int i = 0; i < n; i++) {
                char *colon = strrchr(specs[i], ':');
                enum history_kind kind;

                if (!colon || parse_kind(colon + 1, &kind) < 0) {
                        fprintf(stderr, "bad column \"%s\" (want ID:temp|freq|load)\n", specs[i]);
                        return 2;
                }
                *colon = '\0';
                r = history_column(h, specs[i], kind);
                if (r < 0) {
                        fprintf(stderr, "history_column %s: %s\n", specs[i], strerror(-r));
                        return 1;
                }
        }
        r = fill(h, capacity, end_ms);
        if (r >= 0)
                r = history_save(h, path);
        if (r < 0) {
                fprintf(stderr, "writing %s: %s\n", path, strerror(-r));
                return 1;
        }
        printf("wrote=%s\nsamples=%zu\ncolumns=%zu\n", path, history_count(h), history_n_columns(h));
        history_free(h);
        return 0;
}

int main(int argc, char *argv[]) {
        if (argc == 5 && strcmp(argv[1], "ring") == 0) {
                size_t cap = strtoul(argv[2], NULL, 10), cols = strtoul(argv[3], NULL, 10);
                int reps = atoi(argv[4]);

                if (cap == 0 || reps < 1)
                        return 2;
                return cmd_ring(cap, cols, reps);
        }
        if (argc >= 6 && strcmp(argv[1], "write") == 0)
                return cmd_write(argv[2], strtoul(argv[3], NULL, 10), strtoll(argv[4], NULL, 10),
                                 argc - 5, argv + 5);
        fprintf(stderr, "usage: history-fill ring CAPACITY COLUMNS REPS\n"
                        "       history-fill write PATH CAPACITY END_MS ID:KIND...\n");
        return 2;
}
