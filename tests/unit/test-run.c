/* test-run.c — unit tests for the run engine driven by synthetic ticks: phases are timed on the monotonic clock. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "plot-data.h"
#include "run.h"
#include "samples-csv.h"

#define WALL0 1700000000000LL           /* Unix ms at the start */
#define MONO0 123456789LL               /* CLOCK_MONOTONIC ms at the start */

static struct temp_sensor temps[1];
static struct sensors board = { .temps = temps, .n_temps = 1 };
static int ended;

static void on_ended(struct run_host *host, struct run *r) {
        ended++;
}

static struct run *start_run(const char *json, struct run_host *host, char *dir) {
        struct run_settings set = { dir, "", 0 };
        json_object *def = json_tokener_parse(json);
        struct run *r = NULL;
        char err[600];

        snprintf(temps[0].id, sizeof temps[0].id, "thermal_zone0");
        temps[0].ok = true;
        temps[0].temp_mc = 40000;
        board.load = (struct cpu_load) { .ok = true, .have_prev = true, .total = 0.0 };
        assert_non_null(def);
        assert_int_equal(run_parse(def, &board, &r, err, sizeof err), 0);
        json_object_put(def);
        *host = (struct run_host) { .event = NULL, .sensors = &board, .ended = on_ended };
        ended = 0;
        assert_int_equal(run_start(r, host, &set, 1, err, sizeof err), 0);
        return r;
}

static void remove_tree(const char *dir) {
        char cmd[600];

        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        assert_int_equal(system(cmd), 0);
}

/* A board without an RTC steps its clock by NTP after boot: 120 s back, then
 * an hour forward. A 60 s phase still lasts 60 s, and the series' time too. */
static void test_wall_clock_steps_do_not_time_phases(void **state) {
        char dir[] = "/tmp/test-run-XXXXXX";
        struct run_host host;
        struct run *r;
        int64_t wall_offset = 0;

        assert_non_null(mkdtemp(dir));
        r = start_run("{\"phases\": [{\"kind\": \"idle\", \"duration\": \"60s\"}]}", &host, dir);
        /* the engine started on the real clocks: tick from its own monotonic start */
        int64_t mono0 = r->created_mono_ms, wall0 = r->created_ms;
        for (int s = 1; s <= 59; s++) {
                if (s == 5)
                        wall_offset -= 120000;
                if (s == 20)
                        wall_offset += 3600000;
                run_tick(r, wall0 + s * 1000 + wall_offset, mono0 + s * 1000);
                if (r->state != RUN_RUNNING)
                        fail_msg("the phase ended after %d s", s);
        }
        run_tick(r, wall0 + 60000 + wall_offset, mono0 + 60000);
        assert_int_equal(r->state, RUN_FINISHED);
        assert_int_equal(ended, 1);
        assert_string_equal(r->phases[0].end_reason, "duration");
        assert_int_equal(r->clock_steps, 2);
        /* the labels follow the wall clock as it was */
        assert_int_equal(r->ended_ms, wall0 + 60000 + wall_offset);
        run_free(r);
        remove_tree(dir);
}

/* Samples keep a steady time axis through the steps. */
static void test_series_time_is_monotonic(void **state) {
        char dir[] = "/tmp/test-run-XXXXXX";
        struct run_host host;
        struct run *r;

        assert_non_null(mkdtemp(dir));
        r = start_run("{\"phases\": [{\"kind\": \"idle\", \"duration\": \"1h\"}]}", &host, dir);
        int64_t mono0 = r->created_mono_ms, wall0 = r->created_ms;
        for (int s = 1; s <= 10; s++)
                run_tick(r, wall0 + s * 1000 - (s >= 4 ? 300000 : 0), mono0 + s * 1000);
        assert_int_equal(r->series.n, 10);
        for (size_t i = 0; i < r->series.n; i++)
                assert_true(fabs(r->series.t_s[i] - (double) (i + 1)) < 1e-9);
        assert_int_equal(r->n_samples, 10);
        run_free(r);
        remove_tree(dir);
}

/* The complete rows of a samples.csv, from its tail as from its start. */
static void test_complete_tail(void **state) {
#define ROWS(text, want) { text, sizeof text - 1, want }
        static const struct { const char *text; size_t len; int64_t want; } cases[] = {
                ROWS("h\n1,2\n3,4\n", 10),                    /* whole */
                ROWS("h\n1,2\n3,", 6),                         /* a row being written */
                ROWS("h\n1,2\n3,4\n\0\0\0\0", 10),            /* a power cut's NULs */
                ROWS("h\n1,2\n3\0\0\n", 6),                   /* NULs, then a newline */
                ROWS("h\n", 2),
                ROWS("h", 0),
                ROWS("", 0),
        };
#undef ROWS
        char big[3 * 4096 + 16];
        char path[] = "/tmp/test-run-tail-XXXXXX";
        int fd = mkstemp(path);

        assert_true(fd >= 0);
        for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
                assert_int_equal(ftruncate(fd, 0), 0);
                assert_int_equal(pwrite(fd, cases[k].text, cases[k].len, 0), (ssize_t) cases[k].len);
                assert_int_equal(samples_complete_tail(fd, (int64_t) cases[k].len), cases[k].want);
                FILE *f = fdopen(dup(fd), "r");
                assert_non_null(f);
                assert_int_equal(samples_complete_length(f), cases[k].want);
                fclose(f);
        }
        /* a NUL tail longer than one read, after rows that span reads */
        memset(big, 0, sizeof big);
        for (size_t i = 0; i < 4096 + 100; i += 10)
                memcpy(big + i, "123456789\n", 10);
        assert_int_equal(ftruncate(fd, 0), 0);
        assert_int_equal(pwrite(fd, big, sizeof big, 0), (ssize_t) sizeof big);
        assert_int_equal(samples_complete_tail(fd, (int64_t) sizeof big), 4200);
        close(fd);
        unlink(path);
}

/* The peak of a live run follows its samples within a phase, not only at phase ends. */
static void test_live_peak_follows_samples(void **state) {
        char dir[] = "/tmp/test-run-XXXXXX";
        struct run_host host;
        struct run *r;

        assert_non_null(mkdtemp(dir));
        r = start_run("{\"phases\": [{\"kind\": \"idle\", \"duration\": \"60s\"}]}", &host, dir);
        int64_t mono0 = r->created_mono_ms, wall0 = r->created_ms;
        for (int s = 1; s <= 30; s++) {
                temps[0].temp_mc = s <= 20 ? 41000 + 500 * s : 45000;         /* up to 51 C, then down */
                run_tick(r, wall0 + s * 1000, mono0 + s * 1000);
                assert_int_equal(r->state, RUN_RUNNING);
                assert_true(fabs(r->metrics.peak_c - (s <= 20 ? 41.0 + 0.5 * s : 51.0)) < 1e-9);
        }
        run_stop(r);
        assert_true(fabs(r->metrics.peak_c - 51.0) < 1e-9);
        run_free(r);
        remove_tree(dir);
}

