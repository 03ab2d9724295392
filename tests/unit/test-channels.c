/* test-channels.c — unit tests for the sensors' channel list: ids, order, units, ok flags, find and read. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "sensors.h"

static const char *const kind_units[_SENSOR_KIND_MAX] = {
        [SENSOR_KIND_TEMPERATURE] = "celsius", [SENSOR_KIND_COOLING] = "state", [SENSOR_KIND_FREQUENCY] = "hz",
        [SENSOR_KIND_CPU_LOAD] = "fraction", [SENSOR_KIND_LOAD] = "fraction", [SENSOR_KIND_POWER] = "flag",
        [SENSOR_KIND_THROTTLE] = "flag", [SENSOR_KIND_POWER_DRAW] = "watts",
};

/* A fixture board probed and read twice (a load needs two reads), or NULL
 * when FIXTURES_DIR is not set. */
static struct sensors *probe_board(const char *board) {
        const char *dir = getenv("FIXTURES_DIR");
        struct sensors *s = NULL;
        char root[PATH_MAX];

        if (!dir)
                return NULL;
        snprintf(root, sizeof root, "%s/%s", dir, board);
        assert_int_equal(sensors_probe(root, root, &s), 0);
        assert_true(sensors_read(s, 1000) >= 0);
        assert_true(sensors_read(s, 2000) >= 0);
        return s;
}

/* Every channel once, in the kinds' order, each found again by its id, of
 * the kind its id says, with its kind's unit; returns how many. */
static size_t check_channels(const struct sensors *s, const char *const *want, size_t n_want) {
        struct sensors_iter it = SENSORS_ITER_INIT;
        struct sensor_channel ch, again;
        const char *seen[512];
        size_t n = 0;
        int last = 0;

        while (sensors_channel_next(s, &it, &ch)) {
                assert_true(n < sizeof seen / sizeof seen[0]);
                assert_non_null(ch.id);
                if (want && (n >= n_want || strcmp(ch.id, want[n]) != 0))
                        fail_msg("channel %zu is %s, want %s", n, ch.id, n < n_want ? want[n] : "none");
                for (size_t k = 0; k < n; k++)
                        if (strcmp(seen[k], ch.id) == 0)
                                fail_msg("%s twice", ch.id);
                seen[n++] = ch.id;
                assert_true((int) ch.kind >= last);
                last = (int) ch.kind;
                assert_string_equal(ch.unit, kind_units[ch.kind]);
                assert_int_equal(sensors_id_kind(ch.id), ch.kind);
                assert_int_equal(sensors_channel_find(s, ch.id, &again), 0);
                assert_int_equal(again.kind, ch.kind);
                assert_int_equal(again.index, ch.index);
                assert_ptr_equal(again.id, ch.id);
        }
        assert_false(sensors_channel_next(s, &it, &ch));       /* stays at the end */
        if (want)
                assert_int_equal(n, n_want);
        return n;
}

/* The order the history, /metrics and samples.csv have always used:
 * temperatures, cooling devices, policies, each CPU's load, then all of them. */
static void test_fixture_order(void **state) {
        static const char *const want[] = {
                "thermal_zone0", "thermal_zone1", "thermal_zone2", "thermal_zone3",
                "hwmon:PNP0C14:01/temp1", "hwmon:acpitz/temp1", "hwmon:coretemp/temp1", "hwmon:coretemp/temp2",
                "hwmon:coretemp/temp3", "hwmon:coretemp/temp4", "hwmon:coretemp/temp5", "hwmon:nvme@nvme0/temp1",
                "hwmon:nvme@nvme0/temp2", "hwmon:nvme@nvme0/temp3", "hwmon:nvme@nvme1/temp1",
                "cooling_device0", "cooling_device1", "cooling_device2", "cooling_device3", "cooling_device4",
                "cpufreq:policy0", "cpufreq:policy1", "cpufreq:policy2", "cpufreq:policy3",
                "load:cpu0", "load:cpu1", "load:cpu2", "load:cpu3", "load:cpu",
        };
        struct sensors *s = probe_board("x86-laptop-coretemp");
        struct sensors_iter it = SENSORS_ITER_INIT;
        struct sensor_channel ch;

        if (!s) {
                print_message("FIXTURES_DIR not set, nothing to check\n");
                skip();
        }
        check_channels(s, want, sizeof want / sizeof want[0]);
        while (sensors_channel_next(s, &it, &ch)) {
                double v = NAN;

                assert_true(ch.ok);
                assert_true(ch.has_value);
                assert_int_equal(ch.read_errors, 0);
                /* a CPU's load has no health of its own: the total's */
                assert_int_equal(ch.counts_errors, ch.kind != SENSOR_KIND_CPU_LOAD);
                assert_int_equal(sensors_channel_read(s, &ch, &v), 1);
                assert_true(v == ch.value);
                if (ch.kind == SENSOR_KIND_TEMPERATURE)
                        assert_true(ch.value == s->temps[ch.index].temp_mc / 1000.0);
                if (ch.kind == SENSOR_KIND_FREQUENCY)
                        assert_true(ch.value == s->policies[ch.index].cur_khz * 1000.0);
        }
        assert_int_equal(sensors_channel_find(s, "cpufreq:policy9", &ch), -ENOENT);
        assert_int_equal(sensors_channel_find(s, "undervoltage", &ch), -ENOENT);
        sensors_free(s);
}

