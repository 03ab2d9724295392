/* power-draw.c — the board's power draw in watts from hwmon power meters (INA219/INA226 and the like). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "source.h"
#include "sysfs-util.h"

/*
 * A meter is an hwmon chip's powerN_input (microwatts) or, on a chip with
 * no power input, its currN_input (milliamperes) with the inN_input
 * (millivolts) of the same N: ina2xx's curr1 and in1 are the current and
 * the bus voltage. Ids: "power:<chip name>/powerN" or ".../currN", the
 * chip's name followed by "@hwmonM" when an earlier chip took the id.
 */

#define POWER_DRAW_MAX 16               /* meters kept; more is not a board */
#define POWER_DRAW_MAX_W 10000.0        /* W; a reading above is garbage */

struct power_meter {
        char id[SENSORS_CHANNEL_ID_MAX];
        int fd;                         /* powerN_input or currN_input, -1 when the open failed */
        int fd_in;                      /* inN_input, -1 for a power input */
        bool ok;
        int error;                      /* positive errno of the last failed read */
        double watts;                   /* W, the last good value */
        uint64_t read_errors;
};

struct power_draw {
        struct power_meter m[POWER_DRAW_MAX];
        size_t n;
};

int sensors_parse_power(const char *power_uw, const char *curr_ma, const char *in_mv, double *ret_w) {
        long long a, b;
        double w;

        if (power_uw) {
                if (sysfs_parse_ll(power_uw, &a) < 0)
                        return -EBADMSG;
                w = (double) a / 1e6;                   /* microwatts -> W */
        } else {
                if (!curr_ma || !in_mv || sysfs_parse_ll(curr_ma, &a) < 0 || sysfs_parse_ll(in_mv, &b) < 0)
                        return -EBADMSG;
                /* mA x mV -> W; a shunt wired the other way round reads negative */
                w = fabs((double) a) * (double) b / 1e6;
        }
        if (!(w >= 0) || w > POWER_DRAW_MAX_W)
                return -ERANGE;
        *ret_w = w;
        return 0;
}

static bool power_draw_taken(const struct power_draw *d, const char *id) {
        for (size_t i = 0; i < d->n; i++)
                if (strcmp(d->m[i].id, id) == 0)
                        return true;
        return false;
}

/* A meter on the files <dir>/<what>N_input (and inN_input when with_in). */
static void power_draw_add(struct sensors *s, struct power_draw *d, const char *dir, const char *chip, int hwmon,
                           const char *what, int n, bool with_in) {
        struct power_meter *m = &d->m[d->n];
        char path[700];

        if (d->n >= POWER_DRAW_MAX)
                return;
        *m = (struct power_meter) { .fd = -1, .fd_in = -1 };
        snprintf(m->id, sizeof m->id, "power:%.60s/%s%d", chip, what, n);
        if (power_draw_taken(d, m->id))
                snprintf(m->id, sizeof m->id, "power:%.48s@hwmon%d/%s%d", chip, hwmon, what, n);
        if (sysfs_path(path, sizeof path, "%s/%s%d_input", dir, what, n) < 0 || (m->fd = sysfs_open(path)) < 0)
                return;
        sensors_watch(s, path);
        if (with_in) {
                if (sysfs_path(path, sizeof path, "%s/in%d_input", dir, n) < 0 ||
                    (m->fd_in = sysfs_open(path)) < 0) {
                        close(m->fd);
                        return;
                }
                sensors_watch(s, path);
        }
        d->n++;
}

/* One chip: its power inputs, else each current with its voltage. */
static int power_meters_chip(const char *base, int hwmon,
                             int (*found)(void *, const char *, const char *, int, const char *, int), void *userdata) {
        char dir[PATH_MAX], path[PATH_MAX + 32], name[64] = "";
        int *idx, n, r = 0;

        if (sysfs_path(dir, sizeof dir, "%s/hwmon%d", base, hwmon) < 0)
                return 0;
        if (sysfs_path(path, sizeof path, "%s/name", dir) >= 0 && sysfs_read_file(path, name, sizeof name) > 0)
                name[strcspn(name, "/ \t\n")] = '\0';
        if (!name[0])
                snprintf(name, sizeof name, "hwmon%d", hwmon);
        n = sysfs_list_indices(dir, "power", "_input", &idx);
        if (n < 0)
                return n;
        for (int i = 0; i < n && r >= 0; i++)
                r = found(userdata, dir, name, hwmon, "power", idx[i]);
        free(idx);
        if (n > 0 || r < 0)
                return r;
        n = sysfs_list_indices(dir, "curr", "_input", &idx);
        if (n < 0)
                return n;
        for (int i = 0; i < n && r >= 0; i++)
                if (sysfs_path(path, sizeof path, "%s/in%d_input", dir, idx[i]) >= 0 && access(path, F_OK) == 0)
                        r = found(userdata, dir, name, hwmon, "curr", idx[i]);
        free(idx);
        return r;
}

