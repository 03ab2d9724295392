/* test-sensors-devices.c — unit tests for hwmon chips, cpufreq policies, CPU load, board identity, fixture boards. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sensors.h"
#include "test-sensors.h"

/* ---- hwmon ---- */

/* A chip at devices/<parent>/hwmon/hwmon<n>, with a device link to its parent. */
static void add_chip(const struct tree *t, int n, const char *parent, const char *name, const char *temp1) {
        char rel[512], target[512];

        pathf(rel, sizeof(rel), "sys/devices/%s/hwmon/hwmon%d/temp1_input", parent, n);
        put(t, rel, temp1);
        if (name) {
                pathf(rel, sizeof(rel), "sys/devices/%s/hwmon/hwmon%d/name", parent, n);
                put(t, rel, name);
        }
        pathf(rel, sizeof(rel), "sys/devices/%s/hwmon/hwmon%d/device", parent, n);
        link_to(t, rel, "../../");
        pathf(rel, sizeof(rel), "sys/class/hwmon/hwmon%d", n);
        pathf(target, sizeof(target), "../../devices/%s/hwmon/hwmon%d", parent, n);
        link_to(t, rel, target);
}

static void test_hwmon_basic_and_limits(void **state) {
        const char *d = "sys/devices/pci0000:00/0000:02:00.0/nvme/nvme0/hwmon/hwmon0";
        const struct temp_sensor *a, *b;
        struct sensors *s;
        struct tree t;
        char rel[512];
        int32_t low;

        tree_new(&t);
        add_chip(&t, 0, "pci0000:00/0000:02:00.0/nvme/nvme0", "nvme\n", "38850\n");
        pathf(rel, sizeof(rel), "%s/temp1_label", d);
        put(&t, rel, "Composite\n");
        pathf(rel, sizeof(rel), "%s/temp1_max", d);
        put(&t, rel, "81850\n");
        pathf(rel, sizeof(rel), "%s/temp1_crit", d);
        put(&t, rel, "84850\n");
        pathf(rel, sizeof(rel), "%s/temp2_input", d);
        put(&t, rel, "41850\n");
        pathf(rel, sizeof(rel), "%s/temp2_max", d);
        put(&t, rel, "65261850\n");
        pathf(rel, sizeof(rel), "%s/temp2_crit", d);
        put(&t, rel, "-273150\n");
        pathf(rel, sizeof(rel), "%s/temp10_input", d);
        put(&t, rel, "30000\n");

        s = probe(&t);
        assert_int_equal(sensors_read(s, 1000), 0);
        assert_int_equal(s->n_temps, 3);
        /* Numeric order, not temp1, temp10, temp2. */
        assert_string_equal(s->temps[0].id, "hwmon:nvme/temp1");
        assert_string_equal(s->temps[1].id, "hwmon:nvme/temp2");
        assert_string_equal(s->temps[2].id, "hwmon:nvme/temp10");
        a = &s->temps[0];
        b = &s->temps[1];
        assert_int_equal(a->source, TEMP_SOURCE_HWMON);
        assert_string_equal(a->chip, "nvme");
        assert_string_equal(a->type, "nvme");
        assert_string_equal(a->sensor, "temp1");
        assert_string_equal(a->label, "Composite");
        assert_true(a->has_max);
        assert_int_equal(a->max_mc, 81850);
        assert_true(a->has_crit);
        assert_int_equal(a->crit_mc, 84850);
        assert_false(b->has_max);
        assert_false(b->has_crit);
        assert_string_equal(b->label, "");
        assert_int_equal(b->temp_mc, 41850);
        assert_true(sensors_lowest_hot_trip(s, &low));
        assert_int_equal(low, 84850);
        sensors_free(s);
        tree_free(&t);
}

