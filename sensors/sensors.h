/* sensors.h — discover and read thermal zones, hwmon, cpufreq, CPU load and board identity. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Library contract: no logging, no globals. Functions return 0 or a negative
 * errno. Probe once (open every file, keep the fds), then sensors_read() on
 * every tick does straight-line pread() on the kept fds. All temperatures are
 * millidegrees Celsius (int32_t, "_mc"), frequencies kHz as the kernel gives
 * them ("_khz"), times Unix milliseconds ("_ms", int64_t so 32-bit time_t
 * boards are fine).
 */

#define SENSORS_ID_MAX 96
#define SENSORS_NAME_MAX 64
#define SENSORS_TRIPS_MAX 16
#define SENSORS_FREQS_MAX 64
#define SENSORS_CPUS_MAX 256
#define SENSORS_CHANNEL_ID_MAX (SENSORS_ID_MAX + 16)    /* bytes of a channel id, "cpufreq:" + a policy id */
#define SENSORS_CPU_LOAD_ID_MAX 24                     /* bytes of "load:cpuN" */

/* A temperature whose reads take longer than this many microseconds is
 * read from then on by a reader thread of the library, so one slow chip
 * (I2C hwmon, a firmware-backed sensor) cannot delay the tick: decided at
 * probe (two timed reads, both slow) or after SENSORS_SLOW_READS slow tick
 * reads in a row (one read delayed by the scheduler is not a slow chip). */
#define SENSORS_SLOW_US 2000
#define SENSORS_SLOW_READS 3
/* Temperature ids a re-probe remembers as gone (a vanished sensor that may
 * come back); past this many the oldest are forgotten. */
#define SENSORS_MISSING_MAX 16

/* The SBC community's rule: a positive raw value below this is whole degrees. */
#define SENSORS_DEGREE_QUIRK_BELOW 1000

enum temp_source {
        TEMP_SOURCE_THERMAL,
        TEMP_SOURCE_HWMON,
};

struct trip_point {
        int index;                      /* N in trip_point_N_* */
        char type[16];                  /* passive, active, hot, critical */
        bool has_temp;
        int32_t temp_mc;                /* millidegrees C */
        bool has_hyst;
        int32_t hyst_mc;                /* millidegrees C */
};

struct temp_sensor {
        char id[SENSORS_ID_MAX];        /* "thermal_zone0", "hwmon:<chip-id>/temp1" */
        enum temp_source source;
        char type[SENSORS_NAME_MAX];    /* thermal: zone type; hwmon: chip name ("" when none) */
        char chip[SENSORS_NAME_MAX];    /* hwmon: chip name, "" for thermal */
        char sensor[16];                /* hwmon: "temp1", "" for thermal */
        char label[SENSORS_NAME_MAX];   /* hwmon tempN_label, "" when none */
        char mode[16];                  /* thermal zone mode (enabled/disabled), "" when absent */
        char path[512];                 /* file read every tick, for error messages */
        int fd;                         /* kept open, -1 when the open failed */

        struct trip_point trips[SENSORS_TRIPS_MAX];
        size_t n_trips;
        bool has_max, has_crit;
        int32_t max_mc, crit_mc;        /* millidegrees C, hwmon limits (sentinels dropped) */

        bool ok;                        /* last read succeeded */
        int error;                      /* positive errno of the last failed read, 0 when ok */
        int32_t temp_mc;                /* millidegrees C, the last good value */
        int64_t last_good_ms;           /* Unix ms of the last good value, 0 for never */
        bool unit_quirk;                /* the chip reports whole degrees; scaled by 1000 */
        bool unit_fixed;                /* unit decided by an unambiguous value; unit_quirk then sticks */
        uint64_t read_errors;           /* failed reads; kept by re-probes that find the same id */
        char mirror_of[SENSORS_ID_MAX]; /* hwmon input that repeats a thermal zone (the hwmon the
                                         * thermal core registers under thermal_zoneN): that zone's
                                         * id; "" otherwise */
        bool slow;                      /* read by the library's reader thread (see slow_us) */
        uint8_t slow_reads;             /* consecutive tick reads slower than slow_us */
        uint32_t read_us;               /* microseconds the last read took (the pread) */
        uint32_t read_us_max;           /* microseconds, the slowest read since probe */
};

