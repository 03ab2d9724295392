/* history-fill.c — bench helper: the cost of a full history ring, built against the history/ and sensors/ libraries.
 *
 *   history-fill ring CAPACITY COLUMNS REPS
 *       Creates a ring of CAPACITY samples with COLUMNS temperature columns,
 *       fills it completely at 1 s steps, and prints key=value lines:
 *       VmRSS before / after history_new+columns / after the fill, the
 *       ring's history_memory_bytes(), and the time of history_query() over
 *       the whole ring downsampled to 1000 points, all columns (REPS runs:
 *       min, median, max).
 *
 *   history-fill boards FIXTURES_DIR CAPACITY
 *       For every fixture board: its columns (temperatures, cpufreq policies,
 *       loads, as the daemon records them) filled with CAPACITY samples of
 *       the simulated day below; prints the ring's bytes, the flat layout's
 *       bytes and their ratio.
 *
 *   history-fill write PATH CAPACITY END_MS ID:KIND...
 *       Writes a full ring of CAPACITY samples at 1 s steps ending at END_MS
 *       (Unix ms) with the given columns (KIND: temp, freq, load) to PATH
 *       with history_save(), the daemon's own format, so heatcurved can load
 *       it from its state directory.
 *
 * Values are simulated, deterministic: a first-order thermal model through
 * a day of idle with a 20 min stress every 2 h, sensor noise (sigma
 * 0.25 C) and quantisation to 1000 or 538 m C; ondemand-like frequencies;
 * noisy loads in jiffies, as /proc/stat counts them; tick times within a
 * few ms of each second. Not a recording.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dirent.h>

#include "history.h"
#include "history-save.h"
#include "sensors.h"

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

static double noise(double sigma) {     /* deterministic, about normal (sum of four uniforms) */
        return sigma * 1.732 * (jitter() + jitter() + jitter() + jitter());
}

/* Load schedule of the simulated day: idle, with a 20 min stress every 2 h
 * and some background. 0..1. */
static double sim_load(size_t i) {
        size_t m = i % 7200;

        return m >= 3600 && m < 4800 ? 1.0 : 0.05 + 0.04 * (double) ((i / 97) % 3);
}

/* First-order model (tau 60 s on the die, 20 C rise at full load) plus
 * sensor noise, quantised to the sensor's step: whole degrees (1000 m C,
 * like most SoC zones) or 538 m C (the ADC steps of some Amlogic and
 * Rockchip sensors), alternating by column. */
struct sim {
        double t_c;                     /* model temperature, C */
        size_t i;
};

static void sim_step(struct sim *m) {
        double target = 35.0 + 20.0 * sim_load(m->i);

        m->t_c += (target - m->t_c) * (1.0 - exp(-1.0 / 60.0));
        m->i++;
}

static double sim_temp(const struct sim *m, size_t col, double offset_c, int quantum_mc) {
        double mc = (m->t_c + offset_c + noise(0.25)) * 1000.0;

        (void) col;
        return round(mc / quantum_mc) * quantum_mc / 1000.0;
}

/* A load as /proc/stat gives it at 1 Hz: busy over total jiffies, both
 * counted at 100 a second and CPU. The total is not 100 x cpus exactly:
 * the kernel accounts CPU time in ticks and rounds each field, so from one
 * second to the next it moves by about a jiffy per CPU (recorded at 1 Hz on
 * a 2-CPU VM: sd 1.1-1.3 jiffies for a CPU's row, 1.5-1.9 for the total),
 * and the fraction is no multiple of 1/100. */
static double jiffies(double load, int cpus) {
        double x = fmin(1.0, fmax(0.0, load + noise(0.03)));
        double total = 100.0 * cpus + round(noise(1.1) * sqrt((double) cpus));

        return round(x * total) / total;
}

/* cpus: for a load, the CPUs its row counts. */
static double synth(enum history_kind kind, const struct sim *m, size_t col, int cpus) {
        double l = sim_load(m->i);

        switch (kind) {
        case HISTORY_TEMP:
                return sim_temp(m, col, 0.7 * (double) (col % 5), col % 2 ? 538 : 1000);
        case HISTORY_FREQ:             /* ondemand: low at idle, top under load, now and then between */
                return l > 0.5 ? 1.8e9 : (jitter() > 0.45 ? 1.2e9 : 4.08e8);
        case HISTORY_LOAD:
                return jiffies(l, cpus);
        }
        return NAN;
}

/* The CPUs the row of a load column counts: one for "load:cpuN", all of
 * them (the other load columns) for "load:cpu". */
static int load_cpus(const struct history *h, size_t col) {
        size_t loads = 0;

        if (sensors_id_kind(history_column_id(h, col)) != SENSOR_KIND_LOAD)
                return 1;
        for (size_t c = 0; c < history_n_columns(h); c++)
                loads += history_column_kind(h, c) == HISTORY_LOAD;
        return loads > 1 ? (int) loads - 1 : 1;
}

static int fill(struct history *h, size_t capacity, int64_t end_ms) {
        size_t n_cols = history_n_columns(h);
        int64_t start = end_ms - (int64_t) (capacity - 1) * 1000;
        struct sim m = { .t_c = 35.0 };
        int cpus[HISTORY_MAX_COLUMNS];

        for (size_t c = 0; c < n_cols && c < HISTORY_MAX_COLUMNS; c++) {
                cpus[c] = load_cpus(h, c);
                if (history_column_kind(h, c) == HISTORY_LOAD)          /* as the daemon keeps them */
                        history_column_step(h, c, cpu_load_step(1000, (size_t) cpus[c]));
        }

        for (size_t i = 0; i < capacity; i++) {
                /* a tick lands within a few ms of its second */
                int r = history_begin(h, start + (int64_t) i * 1000 + (int64_t) (4.0 * jitter()));

                if (r < 0)
                        return r;
                for (size_t c = 0; c < n_cols; c++)
                        history_set(h, c, synth(history_column_kind(h, c), &m, c, cpus[c]));
                sim_step(&m);
        }
        return 0;
}

