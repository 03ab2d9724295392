/* test-config.c — unit tests for config defaults, the INI parser, config_set() and validation. */
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
#include <unistd.h>
#include <cmocka.h>

#include "config.h"

static char config_dir[PATH_MAX];       /* tests/unit/config in the source tree */
static char example_path[PATH_MAX];     /* systemd/heatcurved.conf */

static void snapshot(struct config *dst, const struct config *src) {
        memcpy(dst, src, sizeof *dst);
}

static void assert_unchanged(const struct config *a, const struct config *b) {
        assert_memory_equal(a, b, sizeof *a);
}

static void test_defaults(void **state) {
        struct config c;

        memset(&c, 0xaa, sizeof c);
        config_defaults(&c);
        assert_string_equal(c.path, "");
        assert_string_equal(c.listen_host, "127.0.0.1");
        assert_int_equal(c.listen_port, 8080);
        assert_int_equal(c.interval_ms, 1000);
        assert_int_equal(c.history_ms, 86400000);
        assert_int_equal(c.history_save_ms, 300000);
        assert_string_equal(c.state_dir, "/var/lib/heatcurve");
        assert_string_equal(c.sysfs_root, "/");
        assert_string_equal(c.procfs_root, "/");
        assert_false(c.simulate);
        assert_string_equal(c.sim.board, "odroid-c2-3.14");
        assert_true(c.sim.ambient_c == 25.0);
        assert_int_equal(c.sim.tau_ms, 60000);
        assert_true(c.sim.rise_c == 35.0);
        assert_true(c.sim.quantize);
        assert_true(isnan(c.sim.power_idle_w));        /* as the board's meter reads */
        assert_true(c.sim.power_load_w == 3.5);
        assert_string_equal(c.token_file, "");
        assert_true(c.safety_limit_c == 0);
        assert_string_equal(c.stress_dir, "");
        assert_int_equal(config_validate(&c, NULL, 0), 0);
        assert_int_equal(config_history_samples(&c), 86400);
}

static void test_good_conf(void **state) {
        struct config c;
        char err[512] = "";

        config_defaults(&c);
        assert_int_equal(config_load(&c, "good.conf", err, sizeof err), 0);
        assert_string_equal(err, "");
        assert_string_equal(c.path, "good.conf");
        assert_string_equal(c.listen_host, "::1");
        assert_int_equal(c.listen_port, 9090);
        assert_int_equal(c.interval_ms, 500);           /* from the [daemon] that comes back */
        assert_int_equal(c.history_ms, 7200000);
        assert_int_equal(c.history_save_ms, 0);
        assert_string_equal(c.state_dir, "/tmp/heatcurve-state");
        assert_string_equal(c.sysfs_root, "/srv/fixtures/rpi4");
        assert_string_equal(c.procfs_root, "/srv/fixtures/rpi4");
        assert_true(c.simulate);                        /* indented line: a key, not a continuation */
        assert_string_equal(c.token_file, "/etc/heatcurve/token");
        assert_string_equal(c.sim.board, "rpi4-6.1");
        assert_true(c.sim.ambient_c == -5.5);
        assert_int_equal(c.sim.tau_ms, 5400000);
        assert_true(c.sim.rise_c == 12.25);
        assert_false(c.sim.quantize);
        assert_true(c.sim.power_idle_w == 2.75);
        assert_true(c.sim.power_load_w == 0);
        assert_true(c.safety_limit_c == 72.5);
        assert_string_equal(c.stress_dir, "/var/tmp");
        assert_int_equal(c.runs_keep, 100);
        assert_int_equal(c.runs_keep_ms, 30 * 86400000ull);
        assert_int_equal(config_validate(&c, err, sizeof err), 0);
}