struct cooling_device {
        char id[SENSORS_ID_MAX];        /* "cooling_device0" */
        char type[SENSORS_NAME_MAX];
        int fd_cur;                     /* cur_state, kept open */
        long cur_state, max_state;      /* device steps; max_state -1 when unknown */
        bool ok;
        int error;                      /* positive errno, 0 when ok */
        uint64_t read_errors;           /* failed reads; kept by re-probes that find the same id */
};

struct cpufreq_policy {
        char id[SENSORS_ID_MAX];        /* "policy0"; legacy per-cpu layout: "policy<first cpu>" */
        char channel_id[SENSORS_CHANNEL_ID_MAX];        /* "cpufreq:policy0": its channel, made at probe */
        char dir[512];                  /* the policy directory */
        int cpus[SENSORS_CPUS_MAX];     /* related CPUs */
        size_t n_cpus;
        char driver[32];
        char governor[32];              /* read at probe and re-probe, not per tick */
        /* Kept open and read every tick: one current frequency, the cap
         * (thermal capping moves scaling_max_freq on legacy kernels) and
         * time_in_state. Limits, governor and names are read at probe. */
        int fd_cur, fd_scaling_max, fd_time_in_state;
        bool has_cpuinfo_cur;           /* fd_cur is cpuinfo_cur_freq: the fallback when
                                         * scaling_cur_freq is missing (root only: EACCES is normal) */
        uint32_t cur_khz, cpuinfo_cur_khz;  /* kHz; cpuinfo_cur_khz valid when has_cpuinfo_cur */
        uint32_t min_khz, max_khz;      /* kHz, cpuinfo (hardware) limits */
        uint32_t scaling_min_khz, scaling_max_khz;  /* kHz, current policy limits */
        uint32_t available_khz[SENSORS_FREQS_MAX];  /* kHz, scaling_available_frequencies */
        size_t n_available;
        uint32_t tis_khz[SENSORS_FREQS_MAX];        /* kHz, stats/time_in_state rows */
        uint64_t tis_10ms[SENSORS_FREQS_MAX];       /* time in state, 10 ms units as the kernel counts */
        size_t n_tis;
        bool ok;
        int error;                      /* positive errno, 0 when ok */
        uint64_t read_errors;           /* failed reads; kept by re-probes that find the same id */
};

struct cpu_times {
        uint64_t busy, total;           /* jiffies (USER_HZ) */
};

struct cpu_load {
        int fd;                         /* /proc/stat, kept open */
        size_t n_cpus;                  /* per-cpu rows found at probe */
        int *cpu_index;                 /* n_cpus: the N of each cpuN row */
        char (*cpu_ids)[SENSORS_CPU_LOAD_ID_MAX];       /* n_cpus: "load:cpuN", each CPU's channel */
        struct cpu_times prev_total, *prev;   /* previous sample */
        bool have_prev;
        double total;                   /* fraction 0..1 busy since the previous read */
        double *per_cpu;                /* n_cpus fractions 0..1 */
        bool ok;
        int error;                      /* positive errno, 0 when ok */
        uint64_t read_errors;           /* failed reads; kept by re-probes that find the same id */
        char *stat_buf;                 /* read buffer sized at probe, so reads do not allocate */
        size_t stat_buf_size;           /* bytes */
};

/* The Raspberry Pi firmware's own view (sensors/vcio.h), where /dev/vcio exists. */
struct firmware_info {
        bool present;                   /* /dev/vcio opened */
        int fd;                         /* kept open, -1 when absent */
        bool ok;                        /* last read succeeded */
        int error;                      /* positive errno of the last failure (ENOENT: no device) */
        uint32_t arm_hz;                /* Hz, the ARM clock as the firmware measures it */
        uint32_t throttled;             /* get_throttled bits: 0 under-voltage, 1 frequency capped,
                                         * 2 throttled, 3 soft temperature limit; bits 16-19 the
                                         * same since boot */
};

