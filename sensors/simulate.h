/* simulate.h — a simulated board: a fixture sysfs tree whose temperature follows a first-order thermal model. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * C dT/dt = P(load) - (T - T_ambient)/R, written as
 *   dT/dt = (T_ambient + rise * load - T) / tau
 * where load (0..1) is the real CPU load of the machine the daemon runs on.
 * The temperature is written to every thermal zone and hwmon input of a copy
 * of the board's fixture tree, so the daemon reads it through the normal
 * sensor code.
 *
 * The copy: boards_dir/<board> (a tree standing for "/", holding sys/ and
 * proc/) is copied into a fresh directory $TMPDIR/heatcurve-sim-XXXXXX
 * (TMPDIR unset: /tmp). Symlinks are copied as links, not followed, so the
 * relative links of sysfs (class/thermal -> devices/..., the legacy
 * cpu1/cpufreq -> ../cpu0/cpufreq) keep working inside the copy. Its
 * proc/stat is replaced by a symlink to <host_procfs>/stat, so the normal
 * load reader sees the real load of this machine. Everything else under
 * proc/ keeps the board's identity (model, kernel release, hostname): a
 * simulated ODROID-C2 says it is an ODROID-C2, whatever it runs on.
 * simulator_sysfs_root() and simulator_procfs_root() both return the top of
 * the copy, to be passed as --sysfs-root / --procfs-root.
 *
 * The model: simulator_new() starts at ambient. The first simulator_step()
 * measures the load since simulator_new() and sets T = ambient + rise * load
 * (the machine is taken to have run at that load for a while); later steps
 * integrate exactly over the step, T += (T_target - T) * (1 - exp(-dt/tau)),
 * which is stable for any dt. The load is the busy fraction of the total CPU
 * line of <host_procfs>/stat since the previous step (user + nice + system +
 * irq + softirq + steal over those plus idle + iowait); when no jiffies
 * passed, the previous load is kept.
 *
 * The files: every thermal zone temp and every hwmon tempN_input (also under
 * the chip's device/) that held a number in the fixture gets T plus that
 * sensor's offset from the fixture's first thermal zone (first hwmon input
 * when there is no zone), so several zones keep their spread. Each is written
 * in the unit its fixture file used: whole degrees when it held a positive
 * value below 1000 (the vendor-kernel quirk), else millidegrees; quantize
 * rounds to whole degrees (multiples of 1000 in millidegree files). Files are
 * rewritten in place with pwrite + ftruncate on fds kept open, never
 * replaced, because the daemon keeps them open and preads them. Files whose
 * real path lies outside the copy (absolute symlinks) are never written.
 *
 * Throttling, so runs can detect it: while the temperature of the first zone
 * is at or above its lowest "passive" trip point, scaling_cur_freq (and
 * cpuinfo_cur_freq when present) of every cpufreq policy in the copy is set to
 * the next available frequency below the fixture's value (no
 * scaling_available_frequencies: 80 % of cpuinfo_max_freq when that is lower;
 * already at the lowest step: unchanged), and cur_state of the first cooling
 * device is set to 1. Only the first zone's trips count: a board whose first
 * zone has no passive trip (RK3588's soc zone, Raspberry Pi) never throttles. Both are restored to the fixture's values once the zone falls below
 * trip - hysteresis (trip_point_N_hyst, 0 when absent). Trip values follow
 * the same degree rule as temperatures; the hysteresis uses the unit of the
 * zone's temp file.
 *
 * Power meters, so runs get a power draw that follows the load: the hwmon
 * chips of the copy's sys/class/hwmon are taken as the power_draw source
 * reads them (each powerN_input of a chip, or on a chip without one each
 * currN_input with an inN_input of the same N). Each reads
 *   P = power_idle_w + power_load_w * load
 * from the setup on, written like the temperatures, in place and whole:
 * powerN_input in microwatts, currN_input in milliamperes as P over the
 * voltage its inN_input held (the voltage is left as found; a current the
 * fixture showed negative stays negative). power_idle_w NaN: each meter's
 * idle is what its fixture files read. Files that are unreadable, hold no
 * number, or a voltage of 0 or less are left alone.
 */

struct sim_params {
        char board[64];                 /* fixture name under boards_dir */
        double ambient_c;               /* degrees C */
        double tau_s;                   /* time constant, seconds */
        double rise_c;                  /* degrees C above ambient at full load */
        bool quantize;                  /* write whole degrees */
        bool own_load;                  /* the load is simulator_set_load()'s, not the host's */
        double power_idle_w;            /* W the power meters read at no load; NaN: as the fixture reads */
        double power_load_w;            /* W added at full load */
};

struct simulator;

/* Copy boards_dir/<board> into a fresh temporary directory. host_procfs is
 * where the real load comes from (normally "/proc"; NULL means that). now_ms
 * is the time the first step measures its load from. Returns -EINVAL for a
 * board name with '/' or "..", tau_s <= 0, a negative power or a non-finite
 * parameter (but power_idle_w NaN), -ENOENT
 * for a missing board or host stat, other -errno from copying; nothing is
 * left behind on failure. */
int simulator_new(const char *boards_dir, const char *host_procfs, const struct sim_params *p,
                  int64_t now_ms, struct simulator **ret);

const char *simulator_sysfs_root(const struct simulator *s);
const char *simulator_procfs_root(const struct simulator *s);
double simulator_temp_c(const struct simulator *s);   /* model temperature, degrees C */
double simulator_load(const struct simulator *s);     /* last load fraction fed to the model */
/* With own_load: the load (0..1) from the next step on, as commanded by the
 * daemon's runs rather than measured; 0 until set. Ignored otherwise. */
void simulator_set_load(struct simulator *s, double load);
bool simulator_throttled(const struct simulator *s); /* the passive trip is in force */
/* The power meters the copy has; *ret_idle_w (may be NULL) gets the first's
 * draw at no load, W, when there is one. */
size_t simulator_power_meters(const struct simulator *s, double *ret_idle_w);

/* Advance the model to now_ms and write the files. */
int simulator_step(struct simulator *s, int64_t now_ms);

/* Removes the temporary tree. Accepts NULL. */
void simulator_free(struct simulator *s);
