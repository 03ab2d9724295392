/* test-plot.c — the SVG plots: golden files for fixed synthetic runs, determinism, bounded size, escaping, bad arguments. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "api-internal.h"
#include "plot-data.h"
#include "plot.h"
#include "svg.h"

/*
 * The golden files are in tests/golden/ (GOLDEN_DIR). They change only on
 * purpose: after a deliberate change to the plots, regenerate them with
 *   HEATCURVE_UPDATE_GOLDEN=1 meson test -C build plot
 * look at them (tests/golden/README.md), and commit them with the change.
 */

#define RUN_N 721                       /* 0..720 s at 1 Hz */

struct synthetic_run {
        double t[RUN_N], temp[RUN_N], freq[RUN_N], work[RUN_N];
        enum analysis_phase phase[RUN_N];
        struct plot_phase phases[3];
        struct plot_run run;
};

/* A small deterministic wobble, no libm: the same on every architecture. */
static double wobble(size_t i) {
        return (double) ((int) ((i * 7919u) % 13u) - 6) * 0.05;
}

/* Idle 0..120 s at 40 C, stress 120..420 s towards 65 C (tau 60 s),
 * cooldown 420..720 s back towards 40 C (tau 50 s); readings in 0.5 C
 * steps; the CPU throttles from 1500 to 1200 MHz above 62 C. */
static void synthetic_run_init(struct synthetic_run *s, const char *label) {
        double at_load_end = 65.0 - 25.0 * exp(-300.0 / 60.0);

        for (size_t i = 0; i < RUN_N; i++) {
                double t = (double) i, v;
                s->t[i] = t;
                s->phase[i] = t < 120 ? ANALYSIS_PHASE_IDLE : t < 420 ? ANALYSIS_PHASE_STRESS : ANALYSIS_PHASE_COOLDOWN;
                if (s->phase[i] == ANALYSIS_PHASE_IDLE)
                        v = 40.0;
                else if (s->phase[i] == ANALYSIS_PHASE_STRESS)
                        v = 65.0 - 25.0 * exp(-(t - 120.0) / 60.0);
                else
                        v = 40.0 + (at_load_end - 40.0) * exp(-(t - 420.0) / 50.0);
                s->temp[i] = round(2.0 * (v + wobble(i))) / 2.0;
                s->freq[i] = s->phase[i] == ANALYSIS_PHASE_STRESS && s->temp[i] > 62 ? 1.2e9 : 1.5e9;
                s->work[i] = s->phase[i] == ANALYSIS_PHASE_STRESS ? s->freq[i] * 1e-6 : NAN;
        }
        s->temp[300] = NAN;     /* one failed read */
        s->phases[0] = (struct plot_phase) { ANALYSIS_PHASE_IDLE, 0, 120 };
        s->phases[1] = (struct plot_phase) { ANALYSIS_PHASE_STRESS, 120, 420 };
        s->phases[2] = (struct plot_phase) { ANALYSIS_PHASE_COOLDOWN, 420, 720 };
        s->run = (struct plot_run) {
                .label = label, .board = "Hardkernel ODROID-C2", .date = "2026-11-30 10:00 UTC",
                .sensor = "thermal_zone0", .n = RUN_N, .t_s = s->t, .temp_c = s->temp, .freq_hz = s->freq,
                .work_rate = s->work, .work_unit = "ops", .n_phases = 3, .phases = s->phases,
        };
        analysis_metrics_init(&s->run.metrics, 24.0);
        s->run.metrics.baseline_c = 40.0;
        s->run.metrics.peak_c = 65.0;
        s->run.metrics.plateau_c = 65.1;
        s->run.metrics.plateau_ci95_c = 0.4;
        s->run.metrics.rise_c = 25.1;
        s->run.metrics.rise_over_ambient_c = 41.1;
        s->run.metrics.tau_heat_s = 60.2;
        s->run.metrics.t90_heat_s = 138.0;
        s->run.metrics.tau_cool_s = 49.7;
        s->run.metrics.throttled_fraction = 0.42;
        s->run.heat = (struct analysis_fit) {
                .model = ANALYSIS_MODEL_EXP1, .t_origin_s = 120, .t_inf_c = 65.1, .t0_c = 40.0, .a_c = 25.1,
                .tau_s = 60.2, .tau_fast_s = NAN,
        };
        s->run.cool = (struct analysis_fit) {
                .model = ANALYSIS_MODEL_EXP1, .t_origin_s = 420, .t_inf_c = 40.1, .t0_c = 65.0, .a_c = -24.9,
                .tau_s = 49.7, .tau_fast_s = NAN,
        };
        s->run.levels[0] = (struct plot_level) { 70.0, "passive" };
        s->run.levels[1] = (struct plot_level) { 80.0, "safety limit" };
        s->run.levels[2] = (struct plot_level) { 105.0, "critical" };
        s->run.n_levels = 3;
}