static void test_hwmon_no_name(void **state) {
        struct sensors *s;
        struct tree t;

        tree_new(&t);
        /* No name file, but a device: the device names it. */
        add_chip(&t, 0, "LNXSYSTM:00/LNXSYBUS:00/PNP0C14:01", NULL, "33000\n");
        /* Neither name nor device link: hwmonX is all there is. */
        put(&t, "sys/devices/virtual/hwmon/hwmon7/temp1_input", "34000\n");
        link_to(&t, "sys/class/hwmon/hwmon7", "../../devices/virtual/hwmon/hwmon7");
        s = probe(&t);
        assert_int_equal(sensors_read(s, 1000), 0);
        assert_int_equal(s->n_temps, 2);
        assert_non_null(find(s, "hwmon:PNP0C14:01/temp1"));
        assert_string_equal(find(s, "hwmon:PNP0C14:01/temp1")->chip, "PNP0C14:01");
        assert_non_null(find(s, "hwmon:hwmon7/temp1"));
        assert_int_equal(find(s, "hwmon:hwmon7/temp1")->temp_mc, 34000);
        sensors_free(s);
        tree_free(&t);
}

/* Old kernels: the hwmon class dir is empty, name and inputs sit on device/. */
static void test_hwmon_device_attrs(void **state) {
        const struct temp_sensor *x;
        struct sensors *s;
        struct tree t;

        tree_new(&t);
        put(&t, "sys/devices/platform/soc/i2c-1/1-0048/name", "lm75\n");
        put(&t, "sys/devices/platform/soc/i2c-1/1-0048/temp1_input", "27500\n");
        put(&t, "sys/devices/platform/soc/i2c-1/1-0048/temp1_max", "80000\n");
        put(&t, "sys/devices/platform/soc/i2c-1/1-0048/temp1_max_hyst", "75000\n");
        link_to(&t, "sys/devices/platform/soc/i2c-1/1-0048/hwmon/hwmon0/device", "../../../1-0048");
        link_to(&t, "sys/class/hwmon/hwmon0", "../../devices/platform/soc/i2c-1/1-0048/hwmon/hwmon0");
        s = probe(&t);
        assert_int_equal(sensors_read(s, 1000), 0);
        x = find(s, "hwmon:lm75/temp1");
        assert_non_null(x);
        assert_true(x->ok);
        assert_int_equal(x->temp_mc, 27500);
        assert_int_equal(x->max_mc, 80000);
        assert_string_equal(x->chip, "lm75");
        sensors_free(s);
        tree_free(&t);
}

static void test_hwmon_trailing_slash(void **state) {
        struct sensors *s;
        struct tree t;

        tree_new(&t);
        put(&t, "sys/devices/platform/coretemp.0/hwmon/hwmon1/name", "coretemp\n");
        put(&t, "sys/devices/platform/coretemp.0/hwmon/hwmon1/temp1_input", "52000\n");
        put(&t, "sys/devices/platform/coretemp.0/hwmon/hwmon1/temp1_label", "Package id 0\n");
        link_to(&t, "sys/devices/platform/coretemp.0/hwmon/hwmon1/device", "../../../coretemp.0/");
        link_to(&t, "sys/class/hwmon/hwmon1", "../../devices/platform/coretemp.0/hwmon/hwmon1/");
        s = probe(&t);
        assert_int_equal(sensors_read(s, 1000), 0);
        assert_non_null(find(s, "hwmon:coretemp/temp1"));
        assert_string_equal(find(s, "hwmon:coretemp/temp1")->label, "Package id 0");
        assert_int_equal(find(s, "hwmon:coretemp/temp1")->temp_mc, 52000);
        sensors_free(s);
        tree_free(&t);
}

