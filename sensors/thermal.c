/* thermal.c — thermal zones (temp, mode, trip points) and cooling devices from /sys/class/thermal. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sensors-internal.h"
#include "sysfs-util.h"

static void thermal_read_string(const char *dir, const char *file, char *buf, size_t size) {
        char path[1024], text[128];

        buf[0] = '\0';
        if (sysfs_path(path, sizeof(path), "%s/%s", dir, file) < 0)
                return;
        if (sysfs_read_file(path, text, sizeof(text)) >= 0)
                sysfs_strlcpy(buf, text, size);
}

static void thermal_probe_trip(struct trip_point *tp, const char *zdir, int index) {
        char path[1024], text[64];
        long long raw;
        bool quirk = false;

        tp->index = index;
        snprintf(path, sizeof(path), "trip_point_%d_type", index);
        thermal_read_string(zdir, path, tp->type, sizeof(tp->type));

        if (sysfs_path(path, sizeof(path), "%s/trip_point_%d_temp", zdir, index) >= 0 &&
            sysfs_read_file(path, text, sizeof(text)) >= 0)
                tp->has_temp = sensors_parse_limit(text, &tp->temp_mc, &quirk);

        /* Hysteresis is a difference: it comes in the unit of its trip
         * temperature, so a whole-degree trip has a whole-degree hyst. */
        if (sysfs_path(path, sizeof(path), "%s/trip_point_%d_hyst", zdir, index) >= 0 &&
            sysfs_read_file(path, text, sizeof(text)) >= 0 &&
            sysfs_parse_ll(text, &raw) >= 0 && raw >= 0 && !sensors_temp_is_sentinel(raw)) {
                tp->has_hyst = true;
                tp->hyst_mc = (int32_t) (quirk ? raw * 1000 : raw);   /* millidegrees */
        }
}

static int thermal_probe_trips(struct temp_sensor *t, const char *zdir) {
        int *idx, n;

        n = sysfs_list_indices(zdir, "trip_point_", "_temp", &idx);
        if (n < 0)
                return n;
        for (int i = 0; i < n && t->n_trips < SENSORS_TRIPS_MAX; i++)
                thermal_probe_trip(&t->trips[t->n_trips++], zdir, idx[i]);
        free(idx);
        return 0;
}

static int thermal_probe_zone(struct sensors *s, const char *base, int index) {
        char zdir[512], path[600];
        struct temp_sensor *t;
        int fd, r;

        r = sysfs_path(zdir, sizeof(zdir), "%s/thermal_zone%d", base, index);
        if (r < 0)
                return r;
        r = sysfs_path(path, sizeof(path), "%s/temp", zdir);
        if (r < 0)
                return r;
        fd = sysfs_open(path);
        if (fd == -ENOENT || fd == -ENOTDIR)
                return 0;       /* no temperature: nothing to sample */

        r = sensors_add_temp(s, path, fd, &t);
        if (r < 0)
                return r;
        snprintf(t->id, sizeof(t->id), "thermal_zone%d", index);
        t->source = TEMP_SOURCE_THERMAL;
        thermal_read_string(zdir, "type", t->type, sizeof(t->type));
        thermal_read_string(zdir, "mode", t->mode, sizeof(t->mode));
        return thermal_probe_trips(t, zdir);
}

static int thermal_probe_cooling(struct sensors *s, const char *base, int index) {
        char cdir[512], path[600], text[64];
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
        thermal_read_string(cdir, "type", c->type, sizeof(c->type));
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

int thermal_probe(struct sensors *s) {
        char base[400];
        int *idx, n, r;

        r = sysfs_path(base, sizeof(base), "%s/sys/class/thermal", sysfs_prefix(s->sysfs_root));
        if (r < 0)
                return r;

        n = sysfs_list_indices(base, "thermal_zone", "", &idx);
        if (n < 0)
                return n;
        for (int i = 0; i < n && r >= 0; i++)
                r = thermal_probe_zone(s, base, idx[i]);
        free(idx);
        if (r < 0)
                return r;

        n = sysfs_list_indices(base, "cooling_device", "", &idx);
        if (n < 0)
                return n;
        for (int i = 0; i < n && r >= 0; i++)
                r = thermal_probe_cooling(s, base, idx[i]);
        free(idx);
        return r;
}

int cooling_read(struct sensors *s, struct cooling_device *c) {
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

void thermal_free(struct sensors *s) {
        for (size_t i = 0; i < s->n_cooling; i++)
                if (s->cooling[i].fd_cur >= 0)
                        close(s->cooling[i].fd_cur);
        free(s->cooling);
        s->cooling = NULL;
        s->n_cooling = 0;
}