/* Keys the file leaves out keep what c held before. */
static void test_load_on_top(void **state) {
        struct config c;
        char path[] = "/tmp/test-config-XXXXXX";
        FILE *f;
        int fd;

        fd = mkstemp(path);
        assert_true(fd >= 0);
        f = fdopen(fd, "w");
        fputs("[simulate]\nambient = 30\n", f);
        fclose(f);

        config_defaults(&c);
        c.interval_ms = 2000;
        assert_int_equal(config_load(&c, path, NULL, 0), 0);
        assert_int_equal(c.interval_ms, 2000);
        assert_true(c.sim.ambient_c == 30);
        unlink(path);
}

/* A UTF-8 byte order mark (Windows editors) and CRLF line ends are fine. */
static void test_bom_crlf(void **state) {
        char path[] = "/tmp/test-config-bom-XXXXXX", err[512];
        struct config c;
        FILE *f;
        int fd;

        fd = mkstemp(path);
        assert_true(fd >= 0);
        f = fdopen(fd, "w");
        fputs("\xEF\xBB\xBF[daemon]\r\ninterval = 3s\r\n", f);
        fclose(f);
        config_defaults(&c);
        if (config_load(&c, path, err, sizeof err) < 0)
                fail_msg("%s", err);
        assert_int_equal(c.interval_ms, 3000);
        unlink(path);
}

static char *read_text(const char *path) {
        static char buf[1024];
        FILE *f = fopen(path, "re");
        size_t n;

        if (!f)
                fail_msg("cannot open %s", path);
        n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        if (n > 0 && buf[n - 1] == '\n')
                buf[n - 1] = '\0';
        return buf;
}

/* Every bad-*.conf fails with exactly the message in bad-*.err, and leaves c alone. */
static void test_bad_files(void **state) {
        struct dirent **names;
        int n, checked = 0;

        n = scandir(".", &names, NULL, alphasort);
        assert_true(n > 0);
        for (int i = 0; i < n; i++) {
                const char *name = names[i]->d_name;
                size_t len = strlen(name);
                char errpath[PATH_MAX], err[512];
                struct config c, before;
                int r;

                if (strncmp(name, "bad-", 4) == 0 && len > 5 && strcmp(name + len - 5, ".conf") == 0) {
                        snprintf(errpath, sizeof errpath, "%.*s.err", (int) (len - 5), name);
                        config_defaults(&c);
                        snapshot(&before, &c);
                        r = config_load(&c, name, err, sizeof err);
                        if (r >= 0)
                                fail_msg("%s: parsed without error", name);
                        if (strcmp(err, read_text(errpath)) != 0)
                                fail_msg("%s:\n got  %s\n want %s", name, err, read_text(errpath));
                        assert_unchanged(&c, &before);
                        checked++;
                }
                free(names[i]);
        }
        free(names);
        assert_true(checked >= 25);
}

/* Every .err has its .conf (a renamed fixture would silently stop being tested). */
static void test_bad_files_paired(void **state) {
        struct dirent **names;
        int n;

        n = scandir(".", &names, NULL, alphasort);
        assert_true(n > 0);
        for (int i = 0; i < n; i++) {
                const char *name = names[i]->d_name;
                size_t len = strlen(name);
                char conf[PATH_MAX];

                if (len > 4 && strcmp(name + len - 4, ".err") == 0) {
                        snprintf(conf, sizeof conf, "%.*s.conf", (int) (len - 4), name);
                        if (access(conf, R_OK) < 0)
                                fail_msg("%s has no %s", name, conf);
                }
                free(names[i]);
        }
        free(names);
}