/* Other programs busy during idle: the phase and the baseline are flagged. */
static void test_busy_idle_is_flagged(void **state) {
        char dir[] = "/tmp/test-run-XXXXXX";
        struct run_host host;
        struct run *r;
        json_object *doc, *q;

        assert_non_null(mkdtemp(dir));
        r = start_run("{\"phases\": [{\"kind\": \"idle\", \"duration\": \"20s\"},"
                      " {\"kind\": \"cooldown\", \"duration\": \"20s\"}]}", &host, dir);
        int64_t mono0 = r->created_mono_ms, wall0 = r->created_ms;
        for (int s = 1; s <= 40; s++) {
                board.load.total = s <= 20 ? 0.6 : 0.05;        /* a cron job during idle only */
                run_tick(r, wall0 + s * 1000, mono0 + s * 1000);
        }
        assert_int_equal(r->state, RUN_FINISHED);
        assert_true(run_phase_disturbed(r, 0));
        assert_false(run_phase_disturbed(r, 1));
        assert_true(fabs(r->phase_load[0] - 0.6) < 0.05);
        assert_int_equal(run_metric_quality(r, "baseline_c"), RUN_QUALITY_DISTURBED);
        assert_int_equal(run_metric_quality(r, "t_back_to_baseline_s"), RUN_QUALITY_OK);
        doc = run_to_json(r, false);
        assert_true(json_object_object_get_ex(doc, "quality", &q));
        assert_string_equal(json_object_to_json_string(q),
                            "{ \"ok\": false, \"phases\": [ { \"external_load\": 0.6, \"disturbed\": true }, "
                            "{ \"external_load\": 0.05, \"disturbed\": false } ], \"metrics\": { "
                            "\"baseline_c\": \"disturbed\", \"plateau_c\": \"ok\", \"rise_c\": \"ok\", "
                            "\"rise_over_ambient_c\": \"ok\", \"tau_heat_s\": \"ok\", \"t90_heat_s\": \"ok\", "
                            "\"tau_cool_s\": \"ok\", \"t_back_to_baseline_s\": \"ok\", \"throttled_fraction\": \"ok\", "
                            "\"work_rate_drop_pct\": \"ok\" } }");
        /* read back as after a restart: the flags come back with the phases */
        struct run *back = NULL;
        char err[600];
        assert_int_equal(run_from_json(doc, &back, err, sizeof err), 0);
        assert_true(run_phase_disturbed(back, 0));
        assert_false(run_phase_disturbed(back, 1));
        assert_int_equal(run_metric_quality(back, "baseline_c"), RUN_QUALITY_DISTURBED);
        json_object *again = run_to_json(back, false);
        assert_true(json_object_object_get_ex(again, "quality", &q));
        assert_non_null(strstr(json_object_to_json_string(q), "\"ok\": false"));
        json_object_put(again);
        run_free(back);
        json_object_put(doc);
        run_free(r);
        remove_tree(dir);
}

/* The prior time constant goes into run.json's metrics and comes back; a
 * run.json from before has none. */
static void test_prior_is_kept(void **state) {
        static const char *const keys[] = { "tau_prior_s", "tau_prior_low_s", "tau_prior_high_s", "tau_prior_runs",
                                            "prior_used" };
        const double taus[] = { 40, 44 };
        char dir[] = "/tmp/test-run-XXXXXX", err[600];
        struct run *r, *back = NULL;
        struct run_host host;
        json_object *doc, *m, *v;

        assert_non_null(mkdtemp(dir));
        r = start_run("{\"phases\": [{\"kind\": \"idle\", \"duration\": \"2s\"}]}", &host, dir);
        int64_t mono0 = r->created_mono_ms, wall0 = r->created_ms;
        for (int s = 1; s <= 3; s++)
                run_tick(r, wall0 + s * 1000, mono0 + s * 1000);
        assert_int_equal(r->state, RUN_FINISHED);
        doc = run_to_json(r, false);
        assert_true(json_object_object_get_ex(doc, "metrics", &m));
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
                assert_true(json_object_object_get_ex(m, keys[k], &v) && v == NULL);
        json_object_put(doc);
        assert_int_equal(analysis_prior_from_taus(taus, 2, 1, &r->prior), 0);
        r->prior_ids[0] = 7;
        r->n_prior_ids = 1;
        r->metrics.prior_use = ANALYSIS_PRIOR_USED;
        doc = run_to_json(r, false);
        assert_true(json_object_object_get_ex(doc, "metrics", &m));
        assert_string_equal(json_object_to_json_string(json_object_object_get(m, "tau_prior_runs")), "[ 7 ]");
        assert_true(json_object_get_boolean(json_object_object_get(m, "prior_used")));
        assert_int_equal(run_from_json(doc, &back, err, sizeof err), 0);
        assert_true(fabs(back->prior.tau_s - sqrt(40.0 * 44)) < 0.05);
        assert_true(back->prior.low_s < back->prior.tau_s && back->prior.tau_s < back->prior.high_s);
        assert_int_equal(back->n_prior_ids, 1);
        assert_int_equal(back->prior_ids[0], 7);
        assert_int_equal(back->metrics.prior_use, ANALYSIS_PRIOR_USED);
        run_free(back);
        back = NULL;
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
                json_object_object_del(m, keys[k]);
        assert_int_equal(run_from_json(doc, &back, err, sizeof err), 0);
        assert_true(isnan(back->prior.tau_s));
        assert_int_equal(back->n_prior_ids, 0);
        assert_int_equal(back->metrics.prior_use, ANALYSIS_PRIOR_NONE);
        run_free(back);
        json_object_put(doc);
        run_free(r);
        remove_tree(dir);
}

/* until=stable waits for a quiet board: a steady temperature under someone
 * else's load is no baseline. */
static void test_stable_waits_for_a_quiet_board(void **state) {
        char dir[] = "/tmp/test-run-XXXXXX";
        struct run_host host;
        struct run *r;
        int ended_at = 0;

        assert_non_null(mkdtemp(dir));
        r = start_run("{\"phases\": [{\"kind\": \"idle\", \"until\": \"stable\", \"window\": \"10s\"}]}",
                      &host, dir);
        int64_t mono0 = r->created_mono_ms, wall0 = r->created_ms;
        for (int s = 1; s <= 120 && r->state == RUN_RUNNING; s++) {
                board.load.total = s <= 60 ? 0.7 : 0.02;
                run_tick(r, wall0 + s * 1000, mono0 + s * 1000);
                ended_at = s;
        }
        assert_int_equal(r->state, RUN_FINISHED);
        assert_string_equal(r->phases[0].end_reason, "stable");
        /* the window must hold quiet samples before stable counts */
        assert_true(ended_at >= 65 && ended_at <= 75);
        run_free(r);
        remove_tree(dir);
}