/* The Pi says whether its supply is too low: a channel after the loads. */
static void test_fixture_power(void **state) {
        struct sensors *s = probe_board("rpi4");
        struct sensor_channel ch;

        if (!s)
                skip();
        assert_int_equal(check_channels(s, NULL, 0), 9);
        assert_int_equal(sensors_channel_find(s, "undervoltage", &ch), 0);
        assert_int_equal(ch.kind, SENSOR_KIND_POWER);
        assert_true(ch.ok && ch.has_value);
        assert_false(ch.counts_errors);
        assert_true(ch.value == 0.0);
        /* no /dev/vcio in a fixture tree: nothing to say about the firmware */
        assert_int_equal(sensors_channel_find(s, "throttled", &ch), -ENOENT);
        sensors_free(s);
}

/* Every fixture board: each id once, in the kinds' order. */
static void test_fixture_boards(void **state) {
        const char *dir = getenv("FIXTURES_DIR");
        struct dirent **names;
        int n;

        if (!dir)
                skip();
        n = scandir(dir, &names, NULL, alphasort);
        assert_true(n > 0);
        for (int i = 0; i < n; i++) {
                char sys[PATH_MAX];
                struct stat st;

                snprintf(sys, sizeof sys, "%s/%s/sys", dir, names[i]->d_name);
                if (names[i]->d_name[0] != '.' && stat(sys, &st) == 0 && S_ISDIR(st.st_mode)) {
                        struct sensors *s = probe_board(names[i]->d_name);

                        print_message("%s: %zu channels\n", names[i]->d_name, check_channels(s, NULL, 0));
                        sensors_free(s);
                }
                free(names[i]);
        }
        free(names);
}

/* A board as the library leaves it after a read, built by hand. */
struct fake {
        struct sensors s;
        struct temp_sensor temps[2];
        struct cpufreq_policy policies[1];
        int cpu_index[1];
        char cpu_ids[1][SENSORS_CPU_LOAD_ID_MAX];
        double per_cpu[1];
};

static void fake_init(struct fake *f) {
        memset(f, 0, sizeof *f);
        f->s.temps = f->temps;
        f->s.n_temps = 2;
        strcpy(f->temps[0].id, "thermal_zone0");
        f->temps[0].ok = true;
        f->temps[0].temp_mc = 48686;
        strcpy(f->temps[1].id, "thermal_zone1");
        f->temps[1].ok = false;                 /* failing now, 51 C before */
        f->temps[1].temp_mc = 51000;
        f->temps[1].read_errors = 3;
        f->s.policies = f->policies;
        f->s.n_policies = 1;
        strcpy(f->policies[0].id, "policy0");
        strcpy(f->policies[0].channel_id, "cpufreq:policy0");
        f->policies[0].ok = true;
        f->policies[0].cur_khz = 0;             /* a driver with no frequency to say */
        f->s.load.ok = true;
        f->s.load.have_prev = false;            /* the first read */
        f->s.load.n_cpus = 1;
        f->s.load.cpu_index = f->cpu_index;
        f->s.load.cpu_ids = f->cpu_ids;
        f->s.load.per_cpu = f->per_cpu;
        strcpy(f->cpu_ids[0], "load:cpu0");
}