static void test_hwmon_same_name(void **state) {
        struct sensors *s;
        struct tree t;

        tree_new(&t);
        add_chip(&t, 2, "pci0000:00/0000:00:13.2/0000:02:00.0/nvme/nvme0", "nvme\n", "38000\n");
        add_chip(&t, 3, "pci0000:00/0000:00:13.3/0000:03:00.0/nvme/nvme1", "nvme\n", "36000\n");
        /* Same name, no device link. */
        put(&t, "sys/devices/virtual/hwmon/hwmon4/name", "iio_hwmon\n");
        put(&t, "sys/devices/virtual/hwmon/hwmon4/temp1_input", "30000\n");
        link_to(&t, "sys/class/hwmon/hwmon4", "../../devices/virtual/hwmon/hwmon4");
        put(&t, "sys/devices/virtual/hwmon/hwmon5/name", "iio_hwmon\n");
        put(&t, "sys/devices/virtual/hwmon/hwmon5/temp1_input", "31000\n");
        link_to(&t, "sys/class/hwmon/hwmon5", "../../devices/virtual/hwmon/hwmon5");
        /* Same name under the same device. */
        add_chip(&t, 6, "platform/soc/scpi", "scpi\n", "40000\n");
        add_chip(&t, 8, "platform/soc/scpi", "scpi\n", "42000\n");
        /* A unique name keeps the short id. */
        add_chip(&t, 9, "platform/coretemp.0", "coretemp\n", "50000\n");

        s = probe(&t);
        assert_int_equal(sensors_read(s, 1000), 0);
        assert_int_equal(s->n_temps, 7);
        assert_int_equal(find(s, "hwmon:nvme@nvme0/temp1")->temp_mc, 38000);
        assert_int_equal(find(s, "hwmon:nvme@nvme1/temp1")->temp_mc, 36000);
        assert_string_equal(find(s, "hwmon:nvme@nvme1/temp1")->chip, "nvme");
        assert_int_equal(find(s, "hwmon:iio_hwmon@hwmon4/temp1")->temp_mc, 30000);
        assert_int_equal(find(s, "hwmon:iio_hwmon@hwmon5/temp1")->temp_mc, 31000);
        assert_int_equal(find(s, "hwmon:scpi@scpi~hwmon6/temp1")->temp_mc, 40000);
        assert_int_equal(find(s, "hwmon:scpi@scpi~hwmon8/temp1")->temp_mc, 42000);
        assert_int_equal(find(s, "hwmon:coretemp/temp1")->temp_mc, 50000);
        sensors_free(s);
        tree_free(&t);
}

/* The kernel numbers hwmonN in probe order, which changes between boots. */
static void test_hwmon_reorder(void **state) {
        char a[PATH_MAX], b[PATH_MAX], tmp[PATH_MAX];
        char before[8][SENSORS_ID_MAX];
        int32_t values[8];
        struct sensors *s;
        struct tree t;
        size_t n;

        tree_new(&t);
        add_chip(&t, 0, "pci0000:00/0000:02:00.0/nvme/nvme0", "nvme\n", "38000\n");
        add_chip(&t, 1, "pci0000:00/0000:03:00.0/nvme/nvme1", "nvme\n", "36000\n");
        add_chip(&t, 2, "platform/coretemp.0", "coretemp\n", "50000\n");
        s = probe(&t);
        assert_int_equal(sensors_read(s, 1000), 0);
        n = s->n_temps;
        assert_int_equal(n, 3);
        for (size_t i = 0; i < n; i++) {
                memcpy(before[i], s->temps[i].id, SENSORS_ID_MAX);
                values[i] = s->temps[i].temp_mc;
        }

        /* The two nvme chips swap their hwmonN. */
        pathf(a, sizeof(a), "%s/sys/class/hwmon/hwmon0", t.root);
        pathf(b, sizeof(b), "%s/sys/class/hwmon/hwmon1", t.root);
        pathf(tmp, sizeof(tmp), "%s/sys/class/hwmon/tmp", t.root);
        assert_int_equal(rename(a, tmp), 0);
        assert_int_equal(rename(b, a), 0);
        assert_int_equal(rename(tmp, b), 0);
        assert_int_equal(sensors_reprobe(&s), 0);
        assert_int_equal(sensors_read(s, 2000), 0);
        assert_int_equal(s->n_temps, n);
        for (size_t i = 0; i < n; i++) {
                /* Same ids, same order, each still reading its own chip. */
                assert_string_equal(s->temps[i].id, before[i]);
                assert_int_equal(s->temps[i].temp_mc, values[i]);
        }
        sensors_free(s);
        tree_free(&t);
}

/* ---- cpufreq ---- */

