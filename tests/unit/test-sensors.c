/* test-sensors.c — unit tests for the sensors library on small sysfs/procfs trees built per test. */
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

/* ---- helpers: a throw-away tree per test ---- */

struct tree {
        char root[PATH_MAX];
};

__attribute__((format(printf, 3, 4)))
static void pathf(char *buf, size_t size, const char *fmt, ...) {
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(buf, size, fmt, ap);
        va_end(ap);
        assert_true(n > 0 && (size_t) n < size);
}

static void mkdir_p(const char *path) {
        char tmp[PATH_MAX];

        pathf(tmp, sizeof(tmp), "%s", path);
        for (char *p = tmp + 1; *p; p++)
                if (*p == '/') {
                        *p = '\0';
                        assert_true(mkdir(tmp, 0755) == 0 || errno == EEXIST);
                        *p = '/';
                }
        assert_true(mkdir(tmp, 0755) == 0 || errno == EEXIST);
}

static void mkdir_parent(const char *path) {
        char tmp[PATH_MAX];
        char *slash;

        pathf(tmp, sizeof(tmp), "%s", path);
        slash = strrchr(tmp, '/');
        assert_non_null(slash);
        *slash = '\0';
        mkdir_p(tmp);
}

/* Writes len bytes in place (same inode, like the kernel's own attributes change). */
static void put_bytes(const struct tree *t, const char *rel, const char *data, size_t len) {
        char path[PATH_MAX];
        FILE *f;

        pathf(path, sizeof(path), "%s/%s", t->root, rel);
        mkdir_parent(path);
        f = fopen(path, "w");
        assert_non_null(f);
        assert_int_equal(fwrite(data, 1, len, f), len);
        assert_int_equal(fclose(f), 0);
}

static void put(const struct tree *t, const char *rel, const char *text) {
        put_bytes(t, rel, text, strlen(text));
}

static void link_to(const struct tree *t, const char *rel, const char *target) {
        char path[PATH_MAX];

        pathf(path, sizeof(path), "%s/%s", t->root, rel);
        mkdir_parent(path);
        assert_int_equal(symlink(target, path), 0);
}

static void tree_new(struct tree *t) {
        char sys[PATH_MAX];

        pathf(t->root, sizeof(t->root), "%s/test-sensors-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        assert_non_null(mkdtemp(t->root));
        pathf(sys, sizeof(sys), "%s/sys", t->root);
        mkdir_p(sys);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(path);
}

static void tree_free(struct tree *t) {
        assert_int_equal(nftw(t->root, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

static const struct temp_sensor *find(const struct sensors *s, const char *id) {
        for (size_t i = 0; i < s->n_temps; i++)
                if (strcmp(s->temps[i].id, id) == 0)
                        return &s->temps[i];
        print_message("no sensor %s among:\n", id);
        for (size_t i = 0; i < s->n_temps; i++)
                print_message("  %s\n", s->temps[i].id);
        return NULL;
}

static struct sensors *probe(const struct tree *t) {
        struct sensors *s = NULL;

        assert_int_equal(sensors_probe(t->root, t->root, &s), 0);
        assert_non_null(s);
        return s;
}

/* A thermal zone the way the kernel lays it out: class symlink into devices/virtual. */
static void add_zone(const struct tree *t, int n, const char *type, const char *temp) {
        char rel[256], target[256];

        pathf(rel, sizeof(rel), "sys/devices/virtual/thermal/thermal_zone%d/type", n);
        put(t, rel, type);
        pathf(rel, sizeof(rel), "sys/devices/virtual/thermal/thermal_zone%d/temp", n);
        put(t, rel, temp);
        pathf(rel, sizeof(rel), "sys/class/thermal/thermal_zone%d", n);
        pathf(target, sizeof(target), "../../devices/virtual/thermal/thermal_zone%d", n);
        link_to(t, rel, target);
}

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
        z = find(s, "thermal_zone0");
        assert_non_null(z);
        assert_int_equal(z->temp_mc, 45000);            /* carried over by id */
        assert_int_equal(z->read_errors, 7);            /* a counter does not restart on re-probe */
        assert_int_equal(z->last_good_ms, 2000);
        assert_int_equal(s->time_ms, 2000);
        assert_int_equal(sensors_read(s, 3000), 0);
        assert_int_equal(z->last_good_ms, 3000);

        /* It comes back (hot-plug): found again by the next re-probe. */
        put(&t, "sys/devices/virtual/thermal/thermal_zone1/temp", "41000\n");
        assert_int_equal(sensors_reprobe(&s), 0);
        assert_int_equal(s->n_temps, 2);
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