static void test_missing_file(void **state) {
        struct config c, before;
        char err[512];

        config_defaults(&c);
        snapshot(&before, &c);
        assert_int_equal(config_load(&c, "does-not-exist.conf", err, sizeof err), -ENOENT);
        assert_string_equal(err, "does-not-exist.conf: No such file or directory");
        assert_unchanged(&c, &before);

        assert_int_equal(config_load(&c, ".", err, sizeof err), -EISDIR);
        assert_string_equal(err, ".: Is a directory");
        assert_unchanged(&c, &before);

        /* a FIFO with no writer would block a reload's open() or read(); /dev/zero would spin it */
        char fifo[] = "/tmp/test-config-fifo-XXXXXX";
        assert_non_null(mkdtemp(fifo));
        char path[sizeof fifo + 16];
        snprintf(path, sizeof path, "%s/conf", fifo);
        assert_int_equal(mkfifo(path, 0600), 0);
        assert_int_equal(config_load(&c, path, err, sizeof err), -EINVAL);
        assert_non_null(strstr(err, "not a regular file"));
        assert_unchanged(&c, &before);
        unlink(path);
        rmdir(fifo);
        assert_int_equal(config_load(&c, "/dev/zero", err, sizeof err), -EINVAL);
        assert_string_equal(err, "/dev/zero: not a regular file");
        assert_unchanged(&c, &before);

        /* a file far larger than any configuration */
        char big[] = "/tmp/test-config-big-XXXXXX";
        int fd = mkstemp(big);
        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, 2 * 1024 * 1024), 0);
        close(fd);
        assert_int_equal(config_load(&c, big, err, sizeof err), -EFBIG);
        assert_non_null(strstr(err, "2097152 bytes"));
        assert_unchanged(&c, &before);
        unlink(big);
}

static void test_config_read(void **state) {
        struct config c, before;
        char err[512];

        memset(&c, 0x55, sizeof c);
        snapshot(&before, &c);
        assert_int_equal(config_read(&c, "does-not-exist.conf", true, err, sizeof err), -ENOENT);
        assert_unchanged(&c, &before);
        assert_int_equal(config_read(&c, "bad-duration.conf", false, err, sizeof err), -EINVAL);
        assert_unchanged(&c, &before);

        assert_int_equal(config_read(&c, "does-not-exist.conf", false, err, sizeof err), 0);
        assert_int_equal(c.interval_ms, 1000);
        assert_string_equal(c.path, "");
        assert_int_equal(config_read(&c, NULL, true, err, sizeof err), 0);
        assert_int_equal(config_read(&c, "good.conf", true, err, sizeof err), 0);
        assert_int_equal(c.interval_ms, 500);
        assert_string_equal(c.path, "good.conf");
}

/* The reload pattern from config.h: a bad file never touches the running config. */
static void test_reload_keeps_old(void **state) {
        struct config running, fresh, before;
        char err[512];

        assert_int_equal(config_read(&running, "good.conf", true, err, sizeof err), 0);
        snapshot(&before, &running);
        fresh = running;
        assert_true(config_read(&fresh, "bad-interval-low.conf", true, err, sizeof err) < 0);
        assert_unchanged(&running, &before);
        assert_int_equal(config_read(&fresh, "good.conf", true, err, sizeof err), 0);
        assert_int_equal(config_set_flag(&fresh, "daemon", "interval", "2s", err, sizeof err), 0);
        assert_int_equal(config_validate(&fresh, err, sizeof err), 0);
        running = fresh;
        assert_int_equal(running.interval_ms, 2000);
}

static const char *const all_keys[] = {
        "listen", "interval", "history", "history_save", "state_dir", "sysfs_root", "procfs_root",
        "simulate", "token_file", "board", "ambient", "tau", "rise", "quantize", "load_source", "power_idle",
        "power_load", "safety_limit",
        "stress_dir", "ambient_sensor", "event_clients", "allow_root", "keep", "keep_for",
};

/* The example parses as shipped (all commented) and with every key uncommented,
 * and the values it shows are the defaults. */