static void put_policy_files(const struct tree *t, const char *dir, const char *cur, const char *max) {
        char rel[512];
        const char *files[][2] = {
                { "scaling_cur_freq", cur }, { "cpuinfo_min_freq", "100000\n" },
                { "cpuinfo_max_freq", max }, { "scaling_min_freq", "100000\n" },
                { "scaling_max_freq", max }, { "scaling_governor", "interactive\n" },
                { "scaling_driver", "meson_cpufreq\n" },
                { "scaling_available_frequencies", "100000 250000 500000 1000000 1296000 1536000 \n" },
                { "stats/time_in_state", "100000 5000\n250000 10\n500000 0\n1000000 7\n1296000 0\n1536000 123456789012\n" },
        };

        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
                pathf(rel, sizeof(rel), "%s/%s", dir, files[i][0]);
                put(t, rel, files[i][1]);
        }
}

/* 3.x: cpu0/cpufreq is the directory, cpu1..3/cpufreq symlink to it. */
static void test_cpufreq_legacy(void **state) {
        const struct cpufreq_policy *p;
        struct sensors *s;
        struct tree t;
        char rel[256];

        tree_new(&t);
        put_policy_files(&t, "sys/devices/system/cpu/cpu0/cpufreq", "1536000\n", "1536000\n");
        put(&t, "sys/devices/system/cpu/cpufreq/ondemand/sampling_rate", "20000\n");
        for (int i = 1; i < 4; i++) {
                pathf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/cpufreq", i);
                link_to(&t, rel, "../cpu0/cpufreq");
        }
        s = probe(&t);
        assert_int_equal(sensors_read(s, 1000), 0);
        assert_int_equal(s->n_policies, 1);
        p = &s->policies[0];
        assert_string_equal(p->id, "policy0");
        assert_int_equal(p->n_cpus, 4);
        for (int i = 0; i < 4; i++)
                assert_int_equal(p->cpus[i], i);
        assert_true(p->ok);
        assert_int_equal(p->cur_khz, 1536000);
        assert_false(p->has_cpuinfo_cur);               /* file absent */
        assert_int_equal(p->min_khz, 100000);
        assert_int_equal(p->max_khz, 1536000);
        assert_int_equal(p->scaling_min_khz, 100000);
        assert_int_equal(p->scaling_max_khz, 1536000);
        assert_string_equal(p->governor, "interactive");
        assert_string_equal(p->driver, "meson_cpufreq");
        assert_int_equal(p->n_available, 6);
        assert_int_equal(p->available_khz[5], 1536000);
        assert_int_equal(p->n_tis, 6);
        assert_int_equal(p->tis_khz[0], 100000);
        assert_int_equal(p->tis_10ms[0], 5000);
        assert_true(p->tis_10ms[5] == 123456789012ULL);  /* beyond 32 bits on armhf too */
        assert_int_equal(s->board.cpus, 4);

        /* Re-read on every tick: the current frequency, the cap (thermal
         * capping moves scaling_max_freq on 3.14) and time_in_state. */
        put(&t, "sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "500000\n");
        put(&t, "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance\n");
        put(&t, "sys/devices/system/cpu/cpu0/cpufreq/scaling_min_freq", "250000\n");
        put(&t, "sys/devices/system/cpu/cpu0/cpufreq/scaling_max_freq", "1296000\n");
        put(&t, "sys/devices/system/cpu/cpu0/cpufreq/stats/time_in_state", "100000 6000\n250000 10\n");
        assert_int_equal(sensors_read(s, 2000), 0);
        assert_int_equal(p->cur_khz, 500000);
        assert_int_equal(p->scaling_max_khz, 1296000);
        assert_int_equal(p->n_tis, 2);
        assert_int_equal(p->tis_10ms[0], 6000);
        /* Governor and minimum: at probe and re-probe only. */
        assert_string_equal(p->governor, "interactive");
        assert_int_equal(p->scaling_min_khz, 100000);
        assert_int_equal(sensors_reprobe(&s), 0);
        p = &s->policies[0];
        assert_string_equal(p->governor, "performance");
        assert_int_equal(p->scaling_min_khz, 250000);
        assert_int_equal(p->cur_khz, 500000);           /* carried over until the next read */
        sensors_free(s);
        tree_free(&t);
}

/* big.LITTLE on a modern kernel: cpufreq/policy0 and policy4. */
static void test_cpufreq_modern(void **state) {
        struct sensors *s;
        struct tree t;
        char rel[256], target[64], full[PATH_MAX];

        tree_new(&t);
        put_policy_files(&t, "sys/devices/system/cpu/cpufreq/policy0", "408000\n", "1416000\n");
        put_policy_files(&t, "sys/devices/system/cpu/cpufreq/policy4", "1800000\n", "1800000\n");
        put(&t, "sys/devices/system/cpu/cpufreq/policy0/related_cpus", "0 1 2 3\n");
        /* policy4 without related_cpus: affected_cpus is the next best. */
        put(&t, "sys/devices/system/cpu/cpufreq/policy4/affected_cpus", "4 5\n");
        /* policy4 has no scaling_cur_freq: cpuinfo_cur_freq is the fallback. */
        put(&t, "sys/devices/system/cpu/cpufreq/policy4/cpuinfo_cur_freq", "1800000\n");
        pathf(full, sizeof(full), "%s/sys/devices/system/cpu/cpufreq/policy4/scaling_cur_freq", t.root);
        assert_int_equal(unlink(full), 0);
        for (int i = 0; i < 6; i++) {
                pathf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/cpufreq", i);
                pathf(target, sizeof(target), "../cpufreq/policy%d", i < 4 ? 0 : 4);
                link_to(&t, rel, target);
        }
        s = probe(&t);
        assert_int_equal(sensors_read(s, 1000), 0);
        assert_int_equal(s->n_policies, 2);
        assert_string_equal(s->policies[0].id, "policy0");
        assert_string_equal(s->policies[1].id, "policy4");
        assert_int_equal(s->policies[0].n_cpus, 4);
        assert_int_equal(s->policies[1].n_cpus, 2);
        assert_int_equal(s->policies[1].cpus[0], 4);
        assert_int_equal(s->policies[1].cpus[1], 5);
        assert_int_equal(s->policies[0].max_khz, 1416000);
        assert_int_equal(s->policies[1].cur_khz, 1800000);
        assert_false(s->policies[0].has_cpuinfo_cur);
        assert_true(s->policies[1].has_cpuinfo_cur);
        assert_int_equal(s->policies[1].cpuinfo_cur_khz, 1800000);
        assert_int_equal(s->board.cpus, 6);
        sensors_free(s);
        tree_free(&t);
}

static void put_cooling(const struct tree *t, int n, const char *type, const char *cur) {
        char rel[256], target[256];

        pathf(rel, sizeof(rel), "sys/devices/virtual/thermal/cooling_device%d/type", n);
        put(t, rel, type);
        pathf(rel, sizeof(rel), "sys/devices/virtual/thermal/cooling_device%d/cur_state", n);
        put(t, rel, cur);
        pathf(rel, sizeof(rel), "sys/devices/virtual/thermal/cooling_device%d/max_state", n);
        put(t, rel, "7\n");
        pathf(rel, sizeof(rel), "sys/class/thermal/cooling_device%d", n);
        pathf(target, sizeof(target), "../../devices/virtual/thermal/cooling_device%d", n);
        link_to(t, rel, target);
}

/* Throttled: a CPU cooling device of the policy is active; a spinning fan is not throttling. */
static void test_policy_throttled(void **state) {
        struct sensors *s;
        struct tree t;

        tree_new(&t);
        add_zone(&t, 0, "cpu-thermal\n", "45000\n");
        put_policy_files(&t, "sys/devices/system/cpu/cpufreq/policy0", "408000\n", "1416000\n");
        put_policy_files(&t, "sys/devices/system/cpu/cpufreq/policy4", "1800000\n", "1800000\n");
        put(&t, "sys/devices/system/cpu/cpufreq/policy0/related_cpus", "0 1 2 3\n");
        put(&t, "sys/devices/system/cpu/cpufreq/policy4/related_cpus", "4 5\n");
        put_cooling(&t, 0, "cpufreq-cpu0\n", "0\n");
        put_cooling(&t, 1, "cpufreq-cpu4\n", "2\n");
        put_cooling(&t, 2, "pwm-fan\n", "3\n");
        s = probe(&t);
        assert_int_equal(sensors_read(s, 1000), 0);
        assert_int_equal(s->n_policies, 2);
        assert_false(sensors_policy_throttled(s, &s->policies[0]));
        assert_true(sensors_policy_throttled(s, &s->policies[1]));

        /* vendor kernels count clusters: thermal-cpufreq-0 is the first policy */
        strcpy(s->cooling[1].type, "thermal-cpufreq-0");
        assert_true(sensors_policy_throttled(s, &s->policies[0]));
        assert_false(sensors_policy_throttled(s, &s->policies[1]));
        strcpy(s->cooling[1].type, "thermal-cpufreq-0x");
        assert_false(sensors_policy_throttled(s, &s->policies[0]));
        strcpy(s->cooling[1].type, "cpufreq-cpu5");
        assert_true(sensors_policy_throttled(s, &s->policies[1]));
        s->cooling[1].ok = false;                       /* a failed read says nothing */
        assert_false(sensors_policy_throttled(s, &s->policies[1]));
        sensors_free(s);
        tree_free(&t);
}

/*
 * Permission bits do not stop root, so as root the probe runs in a child
 * that dropped to nobody: cpuinfo_cur_freq (0400 on real kernels) is then
 * EACCES, which is normal, and an unreadable temperature file is kept as a
 * failed sensor.
 */
static int check_unreadable(const char *root) {
        struct sensors *s;
        const struct temp_sensor *z;
        int bad = 0;

        if (sensors_probe(root, root, &s) < 0)
                return 10;
        sensors_read(s, 1000);
        bad |= s->n_policies != 1 || s->policies[0].has_cpuinfo_cur || !s->policies[0].ok;
        bad |= (s->policies[0].cur_khz != 408000) << 1;
        z = s->n_temps == 2 ? &s->temps[1] : NULL;
        bad |= (!z || z->ok || z->error != EACCES || z->fd != -1) << 2;
        bad |= (!s->temps[0].ok) << 3;
        sensors_free(s);
        return bad;
}

static void test_unreadable_files(void **state) {
        struct tree t;
        char path[PATH_MAX];
        int status;
        pid_t pid;

        tree_new(&t);
        assert_int_equal(chmod(t.root, 0755), 0);
        put_policy_files(&t, "sys/devices/system/cpu/cpufreq/policy0", "408000\n", "1416000\n");
        put(&t, "sys/devices/system/cpu/cpufreq/policy0/cpuinfo_cur_freq", "408000\n");
        pathf(path, sizeof(path), "%s/sys/devices/system/cpu/cpufreq/policy0/cpuinfo_cur_freq", t.root);
        assert_int_equal(chmod(path, 0400), 0);
        add_zone(&t, 0, "cpu-thermal\n", "45000\n");
        add_zone(&t, 1, "locked\n", "45000\n");
        pathf(path, sizeof(path), "%s/sys/devices/virtual/thermal/thermal_zone1/temp", t.root);
        assert_int_equal(chmod(path, 0000), 0);

        if (geteuid() != 0) {
                assert_int_equal(check_unreadable(t.root), 0);
                tree_free(&t);
                return;
        }
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
                    setresuid(65534, 65534, 65534) < 0)
                        _exit(20);
                _exit(check_unreadable(t.root));
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        tree_free(&t);
}

