/* test-simulate.c — unit tests for the simulated board (sensors/simulate.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "simulate.h"
#include "test-util.h"

struct fx {
        char base[PATH_MAX];            /* everything the test makes lives here */
        char boards[PATH_MAX];          /* boards_dir */
        char hostproc[PATH_MAX];        /* fake host procfs: only stat */
        char outside[PATH_MAX];         /* a file a fixture symlink points at */
        char tmpdir[PATH_MAX];          /* TMPDIR for the simulator's copies */
        unsigned long long busy, idle;  /* jiffies in the fake stat */
};

/* ---- helpers ---- */

/* snprintf for paths, failing the test rather than truncating. */
__attribute__((format(printf, 3, 4)))
static void pathf(char *buf, size_t size, const char *fmt, ...) {
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(buf, size, fmt, ap);
        va_end(ap);
        assert_true(n >= 0 && (size_t) n < size);
}

/* Not every cmocka has assert_double_equal; this one prints both values. */
#define assert_near(a, b, eps) assert_near_at((a), (b), (eps), __FILE__, __LINE__)

static void assert_near_at(double a, double b, double eps, const char *file, int line) {
        if (!(fabs(a - b) <= eps)) {
                print_error("%.12f != %.12f (within %g)\n", a, b, eps);
                _fail(file, line);
        }
}

static void mkdirs(const char *path) {
        char buf[PATH_MAX];

        snprintf(buf, sizeof buf, "%s", path);
        for (char *p = buf + 1; *p; p++)
                if (*p == '/') {
                        *p = '\0';
                        mkdir(buf, 0755);
                        *p = '/';
                }
        mkdir(buf, 0755);
}

