/* test-prometheus.c — unit tests for the /metrics renderer: one golden file per fixture board, escaping, structure. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "prometheus.h"
#include "sensors.h"

/*
 * The golden files are tests/golden/prometheus/<board>.prom. They change
 * only on purpose; after a deliberate change to the exposition, rewrite
 * them and review the diff:
 *
 *     HEATCURVE_UPDATE_GOLDEN=1 meson test -C build prometheus
 *     git diff tests/golden/
 */

static char golden_dir[PATH_MAX];

__attribute__((format(printf, 3, 4)))
static void pathf(char *buf, size_t size, const char *fmt, ...) {
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(buf, size, fmt, ap);
        va_end(ap);
        assert_true(n >= 0 && (size_t) n < size);
}

/* Fixed info so the output depends on the fixture alone. */
static const struct prom_info fixed_info = {
        .version = "0.0.0-test", .started_ms = 1700000000123, .interval_ms = 1000, .ticks = 2, .tick_ns = -1,
};

static char *render(const struct sensors *s, const struct prom_info *info, size_t *len) {
        char *text = NULL;
        size_t n = 0;

        assert_int_equal(prom_render(s, info, &text, &n), 0);
        assert_non_null(text);
        assert_int_equal(strlen(text), n);
        if (len)
                *len = n;
        return text;
}

/* Two reads a second apart, so the load has a previous sample; the read
 * time is fixed because it is measured. */
static struct sensors *probe_board(const char *root) {
        struct sensors *s = NULL;

        assert_int_equal(sensors_probe(root, root, &s), 0);
        sensors_read(s, 1700000001000);
        sensors_read(s, 1700000002000);
        s->read_ns = 123456;
        return s;
}

/* ---- structure: what promtool and Prometheus's parser require ---- */

static bool line_is_sample_of(const char *line, size_t len, const char *family) {
        size_t n = strlen(family);

        return len > n && strncmp(line, family, n) == 0 && (line[n] == '{' || line[n] == ' ');
}

/* Every sample follows the HELP and TYPE of its family; a family appears
 * once, its samples together; every line ends in a newline; values parse. */
static void check_structure(const char *text) {
        char family[128] = "", seen[8192] = " ";
        const char *p = text;

        while (*p) {
                const char *nl = strchr(p, '\n');
                size_t len;

                assert_non_null(nl);
                len = (size_t) (nl - p);
                if (strncmp(p, "# HELP ", 7) == 0) {
                        size_t n = strcspn(p + 7, " ");
                        char key[140];

                        assert_true(n < sizeof family);
                        memcpy(family, p + 7, n);
                        family[n] = '\0';
                        pathf(key, sizeof key, " %s ", family);
                        assert_null(strstr(seen, key));         /* one HELP per family */
                        assert_true(strlen(seen) + strlen(key) < sizeof seen);
                        strcat(seen, key + 1);
                        assert_true(strncmp(nl + 1, "# TYPE ", 7) == 0);
                } else if (strncmp(p, "# TYPE ", 7) == 0) {
                        assert_true(strncmp(p + 7, family, strlen(family)) == 0);
                        assert_true(strncmp(p + 8 + strlen(family), "gauge\n", 6) == 0 ||
                                    strncmp(p + 8 + strlen(family), "counter\n", 8) == 0);
                        if (strncmp(p + 8 + strlen(family), "counter", 7) == 0)
                                assert_non_null(strstr(family, "_total"));
                } else {
                        const char *value = nl;
                        char *end;

                        if (!line_is_sample_of(p, len, family))
                                fail_msg("sample outside its family %s: %.*s", family, (int) len, p);
                        while (value > p && value[-1] != ' ')
                                value--;
                        strtod(value, &end);
                        assert_ptr_equal(end, nl);
                }
                p = nl + 1;
        }
}

/* ---- golden files, one per fixture board ---- */

static char *read_file(const char *path, size_t *len) {
        FILE *f = fopen(path, "re");
        char *buf;
        long n;

        if (!f)
                return NULL;
        assert_int_equal(fseek(f, 0, SEEK_END), 0);
        n = ftell(f);
        assert_true(n >= 0);
        rewind(f);
        buf = malloc((size_t) n + 1);
        assert_non_null(buf);
        assert_int_equal(fread(buf, 1, (size_t) n, f), (size_t) n);
        buf[n] = '\0';
        fclose(f);
        *len = (size_t) n;
        return buf;
}

