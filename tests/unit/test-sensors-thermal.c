/* test-sensors-thermal.c — unit tests for thermal zones and reads: parsers, read errors, recovery, slow sensors. */
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
#include "sysfs-util.h"
#include "test-sensors.h"

/* ---- parsing ---- */

/* The hand-written parsers at their edges: the first 18 digits go
 * unchecked, so every width around that must still be exact or -ERANGE. */
static void test_parse_numbers(void **state) {
        long long ll;
        uint64_t u;
        uint32_t khz;

        (void) state;
        assert_int_equal(sysfs_parse_ll(" 999999999999999999\n", &ll), 0);     /* 18 digits */
        assert_true(ll == 999999999999999999LL);
        assert_int_equal(sysfs_parse_ll("9223372036854775807", &ll), 0);
        assert_true(ll == LLONG_MAX);
        assert_int_equal(sysfs_parse_ll("-9223372036854775808\n", &ll), 0);
        assert_true(ll == LLONG_MIN);
        assert_int_equal(sysfs_parse_ll("9223372036854775808", &ll), -ERANGE);
        assert_int_equal(sysfs_parse_ll("-9223372036854775809", &ll), -ERANGE);
        assert_int_equal(sysfs_parse_ll("92233720368547758070", &ll), -ERANGE);
        assert_int_equal(sysfs_parse_ll("9999999999999999999", &ll), -ERANGE);      /* 19 nines */
        assert_int_equal(sysfs_parse_ll("000000000000000000000042", &ll), 0);   /* leading zeros past 18 */
        assert_true(ll == 42);
        assert_int_equal(sysfs_parse_ll("+7 ", &ll), 0);
        assert_true(ll == 7);
        assert_int_equal(sysfs_parse_ll("-", &ll), -EBADMSG);
        assert_int_equal(sysfs_parse_ll("12 3", &ll), -EBADMSG);
        assert_int_equal(sysfs_parse_ll("99999999999999999999x", &ll), -EBADMSG);

        assert_int_equal(sysfs_parse_u64("18446744073709551615\n", &u), 0);
        assert_true(u == UINT64_MAX);
        assert_int_equal(sysfs_parse_u64("18446744073709551616", &u), -ERANGE);
        assert_int_equal(sysfs_parse_u64("1000000000000000000", &u), 0);       /* 19 digits */
        assert_true(u == 1000000000000000000ULL);
        assert_int_equal(sysfs_parse_u64("-1", &u), -EBADMSG);

        assert_int_equal(sysfs_parse_khz("1536000\n", &khz), 0);
        assert_int_equal(khz, 1536000);
        assert_int_equal(sysfs_parse_khz("4294967295", &khz), 0);
        assert_true(khz == UINT32_MAX);
        assert_int_equal(sysfs_parse_khz("4294967296", &khz), -ERANGE);
}

static void test_parse_temp(void **state) {
        int32_t mc;
        bool quirk;

        assert_int_equal(sensors_parse_temp("43000\n", &mc, &quirk), 0);
        assert_int_equal(mc, 43000);
        assert_false(quirk);
        assert_int_equal(sensors_parse_temp("43\n", &mc, &quirk), 0);
        assert_int_equal(mc, 43000);
        assert_true(quirk);
        assert_int_equal(sensors_parse_temp("31", &mc, &quirk), 0);
        assert_int_equal(mc, 31000);
        assert_true(quirk);
        assert_int_equal(sensors_parse_temp("-44000\n", &mc, &quirk), 0);
        assert_int_equal(mc, -44000);
        assert_false(quirk);
        assert_int_equal(sensors_parse_temp("0\n", &mc, &quirk), 0);
        assert_int_equal(mc, 0);
        assert_false(quirk);
        assert_int_equal(sensors_parse_temp("", &mc, &quirk), -EBADMSG);
        assert_int_equal(sensors_parse_temp("\n", &mc, &quirk), -EBADMSG);
        assert_int_equal(sensors_parse_temp("abc", &mc, &quirk), -EBADMSG);
        assert_int_equal(sensors_parse_temp("43abc", &mc, &quirk), -EBADMSG);
        assert_int_equal(sensors_parse_temp("N/A\n", &mc, &quirk), -EBADMSG);
        assert_int_equal(sensors_parse_temp("65261850\n", &mc, &quirk), -ERANGE);
        assert_int_equal(sensors_parse_temp("-273150\n", &mc, &quirk), -ERANGE);
        assert_int_equal(sensors_parse_temp("1000001", &mc, &quirk), -ERANGE);
        assert_int_equal(sensors_parse_temp("99999999999999999999999", &mc, &quirk), -ERANGE);

        assert_true(sensors_temp_is_sentinel(65261850));
        assert_true(sensors_temp_is_sentinel(-273150));
        assert_true(sensors_temp_is_sentinel(1000001));
        assert_false(sensors_temp_is_sentinel(1000000));
        assert_false(sensors_temp_is_sentinel(105000));
        assert_false(sensors_temp_is_sentinel(-44000));
}