/* The Pi firmware's clock and throttled bits go into every sample and
 * samples.csv, and come back from the file as they went in. */
static void test_firmware_is_recorded(void **state) {
        char dir[] = "/tmp/test-run-XXXXXX", path[600], line[4096];
        struct run_host host;
        struct run_series back = {};
        struct run *r;
        FILE *f;

        assert_non_null(mkdtemp(dir));
        r = start_run("{\"phases\": [{\"kind\": \"idle\", \"duration\": \"1h\"}]}", &host, dir);
        int64_t mono0 = r->created_mono_ms, wall0 = r->created_ms;
        for (int s = 1; s <= 6; s++) {
                /* answers, then throttled (bit 2) at 600 MHz, then no answer */
                board.firmware = (struct firmware_info) {
                        .present = true, .fd = -1, .ok = s <= 4,
                        .arm_hz = s <= 2 ? 1500000000u : 600000000u, .throttled = s <= 2 ? 0 : 0x40004,
                };
                run_tick(r, wall0 + s * 1000, mono0 + s * 1000);
        }
        board.firmware = (struct firmware_info) { .fd = -1 };
        const signed char want[] = { 0, 0, 1, 1, -1, -1 };
        assert_int_equal(r->series.n, 6);
        for (size_t i = 0; i < 6; i++)
                assert_int_equal(r->series.firmware_throttled[i], want[i]);

        snprintf(path, sizeof path, "%s/samples.csv", r->dir);
        assert_non_null(f = fopen(path, "r"));
        assert_non_null(fgets(line, sizeof line, f));
        assert_non_null(strstr(line, ",t_since_load_s,firmware_arm_hz,firmware_throttled,thermal_zone0_c"));
        assert_non_null(fgets(line, sizeof line, f));
        assert_non_null(strstr(line, ",1500000000,0,40.000\n"));
        for (int i = 0; i < 2; i++)
                assert_non_null(fgets(line, sizeof line, f));
        assert_non_null(strstr(line, ",600000000,1,40.000\n"));
        for (int i = 0; i < 2; i++)
                assert_non_null(fgets(line, sizeof line, f));
        assert_non_null(strstr(line, ",,,40.000\n"));        /* no answer: unknown, not "not throttled" */
        fclose(f);

        char unit[16];
        assert_true(run_store_read_series(r->dir, &back, unit, sizeof unit) > 0);
        assert_int_equal(back.n, 6);
        for (size_t i = 0; i < 6; i++)
                assert_int_equal(back.firmware_throttled[i], want[i]);
        run_series_free(&back);
        run_free(r);
        remove_tree(dir);
}

/* A samples.csv written before the firmware columns existed reads back
 * with the firmware unknown, and its sensor columns are not taken for them. */
static void test_older_samples_csv_reads_back(void **state) {
        char header[] = "time_ms,elapsed_s,phase,temp_c,hottest_c,freq_hz,max_allowed_hz,cooling_active,load,"
                        "work_rate_per_s,work_unit,t_since_load_s,thermal_zone0_c,cpu0_hz";
        char row[] = "1700000000000,1.000,stress,50.000,51.000,1200000000,1500000000,0,1.0000,,,0.500,50.000,1";
        struct samples_row x;

        assert_int_equal(samples_header_fixed(header), SAMPLES_T_SINCE_LOAD_S + 1);
        assert_int_equal(samples_parse_row(row, samples_header_fixed(header), &x), 0);
        assert_true(x.freq_hz == 1.2e9 && x.t_since_load_s == 0.5);
        assert_true(isnan(x.firmware_arm_hz));
        assert_int_equal(x.firmware_throttled, -1);
        assert_int_equal(samples_header_fixed("time_ms,elapsed_s,phase,temp_c,hottest_c,freq_hz,max_allowed_hz,"
                                              "cooling_active,load,work_rate_per_s,work_unit"),
                         SAMPLES_WORK_UNIT + 1);
        assert_int_equal(samples_header_fixed("time_ms,elapsed"), 1);
}

/* An id with a comma or a quote is one quoted field of the header, read
 * back whole by the field splitter; plain ids stay as they were. */
static void test_samples_header_quotes_ids(void **state) {
        const char *ids[] = { "thermal_zone0", "hwmon:core,\"x\"/temp1" }, *policies[] = { "policy,0" };
        char *header = samples_header(ids, 2, policies, 1), *rest, *last = NULL;
        size_t n = 0;

        assert_non_null(header);
        assert_non_null(strstr(header, ",thermal_zone0_c,\"hwmon:core,\"\"x\"\"/temp1_c\",\"policy,0_hz\"\n"));
        header[strlen(header) - 1] = '\0';
        for (rest = header; rest; n++) {
                const char *f = samples_field_next(&rest);
                if (n == SAMPLES_POWER_W + 1)   /* no power_w: a board without a power meter */
                        assert_string_equal(f, "hwmon:core,\"x\"/temp1_c");
                last = (char *) f;
        }
        assert_int_equal(n, SAMPLES_POWER_W + 3);
        assert_string_equal(last, "policy,0_hz");
        free(header);
}

/* A board with a power meter: power_w after the other fixed columns, read
 * back; a file without it reads as no power known. */
static void test_samples_power_column(void **state) {
        const char *ids[] = { "thermal_zone0" }, *policies[] = { "policy0" };
        char *header = samples_header_power(ids, 1, policies, 1, true), line[1024];
        struct samples_row row = { .time_ms = 1000, .elapsed_s = 1, .phase = "stress", .temp_c = 50, .hottest_c = 50,
                                   .freq_hz = NAN, .max_allowed_hz = NAN, .load = NAN, .work_rate = NAN,
                                   .t_since_load_s = NAN, .firmware_arm_hz = NAN, .firmware_throttled = -1,
                                   .has_power = true, .power_w = 5.0954 }, x;
        double t = 50.5, hz = 1.5e9;

        assert_non_null(header);
        assert_non_null(strstr(header, ",firmware_throttled,power_w,thermal_zone0_c,policy0_hz\n"));
        assert_int_equal(samples_header_fixed(header), SAMPLES_FIXED_COLUMNS);
        assert_true(samples_format_row(&row, &t, 1, &hz, 1, line, sizeof line) > 0);
        assert_non_null(strstr(line, ",,5.095,50.500,1500000000\n"));
        line[strlen(line) - 1] = '\0';
        assert_int_equal(samples_parse_row(line, SAMPLES_FIXED_COLUMNS, &x), 0);
        assert_true(x.has_power && x.power_w == 5.095);
        free(header);

        header = samples_header(ids, 1, policies, 1);
        assert_null(strstr(header, "power_w"));
        assert_int_equal(samples_header_fixed(header), SAMPLES_POWER_W);
        row.has_power = false;
        assert_true(samples_format_row(&row, &t, 1, &hz, 1, line, sizeof line) > 0);
        assert_non_null(strstr(line, ",,50.500,1500000000\n"));
        line[strlen(line) - 1] = '\0';
        assert_int_equal(samples_parse_row(line, SAMPLES_POWER_W, &x), 0);
        assert_true(!x.has_power && isnan(x.power_w));
        free(header);
}