/* Prints the first line that differs, so a failure says what changed. */
static void compare_golden(const char *path, const char *got, size_t got_len) {
        size_t want_len = 0, line = 1, i = 0;
        char *want = read_file(path, &want_len);

        if (!want)
                fail_msg("%s missing: regenerate with HEATCURVE_UPDATE_GOLDEN=1 meson test -C build prometheus",
                         path);
        while (i < want_len && i < got_len && want[i] == got[i])
                line += want[i++] == '\n';
        if (i < want_len || i < got_len) {
                size_t start = i;       /* both agree up to i: the line starts at the same place */

                while (start > 0 && got[start - 1] != '\n')
                        start--;
                print_error("%s differs at line %zu:\n  want: %.*s\n  got:  %.*s\n", path, line,
                            (int) strcspn(want + start, "\n"), want + start,
                            (int) strcspn(got + start, "\n"), got + start);
                free(want);
                fail();
        }
        free(want);
}

static void check_board(const char *board, const char *root) {
        char path[PATH_MAX];
        struct sensors *s = probe_board(root);
        size_t len;
        char *text = render(s, &fixed_info, &len);

        check_structure(text);
        /* The last answer's size only sizes the buffer: a hint far too
         * small, one too small to hold the slack, the size itself and a
         * larger one give the same text. */
        for (size_t i = 0; i < 4; i++) {
                const size_t hints[] = { 1, len > 1000 ? len - len / 8 - 200 : len / 2, len, 4 * len };
                struct prom_info info = fixed_info;
                size_t hinted_len;
                char *hinted;

                info.size_hint = hints[i];
                hinted = render(s, &info, &hinted_len);
                assert_int_equal(hinted_len, len);
                assert_memory_equal(hinted, text, len);
                free(hinted);
        }
        pathf(path, sizeof path, "%s/%s.prom", golden_dir, board);
        if (getenv("HEATCURVE_UPDATE_GOLDEN")) {
                FILE *f = fopen(path, "we");

                assert_non_null(f);
                assert_int_equal(fwrite(text, 1, len, f), len);
                assert_int_equal(fclose(f), 0);
                print_message("wrote %s\n", path);
        } else {
                compare_golden(path, text, len);
        }
        free(text);
        sensors_free(s);
}

static void test_golden_boards(void **state) {
        const char *dir = getenv("FIXTURES_DIR");
        struct dirent *de;
        size_t n = 0;
        DIR *d;

        assert_non_null(dir);
        d = opendir(dir);
        assert_non_null(d);
        while ((de = readdir(d))) {
                char root[PATH_MAX], sys[PATH_MAX];
                struct stat st;

                if (de->d_name[0] == '.')
                        continue;
                pathf(root, sizeof root, "%s/%s", dir, de->d_name);
                pathf(sys, sizeof sys, "%s/sys", root);
                if (stat(sys, &st) < 0 || !S_ISDIR(st.st_mode))
                        continue;
                check_board(de->d_name, root);
                n++;
        }
        closedir(d);
        print_message("%zu fixture boards\n", n);
        assert_true(n >= 8);
}

/* A golden file without its board is a board that was dropped or renamed. */
static void test_no_stale_golden(void **state) {
        const char *dir = getenv("FIXTURES_DIR");
        struct dirent *de;
        DIR *d = opendir(golden_dir);

        assert_non_null(d);
        while ((de = readdir(d))) {
                char sys[PATH_MAX];
                size_t n = strlen(de->d_name);
                struct stat st;

                if (n < 6 || strcmp(de->d_name + n - 5, ".prom") != 0)
                        continue;
                pathf(sys, sizeof sys, "%s/%.*s/sys", dir, (int) (n - 5), de->d_name);
                if (stat(sys, &st) < 0)
                        fail_msg("%s/%s has no fixture board", golden_dir, de->d_name);
        }
        closedir(d);
}

/* ---- a hand-made snapshot: escaping, failures, numbers ---- */

struct fake {
        struct sensors s;
        struct temp_sensor temps[3];
        struct cooling_device cooling[1];
        struct cpufreq_policy policies[1];
        int cpu_index[2];
        char cpu_ids[2][SENSORS_CPU_LOAD_ID_MAX];
        double per_cpu[2];
};

