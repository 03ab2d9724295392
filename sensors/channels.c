/* channels.c — the channel table: every reading of a struct sensors with its id, kind and unit, in one order. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sensors-internal.h"

/*
 * One row per kind, in the order the channels come (lm-sensors' feature
 * tables): how many channels of the kind s has, the id of each, and its
 * source's error count. Its reading is sensors_channel_read() (sensors.h),
 * inline for the tick. A new source is one file of the library, one row
 * here and one case there.
 */
struct channel_source {
        const char *unit;
        bool counts_errors;             /* its sources keep their own read_errors */
        /* The ids: prefix and something after it (the source's own name),
         * exactly prefix when exact (a one-of-a-kind channel), or any id no
         * other row claims when NULL (the temperatures). */
        const char *prefix;
        bool exact;
        size_t (*count)(const struct sensors *s);
        const char *(*id)(const struct sensors *s, size_t i);   /* NULL: the prefix */
        uint64_t (*errors)(const struct sensors *s, size_t i);  /* read_errors; NULL: none kept */
};

/* ---- temperatures */

static size_t temp_channels_count(const struct sensors *s) {
        return s->n_temps;
}

static const char *temp_channel_id(const struct sensors *s, size_t i) {
        return s->temps[i].id;
}

static uint64_t temp_channel_errors(const struct sensors *s, size_t i) {
        return s->temps[i].read_errors;
}

/* ---- cooling devices */

static size_t cooling_channels_count(const struct sensors *s) {
        return s->n_cooling;
}

static const char *cooling_channel_id(const struct sensors *s, size_t i) {
        return s->cooling[i].id;
}

static uint64_t cooling_channel_errors(const struct sensors *s, size_t i) {
        return s->cooling[i].read_errors;
}

/* ---- cpufreq policies */

static size_t policy_channels_count(const struct sensors *s) {
        return s->n_policies;
}

static const char *policy_channel_id(const struct sensors *s, size_t i) {
        return s->policies[i].channel_id;
}

static uint64_t policy_channel_errors(const struct sensors *s, size_t i) {
        return s->policies[i].read_errors;
}

/* ---- CPU load: each CPU, then all of them, one read of /proc/stat */

static size_t cpu_load_channels_count(const struct sensors *s) {
        return s->load.n_cpus;
}

static const char *cpu_load_channel_id(const struct sensors *s, size_t i) {
        return s->load.cpu_ids[i];
}

static size_t one_channel(const struct sensors *s) {
        return 1;
}

static uint64_t load_channel_errors(const struct sensors *s, size_t i) {
        return s->load.read_errors;
}

/* ---- the supply and the firmware: no error count */

static size_t power_channels_count(const struct sensors *s) {
        return s->power.present || s->firmware.present;
}

static size_t throttle_channels_count(const struct sensors *s) {
        return s->firmware.present;
}

static const struct channel_source channel_table[_SENSOR_KIND_MAX] = {
        [SENSOR_KIND_TEMPERATURE] = {
                .unit = "celsius", .counts_errors = true,
                .count = temp_channels_count, .id = temp_channel_id, .errors = temp_channel_errors },
        /* thermal.c names them after their sysfs directories */
        [SENSOR_KIND_COOLING] = {
                .unit = "state", .counts_errors = true, .prefix = "cooling_device",
                .count = cooling_channels_count, .id = cooling_channel_id, .errors = cooling_channel_errors },
        [SENSOR_KIND_FREQUENCY] = {
                .unit = "hz", .counts_errors = true, .prefix = "cpufreq:",
                .count = policy_channels_count, .id = policy_channel_id, .errors = policy_channel_errors },
        [SENSOR_KIND_CPU_LOAD] = {
                .unit = "fraction", .prefix = "load:cpu",
                .count = cpu_load_channels_count, .id = cpu_load_channel_id, .errors = load_channel_errors },
        [SENSOR_KIND_LOAD] = {
                .unit = "fraction", .counts_errors = true, .prefix = "load:cpu", .exact = true,
                .count = one_channel, .errors = load_channel_errors },
        [SENSOR_KIND_POWER] = {
                .unit = "flag", .prefix = "undervoltage", .exact = true,
                .count = power_channels_count },
        [SENSOR_KIND_THROTTLE] = {
                .unit = "flag", .prefix = "throttled", .exact = true,
                .count = throttle_channels_count },
};

void channels_name(struct sensors *s) {
        const char *policy = channel_table[SENSOR_KIND_FREQUENCY].prefix;
        const char *cpu = channel_table[SENSOR_KIND_CPU_LOAD].prefix;

        for (size_t i = 0; i < s->n_policies; i++)
                snprintf(s->policies[i].channel_id, sizeof s->policies[i].channel_id, "%s%s", policy,
                         s->policies[i].id);
        for (size_t i = 0; i < s->load.n_cpus; i++)
                snprintf(s->load.cpu_ids[i], sizeof s->load.cpu_ids[i], "%s%d", cpu, s->load.cpu_index[i]);
}

static const char *channel_id(const struct sensors *s, enum sensor_kind kind, size_t i) {
        const struct channel_source *src = &channel_table[kind];

        return src->id ? src->id(s, i) : src->prefix;
}

static void channel_get(const struct sensors *s, enum sensor_kind kind, size_t i, struct sensor_channel *ret) {
        const struct channel_source *src = &channel_table[kind];
        int r;

        *ret = (struct sensor_channel) {
                .id = channel_id(s, kind, i),
                .kind = kind,
                .unit = src->unit,
                .index = i,
                .counts_errors = src->counts_errors,
        };
        r = sensors_channel_read(s, ret, &ret->value);
        ret->ok = r >= 0;
        ret->has_value = r > 0;
        ret->read_errors = src->errors ? src->errors(s, i) : 0;
}

bool sensors_channel_next(const struct sensors *s, struct sensors_iter *it, struct sensor_channel *ret) {
        for (; it->kind < _SENSOR_KIND_MAX; it->kind++, it->index = 0)
                if (it->index < channel_table[it->kind].count(s)) {
                        channel_get(s, (enum sensor_kind) it->kind, it->index++, ret);
                        return true;
                }
        return false;
}

enum sensor_kind sensors_id_kind(const char *id) {
        for (unsigned k = 0; k < _SENSOR_KIND_MAX; k++) {
                const char *prefix = channel_table[k].prefix;
                size_t len;

                if (!prefix || prefix[0] != id[0])      /* most ids part at the first byte */
                        continue;
                len = strlen(prefix);
                if (strncmp(id, prefix, len) == 0 && (id[len] == '\0') == channel_table[k].exact)
                        return (enum sensor_kind) k;
        }
        return SENSOR_KIND_TEMPERATURE;
}

/* Only the kind the id names can hold it. */
int sensors_channel_find(const struct sensors *s, const char *id, struct sensor_channel *ret) {
        enum sensor_kind kind = sensors_id_kind(id);
        size_t n = channel_table[kind].count(s);

        for (size_t i = 0; i < n; i++)
                if (strcmp(channel_id(s, kind, i), id) == 0) {
                        channel_get(s, kind, i, ret);
                        return 0;
                }
        return -ENOENT;
}