static void test_example_conf(void **state) {
        char path[] = "/tmp/test-config-example-XXXXXX", line[512], err[512];
        struct config def, c;
        unsigned seen = 0, n_keys = 0;
        FILE *in, *out;
        int fd;

        config_defaults(&def);
        config_defaults(&c);
        assert_int_equal(config_load(&c, example_path, err, sizeof err), 0);
        memcpy(c.path, def.path, sizeof c.path);
        assert_unchanged(&c, &def);

        in = fopen(example_path, "re");
        assert_non_null(in);
        fd = mkstemp(path);
        assert_true(fd >= 0);
        out = fdopen(fd, "w");
        while (fgets(line, sizeof line, in)) {
                char key[64];

                if (sscanf(line, "#%63[a-z_] =", key) == 1 && strchr(line, '=')) {
                        for (unsigned k = 0; k < sizeof all_keys / sizeof all_keys[0]; k++)
                                if (strcmp(key, all_keys[k]) == 0)
                                        seen |= 1u << k;
                        n_keys++;
                        fputs(line + 1, out);
                } else
                        fputs(line, out);
        }
        fclose(in);
        fclose(out);

        assert_int_equal(n_keys, sizeof all_keys / sizeof all_keys[0]);
        assert_int_equal(seen, (1u << (sizeof all_keys / sizeof all_keys[0])) - 1);
        config_defaults(&c);
        if (config_load(&c, path, err, sizeof err) < 0)
                fail_msg("uncommented example: %s", err);
        memcpy(c.path, def.path, sizeof c.path);
        assert_unchanged(&c, &def);
        unlink(path);
}

struct set_case {
        const char *section, *key, *value;
        int ret;
        const char *message;            /* flag style */
};

static const struct set_case set_cases[] = {
        { "daemon", "interval", "5x", -EINVAL, "--interval: \"5x\" is not a duration (e.g. 250ms, 1s, 90m, 2h)" },
        { "daemon", "interval", "99ms", -ERANGE, "--interval: \"99ms\" is out of range (100ms..1h)" },
        { "daemon", "state_dir", "", -EINVAL, "--state-dir: must not be empty" },
        { "daemon", "history_save", "1s", -ERANGE,
          "--history-save: \"1s\" is out of range (10s..1d, or 0s to save only on shutdown)" },
        { "daemon", "listen", "127.0.0.1:0", -ERANGE, "--listen: \"127.0.0.1:0\": port must be 1..65535" },
        { "daemon", "simulate", "perhaps", -EINVAL,
          "--simulate: \"perhaps\" is not a boolean (yes/no, true/false, on/off, 1/0)" },
        { "runs", "allow_root", "if needed", -EINVAL,
          "--allow-root: \"if needed\" is not a boolean (yes/no, true/false, on/off, 1/0)" },
        { "simulate", "tau", "25h", -ERANGE, "--simulate-tau: \"25h\" is out of range (1s..1d)" },
        { "simulate", "ambient", "-41", -ERANGE, "--simulate-ambient: \"-41\" is out of range (-40..60)" },
        { "simulate", "rise", "1e999", -EINVAL, "--simulate-rise: \"1e999\" is not a number" },
        { "simulate", "rise", "0x10", -EINVAL, "--simulate-rise: \"0x10\" is not a number" },
        { "simulate", "rise", "inf", -EINVAL, "--simulate-rise: \"inf\" is not a number" },
        { "simulate", "power_load", "-1", -ERANGE, "--simulate-power-load: \"-1\" is out of range (0..1000)" },
        { "simulate", "power_load", "nan", -EINVAL, "--simulate-power-load: \"nan\" is not a number" },
        { "simulate", "power_load", "auto", -EINVAL, "--simulate-power-load: \"auto\" is not a number" },
        { "simulate", "power_idle", "-0.5", -ERANGE,
          "--simulate-power-idle: \"-0.5\" is out of range (0..1000, or auto for the board's own reading)" },
        { "simulate", "power_idle", "inf", -EINVAL, "--simulate-power-idle: \"inf\" is not a number" },
        { "simulate", "board", "a/b", -EINVAL,
          "--simulate-board: \"a/b\" is not a board name (letters, digits, '.', '-', '_')" },
        { "simulate", "board", "", -EINVAL, "--simulate-board: must not be empty" },
        { "simulate", "board", "0123456789012345678901234567890123456789012345678901234567890123", -ENAMETOOLONG,
          "--simulate-board: is too long (at most 63 bytes)" },
        { "runs", "safety_limit", "151", -ERANGE, "--safety-limit: \"151\" is out of range (20..150, or auto)" },
        { "runs", "safety_limit", "", -EINVAL, "--safety-limit: \"\" is not a number" },
        /* out of range and out of unsigned's range: refused before any conversion */
        { "daemon", "event_clients", "-8", -ERANGE, "--event-clients: \"-8\" is out of range (0..100)" },
        { "daemon", "event_clients", "1e12", -ERANGE, "--event-clients: \"1e12\" is out of range (0..100)" },
        { "daemon", "event_clients", "2.5", -EINVAL, "--event-clients: \"2.5\" is not a whole number" },
        { "daemon", "intervall", "1s", -EINVAL, "unknown option --intervall" },
        { "simulate", "speed", "1", -EINVAL, "unknown option --simulate-speed" },
        { "foo", "bar", "1", -EINVAL, "unknown section [foo]" },
};

