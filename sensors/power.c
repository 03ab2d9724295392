/* power.c — the board's supply: the Raspberry Pi's rpi_volt hwmon chip and its under-voltage alarm. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "source.h"
#include "sysfs-util.h"

/* The first hwmon chip named rpi_volt with an in0_lcrit_alarm: the firmware
 * raises it while the supply is below about 4.63 V. Absent elsewhere. */
static int power_probe(struct sensors *s, void *state) {
        char base[400], path[700], name[64];
        int *idx, n, r;

        s->power.fd = -1;
        r = sysfs_path(base, sizeof(base), "%s/sys/class/hwmon", sysfs_prefix(s->sysfs_root));
        if (r < 0)
                return r;
        n = sysfs_list_indices(base, "hwmon", "", &idx);
        if (n <= 0)
                return 0;
        for (int i = 0; i < n && s->power.fd < 0; i++) {
                if (sysfs_path(path, sizeof(path), "%s/hwmon%d/name", base, idx[i]) < 0 ||
                    sysfs_read_file(path, name, sizeof(name)) <= 0 || (name[strcspn(name, "\n")] = '\0', 0) ||
                    strcmp(name, "rpi_volt") != 0 ||
                    sysfs_path(path, sizeof(path), "%s/hwmon%d/in0_lcrit_alarm", base, idx[i]) < 0)
                        continue;
                int fd = sysfs_open(path);
                if (fd < 0)
                        continue;
                s->power.fd = fd;
                s->power.present = true;
                snprintf(s->power.source, sizeof(s->power.source), "rpi_volt");
        }
        free(idx);
        return 0;
}

/* The alarm file says 0 or 1. */
static int power_read(struct sensors *s, void *state, int64_t now_ms) {
        struct power_info *p = &s->power;
        char buf[16];
        long long v;
        ssize_t n;

        if (!p->present)
                return 0;
        n = sysfs_pread(p->fd, buf, sizeof(buf));
        if (n < 0 || sysfs_parse_ll(buf, &v) < 0 || (v != 0 && v != 1)) {
                p->ok = false;
                p->error = n < 0 ? (int) -n : EBADMSG;
                return 1;
        }
        p->ok = true;
        p->error = 0;
        p->undervoltage = v == 1;
        return 0;
}

static void power_free(struct sensors *s, void *state) {
        if (s->power.fd >= 0)
                close(s->power.fd);
        s->power.fd = -1;
}

/* One channel where the kernel or the firmware (vcio.c) tells. */
static size_t power_count(const struct sensors *s, const void *state) {
        return s->power.present || s->firmware.present;
}

static int power_value(const struct sensors *s, const void *state, size_t i, double *ret) {
        int flag = sensors_undervoltage(s);

        if (i != 0)
                return -1;
        *ret = flag > 0;                                /* 1 while too low */
        return flag >= 0 ? 1 : -1;
}

static const struct sensors_channels power_channels[] = {
        { .kind = SENSOR_KIND_POWER, .unit = "flag", .prefix = "undervoltage", .exact = true,
          .count = power_count, .value = power_value },
};

const struct sensors_source power_source = {
        .name = "power",
        .probe = power_probe,
        .read = power_read,
        .free = power_free,
        .channels = power_channels,
        .n_channels = 1,
};