static char *read_file(const char *path, size_t *len) {
        FILE *f = fopen(path, "rb");
        char *buf;
        long n;

        if (!f)
                return NULL;
        fseek(f, 0, SEEK_END);
        n = ftell(f);
        fseek(f, 0, SEEK_SET);
        buf = malloc((size_t) n + 1);
        assert_non_null(buf);
        *len = fread(buf, 1, (size_t) n, f);
        buf[*len] = '\0';
        fclose(f);
        return buf;
}

/* Byte for byte against tests/golden/<name>; HEATCURVE_UPDATE_GOLDEN=1 rewrites it. */
static void assert_golden(const char *name, const char *svg, size_t len) {
        const char *dir = getenv("GOLDEN_DIR");
        char path[4096];
        size_t want_len = 0;
        char *want;

        if (!dir)
                skip();
        snprintf(path, sizeof path, "%s/%s", dir, name);
        if (getenv("HEATCURVE_UPDATE_GOLDEN")) {
                FILE *f = fopen(path, "wb");
                assert_non_null(f);
                assert_int_equal(fwrite(svg, 1, len, f), len);
                assert_int_equal(fclose(f), 0);
                return;
        }
        want = read_file(path, &want_len);
        if (!want)
                fail_msg("%s is missing: HEATCURVE_UPDATE_GOLDEN=1 meson test -C build plot", path);
        if (want_len != len || memcmp(want, svg, len) != 0) {
                size_t i = 0;
                while (i < len && i < want_len && want[i] == svg[i])
                        i++;
                fail_msg("%s differs at byte %zu (got %zu bytes, want %zu): got \"%.60s\"", name, i, len,
                         want_len, svg + i);
        }
        free(want);
}

static size_t count(const char *hay, const char *needle) {
        size_t n = 0;

        for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
                n++;
        return n;
}

static void test_run_golden(void **state) {
        static struct synthetic_run s;
        char *svg = NULL, *again = NULL;
        size_t len, len2;

        synthetic_run_init(&s, "case A <fan off> & \"lid\"");
        assert_int_equal(plot_run_svg(&s.run, PLOT_WIDTH_DEFAULT, PLOT_HEIGHT_DEFAULT, &svg, &len), 0);
        assert_golden("run.svg", svg, len);
        assert_int_equal(len, strlen(svg));
        assert_non_null(strstr(svg, "xmlns=\"http://www.w3.org/2000/svg\""));
        assert_non_null(strstr(svg, "case A &lt;fan off&gt; &amp; &quot;lid&quot;"));
        assert_non_null(strstr(svg, "plateau 65.1 ± 0.4 °C"));
        assert_non_null(strstr(svg, "τ cool 50 s"));
        assert_non_null(strstr(svg, "throttled 42 %"));
        assert_non_null(strstr(svg, "off scale: critical 105.0 °C"));
        assert_non_null(strstr(svg, "safety limit 80.0 °C"));
        assert_non_null(strstr(svg, "work ops/s"));
        assert_null(strstr(svg, "nan"));
        assert_null(strstr(svg, "-0.0\""));
        assert_int_equal(plot_run_svg(&s.run, PLOT_WIDTH_DEFAULT, PLOT_HEIGHT_DEFAULT, &again, &len2), 0);
        assert_int_equal(len, len2);
        assert_memory_equal(svg, again, len);
        free(svg);
        free(again);
}

static size_t count_of(const char *text, const char *what) {
        size_t n = 0;

        for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
                n++;
        return n;
}