static void test_set_errors(void **state) {
        for (size_t i = 0; i < sizeof set_cases / sizeof set_cases[0]; i++) {
                const struct set_case *t = &set_cases[i];
                struct config c, before;
                char err[512] = "";
                int r;

                config_defaults(&c);
                snapshot(&before, &c);
                r = config_set(&c, t->section, t->key, t->value, err, sizeof err);
                if (r != t->ret || strcmp(err, t->message) != 0)
                        fail_msg("[%s] %s=%s: got %d \"%s\", want %d \"%s\"", t->section, t->key, t->value,
                                 r, err, t->ret, t->message);
                assert_unchanged(&c, &before);

                /* config_set_flag() names the key the same way even after a file. */
                memcpy(c.path, "some.conf", 10);
                err[0] = '\0';
                assert_int_equal(config_set_flag(&c, t->section, t->key, t->value, err, sizeof err), t->ret);
                assert_string_equal(err, t->message);
        }
}

/* Once a file is loaded, config_set() names keys as the file does. */
static void test_set_file_style(void **state) {
        struct config c;
        char err[512];

        config_defaults(&c);
        strcpy(c.path, "/etc/heatcurve/heatcurved.conf");
        assert_int_equal(config_set(&c, "daemon", "interval", "5x", err, sizeof err), -EINVAL);
        assert_string_equal(err, "[daemon] interval: \"5x\" is not a duration (e.g. 250ms, 1s, 90m, 2h)");
        assert_int_equal(config_set(&c, "daemon", "intervall", "1s", err, sizeof err), -EINVAL);
        assert_string_equal(err, "unknown key \"intervall\" in [daemon]");
        assert_int_equal(config_set(&c, "simulate", "tau", "0s", err, sizeof err), -ERANGE);
        assert_string_equal(err, "[simulate] tau: \"0s\" is out of range (1s..1d)");
}

