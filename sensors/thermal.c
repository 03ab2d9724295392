/* thermal.c — thermal zones (temp, mode, trip points) from /sys/class/thermal. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "source.h"
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

static int thermal_probe(struct sensors *s, void *state) {
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
        return r;
}

/* Finds temperatures only: temps.c reads them and makes their channels. */
const struct sensors_source thermal_source = {
        .name = "thermal",
        .probe = thermal_probe,
};