static void test_compare_golden(void **state) {
        static struct synthetic_run a, b;
        static double ta[RUN_N], tb[RUN_N];
        struct plot_curve c[2];
        char *svg = NULL;
        size_t len;

        synthetic_run_init(&a, "case A");
        synthetic_run_init(&b, "");
        for (size_t i = 0; i < RUN_N; i++) {
                ta[i] = a.t[i] - 120;
                tb[i] = b.t[i] - 120;
                b.temp[i] -= 3.0;
        }
        b.run.metrics.plateau_c = 62.1;
        b.run.metrics.t90_heat_s = 150.0;
        b.run.metrics.tau_cool_s = NAN;
        c[0] = (struct plot_curve) { .label = "case A", .id = 1, .n = RUN_N, .t_s = ta, .temp_c = a.temp,
                                     .metrics = a.run.metrics };
        c[1] = (struct plot_curve) { .label = "", .id = 4, .origin = "10.0.0.7:8080", .n = RUN_N, .t_s = tb,
                                     .temp_c = b.temp, .metrics = b.run.metrics };
        c[1].metrics.ambient_c = NAN;
        assert_int_equal(plot_compare_svg(c, 2, false, PLOT_WIDTH_DEFAULT, PLOT_HEIGHT_DEFAULT, &svg, &len), 0);
        assert_golden("compare.svg", svg, len);
        /* an error bar per group: its mean, the dot, and its interval, in its first run's colour */
        assert_int_equal(count_of(svg, "<circle "), 2);
        assert_non_null(strstr(svg, "r=\"3.0\" fill=\"#0072B2\"/>"));
        assert_non_null(strstr(svg, "r=\"3.0\" fill=\"#D55E00\"/>"));
        assert_non_null(strstr(svg, "case A: plateau 65.1 °C, t90 2.3 min"));
        assert_non_null(strstr(svg, "run 4 (10.0.0.7:8080)"));
        assert_non_null(strstr(svg, "-3.0 °C"));
        assert_non_null(strstr(svg, "+12 s"));
        /* the verdict under the title, as GET /api/v1/compare words it */
        assert_non_null(strstr(svg, ">case A and #4 (10.0.0.7:8080): no difference beyond ±0.8 °C over ambient "
                                    "(95 %; 1 run each, their fits&#39; intervals only)</text>"));
        free(svg);
        /* one group: no verdict to give */
        c[1].label = "case A";
        assert_int_equal(plot_compare_svg(c, 2, false, PLOT_WIDTH_DEFAULT, PLOT_HEIGHT_DEFAULT, &svg, &len), 0);
        assert_null(strstr(svg, "y=\"36.0\""));
        assert_int_equal(count_of(svg, "<circle "), 1);       /* one group: one bar, of its two runs */
        free(svg);
        c[1].label = "";
        assert_int_equal(plot_compare_svg(c, 2, true, PLOT_WIDTH_DEFAULT, PLOT_HEIGHT_DEFAULT, &svg, &len), 0);
        assert_golden("compare-rise.svg", svg, len);
        assert_non_null(strstr(svg, "case A: rise 41.1 °C"));
        assert_non_null(strstr(svg, "(over baseline: no ambient)"));
        assert_null(strstr(svg, "<circle "));  /* rises over ambient and over a baseline: no common bar */
        free(svg);
}

/* theme=dark: the same document, the same length, with dark neutrals; the
 * curves keep their palette colours, so they stay as distinguishable. */
static void assert_dark_theme(const char *light, size_t len) {
        static const char *const gone[] = { "\"#ffffff\"", "\"#333333\"", "\"#666666\"", "\"#e4e4e4\"", NULL };
        char *dark = malloc(len + 1), *again;
        size_t changed = 0;

        assert_non_null(dark);
        memcpy(dark, light, len + 1);
        svg_theme_dark(dark, len);
        for (size_t i = 0; gone[i]; i++)
                assert_null(strstr(dark, gone[i]));
        assert_non_null(strstr(dark, "<rect x=\"0.0\" y=\"0.0\" width=\"960.0\" height=\"480.0\" fill=\"#17181b\"/>"));
        assert_non_null(strstr(dark, "fill=\"#d9d9d9\">History 2026-12-01 08:00:00"));
        for (size_t i = 0; i < 2; i++)
                assert_non_null(strstr(dark, svg_palette(i)));
        assert_non_null(strstr(dark, "stroke=\"#33363c\""));        /* the grid */
        for (size_t i = 0; i < len; i++)
                if (dark[i] != light[i]) {
                        /* only inside a colour: "#rrggbb" after =" */
                        size_t k = i;
                        while (k > 0 && dark[k] != '#')
                                k--;
                        assert_true(k >= 2 && i - k <= 6 && dark[k - 1] == '"' && dark[k - 2] == '=');
                        changed++;
                }
        assert_true(changed > 0);
        /* no dark colour is a light one: applying it twice changes nothing more */
        again = strdup(dark);
        assert_non_null(again);
        svg_theme_dark(again, len);
        assert_memory_equal(again, dark, len);
        free(again);
        free(dark);
}

#define HIST_N 120