static void test_set_values(void **state) {
        struct config c;
        char err[512];

        config_defaults(&c);
        assert_int_equal(config_set(&c, "daemon", "interval", "100ms", err, sizeof err), 0);
        assert_int_equal(c.interval_ms, 100);
        assert_int_equal(config_set(&c, "daemon", "interval", "1h", err, sizeof err), 0);
        assert_int_equal(c.interval_ms, 3600000);
        assert_int_equal(config_set(&c, "daemon", "history", "30d", err, sizeof err), 0);
        assert_int_equal(c.history_ms, UINT64_C(2592000000));
        assert_int_equal(config_set(&c, "daemon", "history_save", "0s", err, sizeof err), 0);
        assert_int_equal(c.history_save_ms, 0);
        assert_int_equal(config_set(&c, "daemon", "listen", ":80", err, sizeof err), 0);
        assert_string_equal(c.listen_host, "");
        assert_int_equal(c.listen_port, 80);
        assert_int_equal(config_set(&c, "simulate", "ambient", "-40", err, sizeof err), 0);
        assert_true(c.sim.ambient_c == -40);
        assert_int_equal(config_set(&c, "simulate", "ambient", "60.0", err, sizeof err), 0);
        assert_true(c.sim.ambient_c == 60);
        assert_int_equal(config_set(&c, "simulate", "rise", "0.1", err, sizeof err), 0);
        assert_true(c.sim.rise_c == 0.1);
        assert_int_equal(config_set(&c, "simulate", "rise", "1.5e2", err, sizeof err), 0);
        assert_true(c.sim.rise_c == 150);
        assert_int_equal(config_set(&c, "simulate", "power_idle", "0", err, sizeof err), 0);
        assert_true(c.sim.power_idle_w == 0);
        assert_int_equal(config_set(&c, "simulate", "power_idle", "Auto", err, sizeof err), 0);
        assert_true(isnan(c.sim.power_idle_w));
        assert_int_equal(config_set(&c, "simulate", "power_load", "4", err, sizeof err), 0);
        assert_true(c.sim.power_load_w == 4);
        assert_int_equal(config_validate(&c, err, sizeof err), 0);
        assert_int_equal(config_set(&c, "runs", "safety_limit", "80", err, sizeof err), 0);
        assert_true(c.safety_limit_c == 80);
        assert_int_equal(config_set(&c, "runs", "safety_limit", "AUTO", err, sizeof err), 0);
        assert_true(c.safety_limit_c == 0);
        assert_int_equal(config_set(&c, "runs", "safety_limit", "0", err, sizeof err), 0);
        assert_int_equal(config_set(&c, "daemon", "token_file", "", err, sizeof err), 0);
        assert_int_equal(config_set(&c, "simulate", "board", "orangepi-zero2_v1.0", err, sizeof err), 0);
        assert_string_equal(c.sim.board, "orangepi-zero2_v1.0");
        /* NULL value (a key without '=' in some INI dialects) reads as "" */
        assert_int_equal(config_set(&c, "daemon", "token_file", NULL, err, sizeof err), 0);
        assert_int_equal(config_set(&c, "daemon", "state_dir", NULL, err, sizeof err), -EINVAL);
        assert_int_equal(config_set(NULL, "daemon", "state_dir", "/x", err, sizeof err), -EINVAL);
}

static void test_bool_values(void **state) {
        static const char *const yes[] = { "yes", "true", "1", "on", "YES", "True", "On" };
        static const char *const no[] = { "no", "false", "0", "off", "No", "FALSE", "OFF" };
        static const char *const bad[] = { "", "y", "n", "2", "yes!", "enable", "nope" };
        struct config c;

        config_defaults(&c);
        for (size_t i = 0; i < 7; i++) {
                c.simulate = false;
                assert_int_equal(config_set(&c, "daemon", "simulate", yes[i], NULL, 0), 0);
                assert_true(c.simulate);
                assert_int_equal(config_set(&c, "daemon", "simulate", no[i], NULL, 0), 0);
                assert_false(c.simulate);
                c.simulate = true;
                assert_int_equal(config_set(&c, "daemon", "simulate", bad[i], NULL, 0), -EINVAL);
                assert_true(c.simulate);
        }
}

struct listen_case {
        const char *text;
        int ret;
        const char *host;
        uint16_t port;
};