/* ok: the source answered; has_value: there is a reading to keep. */
static void test_ok_and_values(void **state) {
        static const char *const want[] = { "thermal_zone0", "thermal_zone1", "cpufreq:policy0", "load:cpu0",
                                            "load:cpu" };
        struct sensor_channel ch;
        struct fake f;
        double v;

        fake_init(&f);
        check_channels(&f.s, want, sizeof want / sizeof want[0]);
        assert_int_equal(sensors_channel_find(&f.s, "thermal_zone0", &ch), 0);
        assert_true(ch.ok && ch.has_value);
        assert_true(ch.value == 48.686);
        assert_int_equal(sensors_channel_find(&f.s, "thermal_zone1", &ch), 0);
        assert_false(ch.ok || ch.has_value);
        assert_true(ch.value == 51.0);          /* the last good one */
        assert_int_equal(ch.read_errors, 3);
        assert_int_equal(sensors_channel_read(&f.s, &ch, &v), -1);
        assert_int_equal(sensors_channel_find(&f.s, "cpufreq:policy0", &ch), 0);
        assert_true(ch.ok);
        assert_false(ch.has_value);
        assert_int_equal(sensors_channel_read(&f.s, &ch, &v), 0);
        assert_true(v == 0.0);
        assert_int_equal(sensors_channel_find(&f.s, "load:cpu", &ch), 0);
        assert_true(ch.ok);
        assert_false(ch.has_value);

        /* the tick: a kept channel reads what the struct says now */
        f.s.load.have_prev = true;
        f.s.load.total = 0.25;
        assert_int_equal(sensors_channel_read(&f.s, &ch, &v), 1);
        assert_true(v == 0.25);
        f.s.load.ok = false;
        assert_int_equal(sensors_channel_read(&f.s, &ch, &v), -1);
}

/* A channel kept across a re-probe that dropped its source reads as failed. */
static void test_read_gone(void **state) {
        struct sensor_channel ch, none = { .kind = _SENSOR_KIND_MAX };
        struct fake f;
        double v;

        fake_init(&f);
        assert_int_equal(sensors_channel_find(&f.s, "thermal_zone1", &ch), 0);
        f.temps[1].ok = true;
        assert_int_equal(sensors_channel_read(&f.s, &ch, &v), 1);
        f.s.n_temps = 1;
        assert_int_equal(sensors_channel_read(&f.s, &ch, &v), -1);
        assert_int_equal(sensors_channel_find(&f.s, "thermal_zone1", &ch), -ENOENT);
        assert_int_equal(sensors_channel_read(&f.s, &none, &v), -1);
}

/* A power meter's watts: the board's draw, the last channel. */
static void test_fixture_power_draw(void **state) {
        static const char *const want[] = {
                "thermal_zone0", "hwmon:cpu_thermal/temp1", "cpufreq:policy0", "load:cpu0", "load:cpu1",
                "load:cpu2", "load:cpu3", "load:cpu", "undervoltage", "power:ina219/power1",
        };
        struct sensors *s = probe_board("rpi4-ina219");
        struct sensor_channel ch;

        if (!s)
                skip();
        assert_int_equal(check_channels(s, want, sizeof want / sizeof want[0]), 10);
        assert_int_equal(sensors_channel_find(s, "power:ina219/power1", &ch), 0);
        assert_int_equal(ch.kind, SENSOR_KIND_POWER_DRAW);
        assert_true(ch.ok && ch.has_value && ch.counts_errors);
        assert_true(ch.value == 5.095);
        sensors_free(s);
}

static void put_file(const char *dir, const char *name, const char *text) {
        char path[PATH_MAX];
        FILE *f;

        snprintf(path, sizeof path, "%s/%s", dir, name);
        assert_non_null(f = fopen(path, "w"));
        fputs(text, f);
        fclose(f);
}

/* A chip without a power input: each current times the voltage of its
 * index; a current with no voltage is no meter. */