static void fake_init(struct fake *f) {
        memset(f, 0, sizeof *f);
        strcpy(f->s.board.model, "Model \"X\" \\ rev\n2");
        strcpy(f->s.board.hostname, "host");
        f->s.temps = f->temps;
        f->s.n_temps = 3;
        strcpy(f->temps[0].id, "hwmon:odd/temp1");
        f->temps[0].source = TEMP_SOURCE_HWMON;
        strcpy(f->temps[0].chip, "odd");
        strcpy(f->temps[0].label, "a\"b\\c\nd\xff\xc3\xa9");    /* quote, backslash, newline, bad byte, é */
        f->temps[0].ok = true;
        f->temps[0].temp_mc = -500;
        f->temps[0].last_good_ms = 1000;
        strcpy(f->temps[1].id, "thermal_zone0");
        strcpy(f->temps[1].type, "soc");
        f->temps[1].ok = false;                 /* failing now, good before */
        f->temps[1].error = EIO;
        f->temps[1].temp_mc = 51000;
        f->temps[1].last_good_ms = 900;
        f->temps[1].read_errors = 42;
        strcpy(f->temps[2].id, "thermal_zone1");
        f->temps[2].ok = true;
        f->temps[2].temp_mc = 0;
        f->s.cooling = f->cooling;
        f->s.n_cooling = 1;
        strcpy(f->cooling[0].id, "cooling_device0");
        strcpy(f->cooling[0].type, "thermal-cpufreq-0");
        f->cooling[0].ok = true;
        f->cooling[0].cur_state = 2;
        f->cooling[0].max_state = -1;           /* unknown: no line */
        f->s.policies = f->policies;
        f->s.n_policies = 1;
        strcpy(f->policies[0].id, "policy0");
        strcpy(f->policies[0].channel_id, "cpufreq:policy0");  /* as the probe names it */
        f->policies[0].ok = true;
        f->policies[0].cur_khz = 1200000;
        f->policies[0].n_cpus = 2;
        f->policies[0].cpus[1] = 1;
        f->s.load.ok = true;
        f->s.load.have_prev = true;
        f->s.load.n_cpus = 2;
        f->s.load.cpu_index = f->cpu_index;
        f->s.load.cpu_ids = f->cpu_ids;
        strcpy(f->cpu_ids[0], "load:cpu0");
        strcpy(f->cpu_ids[1], "load:cpu1");
        f->s.load.per_cpu = f->per_cpu;
        f->cpu_index[1] = 1;
        f->per_cpu[0] = 0.25;
        f->per_cpu[1] = 1.0;
        f->s.load.total = 0.625;
        f->s.time_ms = 1000;
        f->s.read_ns = 1500000;
}

static void assert_has(const char *text, const char *line) {
        assert_non_null(text);
        if (!strstr(text, line))
                fail_msg("missing: %s\nin:\n%s", line, text);
}

static void assert_lacks(const char *text, const char *part) {
        assert_non_null(text);
        if (strstr(text, part))
                fail_msg("unexpected: %s\nin:\n%s", part, text);
}