static const struct listen_case listen_cases[] = {
        { "127.0.0.1:8080", 0, "127.0.0.1", 8080 },
        { "0.0.0.0:1", 0, "0.0.0.0", 1 },
        { "192.168.1.20:65535", 0, "192.168.1.20", 65535 },
        { "[::1]:8080", 0, "::1", 8080 },
        { "[::]:80", 0, "::", 80 },
        { "[fe80::1:2]:443", 0, "fe80::1:2", 443 },
        { "[::ffff:10.0.0.1]:9", 0, "::ffff:10.0.0.1", 9 },
        { ":8080", 0, "", 8080 },
        { "127.0.0.1:08080", 0, "127.0.0.1", 8080 },
        { "127.0.0.1:0", -ERANGE, NULL, 0 },
        { "127.0.0.1:65536", -ERANGE, NULL, 0 },
        { "127.0.0.1:99999999999999999999", -ERANGE, NULL, 0 },
        { "127.0.0.1", -EINVAL, NULL, 0 },
        { "127.0.0.1:", -EINVAL, NULL, 0 },
        { "127.0.0.1:80x", -EINVAL, NULL, 0 },
        { "127.0.0.1:-80", -EINVAL, NULL, 0 },
        { "127.0.0.1:+80", -EINVAL, NULL, 0 },
        { "127.0.0.1: 80", -EINVAL, NULL, 0 },
        { "localhost:8080", 0, "127.0.0.1", 8080 },
        { "[localhost]:8080", -EINVAL, NULL, 0 },
        { "localhost.:8080", -EINVAL, NULL, 0 },
        { "LOCALHOST:8080", -EINVAL, NULL, 0 },
        { "example.org:80", -EINVAL, NULL, 0 },
        { "127.1:8080", -EINVAL, NULL, 0 },
        { "256.0.0.1:80", -EINVAL, NULL, 0 },
        { "::1:8080", -EINVAL, NULL, 0 },
        { "[::1]8080", -EINVAL, NULL, 0 },
        { "[::1]:", -EINVAL, NULL, 0 },
        { "[127.0.0.1]:80", -EINVAL, NULL, 0 },
        { "[]:80", -EINVAL, NULL, 0 },
        { "[fe80::1%eth0]:80", -EINVAL, NULL, 0 },
        { "[::1:80", -EINVAL, NULL, 0 },
        { "", -EINVAL, NULL, 0 },
        { ":", -EINVAL, NULL, 0 },
};

static void test_parse_listen(void **state) {
        for (size_t i = 0; i < sizeof listen_cases / sizeof listen_cases[0]; i++) {
                const struct listen_case *t = &listen_cases[i];
                char host[64] = "unchanged";
                uint16_t port = 4242;
                int r = config_parse_listen(t->text, host, sizeof host, &port);

                if (r != t->ret)
                        fail_msg("\"%s\": got %d, want %d", t->text, r, t->ret);
                if (r == 0 && (strcmp(host, t->host) != 0 || port != t->port))
                        fail_msg("\"%s\": got %s port %u", t->text, host, port);
                if (r < 0 && (strcmp(host, "unchanged") != 0 || port != 4242))
                        fail_msg("\"%s\": output written on error", t->text);
        }
}

static void test_parse_listen_small_buffer(void **state) {
        char host[10];
        uint16_t port;

        assert_int_equal(config_parse_listen("127.0.0.1:80", host, sizeof host, &port), 0);
        assert_int_equal(config_parse_listen("192.168.100.200:80", host, sizeof host, &port), -ENOBUFS);
        assert_int_equal(config_parse_listen(NULL, host, sizeof host, &port), -EINVAL);
}