static void test_history_golden(void **state) {
        static int64_t t[HIST_N];
        static double mn[3][HIST_N], mx[3][HIST_N], mean[3][HIST_N];
        const int64_t from = INT64_C(1796112000000), bucket = 15000;   /* 2026-12-01 08:00 UTC, 15 s */
        struct plot_band bands[3] = {
                { "thermal_zone0", PLOT_KIND_TEMP, mn[0], mx[0], mean[0] },
                { "hwmon:scpi/temp1", PLOT_KIND_TEMP, mn[1], mx[1], mean[1] },
                { "cpufreq:policy0", PLOT_KIND_FREQ, mn[2], mx[2], mean[2] },
        };
        char *svg = NULL;
        size_t n = 0, len;

        for (size_t i = 0; i < HIST_N; i++) {
                if (i >= 50 && i < 60)
                        continue;       /* the daemon was down: a gap */
                t[n] = from + (int64_t) i * bucket;
                mean[0][n] = 45.0 + (double) (i % 40) * 0.25;
                mean[1][n] = mean[0][n] - 2.0;
                mean[2][n] = i % 40 < 20 ? 1.5e9 : 1.0e9;
                for (size_t k = 0; k < 3; k++) {
                        mn[k][n] = mean[k][n] - (k == 2 ? 1e8 : 0.5);
                        mx[k][n] = mean[k][n] + (k == 2 ? 0 : 0.75);
                }
                n++;
        }
        assert_int_equal(plot_history_svg(t, n, bucket, from, from + HIST_N * bucket, bands, 3, NULL,
                                          PLOT_WIDTH_DEFAULT, 480, &svg, &len), 0);
        assert_golden("history.svg", svg, len);
        assert_non_null(strstr(svg, "History 2026-12-01 08:00:00"));
        assert_non_null(strstr(svg, "hwmon:scpi/temp1"));
        assert_non_null(strstr(svg, "CPU MHz"));
        assert_dark_theme(svg, len);
        free(svg);
        assert_int_equal(plot_history_svg(t, 0, bucket, from, from, bands, 0, NULL, 400, 400, &svg, &len), 0);
        assert_non_null(strstr(svg, "no sensors selected"));
        free(svg);
}

/* Throttled as a run counts it, under load; a flat frequency is a strip; the marks are drawn. */
static void test_history_marks(void **state) {
        const int64_t from = INT64_C(1796112000000), bucket = 1000;
        int64_t t[4] = { from, from + 1000, from + 2000, from + 3000 };
        double temp[4] = { 70, 71, 72, 73 }, hz[4] = { 1.5e9, 1.2e9, 1.2e9, 1.5e9 }, load[4] = { 1, 1, 0.2, 1 };
        double flat[4] = { 1.5e9, 1.5e9, 1.5e9, 1.5e9 };
        struct plot_band bands[3] = {
                { "thermal_zone0", PLOT_KIND_TEMP, temp, temp, temp, 0 },
                { "cpufreq:policy0", PLOT_KIND_FREQ, hz, hz, hz, 1.5e9 },
                { "load:cpu", PLOT_KIND_LOAD, load, load, load, 0 },
        };
        struct plot_span run = { from + 500, from + 2500, "#3 case A" };
        struct plot_alert_mark alert = { from + 1500, true, "soc crit 72.0 °C" };
        struct plot_history_marks marks = { .n_levels = 1, .levels = { { 80, "passive" } },
                                            .n_runs = 1, .runs = &run, .n_alerts = 1, .alerts = &alert };
        char *svg;
        size_t len;

        (void) state;
        assert_true(plot_throttled(1.2e9, 1.5e9, 0.5));
        assert_true(plot_throttled(1.2e9, 1.5e9, NAN));         /* no load known: the frequency decides */
        assert_false(plot_throttled(1.2e9, 1.5e9, 0.2));        /* an idle board at a low clock */
        assert_false(plot_throttled(1.495e9, 1.5e9, 1));        /* within 0.5 % */
        assert_false(plot_throttled(1.2e9, 0, 1));              /* maximum unknown */
        assert_int_equal(plot_history_svg(t, 4, bucket, from, from + 4000, bands, 3, &marks, 600, 400, &svg, &len), 0);
        /* one throttled bucket (the second; the third is idle) over three panels */
        assert_non_null(strstr(svg, "<g class=\"throttled\">"));
        assert_non_null(strstr(svg, ">throttled</text>"));
        assert_non_null(strstr(svg, ">#3 case A</text>"));
        assert_non_null(strstr(svg, "<title>soc crit 72.0 °C</title>"));
        assert_non_null(strstr(svg, ">passive 80.0 °C</text>"));
        assert_null(strstr(svg, "unchanged"));
        free(svg);
        bands[1].mean = bands[1].min = bands[1].max = flat;
        assert_int_equal(plot_history_svg(t, 4, bucket, from, from + 4000, bands, 3, NULL, 600, 400, &svg, &len), 0);
        assert_non_null(strstr(svg, ">cpufreq:policy0: unchanged</text>"));
        assert_non_null(strstr(svg, ">1500</text>"));
        assert_null(strstr(svg, "throttled"));
        free(svg);
        marks.n_levels = PLOT_LEVELS_MAX + 1;
        assert_int_equal(plot_history_svg(t, 4, bucket, from, from + 4000, bands, 3, &marks, 600, 400, &svg, &len),
                         -EINVAL);
}