/* ---- load ---- */

/* One jiffy of a load's total: /proc/stat counts USER_HZ (100 on Linux) a second and CPU. */
static void test_load_step(void **state) {
        (void) state;
        assert_int_equal(sysconf(_SC_CLK_TCK), 100);
        assert_float_equal(cpu_load_step(1000, 1), 0.01, 1e-12);
        assert_float_equal(cpu_load_step(1000, 4), 0.0025, 1e-12);
        assert_float_equal(cpu_load_step(100, 1), 0.1, 1e-12);
        assert_float_equal(cpu_load_step(5000, 8), 1.0 / 4000, 1e-12);
        assert_float_equal(cpu_load_step(5, 1), 1.0, 1e-12);      /* under a jiffy: busy or not */
        assert_float_equal(cpu_load_step(1000, 0), 1.0, 1e-12);
}

static void test_load_rates(void **state) {
        struct cpu_load *l;
        struct sensors *s;
        struct tree t;

        tree_new(&t);
        /* user nice system idle iowait irq softirq steal guest guest_nice */
        put(&t, "proc/stat",
            "cpu  100 0 100 800 0 0 0 0 0 0\n"
            "cpu0 50 0 50 400 0 0 0 0 0 0\n"
            "cpu1 50 0 50 400 0 0 0 0 0 0\n"
            "intr 12345 0 0 0\n"
            "ctxt 1000\n");
        s = probe(&t);
        l = &s->load;
        assert_int_equal(l->n_cpus, 2);
        assert_int_equal(sensors_read(s, 1000), 0);
        assert_true(l->ok);
        assert_false(l->have_prev);
        assert_true(l->total == 0.0);
        assert_true(l->per_cpu[0] == 0.0);

        /* cpu0: busy +100 of +200. cpu1: user +10 nice +10 system +10
         * irq +10 softirq +5 steal +5 = +50 busy, idle +40 iowait +60,
         * guest +999 (already inside user, so ignored): 50 of 150. */
        put(&t, "proc/stat",
            "cpu  270 10 160 940 60 10 5 5 999 0\n"
            "cpu0 150 0 50 500 0 0 0 0 0 0\n"
            "cpu1 60 10 60 440 60 10 5 5 999 0\n"
            "intr 12345 0 0 0\n");
        assert_int_equal(sensors_read(s, 2000), 0);
        assert_true(l->have_prev);
        assert_float_equal(l->per_cpu[0], 0.5, 1e-9);
        assert_float_equal(l->per_cpu[1], 50.0 / 150.0, 1e-9);
        /* total: busy 200 -> 460 (+260), total 1000 -> 1460 (+460) */
        assert_float_equal(l->total, 260.0 / 460.0, 1e-9);

        /* cpu1 goes offline: its row disappears, its slot stays at 0. */
        put(&t, "proc/stat",
            "cpu  370 10 160 1040 60 10 5 5 999 0\n"
            "cpu0 250 0 50 600 0 0 0 0 0 0\n"
            "intr 12345 0 0 0\n");
        assert_int_equal(sensors_read(s, 3000), 0);
        assert_int_equal(l->n_cpus, 2);
        assert_float_equal(l->per_cpu[0], 0.5, 1e-9);
        assert_true(l->per_cpu[1] == 0.0);

        /* Garbage: the load fails, alone. */
        put(&t, "proc/stat", "nothing here\n");
        assert_int_equal(sensors_read(s, 4000), 1);
        assert_false(l->ok);
        assert_int_equal(l->error, EBADMSG);
        sensors_free(s);
        tree_free(&t);
}

