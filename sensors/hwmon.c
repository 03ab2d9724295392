/* hwmon.c — hwmon temperature inputs with labels and limits, under ids that survive hwmonN reordering. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "source.h"
#include "sysfs-util.h"

/*
 * Ids: "hwmon:<name>/tempN" when no other chip with temperatures has that
 * name. Chips sharing a name become "<name>@<devname>", devname being the
 * basename of the chip's resolved `device` link ("0000:01:00.0",
 * "coretemp.0"), which names the same hardware across boots whatever hwmonX
 * the kernel hands out. Without a device link the hwmonX index is the only
 * way to tell them apart ("<name>@hwmon3"), and when name and devname still
 * collide "~hwmonX" is appended; both of these are then only as stable as
 * the probe order of the kernel.
 */

struct hwmon_chip {
        int index;                              /* X in hwmonX */
        char dir[512];                          /* resolved chip directory */
        char attr_dir[600];                     /* where tempN_input live: dir, or dir/device on old kernels */
        char name[SENSORS_NAME_MAX];            /* name file, else devname, else "hwmonX" */
        char devname[SENSORS_NAME_MAX];         /* basename of realpath(device), "" without one */
        char chip_id[SENSORS_ID_MAX - 16];      /* id part before "/tempN" */
        int *temps;                             /* sorted N of tempN_input */
        int n_temps;
        bool collides;                          /* chip_id shared with another chip */
        bool under_zone;                        /* registered by the thermal core under a thermal_zoneN */
};

static void hwmon_sanitize(char *s) {
        /* The id is "<chip-id>/tempN": keep '/' and blanks out of the chip part. */
        for (; *s; s++)
                if (*s == '/' || isspace((unsigned char) *s) || iscntrl((unsigned char) *s))
                        *s = '_';
}

static void hwmon_read_name(struct hwmon_chip *c) {
        char path[700], text[SENSORS_NAME_MAX];

        c->name[0] = '\0';
        if (sysfs_path(path, sizeof(path), "%s/name", c->dir) >= 0 &&
            sysfs_read_file(path, text, sizeof(text)) > 0)
                sysfs_strlcpy(c->name, text, sizeof(c->name));
        else if (sysfs_path(path, sizeof(path), "%s/device/name", c->dir) >= 0 &&
                 sysfs_read_file(path, text, sizeof(text)) > 0)
                sysfs_strlcpy(c->name, text, sizeof(c->name));
        else if (c->devname[0])
                sysfs_strlcpy(c->name, c->devname, sizeof(c->name));
        else
                snprintf(c->name, sizeof(c->name), "hwmon%d", c->index);
}

/* Fills the chip; returns 1 when it has temperature inputs, 0 to skip it, or -errno. */
static int hwmon_chip_load(const struct sensors *s, const char *base, int index, struct hwmon_chip *c) {
        char path[700], real[512];
        int r;

        c->index = index;
        r = sysfs_path(path, sizeof(path), "%s/hwmon%d", base, index);
        if (r < 0)
                return r;
        /* The class entry is a symlink, perhaps with a trailing slash. */
        if (sysfs_resolve(s->sysfs_root, path, c->dir, sizeof(c->dir)) < 0)
                return 0;
        if (sysfs_path(path, sizeof(path), "%s/device", c->dir) >= 0 &&
            sysfs_resolve(s->sysfs_root, path, real, sizeof(real)) >= 0)
                sysfs_basename(real, c->devname, sizeof(c->devname));
        hwmon_read_name(c);
        {
                /* The thermal core's own hwmon: .../thermal_zoneN/hwmonX. */
                char parent[512], last[SENSORS_NAME_MAX];
                char *slash;
                int zone;

                sysfs_strlcpy(parent, c->dir, sizeof(parent));
                slash = strrchr(parent, '/');
                if (slash) {
                        *slash = '\0';
                        sysfs_basename(parent, last, sizeof(last));
                        c->under_zone = sysfs_match_index(last, "thermal_zone", "", &zone);
                }
        }

        snprintf(c->attr_dir, sizeof(c->attr_dir), "%s", c->dir);
        r = sysfs_list_indices(c->attr_dir, "temp", "_input", &c->temps);
        if (r == 0) {
                /* Before 3.x cleanups the attributes lived on the parent device. */
                free(c->temps);
                snprintf(c->attr_dir, sizeof(c->attr_dir), "%s/device", c->dir);
                r = sysfs_list_indices(c->attr_dir, "temp", "_input", &c->temps);
        }
        if (r < 0)
                return r;
        c->n_temps = r;
        return r > 0;
}

static size_t hwmon_count_name(const struct hwmon_chip *chips, size_t n, const char *name) {
        size_t k = 0;

        for (size_t i = 0; i < n; i++)
                k += strcmp(chips[i].name, name) == 0;
        return k;
}

static size_t hwmon_count_id(const struct hwmon_chip *chips, size_t n, const char *id) {
        size_t k = 0;

        for (size_t i = 0; i < n; i++)
                k += strcmp(chips[i].chip_id, id) == 0;
        return k;
}