/* ---- thermal ---- */

static void test_whole_degree_quirk(void **state) {
        const struct temp_sensor *z0, *z1;
        struct sensors *s;
        struct tree t;

        tree_new(&t);
        add_zone(&t, 0, "soc_thermal\n", "43\n");      /* Amlogic 3.14 vendor kernel */
        add_zone(&t, 1, "cpu-thermal\n", "50000\n");
        put(&t, "sys/devices/virtual/thermal/thermal_zone0/trip_point_0_temp", "70\n");
        put(&t, "sys/devices/virtual/thermal/thermal_zone0/trip_point_0_type", "passive\n");
        put(&t, "sys/devices/virtual/thermal/thermal_zone0/trip_point_0_hyst", "1\n");
        s = probe(&t);
        assert_int_equal(sensors_read(s, 1000), 0);
        z0 = find(s, "thermal_zone0");
        z1 = find(s, "thermal_zone1");
        assert_non_null(z0);
        assert_non_null(z1);
        assert_true(z0->ok);
        assert_int_equal(z0->temp_mc, 43000);
        assert_true(z0->unit_quirk);
        assert_int_equal(z0->trips[0].temp_mc, 70000);
        assert_true(z0->trips[0].has_hyst);
        assert_int_equal(z0->trips[0].hyst_mc, 1000);
        assert_false(z1->unit_quirk);

        /* Sticky both ways: a degree zone stays in degrees below 0 C, a
         * millidegree zone at 0.5 C is not read as 500 C. */
        put(&t, "sys/devices/virtual/thermal/thermal_zone0/temp", "-5\n");
        put(&t, "sys/devices/virtual/thermal/thermal_zone1/temp", "500\n");
        assert_int_equal(sensors_read(s, 2000), 0);
        assert_int_equal(z0->temp_mc, -5000);
        assert_true(z0->unit_quirk);
        assert_int_equal(z1->temp_mc, 500);
        assert_false(z1->unit_quirk);
        sensors_free(s);
        tree_free(&t);
}

static void test_negative_temp(void **state) {
        const struct temp_sensor *z;
        struct sensors *s;
        struct tree t;

        tree_new(&t);
        add_zone(&t, 2, "SEN2\n", "-44000\n");
        s = probe(&t);
        assert_int_equal(sensors_read(s, 1000), 0);
        z = find(s, "thermal_zone2");
        assert_non_null(z);
        assert_true(z->ok);
        assert_int_equal(z->temp_mc, -44000);
        assert_false(z->unit_quirk);
        assert_string_equal(z->type, "SEN2");
        sensors_free(s);
        tree_free(&t);
}