/* The board's supply, where the kernel reports it (Raspberry Pi: the
 * rpi_volt hwmon chip's in0_lcrit_alarm). */
struct power_info {
        bool present;                   /* a source was found at probe */
        int fd;                         /* kept open, -1 when absent */
        bool ok;                        /* last read succeeded */
        int error;                      /* positive errno of the last failure */
        bool undervoltage;              /* the supply is below its limit now */
        char source[32];                /* "rpi_volt" */
};

struct board_info {
        char model[128];                /* device-tree model, else DMI product name, else "" */
        char kernel[64];                /* uname release (from procfs sys/kernel/osrelease) */
        char hostname[64];
        int cpus;                       /* possible/online CPUs counted at probe */
};

struct sensors {
        char sysfs_root[256];           /* "/" or a fixture tree */
        char procfs_root[256];
        struct board_info board;
        struct temp_sensor *temps;
        size_t n_temps;
        struct cooling_device *cooling;
        size_t n_cooling;
        struct cpufreq_policy *policies;
        size_t n_policies;
        struct cpu_load load;
        struct firmware_info firmware;  /* Raspberry Pi only: present false elsewhere */
        struct power_info power;        /* present false where the kernel says nothing */
        int64_t time_ms;                /* Unix ms of the last sensors_read() */
        uint64_t read_ns;               /* ns (CLOCK_MONOTONIC) the last sensors_read() took */
        bool need_reprobe;              /* a sensor vanished (ENOENT/ENODEV): caller should re-probe */
        char missing[SENSORS_MISSING_MAX][SENSORS_ID_MAX];     /* temperature ids an earlier set had and this
                                         * one lacks (sensors_reprobe()): the caller should re-probe now
                                         * and then while n_missing > 0, to find them again */
        size_t n_missing;
        bool check_unlinked;            /* roots are not sysfs (fixture tree): a deleted file must
                                         * read as ENOENT, as sysfs would say */
        int watch_fd;                   /* inotify on the per-tick files of a fixture tree (-1 on
                                         * sysfs): a link-count change makes that one tick fstat() */
        bool watch_polled;              /* the caller polls watch_fd (sensors_watch_polled()) */
        bool watch_fired;               /* ... and it had events since the last read */
        bool recheck;                   /* fstat() the kept fds during this read */
        uint32_t slow_us;               /* microseconds; reads slower than this go to the reader
                                         * thread (SENSORS_SLOW_US; 0: never). May be changed
                                         * between reads; kept across re-probes. */
        struct sensors_reader *reader;  /* the reader thread, NULL until a sensor is slow */
        void **source_state;            /* per row of the sources' table (sources.c): a source's
                                         * own state, NULL for one that keeps none */
};

/* Discover everything under the two roots (NULL means "/"). */
int sensors_probe(const char *sysfs_root, const char *procfs_root, struct sensors **ret);

/* Read every sensor; a failing sensor is marked ok=false and the rest go on.
 * Slow temperatures (slow: true) are not read here: the values their
 * reader thread got since the previous call are taken, and a new round is
 * asked for, so they lag by up to one interval (last_good_ms is the time of
 * the call that asked). The reader thread starts with every signal blocked;
 * the caller should still block its signals before the first call.
 * Returns the number of sensors that failed (>= 0). */
int sensors_read(struct sensors *s, int64_t now_ms);

/* Re-discover, keeping last good values and last_good_ms of sensors whose id survives.
 * Temperatures the old set had (or missed) and the new one lacks are listed
 * in the new set's missing[]; one that is found again leaves the list.
 * On failure *s is left as it was, still usable. */
int sensors_reprobe(struct sensors **s);

/* The inotify fd a fixture tree's reads depend on, -1 on sysfs. Left alone,
 * every sensors_read() drains it with a read(); a caller with an event loop
 * can poll it instead, call sensors_watch_polled() once and
 * sensors_watch_drain() when it is readable, and the reads no longer touch
 * it. Owned by s: gone with s (and so after a re-probe). */
