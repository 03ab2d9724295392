/* cooling.c — thermal cooling devices (fans, CPU frequency caps) and their states from /sys/class/thermal. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "source.h"
#include "sysfs-util.h"

static int cooling_probe_one(struct sensors *s, const char *base, int index) {
        char cdir[512], path[600], text[64], type[128];
        struct cooling_device *c;
        long long v;
        int fd, r;

        r = sysfs_path(cdir, sizeof(cdir), "%s/cooling_device%d", base, index);
        if (r < 0)
                return r;
        r = sysfs_path(path, sizeof(path), "%s/cur_state", cdir);
        if (r < 0)
                return r;
        fd = sysfs_open(path);
        if (fd == -ENOENT || fd == -ENOTDIR)
                return 0;

        c = realloc(s->cooling, (s->n_cooling + 1) * sizeof(*c));
        if (!c) {
                if (fd >= 0)
                        close(fd);
                return -ENOMEM;
        }
        s->cooling = c;
        c = &s->cooling[s->n_cooling++];
        memset(c, 0, sizeof(*c));
        snprintf(c->id, sizeof(c->id), "cooling_device%d", index);
        if (sysfs_path(path, sizeof(path), "%s/type", cdir) >= 0 && sysfs_read_file(path, type, sizeof(type)) >= 0)
                sysfs_strlcpy(c->type, type, sizeof(c->type));
        c->fd_cur = fd < 0 ? -1 : fd;
        if (fd >= 0)
                sensors_watch(s, path);
        c->error = fd < 0 ? -fd : 0;
        c->max_state = -1;
        if (sysfs_path(path, sizeof(path), "%s/max_state", cdir) >= 0 &&
            sysfs_read_file(path, text, sizeof(text)) >= 0 && sysfs_parse_ll(text, &v) >= 0 &&
            v >= 0 && v <= INT32_MAX)
                c->max_state = (long) v;        /* device steps */
        return 0;
}

static int cooling_probe(struct sensors *s, void *state) {
        char base[400];
        int *idx, n, r;

        r = sysfs_path(base, sizeof(base), "%s/sys/class/thermal", sysfs_prefix(s->sysfs_root));
        if (r < 0)
                return r;
        n = sysfs_list_indices(base, "cooling_device", "", &idx);
        if (n < 0)
                return n;
        for (int i = 0; i < n && r >= 0; i++)
                r = cooling_probe_one(s, base, idx[i]);
        free(idx);
        return r;
}

static int cooling_read_one(struct sensors *s, struct cooling_device *c) {
        char buf[32];
        long long v;
        ssize_t n;
        int r;

        if (c->fd_cur < 0)
                return -c->error;
        n = sensors_pread(s, c->fd_cur, buf, sizeof(buf));
        r = n < 0 ? (int) n : sysfs_parse_ll(buf, &v);
        if (r >= 0 && (v < 0 || v > INT32_MAX))
                r = -ERANGE;
        if (r < 0) {
                c->ok = false;
                c->error = -r;
                sensors_note_error(s, r);
                return r;
        }
        c->cur_state = (long) v;                /* device steps */
        c->ok = true;
        c->error = 0;
        return 0;
}

static int cooling_read(struct sensors *s, void *state, int64_t now_ms) {
        int failed = 0;

        for (size_t i = 0; i < s->n_cooling; i++)
                failed += sensors_count_failure(cooling_read_one(s, &s->cooling[i]), &s->cooling[i].read_errors);
        return failed;
}

static void cooling_carry(struct sensors *to, void *to_state, const struct sensors *from, const void *from_state) {
        for (size_t i = 0; i < to->n_cooling; i++)
                for (size_t j = 0; j < from->n_cooling; j++) {
                        struct cooling_device *c = &to->cooling[i];
                        const struct cooling_device *o = &from->cooling[j];

                        if (strcmp(c->id, o->id) != 0)
                                continue;
                        c->read_errors = o->read_errors;
                        if (c->fd_cur < 0)
                                continue;
                        c->cur_state = o->cur_state;
                        c->ok = o->ok;
                        c->error = o->error;
                }
}

static void cooling_free(struct sensors *s, void *state) {
        for (size_t i = 0; i < s->n_cooling; i++)
                if (s->cooling[i].fd_cur >= 0)
                        close(s->cooling[i].fd_cur);
        free(s->cooling);
        s->cooling = NULL;
        s->n_cooling = 0;
}

static size_t cooling_count(const struct sensors *s, const void *state) {
        return s->n_cooling;
}

static const char *cooling_id(const struct sensors *s, const void *state, size_t i) {
        return s->cooling[i].id;
}

static uint64_t cooling_errors(const struct sensors *s, const void *state, size_t i) {
        return s->cooling[i].read_errors;
}

static int cooling_value(const struct sensors *s, const void *state, size_t i, double *ret) {
        if (i >= s->n_cooling)
                return -1;
        *ret = (double) s->cooling[i].cur_state;        /* device steps */
        return s->cooling[i].ok ? 1 : -1;
}

/* Named after their sysfs directories, "cooling_deviceN". */
static const struct sensors_channels cooling_channels[] = {
        { .kind = SENSOR_KIND_COOLING, .unit = "state", .prefix = "cooling_device", .counts_errors = true,
          .count = cooling_count, .id = cooling_id, .errors = cooling_errors, .value = cooling_value },
};

const struct sensors_source cooling_source = {
        .name = "cooling",
        .probe = cooling_probe,
        .read = cooling_read,
        .carry = cooling_carry,
        .free = cooling_free,
        .channels = cooling_channels,
        .n_channels = 1,
};
