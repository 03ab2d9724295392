/* plot-render.c — bench: the time to draw the SVG of a 24 h run (86,400 samples) with core/plot.c.
 *
 *   plot-render [REPS]
 *       Builds a synthetic 24 h run at 1 Hz (1 h idle, 12 h stress heating
 *       with 20 s and 900 s time constants, 11 h cooldown; frequency and
 *       work rate), then times, REPS times each (default 31; min, median,
 *       max in ms):
 *         run      plot_run_svg() of the run (the budget: under 20 ms)
 *         compare  plot_compare_svg() of two such runs
 *         fits     plot_run_fits(), the heating and cooling fits drawn over
 *                  the samples (the daemon computes them per request, so
 *                  GET /api/v1/runs/{id}/plot.svg costs run + fits + reading
 *                  samples.csv)
 *         read     the run's samples.csv into a plot's arrays
 *                  (plot_data_read_file(), at most PLOT_SAMPLES_MAX), with the
 *                  15 temperatures and 4 policies of the x86 fixture,
 *                  written to a temporary directory: what the daemon (and
 *                  heatcurvectl) reads for each drawing of an ended run
 *         live     run_series_plot_data() of that series: what a plot
 *                  copies instead for a live run, which keeps its series
 *         live_series  run_series_copy_as_read() of it: what
 *                  GET /api/v1/compare copies (all ten columns)
 *       and prints the SVG and file sizes. key=value lines, one per figure.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/stat.h>

#include "plot-data.h"
#include "plot.h"
#include "run.h"
#include "samples-csv.h"

#define N 86400                         /* 24 h at 1 Hz */
#define LOAD_START 3600.0               /* s */
#define LOAD_END (13 * 3600.0)          /* s */

static double now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return (x > y) - (x < y);
}

static void report(const char *name, double *ms, size_t reps) {
        qsort(ms, reps, sizeof *ms, cmp_double);
        printf("%s_ms_min=%.3f\n%s_ms_median=%.3f\n%s_ms_max=%.3f\n", name, ms[0], name, ms[reps / 2], name,
               ms[reps - 1]);
}

struct bench_run {
        double t[N], temp[N], freq[N], work[N];
        enum analysis_phase phase[N];
        struct plot_phase phases[3];
        struct plot_run run;
};

static void bench_run_init(struct bench_run *b, double offset_c) {
        uint32_t x = 12345;

        for (size_t i = 0; i < N; i++) {
                double t = (double) i, rise = 0, jitter;
                x = x * 1664525u + 1013904223u;
                jitter = ((double) (x >> 8) / 16777216.0 - 0.5) * 0.4;
                b->t[i] = t;
                b->phase[i] = t < LOAD_START ? ANALYSIS_PHASE_IDLE : t < LOAD_END ? ANALYSIS_PHASE_STRESS :
                              ANALYSIS_PHASE_COOLDOWN;
                if (b->phase[i] == ANALYSIS_PHASE_STRESS)
                        rise = 30 * (1 - 0.3 * exp(-(t - LOAD_START) / 20) - 0.7 * exp(-(t - LOAD_START) / 900));
                else if (b->phase[i] == ANALYSIS_PHASE_COOLDOWN)
                        rise = 30 * (0.3 * exp(-(t - LOAD_END) / 20) + 0.7 * exp(-(t - LOAD_END) / 900));
                b->temp[i] = round((40 + offset_c + rise + jitter) * 1000) / 1000;
                b->freq[i] = b->phase[i] == ANALYSIS_PHASE_STRESS && b->temp[i] > 68 ? 1.2e9 : 1.5e9;
                b->work[i] = b->phase[i] == ANALYSIS_PHASE_STRESS ? b->freq[i] * 2.5 : NAN;
        }
        b->phases[0] = (struct plot_phase) { ANALYSIS_PHASE_IDLE, 0, LOAD_START };
        b->phases[1] = (struct plot_phase) { ANALYSIS_PHASE_STRESS, LOAD_START, LOAD_END };
        b->phases[2] = (struct plot_phase) { ANALYSIS_PHASE_COOLDOWN, LOAD_END, N - 1 };
        b->run = (struct plot_run) {
                .label = "24 h bench", .board = "synthetic", .date = "2026-12-01 00:00 UTC", .sensor = "thermal_zone0",
                .n = N, .t_s = b->t, .temp_c = b->temp, .freq_hz = b->freq, .work_rate = b->work, .work_unit = "ops",
                .n_phases = 3, .phases = b->phases,
        };
        analysis_metrics_init(&b->run.metrics, 22.0);
        b->run.levels[0] = (struct plot_level) { 80.0, "safety limit" };
        b->run.n_levels = 1;
}

