/* test-sensors.h — what the test-sensors-* programs share: a throw-away sysfs tree per test, probing it. */
#pragma once

#include <errno.h>
#include <ftw.h>
#include <limits.h>
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

#include "sensors.h"

struct tree {
        char root[PATH_MAX];
};

__attribute__((format(printf, 3, 4)))
__attribute__((unused))
static void pathf(char *buf, size_t size, const char *fmt, ...) {
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(buf, size, fmt, ap);
        va_end(ap);
        assert_true(n > 0 && (size_t) n < size);
}

__attribute__((unused))
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

__attribute__((unused))
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
__attribute__((unused))
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

__attribute__((unused))
static void put(const struct tree *t, const char *rel, const char *text) {
        put_bytes(t, rel, text, strlen(text));
}

__attribute__((unused))
static void link_to(const struct tree *t, const char *rel, const char *target) {
        char path[PATH_MAX];

        pathf(path, sizeof(path), "%s/%s", t->root, rel);
        mkdir_parent(path);
        assert_int_equal(symlink(target, path), 0);
}

__attribute__((unused))
static void tree_new(struct tree *t) {
        char sys[PATH_MAX];

        pathf(t->root, sizeof(t->root), "%s/test-sensors-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        assert_non_null(mkdtemp(t->root));
        pathf(sys, sizeof(sys), "%s/sys", t->root);
        mkdir_p(sys);
}

__attribute__((unused))
static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(path);
}

__attribute__((unused))
static void tree_free(struct tree *t) {
        assert_int_equal(nftw(t->root, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

__attribute__((unused))
static const struct temp_sensor *find(const struct sensors *s, const char *id) {
        for (size_t i = 0; i < s->n_temps; i++)
                if (strcmp(s->temps[i].id, id) == 0)
                        return &s->temps[i];
        print_message("no sensor %s among:\n", id);
        for (size_t i = 0; i < s->n_temps; i++)
                print_message("  %s\n", s->temps[i].id);
        return NULL;
}

__attribute__((unused))
static struct sensors *probe(const struct tree *t) {
        struct sensors *s = NULL;

        assert_int_equal(sensors_probe(t->root, t->root, &s), 0);
        assert_non_null(s);
        return s;
}

/* A thermal zone the way the kernel lays it out: class symlink into devices/virtual. */
__attribute__((unused))
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