/* 24 h at 1 Hz draws at most 2 points per bucket per series, in a bounded document. */
static void test_long_run_bounded(void **state) {
        const size_t n = 86400;
        double *t = calloc(n, sizeof *t), *y = calloc(n, sizeof *y), *f = calloc(n, sizeof *f);
        struct plot_phase ph[3] = {
                { ANALYSIS_PHASE_IDLE, 0, 3600 }, { ANALYSIS_PHASE_STRESS, 3600, 50000 },
                { ANALYSIS_PHASE_COOLDOWN, 50000, 86399 },
        };
        struct plot_run r = { .label = "24 h", .n = n, .t_s = t, .temp_c = y, .freq_hz = f, .n_phases = 3, .phases = ph };
        char *svg = NULL;
        size_t len;

        assert_non_null(t);
        assert_non_null(y);
        assert_non_null(f);
        for (size_t i = 0; i < n; i++) {
                t[i] = (double) i;
                y[i] = 40.0 + (double) (i % 997) * 0.01 + wobble(i);
                f[i] = i % 2 ? 1.5e9 : 1.2e9;
        }
        analysis_metrics_init(&r.metrics, NAN);
        assert_int_equal(plot_run_svg(&r, PLOT_WIDTH_DEFAULT, PLOT_HEIGHT_DEFAULT, &svg, &len), 0);
        assert_true(count(svg, " L") + count(svg, "M") <= 2 * 2 * PLOT_BUCKETS_MAX + 64);
        assert_true(len < 200 * 1024);
        assert_non_null(strstr(svg, "time since the run started (h)"));
        free(svg);
        free(t);
        free(y);
        free(f);
}

static void test_bad_arguments(void **state) {
        static struct synthetic_run s;
        struct plot_curve c[PLOT_COMPARE_MAX + 1] = {};
        char *svg = NULL;
        size_t len;

        synthetic_run_init(&s, "x");
        assert_int_equal(plot_run_svg(&s.run, PLOT_SIZE_MIN - 1, 400, &svg, &len), -EINVAL);
        assert_int_equal(plot_run_svg(&s.run, 400, PLOT_SIZE_MAX + 1, &svg, &len), -EINVAL);
        assert_int_equal(plot_run_svg(NULL, 400, 400, &svg, &len), -EINVAL);
        assert_int_equal(plot_compare_svg(c, 0, false, 400, 400, &svg, &len), -EINVAL);
        assert_int_equal(plot_compare_svg(c, PLOT_COMPARE_MAX + 1, false, 400, 600, &svg, &len), -EINVAL);
        assert_int_equal(plot_compare_svg(c, PLOT_COMPARE_MAX, false, 400, PLOT_SIZE_MIN, &svg, &len), -ERANGE);
        assert_null(svg);
        /* smallest sizes still render */
        assert_int_equal(plot_run_svg(&s.run, PLOT_SIZE_MIN, PLOT_SIZE_MIN, &svg, &len), 0);
        free(svg);
        assert_int_equal(plot_compare_svg(c, 1, true, PLOT_SIZE_MIN, PLOT_SIZE_MIN, &svg, &len), 0);
        free(svg);
}

static void test_svg_helpers(void **state) {
        struct svg s;
        char buf[32], *out = NULL;
        double step, first;
        size_t len;

        assert_string_equal(svg_num(-0.04, 1, buf, sizeof buf), "0.0");
        assert_string_equal(svg_num(-1.25, 1, buf, sizeof buf), "-1.3");
        assert_string_equal(svg_num(2.5, 0, buf, sizeof buf), "3");
        assert_string_equal(svg_num(NAN, 2, buf, sizeof buf), "0.00");
        assert_string_equal(svg_num(12.0625, 3, buf, sizeof buf), "12.063");
        assert_int_equal(svg_ticks(0, 100, 5, &step, &first), 6);
        assert_true(step == 20 && first == 0);
        assert_int_equal(svg_ticks(37.2, 66.1, 6, &step, &first), 6);
        assert_true(step == 5 && first == 40);
        assert_int_equal(svg_step_decimals(0.5), 1);
        assert_int_equal(svg_step_decimals(20), 0);
        assert_int_equal(svg_begin(&s, 400, 300, "a\x01" "b\xff" "c <&>"), 0);
        assert_int_equal(svg_end(&s, &out, &len), 0);
        assert_non_null(strstr(out, "<title>a?b?c &lt;&amp;&gt;</title>"));
        free(out);
        assert_string_equal(svg_palette(0), svg_palette(SVG_PALETTE_SIZE));
}