static void test_trips_and_cooling(void **state) {
        const char *zd = "sys/devices/virtual/thermal/thermal_zone0";
        const struct temp_sensor *z;
        struct sensors *s;
        struct tree t;
        char rel[256];
        int32_t low;

        tree_new(&t);
        add_zone(&t, 0, "soc_thermal\n", "45000\n");
        add_zone(&t, 1, "gpu_thermal\n", "52000\n");
        put(&t, "sys/devices/virtual/thermal/thermal_zone0/mode", "enabled\n");
        const char *types[] = { "passive", "passive", "hot", "critical", "critical" };
        const char *temps[] = { "70000", "80000", "90000", "110000", "65261850" };
        for (int i = 0; i < 5; i++) {
                pathf(rel, sizeof(rel), "%s/trip_point_%d_type", zd, i);
                put(&t, rel, types[i]);
                pathf(rel, sizeof(rel), "%s/trip_point_%d_temp", zd, i);
                put(&t, rel, temps[i]);
                if (i != 1) {
                        pathf(rel, sizeof(rel), "%s/trip_point_%d_hyst", zd, i);
                        put(&t, rel, "2000\n");
                }
        }
        put(&t, "sys/devices/virtual/thermal/cooling_device3/type", "thermal-cpufreq-0\n");
        put(&t, "sys/devices/virtual/thermal/cooling_device3/cur_state", "0\n");
        put(&t, "sys/devices/virtual/thermal/cooling_device3/max_state", "5\n");
        link_to(&t, "sys/class/thermal/cooling_device3", "../../devices/virtual/thermal/cooling_device3/");

        s = probe(&t);
        assert_int_equal(sensors_read(s, 1000), 0);
        z = find(s, "thermal_zone0");
        assert_non_null(z);
        assert_string_equal(z->mode, "enabled");
        assert_int_equal(z->n_trips, 5);
        assert_int_equal(z->trips[2].index, 2);
        assert_string_equal(z->trips[2].type, "hot");
        assert_int_equal(z->trips[2].temp_mc, 90000);
        assert_true(z->trips[0].has_hyst);
        assert_false(z->trips[1].has_hyst);
        assert_false(z->trips[4].has_temp);           /* sentinel: absent */
        assert_true(sensors_lowest_hot_trip(s, &low));
        assert_int_equal(low, 90000);
        assert_string_equal(sensors_hottest(s)->id, "thermal_zone1");

        assert_int_equal(s->n_cooling, 1);
        assert_string_equal(s->cooling[0].id, "cooling_device3");
        assert_string_equal(s->cooling[0].type, "thermal-cpufreq-0");
        assert_int_equal(s->cooling[0].max_state, 5);
        assert_int_equal(s->cooling[0].cur_state, 0);
        put(&t, "sys/devices/virtual/thermal/cooling_device3/cur_state", "3\n");
        assert_int_equal(sensors_read(s, 2000), 0);
        assert_int_equal(s->cooling[0].cur_state, 3);
        assert_true(s->cooling[0].ok);
        sensors_free(s);
        tree_free(&t);
}

/* ---- read errors ---- */

static void test_garbage_then_recover(void **state) {
        const char *f = "sys/devices/virtual/thermal/thermal_zone0/temp";
        const struct temp_sensor *z;
        struct sensors *s;
        struct tree t;

        tree_new(&t);
        add_zone(&t, 0, "cpu-thermal\n", "45000\n");
        add_zone(&t, 1, "gpu-thermal\n", "40000\n");
        s = probe(&t);
        z = find(s, "thermal_zone0");
        assert_non_null(z);
        assert_false(z->ok);                    /* not read yet */
        assert_int_equal(z->last_good_ms, 0);
        assert_int_equal(sensors_read(s, 1000), 0);
        assert_true(z->ok);
        assert_int_equal(z->last_good_ms, 1000);
        assert_true(s->read_ns > 0);                    /* two preads take some time */

        put(&t, f, "garbage\n");
        assert_int_equal(sensors_read(s, 2000), 1);     /* the tick goes on */
        assert_false(z->ok);
        assert_int_equal(z->error, EBADMSG);
        assert_int_equal(z->temp_mc, 45000);
        assert_int_equal(z->last_good_ms, 1000);
        assert_true(find(s, "thermal_zone1")->ok);
        assert_false(s->need_reprobe);

        put(&t, f, "");
        assert_int_equal(sensors_read(s, 3000), 1);
        assert_int_equal(z->error, EBADMSG);
        assert_int_equal(z->last_good_ms, 1000);

        put(&t, f, "46000\n");
        assert_int_equal(sensors_read(s, 4000), 0);
        assert_true(z->ok);
        assert_int_equal(z->error, 0);
        assert_int_equal(z->temp_mc, 46000);
        assert_int_equal(z->last_good_ms, 4000);
        assert_int_equal(z->read_errors, 2);            /* the garbage and the empty read */
        assert_int_equal(find(s, "thermal_zone1")->read_errors, 0);
        sensors_free(s);
        tree_free(&t);
}

/* A real EIO from pread: /proc/self/mem has nothing mapped at offset 0. */
static void test_read_eio(void **state) {
        const struct temp_sensor *z;
        struct sensors *s;
        struct tree t;

        tree_new(&t);
        add_zone(&t, 0, "cpu-thermal\n", "45000\n");
        put(&t, "sys/devices/virtual/thermal/thermal_zone1/type", "broken\n");
        link_to(&t, "sys/devices/virtual/thermal/thermal_zone1/temp", "/proc/self/mem");
        link_to(&t, "sys/class/thermal/thermal_zone1", "../../devices/virtual/thermal/thermal_zone1");
        s = probe(&t);
        assert_int_equal(sensors_read(s, 1000), 1);
        z = find(s, "thermal_zone1");
        assert_non_null(z);
        assert_false(z->ok);
        assert_int_equal(z->error, EIO);
        assert_false(s->need_reprobe);
        assert_true(find(s, "thermal_zone0")->ok);
        sensors_free(s);
        tree_free(&t);
}