/* The run as the daemon records it: samples.csv in a new directory under
 * /tmp. Returns its size in bytes, 0 on failure. */
static long write_samples(const struct bench_run *b, char *dir) {
        static const char *const temps[15] = { "thermal_zone0", "thermal_zone1", "thermal_zone2",
                "thermal_zone3", "hwmon:acpitz/temp1", "hwmon:coretemp/temp1", "hwmon:coretemp/temp2",
                "hwmon:coretemp/temp3", "hwmon:coretemp/temp4", "hwmon:coretemp/temp5",
                "hwmon:nvme@nvme0/temp1", "hwmon:nvme@nvme0/temp2", "hwmon:nvme@nvme0/temp3",
                "hwmon:nvme@nvme1/temp1", "hwmon:PNP0C14:01/temp1" };
        static const char *const policies[4] = { "policy0", "policy1", "policy2", "policy3" };
        char path[256], *header, *row;
        size_t size = samples_row_size(15, 4);
        struct stat st;
        FILE *f;

        if (!mkdtemp(dir))
                return 0;
        snprintf(path, sizeof path, "%s/samples.csv", dir);
        header = samples_header(temps, 15, policies, 4);
        row = malloc(size);
        f = fopen(path, "we");
        if (!header || !row || !f || fputs(header, f) < 0)
                goto fail;
        for (size_t i = 0; i < N; i++) {
                double t[15], hz[4];
                struct samples_row r = {
                        .time_ms = INT64_C(1764547200000) + (int64_t) i * 1000, .elapsed_s = b->t[i],
                        .phase = b->phase[i] == ANALYSIS_PHASE_STRESS ? "stress" :
                                 b->phase[i] == ANALYSIS_PHASE_COOLDOWN ? "cooldown" : "idle", .temp_c = b->temp[i],
                        .hottest_c = b->temp[i] + 2.0, .freq_hz = b->freq[i], .max_allowed_hz = 1.5e9,
                        .load = b->phase[i] == ANALYSIS_PHASE_STRESS ? 1.0 : 0.02, .work_rate = b->work[i],
                        .work_unit = "ops", .t_since_load_s = b->t[i] - LOAD_START, .firmware_arm_hz = NAN,
                        .firmware_throttled = -1 };
                int len;

                for (size_t k = 0; k < 15; k++)
                        t[k] = b->temp[i] - 0.5 * (double) k;
                for (size_t k = 0; k < 4; k++)
                        hz[k] = b->freq[i];
                if ((len = samples_format_row(&r, t, 15, hz, 4, row, size)) < 0 ||
                    fwrite(row, 1, (size_t) len, f) != (size_t) len)
                        goto fail;
        }
        if (fclose(f) != 0 || stat(path, &st) < 0) {
                f = NULL;
                goto fail;
        }
        free(header);
        free(row);
        return (long) st.st_size;
fail:
        if (f)
                fclose(f);
        free(header);
        free(row);
        return 0;
}

