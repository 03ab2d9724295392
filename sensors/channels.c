/* channels.c — every reading of a struct sensors as a channel with its id, kind and unit, in the sources' order. */
#include <errno.h>
#include <string.h>

#include "source.h"

/*
 * The channels are the groups each source's table declares (source.h),
 * walked in the order of the mapping table (sources.c, lm-sensors'
 * feature tables are the model): nothing here knows a source.
 */

static const char *const kind_names[_SENSOR_KIND_MAX] = {
        [SENSOR_KIND_TEMPERATURE] = "temperature",
        [SENSOR_KIND_COOLING] = "cooling",
        [SENSOR_KIND_FREQUENCY] = "frequency",
        [SENSOR_KIND_CPU_LOAD] = "cpu_load",
        [SENSOR_KIND_LOAD] = "load",
        [SENSOR_KIND_POWER] = "power",
        [SENSOR_KIND_THROTTLE] = "throttle",
        [SENSOR_KIND_POWER_DRAW] = "power_draw",
};

const char *sensors_kind_name(enum sensor_kind kind) {
        return (unsigned) kind < _SENSOR_KIND_MAX ? kind_names[kind] : NULL;
}

static const char *channel_id(const struct sensors *s, const struct sensors_channels *g, const void *state,
                              size_t i) {
        return g->id ? g->id(s, state, i) : g->prefix;
}

static void channel_get(const struct sensors *s, unsigned source, const struct sensors_channels *g, size_t i,
                        struct sensor_channel *ret) {
        const void *state = sensors_source_state(s, source);
        int r;

        *ret = (struct sensor_channel) {
                .id = channel_id(s, g, state, i),
                .kind = g->kind,
                .unit = g->unit,
                .index = i,
                .counts_errors = g->counts_errors,
                .read = g->value,
                .source = source,
        };
        r = g->value(s, state, i, &ret->value);
        ret->ok = r >= 0;
        ret->has_value = r > 0;
        ret->read_errors = g->errors ? g->errors(s, state, i) : 0;
}

bool sensors_channel_next(const struct sensors *s, struct sensors_iter *it, struct sensor_channel *ret) {
        for (; it->source < sensors_n_sources; it->source++, it->group = 0, it->index = 0) {
                const struct sensors_source *src = sensors_sources[it->source];
                const void *state = sensors_source_state(s, it->source);

                for (; it->group < src->n_channels; it->group++, it->index = 0) {
                        const struct sensors_channels *g = &src->channels[it->group];

                        if (it->index < g->count(s, state)) {
                                channel_get(s, it->source, g, it->index++, ret);
                                return true;
                        }
                }
        }
        return false;
}

static bool id_is_of(const struct sensors_channels *g, const char *id) {
        size_t len;

        if (!g->prefix || g->prefix[0] != id[0])        /* most ids part at the first byte */
                return false;
        len = strlen(g->prefix);
        return strncmp(id, g->prefix, len) == 0 && (id[len] == '\0') == g->exact;
}

enum sensor_kind sensors_id_kind(const char *id) {
        for (size_t k = 0; k < sensors_n_sources; k++)
                for (size_t j = 0; j < sensors_sources[k]->n_channels; j++)
                        if (id_is_of(&sensors_sources[k]->channels[j], id))
                                return sensors_sources[k]->channels[j].kind;
        return SENSOR_KIND_TEMPERATURE;
}

/* Only a group of the kind the id names can hold it. */
int sensors_channel_find(const struct sensors *s, const char *id, struct sensor_channel *ret) {
        enum sensor_kind kind = sensors_id_kind(id);

        for (unsigned k = 0; k < sensors_n_sources; k++) {
                const struct sensors_source *src = sensors_sources[k];
                const void *state = sensors_source_state(s, k);

                for (size_t j = 0; j < src->n_channels; j++) {
                        const struct sensors_channels *g = &src->channels[j];
                        size_t n;

                        if (g->kind != kind)
                                continue;
                        n = g->count(s, state);
                        for (size_t i = 0; i < n; i++)
                                if (strcmp(channel_id(s, g, state, i), id) == 0) {
                                        channel_get(s, k, g, i, ret);
                                        return 0;
                                }
                }
        }
        return -ENOENT;
}