/* A row's numbers are printf's "%.*f" to the byte, ties, negative zeros and
 * large values included, and read back as strtod() reads them. */
static void test_samples_numbers_as_printf(void **state) {
        enum { N = 400 };
        static const double edges[] = { 0.0, -0.0, 0.0005, -0.0005, 0.00049999, 2.675, -2.675, 0.5, 1.5, 2.5,
                                        -0.49, 1e-9, -1e-9, 123456789.0625, 4503599627370495.5, 9007199254740993.0,
                                        1e20, -1e20, 0.1, 0.7, 1.0005, 99.9995 };
        double t[N], hz[N];
        static char row[N * 64], want[N * 64];
        struct samples_row r = { .time_ms = 1, .phase = "idle", .hottest_c = NAN, .max_allowed_hz = NAN,
                                 .work_unit = "ops", .t_since_load_s = NAN, .firmware_arm_hz = NAN,
                                 .firmware_throttled = -1 };
        uint32_t seed = 3;
        size_t pos;
        int len;

        (void) state;
        for (int rep = 0; rep < 200; rep++) {
                for (size_t i = 0; i < N; i++) {
                        size_t k = (size_t) rep * N + i;
                        double v;

                        seed = seed * 1664525u + 1013904223u;
                        v = ((double) (seed >> 8) / 16777216.0 - 0.5) * 2e5;
                        seed = seed * 1664525u + 1013904223u;
                        v /= pow(10.0, (double) (seed >> 29));          /* down to 1e-7 of it */
                        if (k < sizeof edges / sizeof edges[0])
                                v = edges[k];
                        else if (seed % 8 == 0)
                                v = round(v * 1000.0) / 1000.0 + (seed % 16 == 0 ? 0.0005 : 0.0);
                        t[i] = v;
                        hz[i] = v * 1e4;
                }
                r.elapsed_s = t[0];
                r.temp_c = t[1];
                r.load = t[2];
                r.work_rate = t[3];
                r.freq_hz = hz[4];
                len = samples_format_row(&r, t, N, hz, N, row, sizeof row);
                assert_true(len > 0);
                pos = (size_t) snprintf(want, sizeof want, "1,%.3f,idle,%.3f,,%.0f,,0,%.4f,%.1f,ops,,,", t[0], t[1],
                                        hz[4], t[2], t[3]);
                for (size_t i = 0; i < N; i++)
                        pos += (size_t) snprintf(want + pos, sizeof want - pos, ",%.3f", t[i]);
                for (size_t i = 0; i < N; i++)
                        pos += (size_t) snprintf(want + pos, sizeof want - pos, ",%.0f", hz[i]);
                snprintf(want + pos, sizeof want - pos, "\n");
                assert_string_equal(row, want);
                /* and back: every field as strtod reads it, the sign of a zero too */
                for (char *f = row, *next; f; f = next) {
                        struct samples_row x;
                        char one[96], copy[96];
                        double v;

                        next = strchr(f, ',');
                        snprintf(one, sizeof one, "%.*s", next ? (int) (next - f) : (int) strcspn(f, "\n"), f);
                        if (next)
                                next++;
                        if (!one[0] || !strpbrk(one, "0123456789"))
                                continue;
                        snprintf(copy, sizeof copy, "1,%s,idle,%s,,,,0,,,ops", one, one);
                        assert_int_equal(samples_parse_row(copy, SAMPLES_FIXED_COLUMNS, &x), 0);
                        v = strtod(one, NULL);
                        assert_memory_equal(&x.temp_c, &v, sizeof v);
                }
        }
        /* what is not a plain decimal goes to strtod */
        static const char *const odd[] = { "1e5", "+3", " 4", "12abc", "nan", "0x10", ".5", "5.", "-",
                                           "3.14159265358979323846", "-0.000", "12345678901234567890",
                                           "1.000000000000000111" /* over 2^53: one rounding too many */ };
        for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
                char copy[96], *end;
                struct samples_row x;
                double v = strtod(odd[i], &end);

                if (end == odd[i])
                        v = NAN;
                snprintf(copy, sizeof copy, "1,0,idle,%s,,,,0,,,ops", odd[i]);
                assert_int_equal(samples_parse_row(copy, SAMPLES_FIXED_COLUMNS, &x), 0);
                if (isnan(v))
                        assert_true(isnan(x.temp_c));
                else
                        assert_memory_equal(&x.temp_c, &v, sizeof v);
        }
}

/* time_ms is read as strtoll() reads it, whatever the field holds. */
static void test_samples_time_as_strtoll(void **state) {
        static const char *const times[] = { "1700000000000", "0", "007", "-5", "+3", " 4", "12abc", "",
                                             "999999999999999999", "9223372036854775807",
                                             "9223372036854775808", "99999999999999999999", "-9223372036854775809",
                                             "1.5", "abc" };

        (void) state;
        for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
                char copy[96];
                struct samples_row x;

                snprintf(copy, sizeof copy, "%s,0,idle,1,,,,0,,,ops", times[i]);
                assert_int_equal(samples_parse_row(copy, SAMPLES_FIXED_COLUMNS, &x), 0);
                assert_true(x.time_ms == strtoll(times[i], NULL, 10));
                assert_true(x.temp_c == 1.0);
        }
}

static bool same_double(double a, double b) {
        return memcmp(&a, &b, sizeof a) == 0;
}

/* A row's numbers as the file gives them back, without the text: the same
 * doubles, bit for bit, as formatting the row and parsing it. */