static void test_removed_then_reprobe(void **state) {
        const struct temp_sensor *z;
        struct sensors *s;
        struct tree t;
        char path[PATH_MAX];

        tree_new(&t);
        add_zone(&t, 0, "cpu-thermal\n", "45000\n");
        add_zone(&t, 1, "gpu-thermal\n", "40000\n");
        s = probe(&t);
        assert_true(s->check_unlinked);
        assert_int_equal(sensors_read(s, 1000), 0);

        pathf(path, sizeof(path), "%s/sys/devices/virtual/thermal/thermal_zone1/temp", t.root);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(sensors_read(s, 2000), 1);
        z = find(s, "thermal_zone1");
        assert_false(z->ok);
        assert_int_equal(z->error, ENOENT);
        assert_int_equal(z->temp_mc, 40000);
        assert_int_equal(z->last_good_ms, 1000);
        assert_true(s->need_reprobe);

        ((struct temp_sensor *) find(s, "thermal_zone0"))->read_errors = 7;    /* as if it had failed before */
        assert_int_equal(sensors_reprobe(&s), 0);
        assert_false(s->need_reprobe);
        assert_int_equal(s->n_temps, 1);
        assert_int_equal(s->n_missing, 1);              /* looked for again while it is gone */
        assert_string_equal(s->missing[0], "thermal_zone1");
        z = find(s, "thermal_zone0");
        assert_non_null(z);
        assert_int_equal(z->temp_mc, 45000);            /* carried over by id */
        assert_int_equal(z->read_errors, 7);            /* a counter does not restart on re-probe */
        assert_int_equal(z->last_good_ms, 2000);
        assert_int_equal(s->time_ms, 2000);
        assert_int_equal(sensors_read(s, 3000), 0);
        assert_int_equal(z->last_good_ms, 3000);

        /* Still gone at the next re-probe: still missing, once. */
        assert_int_equal(sensors_reprobe(&s), 0);
        assert_int_equal(s->n_missing, 1);

        /* It comes back (hot-plug): found again by the next re-probe. */
        put(&t, "sys/devices/virtual/thermal/thermal_zone1/temp", "41000\n");
        assert_int_equal(sensors_reprobe(&s), 0);
        assert_int_equal(s->n_temps, 2);
        assert_int_equal(s->n_missing, 0);
        assert_int_equal(sensors_read(s, 4000), 0);
        assert_int_equal(find(s, "thermal_zone1")->temp_mc, 41000);
        sensors_free(s);
        tree_free(&t);
}

/* A caller that polls the watch itself: the reads leave the inotify fd
 * alone, and a deletion it drained is seen by the next read. */
static void test_removed_watch_polled(void **state) {
        const struct temp_sensor *z;
        struct sensors *s;
        struct tree t;
        char path[PATH_MAX];
        struct pollfd pfd;

        tree_new(&t);
        add_zone(&t, 0, "cpu-thermal\n", "45000\n");
        add_zone(&t, 1, "gpu-thermal\n", "40000\n");
        s = probe(&t);
        assert_true(sensors_watch_fd(s) >= 0);
        sensors_watch_polled(s);
        assert_int_equal(sensors_read(s, 1000), 0);

        pathf(path, sizeof(path), "%s/sys/devices/virtual/thermal/thermal_zone1/temp", t.root);
        assert_int_equal(unlink(path), 0);
        pfd = (struct pollfd) { .fd = sensors_watch_fd(s), .events = POLLIN };
        assert_int_equal(poll(&pfd, 1, 5000), 1);       /* not read by sensors_read() */
        assert_int_equal(poll(&pfd, 1, 0), 1);
        sensors_watch_drain(s);
        assert_int_equal(poll(&pfd, 1, 0), 0);
        assert_int_equal(sensors_read(s, 2000), 1);
        z = find(s, "thermal_zone1");
        assert_false(z->ok);
        assert_int_equal(z->error, ENOENT);
        assert_true(s->need_reprobe);
        sensors_free(s);
        tree_free(&t);
}