static void test_power_draw_current(void **state) {
        char root[] = "/tmp/test-channels-XXXXXX", dir[PATH_MAX], cmd[PATH_MAX + 16];
        struct sensors *s = NULL;
        struct sensor_channel ch;

        assert_non_null(mkdtemp(root));
        snprintf(dir, sizeof dir, "%s/sys/class/hwmon/hwmon0", root);
        snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
        assert_int_equal(system(cmd), 0);
        put_file(dir, "name", "ina3221\n");
        put_file(dir, "curr1_input", "-250\n");
        put_file(dir, "in1_input", "12000\n");
        put_file(dir, "curr2_input", "100\n");
        put_file(dir, "in4_input", "20\n");
        assert_int_equal(sensors_probe(root, root, &s), 0);
        assert_true(sensors_read(s, 1000) >= 0);
        assert_int_equal(sensors_channel_find(s, "power:ina3221/curr1", &ch), 0);
        assert_true(ch.ok && ch.has_value);
        assert_true(ch.value == 3.0);
        assert_int_equal(sensors_channel_find(s, "power:ina3221/curr2", &ch), -ENOENT);
        sensors_free(s);
        snprintf(cmd, sizeof cmd, "rm -rf %s", root);
        assert_int_equal(system(cmd), 0);
}

static void test_parse_power(void **state) {
        double w = -1;

        assert_int_equal(sensors_parse_power("5095000\n", NULL, NULL, &w), 0);
        assert_true(w == 5.095);
        assert_int_equal(sensors_parse_power("0", NULL, NULL, &w), 0);
        assert_true(w == 0.0);
        assert_int_equal(sensors_parse_power(NULL, "1003", "5080", &w), 0);
        assert_true(fabs(w - 5.09524) < 1e-12);
        assert_int_equal(sensors_parse_power(NULL, "-1003", "5080", &w), 0);  /* a shunt the other way round */
        assert_true(fabs(w - 5.09524) < 1e-12);
        assert_int_equal(sensors_parse_power("12x", NULL, NULL, &w), -EBADMSG);
        assert_int_equal(sensors_parse_power("", NULL, NULL, &w), -EBADMSG);
        assert_int_equal(sensors_parse_power(NULL, "1003", NULL, &w), -EBADMSG);
        assert_int_equal(sensors_parse_power(NULL, "1003", "mV", &w), -EBADMSG);
        assert_int_equal(sensors_parse_power("-5", NULL, NULL, &w), -ERANGE);
        assert_int_equal(sensors_parse_power("20000000000", NULL, NULL, &w), -ERANGE);
        assert_int_equal(sensors_parse_power(NULL, "-5", "-5000", &w), -ERANGE);
        assert_true(fabs(w - 5.09524) < 1e-12);        /* untouched by a failure */
}

/* Ids kept from an earlier probe (the history's columns) still say their kind. */
static void test_id_kind(void **state) {
        static const struct {
                const char *id;
                enum sensor_kind kind;
        } ids[] = {
                { "thermal_zone0", SENSOR_KIND_TEMPERATURE }, { "hwmon:coretemp/temp1", SENSOR_KIND_TEMPERATURE },
                { "hwmon:cpufreq:odd/temp1", SENSOR_KIND_TEMPERATURE }, { "cooling_device12", SENSOR_KIND_COOLING },
                { "cpufreq:policy4", SENSOR_KIND_FREQUENCY }, { "load:cpu", SENSOR_KIND_LOAD },
                { "load:cpu0", SENSOR_KIND_CPU_LOAD }, { "load:cpu127", SENSOR_KIND_CPU_LOAD },
                { "undervoltage", SENSOR_KIND_POWER }, { "throttled", SENSOR_KIND_THROTTLE },
                { "power:ina219/power1", SENSOR_KIND_POWER_DRAW }, { "power:", SENSOR_KIND_TEMPERATURE },
                { "load:cp", SENSOR_KIND_TEMPERATURE }, { "", SENSOR_KIND_TEMPERATURE },
        };

        for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
                if (sensors_id_kind(ids[i].id) != ids[i].kind)
                        fail_msg("%s: kind %d, want %d", ids[i].id, sensors_id_kind(ids[i].id), ids[i].kind);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fixture_order),
                cmocka_unit_test(test_fixture_power),
                cmocka_unit_test(test_fixture_boards),
                cmocka_unit_test(test_ok_and_values),
                cmocka_unit_test(test_read_gone),
                cmocka_unit_test(test_id_kind),
                cmocka_unit_test(test_fixture_power_draw),
                cmocka_unit_test(test_power_draw_current),
                cmocka_unit_test(test_parse_power),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