int main(int argc, char **argv) {
        size_t reps = argc > 1 ? strtoul(argv[1], NULL, 10) : 31;
        struct bench_run *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
        double *ms = calloc(reps ? reps : 1, sizeof *ms);
        static double ta[N], tb[N];
        struct analysis_samples in;
        struct plot_curve c[2];
        size_t len = 0;
        char *svg;

        if (!a || !b || !ms || reps == 0)
                return fprintf(stderr, "plot-render: out of memory or REPS is 0\n"), 1;
        bench_run_init(a, 0);
        bench_run_init(b, -3);
        in = (struct analysis_samples) { .n = N, .t_s = a->t, .temp_c = a->temp, .freq_hz = a->freq,
                                         .work_rate = a->work, .phase = a->phase, .ambient_c = 22.0 };
        analysis_compute_metrics(&in, &a->run.metrics);
        b->run.metrics = a->run.metrics;
        for (size_t r = 0; r < reps; r++) {
                double t0 = now_ms();
                plot_run_fits(a->t, a->temp, a->phase, N, &a->run.heat, &a->run.cool);
                ms[r] = now_ms() - t0;
        }
        report("fits", ms, reps);
        for (size_t r = 0; r < reps; r++) {
                double t0 = now_ms();
                if (plot_run_svg(&a->run, PLOT_WIDTH_DEFAULT, PLOT_HEIGHT_DEFAULT, &svg, &len) < 0)
                        return fprintf(stderr, "plot-render: plot_run_svg failed\n"), 1;
                ms[r] = now_ms() - t0;
                free(svg);
        }
        report("run", ms, reps);
        printf("run_svg_bytes=%zu\n", len);
        for (size_t i = 0; i < N; i++) {
                ta[i] = a->t[i] - LOAD_START;
                tb[i] = b->t[i] - LOAD_START;
        }
        c[0] = (struct plot_curve) { .label = "a", .n = N, .t_s = ta, .temp_c = a->temp, .metrics = a->run.metrics };
        c[1] = (struct plot_curve) { .label = "b", .n = N, .t_s = tb, .temp_c = b->temp, .metrics = b->run.metrics };
        for (size_t r = 0; r < reps; r++) {
                double t0 = now_ms();
                if (plot_compare_svg(c, 2, false, PLOT_WIDTH_DEFAULT, PLOT_HEIGHT_DEFAULT, &svg, &len) < 0)
                        return fprintf(stderr, "plot-render: plot_compare_svg failed\n"), 1;
                ms[r] = now_ms() - t0;
                free(svg);
        }
        report("compare", ms, reps);
        printf("compare_svg_bytes=%zu\n", len);
        char dir[] = "/tmp/plot-render-XXXXXX", path[256], unit[16];
        long bytes = write_samples(a, dir);
        if (bytes <= 0)
                return fprintf(stderr, "plot-render: cannot write samples.csv under /tmp\n"), 1;
        snprintf(path, sizeof path, "%s/samples.csv", dir);
        for (size_t r = 0; r < reps; r++) {
                struct plot_data d = {};
                double t0 = now_ms();
                FILE *f = fopen(path, "re");

                if (!f)
                        return fprintf(stderr, "plot-render: cannot open %s\n", path), 1;
                plot_data_read_file(&d, f, PLOT_SAMPLES_MAX);
                fclose(f);
                ms[r] = now_ms() - t0;
                if (d.n != N)
                        return fprintf(stderr, "plot-render: read %zu samples of %d\n", d.n, N), 1;
                plot_data_free(&d);
        }
        report("read", ms, reps);
        printf("samples_csv_bytes=%ld\n", bytes);
        {
                struct run_series live = {};

                run_store_read_series(dir, &live, unit, sizeof unit);
                for (size_t r = 0; r < reps; r++) {
                        struct plot_data d = {};
                        double t0 = now_ms();

                        if (run_series_plot_data(&live, PLOT_SAMPLES_MAX, &d) < 0 || d.n != N)
                                return fprintf(stderr, "plot-render: copy of the series failed\n"), 1;
                        ms[r] = now_ms() - t0;
                        plot_data_free(&d);
                }
                report("live", ms, reps);
                for (size_t r = 0; r < reps; r++) {
                        struct run_series s = {};
                        double t0 = now_ms();

                        if (run_series_copy_as_read(&live, &s) < 0 || s.n != N)
                                return fprintf(stderr, "plot-render: copy of the series failed\n"), 1;
                        ms[r] = now_ms() - t0;
                        run_series_free(&s);
                }
                run_series_free(&live);
                report("live_series", ms, reps);
        }
        unlink(path);
        rmdir(dir);
        free(a);
        free(b);
        free(ms);
        return 0;
}