/* ---- board ---- */

static void test_board_device_tree(void **state) {
        struct sensors *s;
        struct tree t;

        tree_new(&t);
        put_bytes(&t, "proc/device-tree/model", "Hardkernel ODROID-C2\0", 21);
        put(&t, "proc/sys/kernel/osrelease", "3.14.79-117\n");
        put(&t, "proc/sys/kernel/hostname", "odroid64\n");
        put(&t, "sys/class/dmi/id/product_name", "not this one\n");
        for (int i = 0; i < 4; i++) {
                char rel[128];

                pathf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/online", i);
                put(&t, rel, "1\n");
        }
        s = probe(&t);
        assert_string_equal(s->board.model, "Hardkernel ODROID-C2");
        assert_string_equal(s->board.kernel, "3.14.79-117");
        assert_string_equal(s->board.hostname, "odroid64");
        assert_int_equal(s->board.cpus, 4);
        /* A tree without temperatures or load is not an error. */
        assert_int_equal(s->n_temps, 0);
        assert_int_equal(sensors_read(s, 1000), 0);
        assert_null(sensors_hottest(s));
        assert_false(sensors_lowest_hot_trip(s, NULL));
        sensors_free(s);
        tree_free(&t);
}

static void test_board_fallbacks(void **state) {
        struct sensors *s;
        struct tree t;

        tree_new(&t);
        put_bytes(&t, "sys/firmware/devicetree/base/model", "Raspberry Pi 4 Model B Rev 1.4\0", 31);
        put(&t, "sys/devices/system/cpu/possible", "0-5\n");
        s = probe(&t);
        assert_string_equal(s->board.model, "Raspberry Pi 4 Model B Rev 1.4");
        assert_string_equal(s->board.kernel, "");
        assert_int_equal(s->board.cpus, 6);
        sensors_free(s);
        tree_free(&t);

        tree_new(&t);
        put(&t, "sys/class/dmi/id/product_name", "Swift SF114-32\n");
        s = probe(&t);
        assert_string_equal(s->board.model, "Swift SF114-32");
        assert_int_equal(s->board.cpus, 1);
        sensors_free(s);
        tree_free(&t);
}