static void test_row_as_read_is_the_file(void **state) {
        static const double edges[] = { 0.0, -0.0, 0.00005, -0.00005, 0.0005, 2.675, -2.675, 0.5, 1.5, 2.5,
                                        1e-9, -1e-9, 4503599627370495.5, 9007199254740993.0, 1e20, -1e300,
                                        0.1, 0.7, 1.0005, 99.9995, 0.12345, INFINITY, NAN };
        uint32_t seed = 11;

        (void) state;
        for (int k = 0; k < 40000; k++) {
                double v[9];
                char line[1024];
                struct samples_row want, got;

                for (size_t i = 0; i < 9; i++) {
                        seed = seed * 1664525u + 1013904223u;
                        v[i] = ((double) (seed >> 8) / 16777216.0 - 0.5) * 2e5;
                        seed = seed * 1664525u + 1013904223u;
                        v[i] /= pow(10.0, (double) (seed >> 29));
                        if (seed % 5 == 0)
                                v[i] = round(v[i] * 1000.0) / 1000.0 + (seed % 10 == 0 ? 0.00005 : 0.0005);
                        if (seed % 7 == 0)
                                v[i] = edges[(seed >> 3) % (sizeof edges / sizeof edges[0])];
                }
                got = (struct samples_row) {
                        .time_ms = 1, .elapsed_s = v[0], .phase = "stress", .temp_c = v[1], .hottest_c = v[2],
                        .freq_hz = v[3] * 1e4, .max_allowed_hz = v[4] * 1e4, .load = v[5], .work_rate = v[6],
                        .work_unit = "", .t_since_load_s = v[7], .firmware_arm_hz = v[8] * 1e4,
                        .firmware_throttled = -1,
                };
                assert_true(samples_format_row(&got, NULL, 0, NULL, 0, line, sizeof line) > 0);
                line[strcspn(line, "\n")] = '\0';
                assert_int_equal(samples_parse_row(line, SAMPLES_FIXED_COLUMNS, &want), 0);
                samples_row_as_read(&got);
                assert_true(same_double(got.elapsed_s, want.elapsed_s));
                assert_true(same_double(got.temp_c, want.temp_c));
                assert_true(same_double(got.hottest_c, want.hottest_c));
                assert_true(same_double(got.freq_hz, want.freq_hz));
                assert_true(same_double(got.max_allowed_hz, want.max_allowed_hz));
                assert_true(same_double(got.load, want.load));
                assert_true(same_double(got.work_rate, want.work_rate));
                assert_true(same_double(got.t_since_load_s, want.t_since_load_s));
                assert_true(same_double(got.firmware_arm_hz, want.firmware_arm_hz));
        }
}

/* A live run's series, copied as read, is what its samples.csv reads back:
 * plots of a live run are drawn from memory and must not differ. */
static void test_live_series_is_its_file(void **state) {
        char dir[] = "/tmp/test-run-XXXXXX", unit[16];
        struct run_series file = {}, copy = {};
        struct run_host host;
        struct run *r;
        uint32_t seed = 5;

        (void) state;
        assert_non_null(mkdtemp(dir));
        r = start_run("{\"phases\": [{\"kind\": \"idle\", \"duration\": \"1h\"}]}", &host, dir);
        int64_t mono0 = r->created_mono_ms, wall0 = r->created_ms;
        for (int s = 1; s <= 500; s++) {
                seed = seed * 1664525u + 1013904223u;
                temps[0].ok = seed % 13 != 0;           /* a failed read now and then: NaN */
                temps[0].temp_mc = 30000 + (int32_t) (seed >> 20);
                /* loads at and near the file's last decimal, and halves of it */
                board.load.total = (double) (seed >> 12) / 1048576.0 + (seed % 3 == 0 ? 0.00005 : 0.0);
                board.load.ok = seed % 11 != 0;
                run_tick(r, wall0 + s * 1000, mono0 + s * 1000 + (int64_t) (seed % 7));
        }
        temps[0].ok = true;
        board.load.ok = true;
        assert_int_equal(r->series.n, 500);
        assert_true(run_store_read_series(r->dir, &file, unit, sizeof unit) > 0);
        assert_int_equal(run_series_copy_as_read(&r->series, &copy), 0);
        assert_int_equal(copy.n, file.n);
        assert_memory_equal(copy.t_s, file.t_s, file.n * sizeof *file.t_s);
        assert_memory_equal(copy.temp_c, file.temp_c, file.n * sizeof *file.temp_c);
        assert_memory_equal(copy.freq_hz, file.freq_hz, file.n * sizeof *file.freq_hz);
        assert_memory_equal(copy.max_hz, file.max_hz, file.n * sizeof *file.max_hz);
        assert_memory_equal(copy.work_rate, file.work_rate, file.n * sizeof *file.work_rate);
        assert_memory_equal(copy.load, file.load, file.n * sizeof *file.load);
        assert_memory_equal(copy.ambient_c, file.ambient_c, file.n * sizeof *file.ambient_c);
        assert_memory_equal(copy.cooling, file.cooling, file.n * sizeof *file.cooling);
        assert_memory_equal(copy.firmware_throttled, file.firmware_throttled, file.n);
        assert_memory_equal(copy.phase, file.phase, file.n * sizeof *file.phase);
        /* and the memory is not the file's text: the loads had more digits */
        bool rounded = false;
        for (size_t i = 0; i < r->series.n; i++)
                rounded |= isfinite(r->series.load[i]) && r->series.load[i] != copy.load[i];
        assert_true(rounded);
        run_series_free(&file);
        run_series_free(&copy);
        run_free(r);
        remove_tree(dir);
}

/* A limited series keeps every stride-th sample given, the stride a power
 * of two, and at least half its limit once it had to thin. */
static void test_limited_series_is_evenly_spread(void **state) {
        static const size_t limits[] = { 2, 7, 64 };

        (void) state;
        for (size_t l = 0; l < sizeof limits / sizeof *limits; l++)
                for (size_t n = 0; n <= 300; n++) {
                        struct run_series s = {}, all = {}, copy = {};

                        run_series_limit(&s, limits[l]);
                        for (size_t i = 0; i < n; i++) {
                                struct run_sample x = { .t_s = (double) i, .temp_c = 40.0 + (double) i,
                                                        .phase = ANALYSIS_PHASE_STRESS };
                                size_t stride = s.lim.stride;
                                int halved = run_series_append(&s, &x);
                                /* 1 when it thinned, which doubles the stride */
                                assert_int_equal(halved, s.lim.stride != stride);
                                assert_int_equal(run_series_append(&all, &x), 0);
                        }
                        /* a copy with the limit picks the same samples at once */
                        run_series_limit(&copy, limits[l]);
                        assert_int_equal(run_series_copy_as_read(&all, &copy), 0);
                        assert_int_equal(copy.n, s.n);
                        assert_int_equal(copy.lim.stride, s.lim.stride);
                        assert_int_equal(copy.lim.given, s.lim.given);
                        if (s.n)
                                assert_memory_equal(copy.t_s, s.t_s, s.n * sizeof *s.t_s);
                        run_series_free(&all);
                        run_series_free(&copy);
                        assert_int_equal(s.lim.stride & (s.lim.stride - 1), 0);
                        assert_int_equal(s.n, (n + s.lim.stride - 1) / s.lim.stride);
                        assert_true(s.n <= limits[l] && s.cap <= limits[l]);
                        assert_true(s.lim.stride == 1 || 2 * s.n >= limits[l]);
                        for (size_t j = 0; j < s.n; j++) {
                                assert_true(s.t_s[j] == (double) (j * s.lim.stride));
                                assert_true(s.temp_c[j] == 40.0 + (double) (j * s.lim.stride));
                        }
                        run_series_free(&s);
                }
}