/* A FIFO planted at a sensor path (by accident or on purpose) must not
 * block the probe in open() or a read: it is refused as not a regular file.
 * alarm() turns a hang into a failure instead of a test timeout. */
static void test_fifo_refused(void **state) {
        const struct temp_sensor *z;
        struct sensors *s;
        struct tree t;
        char path[PATH_MAX];

        tree_new(&t);
        add_zone(&t, 0, "cpu-thermal\n", "45000\n");
        add_zone(&t, 1, "gpu-thermal\n", "40000\n");
        pathf(path, sizeof(path), "%s/sys/devices/virtual/thermal/thermal_zone1/temp", t.root);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(mkfifo(path, 0644), 0);
        pathf(path, sizeof(path), "%s/sys/devices/virtual/thermal/thermal_zone0/trip_point_0_temp", t.root);
        assert_int_equal(mkfifo(path, 0644), 0);
        pathf(path, sizeof(path), "%s/proc", t.root);
        mkdir_p(path);
        pathf(path, sizeof(path), "%s/proc/stat", t.root);
        assert_int_equal(mkfifo(path, 0644), 0);

        alarm(10);
        s = probe(&t);
        assert_int_equal(sensors_read(s, 1000), 2);     /* the FIFO zone and the FIFO /proc/stat */
        alarm(0);
        z = find(s, "thermal_zone0");
        assert_true(z->ok);
        assert_int_equal(z->temp_mc, 45000);
        assert_int_equal(z->n_trips, 1);
        assert_false(z->trips[0].has_temp);
        z = find(s, "thermal_zone1");
        assert_non_null(z);
        assert_false(z->ok);
        assert_int_equal(z->error, EBADFD);
        assert_false(s->load.ok);
        sensors_free(s);
        tree_free(&t);
}

/* The thermal core's hwmon under thermal_zoneN repeats the zone: marked, and
 * never picked as the hottest. A chip elsewhere with a similar name is not. */
static void test_hwmon_mirror(void **state) {
        const struct temp_sensor *m, *o;
        struct sensors *s;
        struct tree t;

        tree_new(&t);
        add_zone(&t, 0, "cpu-thermal\n", "45000\n");
        add_zone(&t, 1, "gpu-thermal\n", "40000\n");
        put(&t, "sys/devices/virtual/thermal/thermal_zone0/hwmon0/name", "cpu_thermal\n");
        put(&t, "sys/devices/virtual/thermal/thermal_zone0/hwmon0/temp1_input", "46000\n");
        link_to(&t, "sys/class/hwmon/hwmon0", "../../devices/virtual/thermal/thermal_zone0/hwmon0");
        put(&t, "sys/devices/platform/other/hwmon/hwmon1/name", "gpu_thermal\n");
        put(&t, "sys/devices/platform/other/hwmon/hwmon1/temp1_input", "41000\n");
        link_to(&t, "sys/class/hwmon/hwmon1", "../../devices/platform/other/hwmon/hwmon1");
        s = probe(&t);
        assert_int_equal(sensors_read(s, 1000), 0);
        m = find(s, "hwmon:cpu_thermal/temp1");
        o = find(s, "hwmon:gpu_thermal/temp1");
        assert_non_null(m);
        assert_non_null(o);
        assert_string_equal(m->mirror_of, "thermal_zone0");
        assert_string_equal(o->mirror_of, "");
        assert_string_equal(find(s, "thermal_zone0")->mirror_of, "");
        /* the mirror reads 46 C (read a moment later), the zone 45 C */
        assert_string_equal(sensors_hottest(s)->id, "thermal_zone0");
        assert_true(m->read_us_max >= m->read_us);
        sensors_free(s);
        tree_free(&t);
}

/*
 * A chip that answers after 50 ms (a FUSE directory served by slowfs, a
 * helper process): the probe times it slow and hands it to the reader
 * thread. From its third read on slowfs holds every read until the gate
 * file exists, so sensors_read() returning while the gate is shut shows the
 * tick never waits for the chip (alarm() turns a wait into a failure);
 * once the gate opens the value arrives through the thread.
 */
static struct {
        char mnt[PATH_MAX], gate[PATH_MAX];
        pid_t pid;
} slowfs_run;

/* Also after a failed assertion: open the gate (a held read finishes),
 * unmount, reap slowfs, so nothing is left mounted or running. */