static void hwmon_assign_ids(struct hwmon_chip *chips, size_t n) {
        for (size_t i = 0; i < n; i++) {
                struct hwmon_chip *c = &chips[i];

                if (hwmon_count_name(chips, n, c->name) == 1)
                        snprintf(c->chip_id, sizeof(c->chip_id), "%.60s", c->name);
                else if (c->devname[0])
                        snprintf(c->chip_id, sizeof(c->chip_id), "%.40s@%.38s", c->name, c->devname);
                else
                        snprintf(c->chip_id, sizeof(c->chip_id), "%.40s@hwmon%d", c->name, c->index);
                hwmon_sanitize(c->chip_id);
        }
        /* Same name under the same device (or a truncated id): only the index is left. */
        for (size_t i = 0; i < n; i++)
                chips[i].collides = hwmon_count_id(chips, n, chips[i].chip_id) > 1;
        for (size_t i = 0; i < n; i++)
                if (chips[i].collides) {
                        char *id = chips[i].chip_id;
                        size_t len = strlen(id) > 63 ? 63 : strlen(id);

                        snprintf(id + len, sizeof(chips[i].chip_id) - len, "~hwmon%d", chips[i].index);
                }
}

static int hwmon_cmp_chip(const void *a, const void *b) {
        const struct hwmon_chip *x = a, *y = b;

        return strcmp(x->chip_id, y->chip_id);
}

static void hwmon_read_limits(struct temp_sensor *t, const char *attr_dir, int n) {
        char path[700], text[64];
        bool quirk;

        if (sysfs_path(path, sizeof(path), "%s/temp%d_label", attr_dir, n) >= 0 &&
            sysfs_read_file(path, text, sizeof(text)) >= 0)
                sysfs_strlcpy(t->label, text, sizeof(t->label));
        if (sysfs_path(path, sizeof(path), "%s/temp%d_max", attr_dir, n) >= 0 &&
            sysfs_read_file(path, text, sizeof(text)) >= 0)
                t->has_max = sensors_parse_limit(text, &t->max_mc, &quirk);
        if (sysfs_path(path, sizeof(path), "%s/temp%d_crit", attr_dir, n) >= 0 &&
            sysfs_read_file(path, text, sizeof(text)) >= 0)
                t->has_crit = sensors_parse_limit(text, &t->crit_mc, &quirk);
}

/* The thermal core names its hwmon after the zone type with '-' made '_'. */
static bool hwmon_same_type(const char *zone_type, const char *chip) {
        for (; *zone_type && *chip; zone_type++, chip++)
                if (*zone_type != *chip && !(*zone_type == '-' && *chip == '_'))
                        return false;
        return *zone_type == *chip;
}

/* The thermal core's hwmon has one tempN_input per zone of its type, in
 * zone order: tempN mirrors the N-th zone whose type is the chip's name. */
static void hwmon_find_mirror(const struct sensors *s, const struct hwmon_chip *c, int n, struct temp_sensor *t) {
        int k = 0;

        if (!c->under_zone)
                return;
        for (size_t i = 0; i < s->n_temps; i++) {
                const struct temp_sensor *z = &s->temps[i];

                if (z->source == TEMP_SOURCE_THERMAL && hwmon_same_type(z->type, c->name) && ++k == n) {
                        sysfs_strlcpy(t->mirror_of, z->id, sizeof(t->mirror_of));
                        return;
                }
        }
}

static int hwmon_add_chip(struct sensors *s, const struct hwmon_chip *c) {
        for (int i = 0; i < c->n_temps; i++) {
                char path[700];
                struct temp_sensor *t;
                int fd, r;

                r = sysfs_path(path, sizeof(path), "%s/temp%d_input", c->attr_dir, c->temps[i]);
                if (r < 0)
                        return r;
                fd = sysfs_open(path);
                if (fd == -ENOENT)
                        continue;
                r = sensors_add_temp(s, path, fd, &t);
                if (r < 0)
                        return r;
                snprintf(t->id, sizeof(t->id), "hwmon:%s/temp%d", c->chip_id, c->temps[i]);
                t->source = TEMP_SOURCE_HWMON;
                sysfs_strlcpy(t->type, c->name, sizeof(t->type));
                sysfs_strlcpy(t->chip, c->name, sizeof(t->chip));
                snprintf(t->sensor, sizeof(t->sensor), "temp%d", c->temps[i]);
                hwmon_read_limits(t, c->attr_dir, c->temps[i]);
                hwmon_find_mirror(s, c, c->temps[i], t);
        }
        return 0;
}

static void hwmon_free_chips(struct hwmon_chip *chips, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(chips[i].temps);
        free(chips);
}

static int hwmon_probe(struct sensors *s, void *state) {
        struct hwmon_chip *chips;
        size_t n_chips = 0;
        char base[400];
        int *idx, n, r;

        r = sysfs_path(base, sizeof(base), "%s/sys/class/hwmon", sysfs_prefix(s->sysfs_root));
        if (r < 0)
                return r;
        n = sysfs_list_indices(base, "hwmon", "", &idx);
        if (n <= 0)
                return n;
        chips = calloc((size_t) n, sizeof(*chips));
        if (!chips) {
                free(idx);
                return -ENOMEM;
        }
        for (int i = 0; i < n && r >= 0; i++) {
                r = hwmon_chip_load(s, base, idx[i], &chips[n_chips]);
                if (r > 0)
                        n_chips++;
                else {
                        free(chips[n_chips].temps);
                        memset(&chips[n_chips], 0, sizeof(chips[n_chips]));
                }
        }
        free(idx);
        if (r >= 0) {
                hwmon_assign_ids(chips, n_chips);
                qsort(chips, n_chips, sizeof(*chips), hwmon_cmp_chip);
                for (size_t i = 0; i < n_chips && r >= 0; i++)
                        r = hwmon_add_chip(s, &chips[i]);
        }
        hwmon_free_chips(chips, n_chips);
        return r < 0 ? r : 0;
}

/* Finds temperatures only: temps.c reads them and makes their channels. */
const struct sensors_source hwmon_source = {
        .name = "hwmon",
        .probe = hwmon_probe,
};