/* A live run's series copied with a limit is its file read with the same
 * limit: the same samples of the run, every stride-th of them. */
static void test_limited_copy_is_the_limited_file(void **state) {
        char dir[] = "/tmp/test-run-XXXXXX", unit[16] = "";
        struct run_series all = {}, file = {}, copy = {};
        struct run_host host;
        struct run *r;

        (void) state;
        assert_non_null(mkdtemp(dir));
        r = start_run("{\"phases\": [{\"kind\": \"idle\", \"duration\": \"1h\"}]}", &host, dir);
        for (int s = 1; s <= 500; s++) {
                temps[0].temp_mc = 30000 + 7 * s;
                run_tick(r, r->created_ms + s * 1000, r->created_mono_ms + s * 1000);
        }
        assert_true(run_store_read_series(r->dir, &all, unit, sizeof unit) > 0);
        run_series_limit(&file, 64);
        run_series_limit(&copy, 64);
        assert_true(run_store_read_series(r->dir, &file, unit, sizeof unit) > 0);
        assert_int_equal(run_series_copy_as_read(&r->series, &copy), 0);
        assert_true(all.n >= 500);
        assert_int_equal(file.lim.stride, 8);       /* 500 samples and more: every 8th */
        assert_int_equal(file.n, (all.n + 7) / 8);
        assert_int_equal(copy.n, file.n);
        assert_int_equal(copy.lim.stride, file.lim.stride);
        assert_memory_equal(copy.t_s, file.t_s, file.n * sizeof *file.t_s);
        assert_memory_equal(copy.temp_c, file.temp_c, file.n * sizeof *file.temp_c);
        for (size_t j = 0; j < file.n; j++) {
                assert_true(file.t_s[j] == all.t_s[j * 8]);
                assert_true(file.temp_c[j] == all.temp_c[j * 8]);
                assert_int_equal(file.phase[j], all.phase[j * 8]);
        }
        run_series_free(&all);
        run_series_free(&file);
        run_series_free(&copy);
        run_free(r);
        remove_tree(dir);
}

/* A run longer than its series' limit keeps every stride-th sample, and
 * what points into the series (where each phase began) follows the
 * thinning; the live document, the file and the safety checks still see
 * every sample. Here the limit is 64 where a run has RUN_SERIES_MAX. */
static void test_long_run_keeps_a_limited_series(void **state) {
        char dir[] = "/tmp/test-run-XXXXXX", unit[16] = "";
        struct run_series all = {}, file = {}, copy = {}, copy16 = {}, file16 = {};
        struct run_host host;
        struct run *r;
        json_object *doc, *live, *v;

        (void) state;
        assert_non_null(mkdtemp(dir));
        r = start_run("{\"phases\": [{\"kind\": \"idle\", \"duration\": \"100s\"},"
                      " {\"kind\": \"cooldown\", \"duration\": \"400s\"}]}", &host, dir);
        assert_int_equal(r->series.lim.limit, RUN_SERIES_MAX);
        run_series_limit(&r->series, 64);
        for (int s = 1; s < 500; s++) {
                temps[0].temp_mc = 30000 + 7 * s;
                run_tick(r, r->created_ms + s * 1000, r->created_mono_ms + s * 1000);
                assert_true(r->series.n <= 64 && r->series.cap <= 64);
                /* the phases begin where the series says they do */
                for (size_t k = 0; k <= r->phase_index; k++) {
                        size_t i = r->phase_start[k];
                        assert_true(i <= r->series.n);
                        if (i < r->series.n)
                                assert_int_equal(r->series.phase[i], r->phases[k].kind);
                        if (i > 0)
                                assert_int_equal(r->series.phase[i - 1], r->phases[k - 1].kind);
                }
                /* the newest sample, kept or not */
                doc = run_to_json(r, true);
                assert_true(json_object_object_get_ex(doc, "live", &live));
                assert_true(json_object_object_get_ex(live, "elapsed_s", &v));
                assert_true(fabs(json_object_get_double(v) - s) < 0.05);
                assert_true(json_object_object_get_ex(live, "temp_c", &v));
                assert_true(fabs(json_object_get_double(v) - (30.0 + 0.007 * s)) < 1e-9);
                json_object_put(doc);
        }
        assert_int_equal(r->state, RUN_RUNNING);
        assert_int_equal(r->phase_index, 1);
        assert_int_equal(r->n_samples, 499);
        assert_int_equal(r->series.lim.stride, 8);
        assert_true(r->series.t_s[r->phase_start[1]] >= 100.0 && r->series.t_s[r->phase_start[1] - 1] < 100.0);

        /* what the file keeps with the same limit, and with a smaller one */
        assert_true(run_store_read_series(r->dir, &all, unit, sizeof unit) > 0);
        run_series_limit(&file, 64);
        assert_true(run_store_read_series(r->dir, &file, unit, sizeof unit) > 0);
        assert_int_equal(all.n, 499);
        assert_int_equal(file.n, r->series.n);
        assert_memory_equal(file.t_s, r->series.t_s, file.n * sizeof *file.t_s);
        assert_memory_equal(file.temp_c, r->series.temp_c, file.n * sizeof *file.temp_c);
        assert_memory_equal(file.phase, r->series.phase, file.n * sizeof *file.phase);
        run_series_limit(&copy, 64);
        run_series_limit(&copy16, 16);
        run_series_limit(&file16, 16);
        assert_int_equal(run_series_copy_as_read(&r->series, &copy), 0);
        assert_int_equal(run_series_copy_as_read(&r->series, &copy16), 0);
        assert_true(run_store_read_series(r->dir, &file16, unit, sizeof unit) > 0);
        assert_int_equal(copy.n, file.n);
        assert_int_equal(copy.lim.stride, 8);
        assert_int_equal(copy.lim.given, 499);
        assert_memory_equal(copy.t_s, file.t_s, file.n * sizeof *file.t_s);
        assert_int_equal(file16.lim.stride, 32);
        assert_int_equal(copy16.n, file16.n);
        assert_int_equal(copy16.lim.stride, file16.lim.stride);
        assert_int_equal(copy16.lim.given, file16.lim.given);
        assert_memory_equal(copy16.t_s, file16.t_s, file16.n * sizeof *file16.t_s);
        assert_memory_equal(copy16.temp_c, file16.temp_c, file16.n * sizeof *file16.temp_c);
        for (size_t j = 0; j < file16.n; j++)
                assert_true(file16.t_s[j] == all.t_s[j * 32]);
        /* a plot's copy: the file's five columns, as heatcurvectl reads them */
        for (size_t limit = 16; limit <= 64; limit *= 4) {
                struct plot_data pd = {}, pf = {};
                char path[512];
                FILE *f;

                snprintf(path, sizeof path, "%s/samples.csv", r->dir);
                assert_non_null(f = fopen(path, "re"));
                assert_int_equal(plot_data_read_file(&pf, f, limit), 0);
                fclose(f);
                assert_int_equal(run_series_plot_data(&r->series, limit, &pd), 0);
                assert_int_equal(pd.n, limit == 16 ? file16.n : file.n);
                assert_int_equal(pd.n, pf.n);
                assert_memory_equal(pd.t_s, pf.t_s, pf.n * sizeof *pf.t_s);
                assert_memory_equal(pd.temp_c, pf.temp_c, pf.n * sizeof *pf.temp_c);
                assert_memory_equal(pd.freq_hz, pf.freq_hz, pf.n * sizeof *pf.freq_hz);
                assert_memory_equal(pd.work_rate, pf.work_rate, pf.n * sizeof *pf.work_rate);
                assert_memory_equal(pd.phase, pf.phase, pf.n * sizeof *pf.phase);
                assert_true(pd.cap == pd.n);            /* no more than it holds */
                plot_data_free(&pd);
                plot_data_free(&pf);
        }

        /* the last tick ends it: metrics from what is kept, every row counted */
        temps[0].temp_mc = 30000 + 7 * 500;
        run_tick(r, r->created_ms + 500 * 1000, r->created_mono_ms + 500 * 1000);
        assert_int_equal(r->state, RUN_FINISHED);
        assert_int_equal(r->n_samples, 500);
        /* the last kept is the 497th; the peak is the last, 500th, kept or not */
        assert_true(fabs(r->metrics.peak_c - (30.0 + 0.007 * 500)) < 1e-9);
        run_series_free(&all);
        run_series_free(&file);
        run_series_free(&copy);
        run_series_free(&copy16);
        run_series_free(&file16);
        run_free(r);
        remove_tree(dir);
}