/* Bytes the flat layout of earlier releases needed: a uint32 time and an
 * int16 per column for every sample. */
static size_t flat_bytes(size_t samples, size_t n_cols) {
        return samples * (4 + 2 * n_cols);
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
        printf("flat_bytes=%zu\ncompression=%.1f\n", flat_bytes(history_count(h), n_cols),
               (double) flat_bytes(history_count(h), n_cols) / (double) history_memory_bytes(h));
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

/* The columns a fixture board records, as the daemon names and orders them. */
struct board_col {
        enum history_kind kind;
        double offset_c;                /* temperature: spread from the first sensor */
        int quantum_mc;                 /* temperature step, guessed from the fixture's value */
        double low_hz, high_hz;         /* frequency: lowest and highest step */
        int cpus;                       /* load: CPUs the row counts */
};

static int board_columns(const char *root, struct history *h, struct board_col *bc, size_t max) {
        struct sensors_iter it = SENSORS_ITER_INIT;
        struct sensor_channel ch;
        struct sensors *s;
        size_t n = 0;
        int r = sensors_probe(root, root, &s);

        if (r < 0)
                return r;
        sensors_read(s, 0);
        while (n < max && sensors_channel_next(s, &it, &ch)) {
                const struct temp_sensor *t;
                const struct cpufreq_policy *p;

                switch (ch.kind) {
                case SENSOR_KIND_TEMPERATURE:
                        t = &s->temps[ch.index];
                        bc[n] = (struct board_col) { .kind = HISTORY_TEMP,
                                .offset_c = (t->temp_mc - s->temps[0].temp_mc) / 1000.0,
                                .quantum_mc = t->temp_mc % 1000 == 0 ? 1000 : 538 };
                        break;
                case SENSOR_KIND_FREQUENCY:
                        p = &s->policies[ch.index];
                        bc[n] = (struct board_col) { .kind = HISTORY_FREQ,
                                .low_hz = (p->min_khz ? p->min_khz : p->cur_khz) * 1e3,
                                .high_hz = (p->max_khz ? p->max_khz : p->cur_khz) * 1e3 };
                        break;
                case SENSOR_KIND_CPU_LOAD:
                case SENSOR_KIND_LOAD:
                        bc[n] = (struct board_col) { .kind = HISTORY_LOAD,
                                .cpus = ch.kind == SENSOR_KIND_LOAD && s->load.n_cpus > 0 ? (int) s->load.n_cpus : 1 };
                        break;
                default:
                        continue;       /* not kept by the history */
                }
                r = history_column(h, ch.id, bc[n].kind);
                if (r >= 0 && bc[n].kind == HISTORY_LOAD)
                        history_column_step(h, (size_t) r, cpu_load_step(1000, (size_t) bc[n].cpus));
                n++;
        }
        sensors_free(s);
        return (int) n;
}

/* A day of simulated samples through every fixture board's columns. */
static int cmd_boards(const char *dir, size_t capacity) {
        struct board_col bc[256];
        struct dirent **names;
        int n = scandir(dir, &names, NULL, alphasort);

        if (n < 0) {
                perror(dir);
                return 1;
        }
        for (int b = 0; b < n; b++) {
                char root[1024];
                struct history *h = NULL;
                struct sim m = { .t_c = 35.0 };
                int cols;

                snprintf(root, sizeof root, "%s/%s", dir, names[b]->d_name);
                if (names[b]->d_name[0] == '.' || history_new(capacity, &h) < 0 ||
                    (cols = board_columns(root, h, bc, 256)) <= 0) {
                        history_free(h);
                        free(names[b]);
                        continue;
                }
                for (size_t i = 0; i < capacity; i++) {
                        double l = sim_load(m.i);

                        history_begin(h, INT64_C(1700000000000) + (int64_t) i * 1000 + (int64_t) (4.0 * jitter()));
                        for (int c = 0; c < cols; c++) {
                                double v = NAN;

                                if (bc[c].kind == HISTORY_TEMP)
                                        v = sim_temp(&m, (size_t) c, bc[c].offset_c, bc[c].quantum_mc);
                                else if (bc[c].kind == HISTORY_FREQ)
                                        v = l > 0.5 || jitter() > 0.45 ? bc[c].high_hz : bc[c].low_hz;
                                else
                                        v = jiffies(l, bc[c].cpus);
                                history_set(h, (size_t) c, v);
                        }
                        sim_step(&m);
                }
                printf("board=%s columns=%d memory_bytes=%zu flat_bytes=%zu compression=%.1f\n",
                       names[b]->d_name, cols, history_memory_bytes(h), flat_bytes(capacity, (size_t) cols),
                       (double) flat_bytes(capacity, (size_t) cols) / (double) history_memory_bytes(h));
                history_free(h);
                free(names[b]);
        }
        free(names);
        return 0;
}

int main(int argc, char *argv[]) {
        if (argc == 4 && strcmp(argv[1], "boards") == 0)
                return cmd_boards(argv[2], strtoul(argv[3], NULL, 10));
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
                        "       history-fill boards FIXTURES_DIR CAPACITY\n"
                        "       history-fill write PATH CAPACITY END_MS ID:KIND...\n");
        return 2;
}