/* The documents heatcurvectl fetches (run, samples, sensors) give the plot data. */
static void test_plot_data_from_documents(void **state) {
        static const char run_doc[] =
                "{\"id\": 4, \"label\": \"alu case\", \"created_ms\": 1796112000000, \"sensor\": \"thermal_zone0\","
                " \"safety_limit_c\": 80.0, \"board\": {\"model\": \"ODROID-C2\"},"
                " \"phases\": [{\"kind\": \"idle\", \"started_ms\": 1796112000000, \"ended_ms\": 1796112002000},"
                "  {\"kind\": \"stress\", \"started_ms\": 1796112002000, \"ended_ms\": 1796112004000},"
                "  {\"kind\": \"cooldown\", \"started_ms\": 1796112004000, \"ended_ms\": null}],"
                " \"metrics\": {\"plateau_c\": 61.5, \"plateau_ci95_c\": 0.5, \"tau_cool_s\": null, \"work_unit\": \"ops\"}}";
        /* samples.csv as GET /api/v1/runs/4/samples sends it: the header's
         * fixed columns up to work_unit, one row too short, one that does
         * not move time forward */
        static const char *const samples_csv[] = {
                "time_ms,elapsed_s,phase,temp_c,hottest_c,freq_hz,max_allowed_hz,cooling_active,load,"
                "work_rate_per_s,work_unit",
                "1,0.5,idle,40.000,40.000,1500000000,1500000000,0,,,",
                "2,1.5,idle,40.500,40.500,1500000000,1500000000,0,,,",
                "3,2.5,stress",
                "3,2.5,stress,50.000,50.000,1500000000,1500000000,0,,1000.0,ops",
                "4,3.5,stress,55.000,55.000,1200000000,1500000000,0,,900.0,ops",
                "5,3.5,stress,99.000,99.000,1,1500000000,0,,1,ops",
                "6,4.5,cooldown,50.000,50.000,1500000000,1500000000,0,,,",
        };
        struct plot_data_reader rd;
        static const char sensors_doc[] =
                "{\"temperatures\": [{\"id\": \"other\", \"trips\": [{\"type\": \"hot\", \"celsius\": 50.0}]},"
                " {\"id\": \"thermal_zone0\", \"trips\": [{\"type\": \"passive\", \"celsius\": 70.0},"
                "  {\"type\": \"critical\", \"celsius\": 80.0}, {\"type\": \"active\", \"celsius\": 0}],"
                "  \"max_celsius\": null, \"crit_celsius\": 95.5}]}";
        json_object *run = json_tokener_parse(run_doc);
        json_object *sensors = json_tokener_parse(sensors_doc), *bad = json_tokener_parse("{\"id\": 1}");
        struct plot_data d;
        struct plot_curve c;
        char err[128], *svg = NULL;
        size_t len;

        assert_non_null(run);
        assert_non_null(sensors);
        assert_int_equal(plot_data_from_doc(&d, bad, err, sizeof err), -EINVAL);
        assert_int_equal(plot_data_from_doc(&d, run, err, sizeof err), 0);
        plot_data_reader_init(&rd, &d, 0);
        for (size_t i = 0; i < sizeof samples_csv / sizeof *samples_csv; i++) {
                char line[256];
                snprintf(line, sizeof line, "%s", samples_csv[i]);
                assert_int_equal(plot_data_read_row(&rd, line, i == 0), 0);
        }
        plot_data_levels_from_sensors(&d, sensors);
        plot_data_finish(&d);
        assert_int_equal(d.id, 4);
        assert_string_equal(d.label, "alu case");
        assert_string_equal(d.board, "ODROID-C2");
        assert_string_equal(d.date, "2026-12-01 08:00 UTC");
        assert_int_equal(d.n, 5);               /* the row that does not move time forward is dropped */
        assert_int_equal(d.phase[2], ANALYSIS_PHASE_STRESS);
        assert_true(isnan(d.work_rate[0]) && d.work_rate[2] == 1000.0);
        assert_int_equal(d.n_phases, 3);
        assert_true(d.phases[1].start_s == 2.0 && d.phases[1].end_s == 4.0 && isnan(d.phases[2].end_s));
        assert_true(d.run.metrics.plateau_c == 61.5 && isnan(d.run.metrics.tau_cool_s));
        /* passive, critical, crit; the active trip at 0 C is a disabled one; the safety limit equals critical */
        assert_int_equal(d.run.n_levels, 3);
        assert_string_equal(d.run.levels[2].label, "crit");
        assert_int_equal(plot_run_svg(&d.run, 640, 400, &svg, &len), 0);
        assert_non_null(strstr(svg, "alu case — ODROID-C2 — 2026-12-01 08:00 UTC"));
        assert_non_null(strstr(svg, "passive 70.0 °C"));
        free(svg);
        plot_data_curve(&d, "odroid:8080", &c);
        assert_true(c.t_s[0] == -1.5 && c.t_s[2] == 0.5);       /* 0 = the stress phase's start */
        assert_int_equal(c.id, 4);
        plot_data_free(&d);
        plot_data_free(&d);
        json_object_put(run);
        json_object_put(sensors);
        json_object_put(bad);
}

