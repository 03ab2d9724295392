/* sensors-internal.h — probe and read entry points shared between the files of the sensors library. */
#pragma once

#include <sys/types.h>

#include "sensors.h"

/* Append a temperature probed at path; fd is its kept fd, or -errno when the
 * open failed (the sensor is kept, failed). Closes fd when out of memory. */
int sensors_add_temp(struct sensors *s, const char *path, int fd, struct temp_sensor **ret);

/* Parse a temperature with a per-sensor unit state: *quirk and *fixed are
 * in/out so the whole-degree decision sticks once an unambiguous value was
 * seen. Returns 0, -EBADMSG or -ERANGE (not a plausible temperature). */
int sensors_parse_temp_sticky(const char *text, int32_t *ret_mc, bool *quirk, bool *fixed);

/* Parse a limit (trip point, hwmon max/crit): false when absent, garbage or
 * a sentinel. *quirk says whether the whole-degree rule was applied. */
bool sensors_parse_limit(const char *text, int32_t *ret_mc, bool *quirk);

/* On a fixture tree, watch a per-tick file so its deletion is noticed
 * without an fstat() per tick; a no-op on sysfs. Best effort. */
void sensors_watch(struct sensors *s, const char *path);

/* pread a kept fd; on fixture trees a deleted file reads as -ENOENT. */
ssize_t sensors_pread(const struct sensors *s, int fd, char *buf, size_t size);

/* Record a per-tick read error: a vanished file asks the caller to re-probe. */
void sensors_note_error(struct sensors *s, int r);

/* The slow-sensor thread (reader.c). reader_add() moves t to it (starting
 * it when needed); reader_tick() takes its results into s->temps and asks
 * for the next round, returning how many slow sensors are failed;
 * reader_stop() ends it (waits for a read under way). */
int reader_add(struct sensors *s, struct temp_sensor *t);
int reader_tick(struct sensors *s, int64_t now_ms);
void reader_stop(struct sensors *s);

int thermal_probe(struct sensors *s);
void thermal_free(struct sensors *s);
int cooling_read(struct sensors *s, struct cooling_device *c);

int hwmon_probe(struct sensors *s);

int cpufreq_probe(struct sensors *s);
void cpufreq_free(struct sensors *s);
int cpufreq_read(struct sensors *s, struct cpufreq_policy *p);

int load_probe(struct sensors *s);
void load_free(struct cpu_load *l);
int load_read(struct sensors *s);
void load_carry_over(struct cpu_load *to, const struct cpu_load *from);

int board_probe(struct sensors *s);

/* The supply (power.c): absent boards are fine (present false). */
int power_probe(struct sensors *s);
int power_read(struct sensors *s);
void power_free(struct sensors *s);

/* The channel ids that are not a source's own (channels.c): "cpufreq:" and
 * "load:cpuN", made once the sources are probed. */
void channels_name(struct sensors *s);

/* /dev/vcio (vcio.c): probe fails soft (present false), read is one ioctl. */
int vcio_probe(struct sensors *s);
int vcio_read(struct sensors *s);
void vcio_free(struct sensors *s);