/* A series keeps where its phase column changed over every sample: a
 * phase of 3 s between two kept samples, 8 s apart, is still seen, and
 * where each began is its first sample's time, kept or not. */
static void test_thinned_series_keeps_every_phase(void **state) {
        struct run_series s = {};

        (void) state;
        run_series_limit(&s, 64);
        for (int t = 0; t < 500; t++) {
                struct run_sample x = {
                        .t_s = t + 0.5, .temp_c = 40.0, .freq_hz = NAN, .max_hz = NAN, .work_rate = NAN, .load = NAN,
                        .ambient_c = NAN, .firmware_throttled = -1,
                        .phase = t < 101 ? ANALYSIS_PHASE_IDLE :
                                 t < 104 ? ANALYSIS_PHASE_STRESS : ANALYSIS_PHASE_COOLDOWN,
                };
                assert_true(run_series_append(&s, &x) >= 0);
        }
        assert_int_equal(s.lim.stride, 8);
        for (size_t i = 0; i < s.n; i++)
                assert_int_not_equal(s.phase[i], ANALYSIS_PHASE_STRESS);
        assert_int_equal(s.n_changes, 3);
        assert_int_equal(s.changes[0].kind, ANALYSIS_PHASE_IDLE);
        assert_true(s.changes[0].t_s == 0.5);
        assert_int_equal(s.changes[1].kind, ANALYSIS_PHASE_STRESS);
        assert_true(s.changes[1].t_s == 101.5);
        assert_int_equal(s.changes[2].kind, ANALYSIS_PHASE_COOLDOWN);
        assert_true(s.changes[2].t_s == 104.5);
        run_series_free(&s);
}

/* A heating and cooling curve fitted from every 8th sample gives the
 * metrics of the whole series: what a run beyond RUN_SERIES_MAX is
 * analysed from. 1 Hz, quantised to 1 m°C, with noise of ±0.25 °C. The
 * baseline, the load's frequencies and its throttling are the whole's. */
static void test_thinned_series_gives_the_same_metrics(void **state) {
        struct run_series whole = {}, thin = {};
        struct run_metrics a, b;
        uint32_t seed = 11;

        (void) state;
        run_series_limit(&thin, 1024);
        for (int s = 0; s < 120 + 3600 + 1800; s++) {
                enum analysis_phase ph = s < 120 ? ANALYSIS_PHASE_IDLE : s < 3720 ? ANALYSIS_PHASE_STRESS :
                                         ANALYSIS_PHASE_COOLDOWN;
                double temp = ph == ANALYSIS_PHASE_IDLE ? 40.0 :
                              ph == ANALYSIS_PHASE_STRESS ? 40.0 + 25.0 * (1.0 - exp(-(s - 120) / 300.0)) :
                              40.0 + 25.0 * (1.0 - exp(-3600.0 / 300.0)) * exp(-(s - 3720) / 240.0);

                seed = seed * 1664525u + 1013904223u;
                temp += ((double) (seed >> 8) / 16777216.0 - 0.5) * 0.5;
                if (s == 31)
                        temp = 80.0;    /* a spike the thinned series does not keep */
                /* throttled for 3 s, and a fan on for 1 s: none of them kept */
                struct run_sample x = {
                        .t_s = s, .temp_c = round(temp * 1000.0) / 1000.0,
                        .freq_hz = s >= 1001 && s <= 1003 ? 1.0e9 : 1.5e9, .max_hz = 1.5e9,
                        .work_rate = NAN, .load = NAN, .ambient_c = NAN, .cooling = s == 2005,
                        .firmware_throttled = -1, .phase = ph,
                };
                assert_true(run_series_append(&whole, &x) >= 0);
                assert_true(run_series_append(&thin, &x) >= 0);
        }
        assert_int_equal(thin.lim.stride, 8);
        run_series_metrics(&whole, 25.0, &a);
        run_series_metrics(&thin, 25.0, &b);
        assert_true(isfinite(a.plateau_c) && isfinite(a.tau_heat_s) && isfinite(a.tau_cool_s));
        assert_true(fabs(a.plateau_c - 65.0) < 0.1 && fabs(a.tau_heat_s - 300.0) < 6.0);
        /* the baseline is taken before the load, when every sample was kept */
        assert_true(b.baseline_c == a.baseline_c);
        assert_true(fabs(b.plateau_c - a.plateau_c) <= 0.05);
        assert_true(fabs(b.rise_c - (b.plateau_c - b.baseline_c)) < 1e-9);
        assert_true(fabs(b.tau_heat_s - a.tau_heat_s) <= 0.01 * a.tau_heat_s);
        assert_true(fabs(b.t90_heat_s - a.t90_heat_s) <= 0.01 * a.t90_heat_s);
        assert_true(fabs(b.tau_cool_s - a.tau_cool_s) <= 0.01 * a.tau_cool_s);
        /* the first time the median of the last 10 s is within 1 C of the
         * baseline: of 1 or 2 samples at a stride of 8, where the whole has
         * 10; with noise of 0.25 C on a curve falling 0.0041 C/s there, one
         * sample may cross up to 61 s before the curve does */
        assert_true(fabs(b.t_back_to_baseline_s - a.t_back_to_baseline_s) <= 61.0);
        /* the load's frequency and throttling are taken over every sample,
         * as the analysis takes them of the whole */
        struct analysis_samples in = {
                .n = whole.n, .t_s = whole.t_s, .temp_c = whole.temp_c, .freq_hz = whole.freq_hz,
                .max_allowed_hz = whole.max_hz, .cooling_active = whole.cooling,
                .firmware_throttled = whole.firmware_throttled, .phase = whole.phase, .ambient_c = 25.0,
        };
        struct run_metrics c;
        assert_int_equal(analysis_compute_metrics(&in, &c), 0);
        assert_true(c.baseline_c == a.baseline_c && c.throttled_fraction == a.throttled_fraction);
        assert_true(c.freq_min_hz == a.freq_min_hz && c.freq_mean_hz == a.freq_mean_hz);
        assert_true(a.throttled_fraction == 4.0 / 3600.0 && a.freq_min_hz == 1.0e9);
        assert_true(b.throttled_fraction == a.throttled_fraction);
        assert_true(b.freq_min_hz == a.freq_min_hz && b.freq_mean_hz == a.freq_mean_hz);
        assert_true(a.peak_c == 80.0 && b.peak_c == 80.0);
        print_message("whole / thinned: baseline %.3f / %.3f C, plateau %.3f / %.3f C, tau heat %.1f / %.1f s, "
                      "t90 %.1f / %.1f s, tau cool %.1f / %.1f s, back %.0f / %.0f s\n", a.baseline_c, b.baseline_c,
                      a.plateau_c, b.plateau_c, a.tau_heat_s, b.tau_heat_s, a.t90_heat_s, b.t90_heat_s,
                      a.tau_cool_s, b.tau_cool_s, a.t_back_to_baseline_s, b.t_back_to_baseline_s);
        run_series_free(&whole);
        run_series_free(&thin);
}