static void test_escaping_and_values(void **state) {
        struct fake f;
        char *text;

        fake_init(&f);
        text = render(&f.s, &fixed_info, NULL);
        check_structure(text);
        assert_has(text, "heatcurve_board_info{model=\"Model \\\"X\\\" \\\\ rev\\n2\",kernel=\"\",hostname=\"host\"} 1\n");
        assert_has(text, "{sensor=\"hwmon:odd/temp1\",source=\"hwmon\",type=\"\",chip=\"odd\","
                         "label=\"a\\\"b\\\\c\\nd\xef\xbf\xbd\xc3\xa9\"} -0.5\n");
        assert_has(text, "{sensor=\"thermal_zone1\",source=\"thermal\",type=\"\",chip=\"\",label=\"\"} 0\n");
        /* a failing sensor: no temperature, ok 0, its error count */
        assert_lacks(text, "heatcurve_temperature_celsius{sensor=\"thermal_zone0\"");
        assert_has(text, "heatcurve_sensor_ok{sensor=\"thermal_zone0\"} 0\n");
        assert_has(text, "heatcurve_sensor_read_errors_total{sensor=\"thermal_zone0\"} 42\n");
        assert_has(text, "heatcurve_sensor_ok{sensor=\"cpufreq:policy0\"} 1\n");
        assert_has(text, "heatcurve_sensor_ok{sensor=\"load:cpu\"} 1\n");
        /* numbers: exact decimals, base units */
        assert_has(text, "heatcurve_start_time_seconds 1700000000.123\n");
        assert_has(text, "heatcurve_sampling_interval_seconds 1\n");
        assert_has(text, "heatcurve_sensors_read_duration_seconds 0.0015\n");
        assert_has(text, "heatcurve_sensors_read_timestamp_seconds 1\n");
        assert_has(text, "heatcurve_cpu_scaling_frequency_hertz{policy=\"policy0\"} 1200000000\n");
        assert_has(text, "heatcurve_cpufreq_policy_info{policy=\"policy0\",driver=\"\",governor=\"\",cpus=\"0,1\"} 1\n");
        assert_has(text, "heatcurve_cpu_load_ratio{cpu=\"0\"} 0.25\n");
        assert_has(text, "heatcurve_cpu_load_ratio{cpu=\"1\"} 1\n");
        assert_has(text, "heatcurve_load_ratio 0.625\n");
        /* unknown values are left out, not shown as 0 */
        assert_lacks(text, "heatcurve_cooling_device_max_state");
        assert_lacks(text, "heatcurve_cpu_frequency_max_hertz");
        assert_lacks(text, "heatcurve_tick_duration_seconds");
        /* the cpufreq cooling device of cluster 0 is active */
        assert_has(text, "heatcurve_cooling_device_cur_state{device=\"cooling_device0\",type=\"thermal-cpufreq-0\"} 2\n");
        assert_has(text, "heatcurve_cpu_throttled{policy=\"policy0\"} 1\n");
        assert_has(text, "heatcurve_run_running 0\n");
        assert_lacks(text, "heatcurve_run_info");
        assert_lacks(text, "heatcurve_alert_state");
        /* no supply source, no firmware: nothing rather than "all is well" */
        assert_lacks(text, "heatcurve_under_voltage");
        assert_lacks(text, "heatcurve_firmware_");
        free(text);

        /* a Pi whose firmware caps the clock now and saw under-voltage since boot */
        f.s.firmware = (struct firmware_info) { .present = true, .fd = -1, .ok = true, .arm_hz = 600000000,
                                                .throttled = 0x10002 };
        text = render(&f.s, &fixed_info, NULL);
        check_structure(text);
        assert_has(text, "heatcurve_under_voltage 0\n");
        assert_has(text, "heatcurve_firmware_arm_frequency_hertz 600000000\n");
        assert_has(text, "heatcurve_firmware_throttled_flag{flag=\"frequency_capped\",period=\"now\"} 1\n");
        assert_has(text, "heatcurve_firmware_throttled_flag{flag=\"under_voltage\",period=\"now\"} 0\n");
        assert_has(text, "heatcurve_firmware_throttled_flag{flag=\"under_voltage\",period=\"since_boot\"} 1\n");
        assert_has(text, "heatcurve_firmware_throttled_flag{flag=\"soft_temperature_limit\",period=\"since_boot\"} 0\n");
        free(text);
        f.s.firmware.ok = false;                /* it stopped answering: unknown again */
        text = render(&f.s, &fixed_info, NULL);
        assert_lacks(text, "heatcurve_firmware_");
        assert_lacks(text, "heatcurve_under_voltage");
        f.s.firmware = (struct firmware_info) { .fd = -1 };
        free(text);

        /* no previous load sample yet: no load lines rather than zeros */
        f.s.load.have_prev = false;
        text = render(&f.s, &fixed_info, NULL);
        assert_lacks(text, "_load_ratio");
        free(text);
}