static void test_validate(void **state) {
        struct config c;
        char err[512];

        config_defaults(&c);
        c.history_ms = 60000;
        c.interval_ms = 300000;
        assert_int_equal(config_validate(&c, err, sizeof err), -EINVAL);
        assert_string_equal(err, "--history (1m) must not be shorter than --interval (5m)");
        strcpy(c.path, "x.conf");
        assert_int_equal(config_validate(&c, err, sizeof err), -EINVAL);
        assert_string_equal(err, "x.conf: [daemon] history (1m) must not be shorter than [daemon] interval (5m)");

        config_defaults(&c);
        c.interval_ms = 100;
        c.history_ms = UINT64_C(30) * 86400000;
        assert_int_equal(config_validate(&c, err, sizeof err), -E2BIG);
        assert_string_equal(err, "--history (30d) at --interval (100ms) is more than 4194304 samples");
        c.history_ms = 4194304 * UINT64_C(100);
        assert_int_equal(config_validate(&c, err, sizeof err), 0);
        assert_int_equal(config_history_samples(&c), 4194304);

        /* Fields filled in directly are range-checked too. */
        config_defaults(&c);
        c.interval_ms = 50;
        assert_int_equal(config_validate(&c, err, sizeof err), -ERANGE);
        assert_string_equal(err, "--interval: \"50ms\" is out of range (100ms..1h)");
        config_defaults(&c);
        c.sim.ambient_c = 61;
        assert_int_equal(config_validate(&c, err, sizeof err), -ERANGE);
        assert_string_equal(err, "--simulate-ambient: \"61\" is out of range (-40..60)");
        config_defaults(&c);
        c.sim.power_load_w = INFINITY;
        assert_int_equal(config_validate(&c, err, sizeof err), -ERANGE);
        assert_string_equal(err, "--simulate-power-load: \"inf\" is out of range (0..1000)");
        config_defaults(&c);
        c.sim.power_idle_w = -INFINITY;
        assert_int_equal(config_validate(&c, err, sizeof err), -ERANGE);
        assert_string_equal(err, "--simulate-power-idle: \"-inf\" is out of range (0..1000, or auto for the "
                            "board's own reading)");
        config_defaults(&c);
        c.listen_port = 0;
        assert_int_equal(config_validate(&c, err, sizeof err), -ERANGE);
        assert_string_equal(err, "--listen: port must be 1..65535");
        config_defaults(&c);
        c.sysfs_root[0] = '\0';
        assert_int_equal(config_validate(&c, err, sizeof err), -EINVAL);
        assert_string_equal(err, "--sysfs-root: must not be empty");
        config_defaults(&c);
        strcpy(c.sim.board, "..");
        assert_int_equal(config_validate(&c, err, sizeof err), -EINVAL);
        config_defaults(&c);
        c.safety_limit_c = 10;
        assert_int_equal(config_validate(&c, err, sizeof err), -ERANGE);
}

/* A file that is not valid UTF-8 or has NUL bytes must not crash the parser. */
static void test_garbage_file(void **state) {
        char path[] = "/tmp/test-config-garbage-XXXXXX", err[512];
        unsigned char junk[4096];
        struct config c, before;
        uint32_t x = 12345;
        int fd;

        for (int round = 0; round < 50; round++) {
                for (size_t i = 0; i < sizeof junk; i++) {
                        x = x * 1103515245 + 12345;
                        junk[i] = (unsigned char) (x >> 16);
                }
                fd = mkstemp(path);
                assert_true(fd >= 0);
                assert_int_equal(write(fd, junk, sizeof junk), (ssize_t) sizeof junk);
                close(fd);
                config_defaults(&c);
                snapshot(&before, &c);
                if (config_load(&c, path, err, sizeof err) < 0)
                        assert_unchanged(&c, &before);
                unlink(path);
                strcpy(path, "/tmp/test-config-garbage-XXXXXX");
        }
}

static int setup(void **state) {
        const char *fixtures = getenv("FIXTURES_DIR");
        char rel[PATH_MAX];

        if (!fixtures)
                fixtures = "data/boards";
        snprintf(config_dir, sizeof config_dir, "%s/../../tests/unit/config", fixtures);
        snprintf(rel, sizeof rel, "%s/../../systemd/heatcurved.conf", fixtures);
        if (!realpath(rel, example_path) || chdir(config_dir) < 0) {
                fprintf(stderr, "cannot find %s (set FIXTURES_DIR)\n", config_dir);
                return -1;
        }
        return 0;
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_defaults),
                cmocka_unit_test(test_good_conf),
                cmocka_unit_test(test_load_on_top),
                cmocka_unit_test(test_bom_crlf),
                cmocka_unit_test(test_bad_files),
                cmocka_unit_test(test_bad_files_paired),
                cmocka_unit_test(test_missing_file),
                cmocka_unit_test(test_config_read),
                cmocka_unit_test(test_reload_keeps_old),
                cmocka_unit_test(test_example_conf),
                cmocka_unit_test(test_set_errors),
                cmocka_unit_test(test_set_file_style),
                cmocka_unit_test(test_set_values),
                cmocka_unit_test(test_bool_values),
                cmocka_unit_test(test_parse_listen),
                cmocka_unit_test(test_parse_listen_small_buffer),
                cmocka_unit_test(test_validate),
                cmocka_unit_test(test_garbage_file),
        };

        return cmocka_run_group_tests(tests, setup, NULL);
}