__attribute__((format(printf, 2, 3)))
static void put(const char *text, const char *fmt, ...) {
        char path[PATH_MAX], dir[PATH_MAX], *slash;
        va_list ap;
        FILE *f;

        va_start(ap, fmt);
        vsnprintf(path, sizeof path, fmt, ap);
        va_end(ap);
        snprintf(dir, sizeof dir, "%s", path);
        slash = strrchr(dir, '/');
        *slash = '\0';
        mkdirs(dir);
        f = fopen(path, "we");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

__attribute__((format(printf, 2, 3)))
static void link_to(const char *target, const char *fmt, ...) {
        char path[PATH_MAX], dir[PATH_MAX];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(path, sizeof path, fmt, ap);
        va_end(ap);
        snprintf(dir, sizeof dir, "%s", path);
        *strrchr(dir, '/') = '\0';
        mkdirs(dir);
        assert_int_equal(symlink(target, path), 0);
}

__attribute__((format(printf, 3, 4)))
static int get(char *buf, size_t size, const char *fmt, ...) {
        char path[PATH_MAX];
        va_list ap;
        ssize_t n;
        int fd;

        va_start(ap, fmt);
        vsnprintf(path, sizeof path, fmt, ap);
        va_end(ap);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = read(fd, buf, size - 1);
        close(fd);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        return 0;
}

__attribute__((format(printf, 2, 3)))
static long get_long(const struct simulator *s, const char *fmt, ...) {
        char rel[PATH_MAX], buf[64];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(rel, sizeof rel, fmt, ap);
        va_end(ap);
        assert_int_equal(get(buf, sizeof buf, "%s/%s", simulator_sysfs_root(s), rel), 0);
        return strtol(buf, NULL, 10);
}

/* Rewrites the fake stat in place (same inode), like the kernel's. */
static void set_stat(struct fx *f) {
        char text[256];

        snprintf(text, sizeof text, "cpu  %llu 0 0 %llu 0 0 0 0 0 0\ncpu0 %llu 0 0 %llu 0 0 0 0 0 0\n",
                 f->busy, f->idle, f->busy, f->idle);
        put(text, "%s/stat", f->hostproc);
}

/* Advances the fake counters by 10000 jiffies at the given load. */
static void add_load(struct fx *f, double load) {
        unsigned long long b = (unsigned long long) llround(load * 10000);

        f->busy += b;
        f->idle += 10000 - b;
        set_stat(f);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        if (flag == FTW_DP || flag == FTW_DNR)
                rmdir(path);
        else
                unlink(path);
        return 0;
}

static bool exists(const char *path) {
        struct stat st;

        return lstat(path, &st) == 0;
}

/* ---- fixture trees made by the test ---- */

/* Like the ODROID-C2 on the 3.14 vendor kernel: whole degrees, legacy cpufreq layout. */
static void make_board_degrees(const struct fx *f) {
        char b[PATH_MAX];

        pathf(b, sizeof b, "%s/deg", f->boards);
        put("soc_thermal\n", "%s/sys/devices/virtual/thermal/thermal_zone0/type", b);
        put("43\n", "%s/sys/devices/virtual/thermal/thermal_zone0/temp", b);
        put("enabled\n", "%s/sys/devices/virtual/thermal/thermal_zone0/mode", b);
        put("passive\n", "%s/sys/devices/virtual/thermal/thermal_zone0/trip_point_0_type", b);
        put("80\n", "%s/sys/devices/virtual/thermal/thermal_zone0/trip_point_0_temp", b);
        put("passive\n", "%s/sys/devices/virtual/thermal/thermal_zone0/trip_point_1_type", b);
        put("70\n", "%s/sys/devices/virtual/thermal/thermal_zone0/trip_point_1_temp", b);
        put("1\n", "%s/sys/devices/virtual/thermal/thermal_zone0/trip_point_1_hyst", b);
        put("hot\n", "%s/sys/devices/virtual/thermal/thermal_zone0/trip_point_2_type", b);
        put("60\n", "%s/sys/devices/virtual/thermal/thermal_zone0/trip_point_2_temp", b);
        put("thermal-cpufreq-0\n", "%s/sys/devices/virtual/thermal/cooling_device0/type", b);
        put("0\n", "%s/sys/devices/virtual/thermal/cooling_device0/cur_state", b);
        put("5\n", "%s/sys/devices/virtual/thermal/cooling_device0/max_state", b);
        link_to("../../devices/virtual/thermal/thermal_zone0", "%s/sys/class/thermal/thermal_zone0", b);
        link_to("../../devices/virtual/thermal/cooling_device0", "%s/sys/class/thermal/cooling_device0", b);
        put("1536000\n", "%s/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", b);
        put("1536000\n", "%s/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", b);
        put("100000 250000 500000 1000000 1296000 1536000 \n",
            "%s/sys/devices/system/cpu/cpu0/cpufreq/scaling_available_frequencies", b);
        for (int i = 1; i < 4; i++)
                link_to("../cpu0/cpufreq", "%s/sys/devices/system/cpu/cpu%d/cpufreq", b, i);
        put("cpu  1 0 0 1 0 0 0 0 0 0\n", "%s/proc/stat", b);
        put("odroid64\n", "%s/proc/sys/kernel/hostname", b);
        put("ODROID-C2\0", "%s/proc/device-tree/model", b);
        link_to(f->outside, "%s/sys/escape", b);
        link_to("../nowhere", "%s/sys/dangling", b);
}

/* Millidegrees, several zones, hwmon chips (one with its input under device/), modern policies. */
static void make_board_millidegrees(const struct fx *f) {
        char b[PATH_MAX];

        pathf(b, sizeof b, "%s/mdeg", f->boards);
        put("40000\n", "%s/sys/class/thermal/thermal_zone0/temp", b);
        put("passive\n", "%s/sys/class/thermal/thermal_zone0/trip_point_0_type", b);
        put("70000\n", "%s/sys/class/thermal/thermal_zone0/trip_point_0_temp", b);
        put("2000\n", "%s/sys/class/thermal/thermal_zone0/trip_point_0_hyst", b);
        put("45500\n", "%s/sys/class/thermal/thermal_zone1/temp", b);
        put("0\n", "%s/sys/class/thermal/cooling_device0/cur_state", b);
        put("50000\n", "%s/sys/class/hwmon/hwmon0/temp1_input", b);
        put("38000\n", "%s/sys/devices/platform/chip/temp2_input", b);
        link_to("../../../devices/platform/chip", "%s/sys/class/hwmon/hwmon1/device", b);
        put("garbage\n", "%s/sys/class/hwmon/hwmon2/temp1_input", b);
        put("1416000\n", "%s/sys/devices/system/cpu/cpufreq/policy0/scaling_cur_freq", b);
        put("1416000\n", "%s/sys/devices/system/cpu/cpufreq/policy0/cpuinfo_max_freq", b);
        put("1800000\n", "%s/sys/devices/system/cpu/cpufreq/policy4/scaling_cur_freq", b);
        put("1800000\n", "%s/sys/devices/system/cpu/cpufreq/policy4/cpuinfo_cur_freq", b);
        put("408000 1200000 1800000\n", "%s/sys/devices/system/cpu/cpufreq/policy4/scaling_available_frequencies", b);
        link_to("../cpufreq/policy0", "%s/sys/devices/system/cpu/cpu0/cpufreq", b);
        link_to("../cpufreq/policy4", "%s/sys/devices/system/cpu/cpu4/cpufreq", b);
        put("cpu  1 0 0 1 0 0 0 0 0 0\n", "%s/proc/stat", b);
}

/* Power meters: a chip with a power input (its current beside it is not a meter), a current with
 * its voltage (read negative: the shunt wired the other way), a current without one, garbage. */
static void make_board_meters(const struct fx *f) {
        char b[PATH_MAX];

        pathf(b, sizeof b, "%s/pwr", f->boards);
        put("45000\n", "%s/sys/class/thermal/thermal_zone0/temp", b);
        put("ina219\n", "%s/sys/devices/i2c/1-0040/hwmon/hwmon1/name", b);
        put("5095000\n", "%s/sys/devices/i2c/1-0040/hwmon/hwmon1/power1_input", b);
        put("1003\n", "%s/sys/devices/i2c/1-0040/hwmon/hwmon1/curr1_input", b);
        put("5080\n", "%s/sys/devices/i2c/1-0040/hwmon/hwmon1/in1_input", b);
        link_to("../../devices/i2c/1-0040/hwmon/hwmon1", "%s/sys/class/hwmon/hwmon1", b);
        put("-500\n", "%s/sys/class/hwmon/hwmon2/curr1_input", b);
        put("12000\n", "%s/sys/class/hwmon/hwmon2/in1_input", b);
        put("700\n", "%s/sys/class/hwmon/hwmon2/curr2_input", b);
        put("300\n", "%s/sys/class/hwmon/hwmon3/curr1_input", b);
        put("0\n", "%s/sys/class/hwmon/hwmon3/in1_input", b);
        put("n/a\n", "%s/sys/class/hwmon/hwmon4/power1_input", b);
        put("cpu  1 0 0 1 0 0 0 0 0 0\n", "%s/proc/stat", b);
}

static int setup(void **state) {
        struct fx *f = calloc(1, sizeof *f);
        const char *tmp = getenv("TMPDIR");

        assert_non_null(f);
        pathf(f->base, sizeof f->base, "%s/test-simulate-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        assert_non_null(mkdtemp(f->base));
        pathf(f->boards, sizeof f->boards, "%s/boards", f->base);
        pathf(f->hostproc, sizeof f->hostproc, "%s/hostproc", f->base);
        pathf(f->outside, sizeof f->outside, "%s/outside.txt", f->base);
        pathf(f->tmpdir, sizeof f->tmpdir, "%s/tmp", f->base);
        mkdirs(f->tmpdir);
        put("keep me\n", "%s", f->outside);
        f->busy = 1000;
        f->idle = 1000;
        set_stat(f);
        make_board_degrees(f);
        make_board_millidegrees(f);
        make_board_meters(f);
        *state = f;
        return 0;
}

static int teardown(void **state) {
        struct fx *f = *state;

        nftw(f->base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        free(f);
        return 0;
}

static struct sim_params params(const char *board, double amb, double rise, double tau, bool quantize) {
        struct sim_params p = { .ambient_c = amb, .rise_c = rise, .tau_s = tau, .quantize = quantize,
                                .power_idle_w = NAN };

        pathf(p.board, sizeof p.board, "%s", board);
        return p;
}

static struct simulator *sim_new(const struct fx *f, const struct sim_params *p) {
        struct simulator *s = NULL;

        char *saved = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
        int r;

        setenv("TMPDIR", f->tmpdir, 1);
        r = simulator_new(f->boards, f->hostproc, p, 0, &s);
        if (saved)
                setenv("TMPDIR", saved, 1);
        else
                unsetenv("TMPDIR");
        free(saved);
        assert_int_equal(r, 0);
        assert_non_null(s);
        return s;
}

/* Files the simulator rewrites; everything else must be a byte-for-byte copy. */
static bool rewritten(const char *name) {
        size_t n = strlen(name);

        return strcmp(name, "temp") == 0 || strcmp(name, "cur_state") == 0 ||
               strcmp(name, "scaling_cur_freq") == 0 || strcmp(name, "cpuinfo_cur_freq") == 0 ||
               (n > 6 && strcmp(name + n - 6, "_input") == 0);
}

/* Same names, same types, same link targets, same contents; returns the number of differences. */
static int compare_tree(const char *src, const char *dst) {
        char a[PATH_MAX], b[PATH_MAX], ta[4096], tb[4096];
        struct stat sa, sb;
        struct dirent *de;
        int diff = 0;
        DIR *d;

        d = opendir(src);
        assert_non_null(d);
        while ((de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                pathf(a, sizeof a, "%s/%s", src, de->d_name);
                pathf(b, sizeof b, "%s/%s", dst, de->d_name);
                if (lstat(a, &sa) < 0 || lstat(b, &sb) < 0 || (sa.st_mode & S_IFMT) != (sb.st_mode & S_IFMT)) {
                        diff++;
                        continue;
                }
                if (S_ISDIR(sa.st_mode))
                        diff += compare_tree(a, b);
                else if (S_ISLNK(sa.st_mode)) {
                        ssize_t na = readlink(a, ta, sizeof ta), nb = readlink(b, tb, sizeof tb);

                        diff += na != nb || memcmp(ta, tb, (size_t) na) != 0;
                } else if (!rewritten(de->d_name)) {
                        assert_int_equal(get(ta, sizeof ta, "%s", a), 0);
                        assert_int_equal(get(tb, sizeof tb, "%s", b), 0);
                        diff += strcmp(ta, tb) != 0;
                }
        }
        closedir(d);
        return diff;
}

/* ---- tests ---- */

static void test_copy(void **state) {
        struct fx *f = *state;
        struct sim_params p = params("deg", 25, 40, 60, false);
        struct simulator *s = sim_new(f, &p);
        char src[PATH_MAX], path[PATH_MAX], target[PATH_MAX], expect[PATH_MAX], buf[64];
        const char *root = simulator_sysfs_root(s);
        struct stat st;
        ssize_t n;

        assert_string_equal(root, simulator_procfs_root(s));
        assert_true(strncmp(root, f->tmpdir, strlen(f->tmpdir)) == 0);
        assert_non_null(strstr(root, "/heatcurve-sim-"));

        /* proc/stat is the one file that differs in kind: a link to the host's. */
        pathf(path, sizeof path, "%s/proc/stat", root);
        assert_int_equal(lstat(path, &st), 0);
        assert_true(S_ISLNK(st.st_mode));
        n = readlink(path, target, sizeof target - 1);
        assert_true(n > 0);
        target[n] = '\0';
        assert_non_null(realpath(f->hostproc, expect));
        strcat(expect, "/stat");
        assert_string_equal(target, expect);
        pathf(src, sizeof src, "%s/deg/proc/stat", f->boards);
        unlink(src);            /* so compare_tree skips it */
        pathf(src, sizeof src, "%s/deg", f->boards);
        assert_int_equal(compare_tree(src, root), 0);

        /* Relative links stay relative links, absolute ones as they were. */
        pathf(path, sizeof path, "%s/sys/devices/system/cpu/cpu2/cpufreq", root);
        assert_int_equal(lstat(path, &st), 0);
        assert_true(S_ISLNK(st.st_mode));
        n = readlink(path, target, sizeof target - 1);
        target[n] = '\0';
        assert_string_equal(target, "../cpu0/cpufreq");
        pathf(path, sizeof path, "%s/sys/class/thermal/thermal_zone0", root);
        assert_int_equal(lstat(path, &st), 0);
        assert_true(S_ISLNK(st.st_mode));
        pathf(path, sizeof path, "%s/sys/dangling", root);
        assert_int_equal(lstat(path, &st), 0);
        assert_true(S_ISLNK(st.st_mode));

        /* The board keeps its identity. */
        assert_int_equal(get(buf, sizeof buf, "%s/proc/sys/kernel/hostname", root), 0);
        assert_string_equal(buf, "odroid64\n");
        simulator_free(s);
}

/* After steps at full load totalling tau, T = amb + rise (1 - 1/e), whatever the step sizes. */
static void test_model_exact(void **state) {
        static const int64_t steps_ms[] = { 250, 1750, 10000, 3000, 45000 };
        struct fx *f = *state;
        struct sim_params p = params("mdeg", 25, 40, 60, false);
        struct simulator *s = sim_new(f, &p);
        int64_t now = 0;
        double expect;

        assert_near(simulator_temp_c(s), 25.0, 1e-12);
        add_load(f, 0.0);
        now += 1000;
        assert_int_equal(simulator_step(s, now), 0);
        assert_near(simulator_temp_c(s), 25.0, 1e-12);
        assert_near(simulator_load(s), 0.0, 1e-12);

        for (size_t i = 0; i < sizeof steps_ms / sizeof steps_ms[0]; i++) {
                add_load(f, 1.0);
                now += steps_ms[i];
                assert_int_equal(simulator_step(s, now), 0);
                assert_near(simulator_load(s), 1.0, 1e-12);
        }
        expect = 25 + 40 * (1 - exp(-1));
        assert_near(simulator_temp_c(s), expect, 1e-6);
        assert_int_equal(get_long(s, "sys/class/thermal/thermal_zone0/temp"), lround(expect * 1000));

        /* Half load, 60 one-second steps: relaxes toward 45 from where it was. */
        for (int i = 0; i < 60; i++) {
                add_load(f, 0.5);
                now += 1000;
                assert_int_equal(simulator_step(s, now), 0);
        }
        assert_near(simulator_load(s), 0.5, 1e-12);
        assert_near(simulator_temp_c(s), 45 + (expect - 45) * exp(-1), 1e-6);

        /* A huge step is stable: it lands on the target, no overshoot. */
        add_load(f, 0.25);
        now += 1000LL * 1000 * 1000;
        assert_int_equal(simulator_step(s, now), 0);
        assert_near(simulator_temp_c(s), 35.0, 1e-9);

        /* No jiffies passed, time going backwards: load kept, temperature kept. */
        assert_int_equal(simulator_step(s, now - 5000), 0);
        assert_near(simulator_load(s), 0.25, 1e-12);
        assert_near(simulator_temp_c(s), 35.0, 1e-9);
        simulator_free(s);
}

/* The first step starts from the steady state of the load measured over it. */
static void test_first_step(void **state) {
        struct fx *f = *state;
        struct sim_params p = params("mdeg", 20, 50, 60, false);
        struct simulator *s = sim_new(f, &p);

        assert_near(simulator_temp_c(s), 20.0, 1e-12);
        assert_int_equal(get_long(s, "sys/class/thermal/thermal_zone0/temp"), 20000);
        add_load(f, 0.5);
        assert_int_equal(simulator_step(s, 1000), 0);
        assert_near(simulator_temp_c(s), 45.0, 1e-12);
        simulator_free(s);
}

/* Reach T = amb + rise * load in one first step. */
static struct simulator *sim_at(struct fx *f, const char *board, double t_c, bool quantize) {
        struct sim_params p = params(board, 20, 100, 60, quantize);
        struct simulator *s = sim_new(f, &p);

        add_load(f, (t_c - 20) / 100);
        assert_int_equal(simulator_step(s, 1000), 0);
        assert_near(simulator_temp_c(s), t_c, 1e-9);
        return s;
}

static void test_units(void **state) {
        struct fx *f = *state;
        struct simulator *s;

        /* Whole degrees where the fixture printed whole degrees; 37.3 rounds to 37. */
        s = sim_at(f, "deg", 37.3, false);
        assert_int_equal(get_long(s, "sys/class/thermal/thermal_zone0/temp"), 37);
        simulator_free(s);

        s = sim_at(f, "mdeg", 37.3, false);
        assert_int_equal(get_long(s, "sys/class/thermal/thermal_zone0/temp"), 37300);
        simulator_free(s);

        s = sim_at(f, "mdeg", 37.6, true);
        assert_int_equal(get_long(s, "sys/class/thermal/thermal_zone0/temp"), 38000);
        assert_int_equal(get_long(s, "sys/class/thermal/thermal_zone1/temp") % 1000, 0);
        assert_int_equal(get_long(s, "sys/class/hwmon/hwmon0/temp1_input"), 48000);
        assert_near(simulator_temp_c(s), 37.6, 1e-9);    /* the model itself is not rounded */
        simulator_free(s);
}

/* Each sensor keeps its offset from the fixture's first zone; unparsable files are left alone. */
static void test_offsets(void **state) {
        struct fx *f = *state;
        struct simulator *s = sim_at(f, "mdeg", 30, false);
        char buf[64];

        assert_int_equal(get_long(s, "sys/class/thermal/thermal_zone0/temp"), 30000);
        assert_int_equal(get_long(s, "sys/class/thermal/thermal_zone1/temp"), 35500);
        assert_int_equal(get_long(s, "sys/class/hwmon/hwmon0/temp1_input"), 40000);
        assert_int_equal(get_long(s, "sys/class/hwmon/hwmon1/device/temp2_input"), 28000);
        assert_int_equal(get(buf, sizeof buf, "%s/sys/class/hwmon/hwmon2/temp1_input", simulator_sysfs_root(s)), 0);
        assert_string_equal(buf, "garbage\n");
        simulator_free(s);
}

/* The daemon keeps its fd: a step must change what that same fd reads. */
static void test_same_inode(void **state) {
        struct fx *f = *state;
        struct sim_params p = params("mdeg", 25, 40, 60, false);
        struct simulator *s = sim_new(f, &p);
        char path[PATH_MAX], buf[64];
        ssize_t n;
        int fd;

        pathf(path, sizeof path, "%s/sys/class/thermal/thermal_zone0/temp", simulator_sysfs_root(s));
        fd = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        n = pread(fd, buf, sizeof buf - 1, 0);
        assert_true(n > 0);
        buf[n] = '\0';
        assert_string_equal(buf, "25000\n");
        add_load(f, 1.0);
        assert_int_equal(simulator_step(s, 1000), 0);
        n = pread(fd, buf, sizeof buf - 1, 0);
        assert_true(n > 0);
        buf[n] = '\0';
        assert_string_equal(buf, "65000\n");        /* and no stale tail left */
        close(fd);
        simulator_free(s);
}

/* Whole-degree board: lowest passive trip 70 with 1 degree hysteresis; cpufreq steps listed. */
static void test_throttle_degrees(void **state) {
        struct fx *f = *state;
        struct sim_params p = params("deg", 25, 60, 60, false);
        struct simulator *s = sim_new(f, &p);
        bool seen_band = false, seen_on = false;
        int64_t now = 0;

        add_load(f, 0);
        assert_int_equal(simulator_step(s, now += 100), 0);
        assert_false(simulator_throttled(s));
        assert_int_equal(get_long(s, "sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq"), 1536000);
        while (simulator_temp_c(s) < 75) {
                add_load(f, 1);
                assert_int_equal(simulator_step(s, now += 100), 0);
                assert_int_equal(simulator_throttled(s), simulator_temp_c(s) >= 70);
        }
        assert_true(simulator_throttled(s));
        assert_int_equal(get_long(s, "sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq"), 1296000);
        assert_int_equal(get_long(s, "sys/devices/system/cpu/cpu3/cpufreq/scaling_cur_freq"), 1296000);
        assert_int_equal(get_long(s, "sys/class/thermal/cooling_device0/cur_state"), 1);

        while (simulator_temp_c(s) > 60) {
                add_load(f, 0);
                assert_int_equal(simulator_step(s, now += 100), 0);
                if (simulator_temp_c(s) >= 69) {
                        assert_true(simulator_throttled(s));
                        seen_band |= simulator_temp_c(s) < 70;
                } else {
                        assert_false(simulator_throttled(s));
                        seen_on = true;
                }
        }
        assert_true(seen_band);
        assert_true(seen_on);
        assert_int_equal(get_long(s, "sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq"), 1536000);
        assert_int_equal(get_long(s, "sys/class/thermal/cooling_device0/cur_state"), 0);
        simulator_free(s);
}

/* Millidegree board: trip 70000, hyst 2000; a policy without a list goes to 80 % of max. */
static void test_throttle_millidegrees(void **state) {
        struct fx *f = *state;
        struct simulator *s = sim_at(f, "mdeg", 70, false);
        const char *pol = "sys/devices/system/cpu/cpufreq";

        assert_true(simulator_throttled(s));
        assert_int_equal(get_long(s, "%s/policy0/scaling_cur_freq", pol), 1132800);
        assert_int_equal(get_long(s, "%s/policy4/scaling_cur_freq", pol), 1200000);
        assert_int_equal(get_long(s, "%s/policy4/cpuinfo_cur_freq", pol), 1200000);
        assert_int_equal(get_long(s, "sys/class/thermal/cooling_device0/cur_state"), 1);
        simulator_free(s);

        s = sim_at(f, "mdeg", 69.9, false);
        assert_false(simulator_throttled(s));
        assert_int_equal(get_long(s, "%s/policy0/scaling_cur_freq", pol), 1416000);
        assert_int_equal(get_long(s, "%s/policy4/cpuinfo_cur_freq", pol), 1800000);
        simulator_free(s);
}

/* P = idle + power_load x load on every meter, idle as the fixture read it; currents at their voltage. */
static void test_power_follows_load(void **state) {
        struct fx *f = *state;
        struct sim_params p = params("pwr", 25, 40, 60, false);
        struct simulator *s;
        double idle = 0;

        p.power_load_w = 4;
        s = sim_new(f, &p);
        assert_int_equal(simulator_power_meters(s, &idle), 2);
        assert_near(idle, 5.095, 1e-12);
        assert_int_equal(get_long(s, "sys/class/hwmon/hwmon1/power1_input"), 5095000);
        assert_int_equal(get_long(s, "sys/class/hwmon/hwmon2/curr1_input"), -500);
        add_load(f, 0.5);
        assert_int_equal(simulator_step(s, 1000), 0);
        assert_int_equal(get_long(s, "sys/class/hwmon/hwmon1/power1_input"), 7095000);
        assert_int_equal(get_long(s, "sys/class/hwmon/hwmon2/curr1_input"), -667);     /* 8 W at 12 V */
        add_load(f, 1.0);
        assert_int_equal(simulator_step(s, 2000), 0);
        assert_int_equal(get_long(s, "sys/class/hwmon/hwmon1/power1_input"), 9095000);
        assert_int_equal(get_long(s, "sys/class/hwmon/hwmon2/curr1_input"), -833);
        /* left as found: voltages, a current beside a power input, one without a voltage, garbage */
        assert_int_equal(get_long(s, "sys/class/hwmon/hwmon1/in1_input"), 5080);
        assert_int_equal(get_long(s, "sys/class/hwmon/hwmon1/curr1_input"), 1003);
        assert_int_equal(get_long(s, "sys/class/hwmon/hwmon2/in1_input"), 12000);
        assert_int_equal(get_long(s, "sys/class/hwmon/hwmon2/curr2_input"), 700);
        assert_int_equal(get_long(s, "sys/class/hwmon/hwmon3/curr1_input"), 300);
        simulator_free(s);

        /* A given idle replaces the fixture's; own load: the commanded load, not the host's. */
        p.power_idle_w = 2.5;
        p.own_load = true;
        s = sim_new(f, &p);
        assert_int_equal(simulator_power_meters(s, &idle), 2);
        assert_near(idle, 2.5, 1e-12);
        add_load(f, 1.0);
        simulator_set_load(s, 0.25);
        assert_int_equal(simulator_step(s, 1000), 0);
        assert_int_equal(get_long(s, "sys/class/hwmon/hwmon1/power1_input"), 3500000);
        assert_int_equal(get_long(s, "sys/class/hwmon/hwmon2/curr1_input"), -292);
        simulator_free(s);

        /* No meter: nothing to write, no error. */
        p = params("mdeg", 25, 40, 60, false);
        p.power_load_w = 4;
        s = sim_new(f, &p);
        idle = -1;
        assert_int_equal(simulator_power_meters(s, &idle), 0);
        assert_near(idle, -1, 0);
        simulator_free(s);
}

static void test_free_removes(void **state) {
        struct fx *f = *state;
        struct sim_params p = params("deg", 25, 40, 60, false);
        struct simulator *s = sim_new(f, &p);
        char root[PATH_MAX], buf[64];

        pathf(root, sizeof root, "%s", simulator_sysfs_root(s));
        assert_true(exists(root));
        simulator_free(s);
        assert_false(exists(root));
        assert_int_equal(dir_entries(f->tmpdir), 0);
        /* The fixture's absolute link pointed here: the file and the fixture survive. */
        assert_int_equal(get(buf, sizeof buf, "%s", f->outside), 0);
        assert_string_equal(buf, "keep me\n");
        assert_int_equal(get(buf, sizeof buf, "%s/hostproc/stat", f->base), 0);
        assert_true(exists(f->boards));
        simulator_free(NULL);
}

static void test_bad_params(void **state) {
        struct fx *f = *state;
        struct simulator *s = NULL;
        struct sim_params p;

        setenv("TMPDIR", f->tmpdir, 1);
        p = params("../deg", 25, 40, 60, false);
        assert_int_equal(simulator_new(f->boards, f->hostproc, &p, 0, &s), -EINVAL);
        p = params("", 25, 40, 60, false);
        assert_int_equal(simulator_new(f->boards, f->hostproc, &p, 0, &s), -EINVAL);
        p = params("deg", 25, 40, 0, false);
        assert_int_equal(simulator_new(f->boards, f->hostproc, &p, 0, &s), -EINVAL);
        p = params("deg", NAN, 40, 60, false);
        assert_int_equal(simulator_new(f->boards, f->hostproc, &p, 0, &s), -EINVAL);
        p = params("pwr", 25, 40, 60, false);
        p.power_load_w = -1;
        assert_int_equal(simulator_new(f->boards, f->hostproc, &p, 0, &s), -EINVAL);
        p.power_load_w = INFINITY;
        assert_int_equal(simulator_new(f->boards, f->hostproc, &p, 0, &s), -EINVAL);
        p.power_load_w = NAN;
        assert_int_equal(simulator_new(f->boards, f->hostproc, &p, 0, &s), -EINVAL);
        p.power_load_w = 0;
        p.power_idle_w = -0.5;
        assert_int_equal(simulator_new(f->boards, f->hostproc, &p, 0, &s), -EINVAL);
        p = params("no-such-board", 25, 40, 60, false);
        assert_int_equal(simulator_new(f->boards, f->hostproc, &p, 0, &s), -ENOENT);
        p = params("deg", 25, 40, 60, false);
        assert_int_equal(simulator_new(f->boards, "/nonexistent-proc", &p, 0, &s), -ENOENT);
        assert_null(s);
        unsetenv("TMPDIR");
        assert_int_equal(dir_entries(f->tmpdir), 0);       /* nothing left behind */
}

/* One real fixture: ambient at no load, written in the fixture's unit; at 100 % load
 * (125 degrees C) any board with a passive trip throttles. */
static void check_fixture(struct fx *f, const char *dir, const char *name) {
        struct sim_params p = params(name, 25, 100, 60, true);
        struct simulator *s = NULL;
        char orig[64], path[PATH_MAX];
        bool has_zone;

        pathf(path, sizeof path, "%s/%s/sys/class/thermal/thermal_zone0/temp", dir, name);
        has_zone = get(orig, sizeof orig, "%s", path) == 0 && strtol(orig, NULL, 10) != 0;
        setenv("TMPDIR", f->tmpdir, 1);
        assert_int_equal(simulator_new(dir, f->hostproc, &p, 0, &s), 0);
        unsetenv("TMPDIR");
        add_load(f, 0);
        assert_int_equal(simulator_step(s, 1000), 0);
        assert_near(simulator_temp_c(s), 25, 1e-9);
        if (has_zone) {
                long raw = strtol(orig, NULL, 10);

                assert_int_equal(get_long(s, "sys/class/thermal/thermal_zone0/temp"),
                                 raw > 0 && raw < 1000 ? 25 : 25000);
        }
        add_load(f, 1);
        assert_int_equal(simulator_step(s, 1000 + 3600 * 1000), 0);
        assert_near(simulator_temp_c(s), 125, 1e-6);
        print_message("fixture %-28s zone0 %-8s throttled at 125 C: %s\n", name,
                      has_zone ? (strtol(orig, NULL, 10) < 1000 ? "degrees" : "mC") : "none",
                      simulator_throttled(s) ? "yes" : "no");
        simulator_free(s);
        assert_int_equal(dir_entries(f->tmpdir), 0);
}

/* Every real fixture under FIXTURES_DIR (a tree holding sys/). */
static void test_real_fixtures(void **state) {
        const char *dir = getenv("FIXTURES_DIR");
        struct dirent **list = NULL;
        int n = 0, tried = 0;

        if (!dir || (n = scandir(dir, &list, NULL, alphasort)) < 0)
                skip();
        for (int i = 0; i < n; i++) {
                char sys[PATH_MAX];
                struct stat st;

                pathf(sys, sizeof sys, "%s/%s/sys", dir, list[i]->d_name);
                if (list[i]->d_name[0] != '.' && stat(sys, &st) == 0 && S_ISDIR(st.st_mode)) {
                        check_fixture(*state, dir, list[i]->d_name);
                        tried++;
                }
                free(list[i]);
        }
        free(list);
        if (tried == 0)
                skip();
}

/* The default board runs against this machine's real /proc. */
static void test_default_board_real_proc(void **state) {
        struct fx *f = *state;
        const char *dir = getenv("FIXTURES_DIR");
        struct sim_params p = params("odroid-c2-3.14", 25, 40, 60, true);
        struct simulator *s = NULL;
        char path[PATH_MAX];

        if (!dir)
                skip();
        pathf(path, sizeof path, "%s/odroid-c2-3.14/sys", dir);
        if (!exists(path))
                skip();
        setenv("TMPDIR", f->tmpdir, 1);
        assert_int_equal(simulator_new(dir, "/proc", &p, 0, &s), 0);
        unsetenv("TMPDIR");
        usleep(50 * 1000);
        assert_int_equal(simulator_step(s, 1000), 0);
        assert_true(simulator_load(s) >= 0 && simulator_load(s) <= 1);
        assert_true(simulator_temp_c(s) >= 25 && simulator_temp_c(s) <= 65);
        assert_int_equal(get_long(s, "sys/class/thermal/thermal_zone0/temp"), lround(simulator_temp_c(s)));
        simulator_free(s);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_copy, setup, teardown),
                cmocka_unit_test_setup_teardown(test_model_exact, setup, teardown),
                cmocka_unit_test_setup_teardown(test_first_step, setup, teardown),
                cmocka_unit_test_setup_teardown(test_units, setup, teardown),
                cmocka_unit_test_setup_teardown(test_offsets, setup, teardown),
                cmocka_unit_test_setup_teardown(test_same_inode, setup, teardown),
                cmocka_unit_test_setup_teardown(test_throttle_degrees, setup, teardown),
                cmocka_unit_test_setup_teardown(test_throttle_millidegrees, setup, teardown),
                cmocka_unit_test_setup_teardown(test_power_follows_load, setup, teardown),
                cmocka_unit_test_setup_teardown(test_free_removes, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bad_params, setup, teardown),
                cmocka_unit_test_setup_teardown(test_real_fixtures, setup, teardown),
                cmocka_unit_test_setup_teardown(test_default_board_real_proc, setup, teardown),
        };

        return cmocka_run_group_tests_name("simulate", tests, NULL, NULL);
}