/* Degenerate input still gives a well-formed document: no samples, only
 * missing values, a flat line, a live phase without an end. */
static void test_degenerate_input(void **state) {
        static const double t[4] = { 0, 1, 2, 3 }, nan4[4] = { NAN, NAN, NAN, NAN }, flat[4] = { 50, 50, 50, 50 };
        static const int64_t tm[2] = { 1000, 2000 };
        static const double one[2] = { NAN, NAN };
        struct plot_phase ph[2] = { { ANALYSIS_PHASE_IDLE, 0, 1 }, { ANALYSIS_PHASE_STRESS, 1, NAN } };
        struct plot_run r = { .n_phases = 2, .phases = ph };
        struct plot_curve c[2] = { { .n = 0 }, { .n = 4, .t_s = t, .temp_c = nan4 } };
        struct plot_band band = { "x", PLOT_KIND_LOAD, one, one, one };
        char *svg = NULL;
        size_t len;

        analysis_metrics_init(&r.metrics, NAN);
        analysis_metrics_init(&c[0].metrics, NAN);
        analysis_metrics_init(&c[1].metrics, NAN);
        assert_int_equal(plot_run_svg(&r, 400, 400, &svg, &len), 0);
        assert_null(strstr(svg, "nan"));
        free(svg);
        r.n = 4;
        r.t_s = t;
        r.temp_c = nan4;
        assert_int_equal(plot_run_svg(&r, 400, 400, &svg, &len), 0);
        free(svg);
        r.temp_c = flat;
        assert_int_equal(plot_run_svg(&r, 400, 400, &svg, &len), 0);
        assert_null(strstr(svg, "nan"));
        assert_null(strstr(svg, "inf"));
        free(svg);
        assert_int_equal(plot_compare_svg(c, 2, false, 400, 400, &svg, &len), 0);
        free(svg);
        assert_int_equal(plot_compare_svg(c, 2, true, 400, 400, &svg, &len), 0);
        assert_null(strstr(svg, "nan"));
        free(svg);
        assert_int_equal(plot_history_svg(tm, 2, 1000, 1000, 3000, &band, 1, NULL, 400, 400, &svg, &len), 0);
        assert_null(strstr(svg, "nan"));
        free(svg);
        assert_int_equal(plot_history_svg(tm, 2, 0, 1000, 3000, &band, 1, NULL, 400, 400, &svg, &len), -EINVAL);
        assert_int_equal(plot_history_svg(tm, 2, 1000, 3000, 1000, &band, 1, NULL, 400, 400, &svg, &len), -EINVAL);
}

/* Samples added one by one grow d up to its limit; those whose time does
 * not move forward are dropped when it is finished. */
static void test_plot_data_add(void **state) {
        struct plot_data d = { .n = 0 };

        (void) state;
        d.safety_limit_c = NAN;
        for (size_t i = 0; i < 1500; i++) {
                struct samples_row row = { .elapsed_s = i == 2 ? 1.0 : (double) i, .temp_c = 40.0 + (double) i,
                                           .freq_hz = NAN, .work_rate = NAN };
                assert_int_equal(plot_data_add(&d, &row, ANALYSIS_PHASE_IDLE, 1500), 0);
        }
        assert_int_equal(d.n, 1500);
        assert_int_equal(d.cap, 1500);         /* 1024, then the limit, not 2048 */
        plot_data_finish(&d);
        assert_int_equal(d.n, 1499);
        assert_true(d.t_s[2] == 3.0 && d.temp_c[2] == 43.0);
        assert_int_equal(d.run.n, 1499);
        plot_data_free(&d);
}

/* A long run at 10 Hz: 60 s idle, 90 min of load heating with 20 s and
 * 900 s time constants, 30 min of cooldown; 0.5 C steps with noise. */
#define LONG_HZ 10
#define LONG_N ((60 + 5400 + 1800) * LONG_HZ)

static double long_t[LONG_N], long_y[LONG_N];
static enum analysis_phase long_phase[LONG_N];