static void test_run_and_alerts(void **state) {
        struct prom_run run = {
                .id = 7, .label = "alu \"case\"", .phase = "stress", .started_ms = 1700000000500,
                .work_rate = 123456789.5, .work_unit = "ops", .baseline_c = 41.25, .predicted_plateau_c = NAN,
                .forecast_plateau_c = 61.5, .forecast_eta_s = 240,
        };
        struct prom_alert alerts[] = {
                { .name = "soc", .sensor = "thermal_zone0", .state = PROM_ALERT_WARN, .eta_s = NAN },
                { .name = "nvme", .sensor = "", .state = PROM_ALERT_LOST, .eta_s = NAN },
                { .name = "cpu", .sensor = "hottest", .state = PROM_ALERT_FORECAST, .eta_s = 372 },
        };
        struct prom_info info = fixed_info;
        struct fake f;
        char *text;

        fake_init(&f);
        info.run = &run;
        info.alerts = alerts;
        info.n_alerts = 3;
        info.tick_ns = 2000;
        text = render(&f.s, &info, NULL);
        check_structure(text);
        assert_has(text, "heatcurve_tick_duration_seconds 0.000002\n");
        assert_has(text, "heatcurve_run_running 1\n");
        assert_has(text, "heatcurve_run_info{run_id=\"7\",label=\"alu \\\"case\\\"\",phase=\"stress\"} 1\n");
        assert_has(text, "heatcurve_run_start_time_seconds{run_id=\"7\"} 1700000000.5\n");
        assert_has(text, "heatcurve_run_work_rate_per_second{run_id=\"7\",unit=\"ops\"} 123456789.5\n");
        assert_has(text, "heatcurve_run_baseline_celsius{run_id=\"7\"} 41.25\n");
        assert_lacks(text, "heatcurve_run_predicted_plateau_celsius");       /* NaN: not known yet */
        assert_has(text, "heatcurve_run_forecast_plateau_celsius{run_id=\"7\"} 61.5\n");
        assert_has(text, "heatcurve_run_forecast_eta_seconds{run_id=\"7\"} 240\n");
        assert_has(text, "heatcurve_alert_state{alert=\"soc\",sensor=\"thermal_zone0\",state=\"forecast\"} 0\n");
        assert_has(text, "heatcurve_alert_state{alert=\"cpu\",sensor=\"hottest\",state=\"forecast\"} 1\n");
        assert_has(text, "heatcurve_alert_forecast_eta_seconds{alert=\"cpu\",sensor=\"hottest\"} 372\n");
        assert_lacks(text, "heatcurve_alert_forecast_eta_seconds{alert=\"soc\"");
        assert_has(text, "heatcurve_alert_state{alert=\"soc\",sensor=\"thermal_zone0\",state=\"ok\"} 0\n");
        assert_has(text, "heatcurve_alert_state{alert=\"soc\",sensor=\"thermal_zone0\",state=\"warn\"} 1\n");
        assert_has(text, "heatcurve_alert_state{alert=\"nvme\",sensor=\"\",state=\"lost\"} 1\n");
        assert_has(text, "heatcurve_alert_state{alert=\"nvme\",sensor=\"\",state=\"crit\"} 0\n");
        free(text);

        /* no load: no work rate line */
        run.work_unit = NULL;
        run.work_rate = NAN;
        text = render(&f.s, &info, NULL);
        assert_lacks(text, "heatcurve_run_work_rate_per_second");
        free(text);
        assert_string_equal(prom_alert_state_to_string(PROM_ALERT_CRIT), "crit");
        assert_string_equal(prom_alert_state_to_string(_PROM_ALERT_STATE_MAX), "unknown");
}

/* An empty board still gives a valid document: the daemon's own families. */
static void test_empty_snapshot(void **state) {
        struct sensors s = { 0 };
        char *text;

        text = render(&s, &fixed_info, NULL);
        check_structure(text);
        assert_has(text, "heatcurve_build_info{version=\"0.0.0-test\"} 1\n");
        assert_has(text, "heatcurve_ticks_total 2\n");
        assert_lacks(text, "heatcurve_temperature_celsius");
        assert_lacks(text, "heatcurve_sensors_read_duration_seconds");  /* never read */
        free(text);
}

static int setup(void **state) {
        const char *golden = getenv("GOLDEN_DIR");
        char rel[PATH_MAX];

        if (!golden || !getenv("FIXTURES_DIR")) {
                fprintf(stderr, "GOLDEN_DIR or FIXTURES_DIR is not set (run through meson test)\n");
                return -1;
        }
        snprintf(rel, sizeof rel, "%s/prometheus", golden);
        if (!realpath(rel, golden_dir)) {
                fprintf(stderr, "cannot find %s: %m\n", rel);
                return -1;
        }
        return 0;
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_golden_boards),
                cmocka_unit_test(test_no_stale_golden),
                cmocka_unit_test(test_escaping_and_values),
                cmocka_unit_test(test_run_and_alerts),
                cmocka_unit_test(test_empty_snapshot),
        };

        return cmocka_run_group_tests(tests, setup, NULL);
}