/* A run file's samples are decoded in place as json-c decodes them, and
 * json-c reads the rest; what is not plain JSON is left to json-c whole. */
static void test_run_file_split_decodes_as_json_c(void **state) {
        static const char *const docs[] = {
                "{\"format\":\"heatcurve-run\",\"run\":{\"a\":[1,{\"samples_csv\":\"x\"}]},"
                "\"samples_csv\":\"h,\\\"q\\\"\\n1,\\u00e9\\\\\\/\\t\\b\\f\\r\\n\"} \n",
                " { \"samples_csv\" : \"\\ud83d\\ude00 \\ud800\\u0041 \\udc00 \\ud800\\ud83d\\ude00 \\ud800\" , "
                "\"b\" : null }",
                "{\"samples_csv\":\"\"}",
        };
        static const char *const whole[] = {
                "{\"samples_csv\":\"a\"} x", "{\"samples_csv\":\"a\",}", "{/* c */\"samples_csv\":\"a\"}",
                "{\"samples\\u005fcsv\":\"a\"}", "{\"samples_csv\":1}", "{\"samples_csv\":\"a\",\"samples_csv\":\"b\"}",
                "{\"samples_csv\":\"a\nb\"}", "{\"samples_csv\":\"\\x\"}", "{\"b\":'x',\"samples_csv\":\"a\"}",
                "[\"samples_csv\"]", "{\"b\":1}", "{\"samples_csv\":\"a\"", "{\"samples_csv\":\"\\u12\"}",
        };

        for (size_t i = 0; i < sizeof docs / sizeof *docs; i++) {
                json_object *want = json_tokener_parse(docs[i]), *got, *member;
                char *text = strdup(docs[i]), *rest = NULL;
                const char *csv = NULL;
                size_t len = 0, rest_len = 0;

                assert_non_null(want);
                assert_int_equal(run_file_split(text, strlen(text), &rest, &rest_len, &csv, &len), 1);
                assert_true(json_object_object_get_ex(want, "samples_csv", &member));
                assert_int_equal(len, (size_t) json_object_get_string_len(member));
                assert_memory_equal(csv, json_object_get_string(member), len);
                assert_int_equal(rest_len, strlen(rest));
                got = json_tokener_parse(rest);
                assert_non_null(got);
                json_object_object_add(want, "samples_csv", json_object_new_string(""));
                assert_true(json_object_equal(got, want));
                json_object_put(got);
                json_object_put(want);
                free(rest);
                free(text);
        }
        for (size_t i = 0; i < sizeof whole / sizeof *whole; i++) {
                char *text = strdup(whole[i]), *rest = NULL;
                const char *csv = NULL;
                size_t len = 0, rest_len = 0;

                assert_int_equal(run_file_split(text, strlen(text), &rest, &rest_len, &csv, &len), 0);
                assert_string_equal(text, whole[i]);
                assert_null(rest);
                free(text);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_wall_clock_steps_do_not_time_phases),
                cmocka_unit_test(test_run_file_split_decodes_as_json_c),
                cmocka_unit_test(test_samples_header_quotes_ids),
                cmocka_unit_test(test_samples_power_column),
                cmocka_unit_test(test_samples_numbers_as_printf),
                cmocka_unit_test(test_samples_time_as_strtoll),
                cmocka_unit_test(test_series_time_is_monotonic),
                cmocka_unit_test(test_busy_idle_is_flagged),
                cmocka_unit_test(test_prior_is_kept),
                cmocka_unit_test(test_live_peak_follows_samples),
                cmocka_unit_test(test_complete_tail),
                cmocka_unit_test(test_stable_waits_for_a_quiet_board),
                cmocka_unit_test(test_firmware_is_recorded),
                cmocka_unit_test(test_older_samples_csv_reads_back),
                cmocka_unit_test(test_row_as_read_is_the_file),
                cmocka_unit_test(test_live_series_is_its_file),
                cmocka_unit_test(test_limited_series_is_evenly_spread),
                cmocka_unit_test(test_limited_copy_is_the_limited_file),
                cmocka_unit_test(test_long_run_keeps_a_limited_series),
                cmocka_unit_test(test_thinned_series_keeps_every_phase),
                cmocka_unit_test(test_thinned_series_gives_the_same_metrics),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