static double long_noise(size_t i) {     /* about +-0.3 C, deterministic */
        uint64_t z = (uint64_t) i * UINT64_C(0x9e3779b97f4a7c15);
        z = (z ^ (z >> 29)) * UINT64_C(0xbf58476d1ce4e5b9);
        return ((double) (z >> 40) / 16777216.0 - 0.5) * 0.6;
}

static double max_gap(const struct analysis_fit *a, const struct analysis_fit *b, double from, double to) {
        double worst = 0;

        for (int i = 0; i <= 500; i++) {
                double t = from + (to - from) * i / 500.0;
                worst = fmax(worst, fabs(analysis_fit_eval(a, t) - analysis_fit_eval(b, t)));
        }
        return worst;
}

/* The curves drawn over a run are fitted on a bounded number of bins (a
 * live run's plot is drawn again every few seconds; bench/plot-render
 * measures the cost): over each phase they stay within 0.05 C of the fits
 * on every sample. */
static void test_run_fits_follow_full(void **state) {
        size_t load = 60 * LONG_HZ, cool = (60 + 5400) * LONG_HZ;
        double end_load = 0;
        struct analysis_fit heat, cooling, full_heat, full_cool;

        for (size_t i = 0; i < LONG_N; i++) {
                double t = (double) i / LONG_HZ, v;

                long_t[i] = t;
                long_phase[i] = i < load ? ANALYSIS_PHASE_IDLE : i < cool ? ANALYSIS_PHASE_STRESS : ANALYSIS_PHASE_COOLDOWN;
                if (i < load)
                        v = 40;
                else if (i < cool)
                        v = end_load = 70 - 8 * exp(-(t - 60) / 20) - 22 * exp(-(t - 60) / 900);
                else
                        v = 40 + (end_load - 40) * (0.3 * exp(-(t - 5460) / 30) + 0.7 * exp(-(t - 5460) / 600));
                long_y[i] = round(2 * (v + long_noise(i))) / 2;
        }
        plot_run_fits(long_t, long_y, long_phase, LONG_N, &heat, &cooling);
        assert_int_equal(analysis_fit_auto(long_t + load, long_y + load, cool - load, &full_heat), 0);
        assert_int_equal(analysis_fit_auto(long_t + cool, long_y + cool, LONG_N - cool, &full_cool), 0);
        assert_int_not_equal(heat.model, ANALYSIS_MODEL_NONE);
        assert_int_not_equal(cooling.model, ANALYSIS_MODEL_NONE);
        printf("drawn vs full fits, max gap: heating %.3f C, cooling %.3f C\n",
               max_gap(&heat, &full_heat, 60, 5460), max_gap(&cooling, &full_cool, 5460, 7260));
        assert_true(max_gap(&heat, &full_heat, 60, 5460) <= 0.05);
        assert_true(max_gap(&cooling, &full_cool, 5460, 7260) <= 0.05);
}

/* A live run's plot is drawn again once the run has grown by one of the
 * plot's buckets (a pixel at most), an ended run's when anything changed. */
static void test_live_plot_fresh(void **state) {
        (void) state;
        /* short runs: every new sample is drawn */
        assert_true(api_plot_fresh(100, 100, true, 960));
        assert_false(api_plot_fresh(100, 101, true, 960));
        assert_false(api_plot_fresh(1919, 1920, true, 960));
        /* 24 h at 1 Hz, 960 px: 90 samples a bucket */
        assert_true(api_plot_fresh(86400, 86489, true, 960));
        assert_false(api_plot_fresh(86400, 86490, true, 960));
        /* wider than PLOT_BUCKETS_MAX: 1000 buckets */
        assert_true(api_plot_fresh(86400, 86485, true, 4096));
        assert_false(api_plot_fresh(86400, 86486, true, 4096));
        /* the run's samples never go back; an ended run is drawn once */
        assert_false(api_plot_fresh(86400, 86399, true, 960));
        assert_true(api_plot_fresh(86400, 86400, false, 960));
        assert_false(api_plot_fresh(86400, 86401, false, 960));
        assert_false(api_plot_fresh(86400, 100, false, 960));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_run_golden),
                cmocka_unit_test(test_compare_golden),
                cmocka_unit_test(test_history_golden),
                cmocka_unit_test(test_history_marks),
                cmocka_unit_test(test_long_run_bounded),
                cmocka_unit_test(test_run_fits_follow_full),
                cmocka_unit_test(test_bad_arguments),
                cmocka_unit_test(test_svg_helpers),
                cmocka_unit_test(test_plot_data_from_documents),
                cmocka_unit_test(test_degenerate_input),
                cmocka_unit_test(test_plot_data_add),
                cmocka_unit_test(test_live_plot_fresh),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