int sensors_watch_fd(const struct sensors *s);
void sensors_watch_polled(struct sensors *s);
void sensors_watch_drain(struct sensors *s);

void sensors_free(struct sensors *s);

/* Whether a thermal cooling device that acts on this policy's CPUs is in a
 * state above 0: "cpufreq-cpuN" (mainline; N is one of the policy's CPUs) or
 * the vendor kernels' "thermal-cpufreq-N", "thermal-budget-N" and
 * "thermal-cpucore-N" (N counts clusters, so the Nth policy). Fans and GPU
 * devices are not throttling; x86 "Processor" devices name no CPU and are
 * not mapped. */
bool sensors_policy_throttled(const struct sensors *s, const struct cpufreq_policy *p);

/* The supply is too low now: the power source or the firmware says so.
 * -1 when no source answers on this board. */
int sensors_undervoltage(const struct sensors *s);
/* The firmware throttles or caps the ARM clock now (get_throttled bits 1
 * and 2), -1 when it cannot be asked. */
int sensors_firmware_throttled(const struct sensors *s);

/* Hottest sensor that is ok, NULL when none; mirrors (mirror_of) are skipped. */
const struct temp_sensor *sensors_hottest(const struct sensors *s);

/* What a load read every interval_ms over cpus CPUs resolves: one jiffy
 * (1/USER_HZ s) of its total, 1 % for one CPU at 1 s, 0.25 % for four.
 * Finer digits of busy over total are the jitter of the total. */
double cpu_load_step(uint64_t interval_ms, size_t cpus);

/* Lowest hot/critical trip (or hwmon crit) over all sensors in mC; false when none.
 * Limits at or below 0 C are disabled trips (x86_pkg_temp prints 0) and skipped.
 * ret_mc may be NULL. */
bool sensors_lowest_hot_trip(const struct sensors *s, int32_t *ret_mc);

/* Parse a sysfs temperature text into millidegrees, applying the whole-degree
 * quirk. Returns 0, -EBADMSG on garbage, -ERANGE on sentinel limits (anything
 * sensors_temp_is_sentinel() calls one). Stateless: sensors_read() also keeps
 * the unit decision per sensor (unit_fixed). */
int sensors_parse_temp(const char *text, int32_t *ret_mc, bool *ret_quirk);

/* Watts of an hwmon power meter: power_uw (powerN_input, microwatts), or
 * when NULL curr_ma (currN_input, milliamperes, its magnitude) times in_mv
 * (inN_input, millivolts). -EBADMSG on garbage, -ERANGE outside 0..10 kW. */
int sensors_parse_power(const char *power_uw, const char *curr_ma, const char *in_mv, double *ret_w);

/* The power meters under base, a sys/class/hwmon directory, by the rule
 * of sensors/power-draw.c: each powerN_input of a chip, or on a chip with
 * none each currN_input that has an inN_input. found(userdata, dir, chip,
 * hwmon, what, n) is called for each, with the chip's directory, its name
 * ("hwmonM" without one), what "power" or "curr" and n its N. Returns 0,
 * the first negative errno of listing a directory, or of found. */
int sensors_power_meters_each(const char *base,
                              int (*found)(void *userdata, const char *dir, const char *chip, int hwmon,
                                           const char *what, int n),
                              void *userdata);

/* Limits like 65261850 or -273150 mean "no limit" on some chips; so does
 * anything at or below -273150 or above 1000000 (1000 C). */
bool sensors_temp_is_sentinel(long long raw);

/*
 * Channels: every reading of a struct sensors, one list in one order, so a
 * consumer (the history, /metrics, a run's samples.csv, the alert rules,
 * the API) loops over it instead of knowing every source. Channel ids are
 * made in this library, at probe, and nowhere else. A source is one file
 * of the library exporting one ops table with its channels (source.h),
 * and its row in the mapping table (sources.c).
 *
 * The order is the table's, and within a source its own (s->temps,
 * s->cooling, s->policies, the CPUs of s->load): the kinds below come in
 * this order. It changes only with a probe.
 */