/* ---- every fixture board under FIXTURES_DIR ---- */

static void probe_fixture(const char *root) {
        struct sensors *s = NULL;
        size_t good = 0;
        int r;

        r = sensors_probe(root, root, &s);
        if (r < 0)
                print_message("%s: probe failed: %s\n", root, strerror(-r));
        assert_int_equal(r, 0);
        assert_true(sensors_read(s, 1000) >= 0);
        r = sensors_read(s, 2000);
        for (size_t i = 0; i < s->n_temps; i++) {
                if (s->temps[i].ok)
                        good++;
                else
                        print_message("%s: %s: %s\n", root, s->temps[i].id, strerror(s->temps[i].error));
        }
        print_message("%s: %zu temperatures (%zu ok), %zu cooling, %zu policies, %d failed\n",
                      root, s->n_temps, good, s->n_cooling, s->n_policies, r);
        assert_true(r >= 0);
        assert_true(s->n_temps >= 1);
        assert_true(good >= 1);
        assert_true(s->board.cpus >= 1);
        sensors_free(s);
}

static void test_fixtures(void **state) {
        const char *dir = getenv("FIXTURES_DIR");
        struct dirent *de;
        size_t n = 0;
        DIR *d = NULL;

        if (!dir || !(d = opendir(dir))) {
                print_message("FIXTURES_DIR not set or missing, nothing to check\n");
                skip();
        }
        while ((de = readdir(d))) {
                char root[PATH_MAX], sys[PATH_MAX];
                struct stat st;

                if (de->d_name[0] == '.')
                        continue;
                pathf(root, sizeof(root), "%s/%s", dir, de->d_name);
                pathf(sys, sizeof(sys), "%s/sys", root);
                if (stat(sys, &st) < 0 || !S_ISDIR(st.st_mode))
                        continue;
                probe_fixture(root);
                n++;
        }
        closedir(d);
        print_message("%zu fixture trees\n", n);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_hwmon_basic_and_limits),
                cmocka_unit_test(test_hwmon_no_name),
                cmocka_unit_test(test_hwmon_device_attrs),
                cmocka_unit_test(test_hwmon_trailing_slash),
                cmocka_unit_test(test_hwmon_same_name),
                cmocka_unit_test(test_hwmon_reorder),
                cmocka_unit_test(test_cpufreq_legacy),
                cmocka_unit_test(test_cpufreq_modern),
                cmocka_unit_test(test_policy_throttled),
                cmocka_unit_test(test_unreadable_files),
                cmocka_unit_test(test_load_step),
                cmocka_unit_test(test_load_rates),
                cmocka_unit_test(test_board_device_tree),
                cmocka_unit_test(test_board_fallbacks),
                cmocka_unit_test(test_fixtures),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