int sensors_power_meters_each(const char *base,
                              int (*found)(void *userdata, const char *dir, const char *chip, int hwmon,
                                           const char *what, int n),
                              void *userdata) {
        int *idx, n, r = 0;

        n = sysfs_list_indices(base, "hwmon", "", &idx);
        if (n <= 0)
                return n;
        for (int i = 0; i < n && r >= 0; i++)
                r = power_meters_chip(base, idx[i], found, userdata);
        free(idx);
        return r;
}

struct power_draw_probing {
        struct sensors *s;
        struct power_draw *d;
};

static int power_draw_found(void *userdata, const char *dir, const char *chip, int hwmon, const char *what, int n) {
        struct power_draw_probing *p = userdata;

        power_draw_add(p->s, p->d, dir, chip, hwmon, what, n, strcmp(what, "curr") == 0);
        return 0;
}

static int power_draw_probe(struct sensors *s, void *state) {
        struct power_draw_probing p = { s, state };
        char base[400];
        int r;

        r = sysfs_path(base, sizeof base, "%s/sys/class/hwmon", sysfs_prefix(s->sysfs_root));
        if (r < 0)
                return r;
        return sensors_power_meters_each(base, power_draw_found, &p);
}

static int power_draw_read_one(struct sensors *s, struct power_meter *m) {
        char a[32], b[32];
        ssize_t n;
        int r;

        n = sensors_pread(s, m->fd, a, sizeof a);
        if (n >= 0 && m->fd_in >= 0)
                n = sensors_pread(s, m->fd_in, b, sizeof b);
        r = n < 0 ? (int) n : sensors_parse_power(m->fd_in < 0 ? a : NULL, a, b, &m->watts);
        if (r < 0) {
                m->ok = false;
                m->error = -r;
                sensors_note_error(s, r);
                return r;
        }
        m->ok = true;
        m->error = 0;
        return 0;
}

static int power_draw_read(struct sensors *s, void *state, int64_t now_ms) {
        struct power_draw *d = state;
        int failed = 0;

        for (size_t i = 0; i < d->n; i++)
                failed += sensors_count_failure(power_draw_read_one(s, &d->m[i]), &d->m[i].read_errors);
        return failed;
}

static void power_draw_carry(struct sensors *to, void *to_state, const struct sensors *from, const void *from_state) {
        struct power_draw *d = to_state;
        const struct power_draw *o = from_state;

        for (size_t i = 0; i < d->n; i++)
                for (size_t j = 0; j < o->n; j++)
                        if (strcmp(d->m[i].id, o->m[j].id) == 0) {
                                d->m[i].read_errors = o->m[j].read_errors;
                                d->m[i].watts = o->m[j].watts;
                                d->m[i].ok = o->m[j].ok;
                                d->m[i].error = o->m[j].error;
                        }
}

static void power_draw_free(struct sensors *s, void *state) {
        struct power_draw *d = state;

        for (size_t i = 0; i < d->n; i++) {
                if (d->m[i].fd >= 0)
                        close(d->m[i].fd);
                if (d->m[i].fd_in >= 0)
                        close(d->m[i].fd_in);
        }
        d->n = 0;
}

static size_t power_draw_count(const struct sensors *s, const void *state) {
        const struct power_draw *d = state;

        return d ? d->n : 0;
}

static const char *power_draw_id(const struct sensors *s, const void *state, size_t i) {
        const struct power_draw *d = state;

        return d->m[i].id;
}

static uint64_t power_draw_errors(const struct sensors *s, const void *state, size_t i) {
        const struct power_draw *d = state;

        return i < d->n ? d->m[i].read_errors : 0;
}

static int power_draw_value(const struct sensors *s, const void *state, size_t i, double *ret) {
        const struct power_draw *d = state;

        if (!d || i >= d->n)
                return -1;
        *ret = d->m[i].watts;                   /* W */
        return d->m[i].ok ? 1 : -1;
}

static const struct sensors_channels power_draw_channels[] = {
        { .kind = SENSOR_KIND_POWER_DRAW, .unit = "watts", .prefix = "power:", .counts_errors = true,
          .count = power_draw_count, .id = power_draw_id, .errors = power_draw_errors, .value = power_draw_value },
};

const struct sensors_source power_draw_source = {
        .name = "power_draw",
        .state_size = sizeof(struct power_draw),
        .probe = power_draw_probe,
        .read = power_draw_read,
        .carry = power_draw_carry,
        .free = power_draw_free,
        .channels = power_draw_channels,
        .n_channels = 1,
};
