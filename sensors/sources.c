/* sources.c — the mapping table: every source of the sensors library, in the order of their probes and their channels. */
#include "source.h"

/* Each source's one export (its file's last lines). */
extern const struct sensors_source board_source;
extern const struct sensors_source thermal_source;
extern const struct sensors_source hwmon_source;
extern const struct sensors_source temps_source;
extern const struct sensors_source cooling_source;
extern const struct sensors_source cpufreq_source;
extern const struct sensors_source load_source;
extern const struct sensors_source power_source;
extern const struct sensors_source vcio_source;
extern const struct sensors_source power_draw_source;

/*
 * The order is the channels' order (the history's and samples.csv's
 * columns, /metrics), so a new source goes where its channels should come,
 * usually last. thermal and hwmon only find temperatures: temps, after
 * them, reads them all and holds their channels; hwmon comes after thermal
 * to tell which of its inputs repeat a thermal zone. power's undervoltage
 * channel also asks the firmware (vcio), whichever comes first.
 */
const struct sensors_source *const sensors_sources[] = {
        &board_source,
        &thermal_source,
        &hwmon_source,
        &temps_source,
        &cooling_source,
        &cpufreq_source,
        &load_source,
        &power_source,
        &vcio_source,
        &power_draw_source,
};

const size_t sensors_n_sources = sizeof sensors_sources / sizeof sensors_sources[0];