static int slowfs_teardown(void **state) {
        char cmd[PATH_MAX + 64];
        FILE *f;

        if (slowfs_run.pid <= 0)
                return 0;
        f = fopen(slowfs_run.gate, "w");
        if (f)
                fclose(f);
        snprintf(cmd, sizeof(cmd), "fusermount3 -u '%s' 2>/dev/null", slowfs_run.mnt);
        if (system(cmd) != 0)
                kill(slowfs_run.pid, SIGTERM);
        waitpid(slowfs_run.pid, NULL, 0);
        slowfs_run.pid = 0;
        return 0;
}

static void test_slow_sensor_thread(void **state) {
        const char *slowfs = getenv("SLOWFS");
        char *mnt = slowfs_run.mnt, *gate = slowfs_run.gate, probe_path[PATH_MAX];
        const struct temp_sensor *slow, *zone;
        struct sensors *s;
        struct tree t;
        int status, ok = 0;
        pid_t pid;

        if (!slowfs || !slowfs[0] || access("/dev/fuse", R_OK | W_OK) != 0)
                skip();
        tree_new(&t);
        add_zone(&t, 0, "cpu-thermal\n", "45000\n");
        pathf(mnt, sizeof(slowfs_run.mnt), "%s/sys/devices/platform/slow/hwmon/hwmon0", t.root);
        mkdir_p(mnt);
        link_to(&t, "sys/class/hwmon/hwmon0", "../../devices/platform/slow/hwmon/hwmon0");
        pathf(gate, sizeof(slowfs_run.gate), "%s/gate", t.root);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                /* not the test's stdout: a runner waits for that pipe to close */
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);

                dup2(null, 1);
                dup2(null, 2);
                execl(slowfs, "slowfs", mnt, gate, (char *) NULL);
                _exit(127);
        }
        slowfs_run.pid = pid;
        pathf(probe_path, sizeof(probe_path), "%s/name", mnt);
        for (int i = 0; i < 500 && access(probe_path, F_OK) != 0; i++) {
                if (waitpid(pid, &status, WNOHANG) == pid) {
                        slowfs_run.pid = 0;
                        tree_free(&t);
                        skip();                 /* FUSE cannot mount here */
                }
                usleep(10000);
        }
        assert_int_equal(access(probe_path, F_OK), 0);

        alarm(20);
        s = probe(&t);
        slow = find(s, "hwmon:slowchip/temp1");
        zone = find(s, "thermal_zone0");
        assert_non_null(slow);
        assert_true(slow->slow);
        assert_true(slow->read_us_max >= 50000);        /* slowfs sleeps 50 ms a read */
        assert_false(zone->slow);

        /* The gate is shut: the thread's read is held, the tick is not. */
        for (int k = 0; k < 3; k++) {
                assert_int_equal(sensors_read(s, 1000 + k), 1);
                assert_true(zone->ok);
                assert_false(slow->ok);
        }
        /* Open the gate: the value comes through the thread. */
        put(&t, "gate", "");
        for (int k = 0; k < 500 && !ok; k++) {
                sensors_read(s, 2000 + k);
                ok = slow->ok;
                if (!ok)
                        usleep(10000);
        }
        assert_true(ok);
        assert_int_equal(slow->temp_mc, 45000);
        /* the tick that asked for the read that was held */
        assert_true(slow->last_good_ms >= 1000);
        sensors_free(s);
        alarm(0);
        slowfs_teardown(NULL);
        tree_free(&t);
}

static void test_bad_root(void **state) {
        struct sensors *s = NULL;

        assert_int_equal(sensors_probe("/nonexistent/heatcurve-root", "/nonexistent/heatcurve-root", &s), -ENOENT);
        assert_null(s);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_numbers),
                cmocka_unit_test(test_parse_temp),
                cmocka_unit_test(test_whole_degree_quirk),
                cmocka_unit_test(test_negative_temp),
                cmocka_unit_test(test_trips_and_cooling),
                cmocka_unit_test(test_garbage_then_recover),
                cmocka_unit_test(test_read_eio),
                cmocka_unit_test(test_removed_then_reprobe),
                cmocka_unit_test(test_removed_watch_polled),
                cmocka_unit_test(test_bad_root),
                cmocka_unit_test_teardown(test_slow_sensor_thread, slowfs_teardown),
                cmocka_unit_test(test_hwmon_mirror),
                cmocka_unit_test(test_fifo_refused),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