enum sensor_kind {
        SENSOR_KIND_TEMPERATURE,        /* a thermal zone or hwmon input, "thermal_zone0" */
        SENSOR_KIND_COOLING,            /* a cooling device's state, "cooling_device0" */
        SENSOR_KIND_FREQUENCY,          /* a cpufreq policy's current frequency, "cpufreq:policy0" */
        SENSOR_KIND_CPU_LOAD,           /* one CPU's busy fraction, "load:cpu0" */
        SENSOR_KIND_LOAD,               /* all CPUs' busy fraction, "load:cpu" */
        SENSOR_KIND_POWER,              /* 1 while the supply is too low, "undervoltage" */
        SENSOR_KIND_THROTTLE,           /* 1 while the firmware throttles or caps the clock, "throttled" */
        SENSOR_KIND_POWER_DRAW,         /* W the board draws, an hwmon power meter, "power:ina219/power1" */
        _SENSOR_KIND_MAX,               /* also: no channel (one a re-probe dropped), never read */
};

struct sensor_channel {
        const char *id;                 /* unique in s; points into s, valid until it is freed */
        enum sensor_kind kind;
        const char *unit;               /* of value: "celsius", "state", "hz", "fraction", "flag" */
        size_t index;                   /* in its source: s->temps, s->cooling, s->policies, the
                                         * CPUs of s->load; 0 for the one-of-a-kind channels */
        bool ok;                        /* the last read of its source succeeded (the supply and
                                         * the firmware: one of their sources answers) */
        bool has_value;                 /* value is a reading to keep: ok, and not a load's first
                                         * read or a frequency of 0 (a driver with none to say) */
        bool counts_errors;             /* read_errors is its own (a CPU's load shares the
                                         * total's; the supply and the firmware keep none) */
        double value;                   /* in unit; when not ok, the last good one */
        uint64_t read_errors;           /* failed reads of its source */
        /* Where sensors_channel_read() gets it: its source's value op
         * (struct sensors_channels, sensors/source.h; NULL: none) and the
         * source's row in the sources' table. */
        int (*read)(const struct sensors *s, const void *state, size_t index, double *ret);
        unsigned source;
};

struct sensors_iter {
        unsigned source;                /* row of the sources' table of the next channel */
        unsigned group;                 /* its group of channels in that source */
        size_t index;                   /* within that group */
};
#define SENSORS_ITER_INIT { 0, 0, 0 }

/* The next channel of s into *ret, false after the last. Reads nothing
 * from sysfs: ok, has_value, value and read_errors are what the last
 * sensors_read() got. */
bool sensors_channel_next(const struct sensors *s, struct sensors_iter *it, struct sensor_channel *ret);

/* The channel with this id, -ENOENT when s has none. */
int sensors_channel_find(const struct sensors *s, const char *id, struct sensor_channel *ret);

/* The kind of channel an id names, from the id alone (the history keeps the
 * ids of sensors gone since): the prefixes and names above; any other id is
 * a temperature's. */
enum sensor_kind sensors_id_kind(const char *id);

/* A kind's name as the API shows it: "temperature", "cooling", "frequency",
 * "cpu_load", "load", "power", "throttle", "power_draw"; NULL for none. */
const char *sensors_kind_name(enum sensor_kind kind);

/* A channel's reading now, as the last sensors_read() left it, for a
 * consumer that keeps the channels the iterator gave and reads them every
 * tick: inline, no allocation, no system call, one call to its source's
 * value op. *ret gets the value (as sensor_channel.value); returns 1 when
 * it has one (has_value), 0 when the source answers without one (ok), -1
 * when it failed. A channel that is not one of s (kept across a re-probe
 * that dropped its source) reads -1. */
static inline int sensors_channel_read(const struct sensors *s, const struct sensor_channel *ch, double *ret) {
        if (!ch->read)
                return -1;
        return ch->read(s, s->source_state ? s->source_state[ch->source] : NULL, ch->index, ret);
}
