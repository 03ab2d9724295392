/* sensors.c — probe, read, re-probe and free the whole set of sensors; temperature parsing rules. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "sensors-internal.h"
#include "sysfs-util.h"

#define SYSFS_MAGIC_NUMBER 0x62656572  /* linux/magic.h SYSFS_MAGIC */

/* A raw value that scaled to millidegrees cannot fit: garbage, not a temperature. */
#define RAW_TEMP_LIMIT 1000000000000LL

bool sensors_temp_is_sentinel(long long raw) {
        /* 65261850 is NVMe's "no limit"; -273150 is absolute zero, used the
         * same way; nothing real is hotter than 1000 C. */
        return raw == 65261850LL || raw <= -273150LL || raw > 1000000LL;
}

int sensors_parse_temp_sticky(const char *text, int32_t *ret_mc, bool *quirk, bool *fixed) {
        long long raw, mc;
        int r;

        r = sysfs_parse_ll(text, &raw);
        if (r == -ERANGE)
                return -ERANGE;
        if (r < 0)
                return -EBADMSG;
        if (raw > RAW_TEMP_LIMIT || raw < -RAW_TEMP_LIMIT)
                return -ERANGE;

        /* 1..999 can only be whole degrees (0.001..0.999 C on a board is
         * implausible); >= 1000 or <= -1000 can only be millidegrees. 0 and
         * -999..-1 are ambiguous and leave the decision for later. */
        if (!*fixed && raw > 0 && raw < SENSORS_DEGREE_QUIRK_BELOW) {
                *quirk = true;
                *fixed = true;
        } else if (!*fixed && (raw >= SENSORS_DEGREE_QUIRK_BELOW || raw <= -SENSORS_DEGREE_QUIRK_BELOW)) {
                *quirk = false;
                *fixed = true;
        }

        mc = *quirk ? raw * 1000 : raw;         /* whole degrees -> millidegrees */
        if (sensors_temp_is_sentinel(mc))
                return -ERANGE;
        *ret_mc = (int32_t) mc;
        return 0;
}

int sensors_parse_temp(const char *text, int32_t *ret_mc, bool *ret_quirk) {
        bool quirk = false, fixed = false;
        int32_t mc;
        int r;

        r = sensors_parse_temp_sticky(text, &mc, &quirk, &fixed);
        if (r < 0)
                return r;
        *ret_mc = mc;
        if (ret_quirk)
                *ret_quirk = quirk;
        return 0;
}

bool sensors_parse_limit(const char *text, int32_t *ret_mc, bool *quirk) {
        long long raw;

        *quirk = false;
        if (sysfs_parse_ll(text, &raw) < 0 || sensors_temp_is_sentinel(raw))
                return false;
        if (raw > 0 && raw < SENSORS_DEGREE_QUIRK_BELOW) {
                raw *= 1000;                    /* whole degrees -> millidegrees */
                *quirk = true;
        }
        *ret_mc = (int32_t) raw;
        return true;
}

int sensors_add_temp(struct sensors *s, const char *path, int fd, struct temp_sensor **ret) {
        struct temp_sensor *n;

        n = realloc(s->temps, (s->n_temps + 1) * sizeof(*n));
        if (!n) {
                if (fd >= 0)
                        close(fd);
                return -ENOMEM;
        }
        s->temps = n;
        n = &s->temps[s->n_temps++];
        memset(n, 0, sizeof(*n));
        sysfs_strlcpy(n->path, path, sizeof(n->path));
        if (fd >= 0)
                sensors_watch(s, path);
        /* Not read yet: ok stays false with no error until the first tick.
         * An open failure (EACCES, EIO) keeps the sensor, failed. */
        n->fd = fd < 0 ? -1 : fd;
        n->error = fd < 0 ? -fd : 0;
        *ret = n;
        return 0;
}

void sensors_watch(struct sensors *s, const char *path) {
        /* IN_ATTRIB covers a link-count change (unlink, rename over it);
         * writes in place (IN_MODIFY) are not events. */
        if (s->watch_fd >= 0)
                (void) inotify_add_watch(s->watch_fd, path, IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF);
}

int sensors_watch_fd(const struct sensors *s) {
        return s->watch_fd;
}

void sensors_watch_polled(struct sensors *s) {
        s->watch_polled = true;
}

/* Drains the watch; any event makes the next read fstat() the kept fds. */
void sensors_watch_drain(struct sensors *s) {
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

        if (s->watch_fd < 0)
                return;
        while (read(s->watch_fd, buf, sizeof(buf)) > 0)
                s->watch_fired = true;
}

/* At the start of a read: did any per-tick file change its links since the last one? */
static void sensors_poll_watch(struct sensors *s) {
        if (!s->watch_polled)
                sensors_watch_drain(s);
        s->recheck = s->watch_fired;
        s->watch_fired = false;
}

ssize_t sensors_pread(const struct sensors *s, int fd, char *buf, size_t size) {
        ssize_t n;

        n = sysfs_pread(fd, buf, size);
        if (n >= 0 && s->recheck && sysfs_check_linked(fd) < 0)
                return -ENOENT;
        return n;
}

void sensors_note_error(struct sensors *s, int r) {
        if (r == -ENOENT || r == -ENODEV)
                s->need_reprobe = true;
}

static uint64_t sensors_now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* Notes how long t's read took; returns the time it ended. */
static uint64_t temp_note_time(struct temp_sensor *t, uint64_t start_ns) {
        uint64_t end = sensors_now_ns(), us = (end - start_ns) / 1000;

        t->read_us = us > UINT32_MAX ? UINT32_MAX : (uint32_t) us;     /* microseconds */
        if (t->read_us > t->read_us_max)
                t->read_us_max = t->read_us;
        return end;
}

/* *clock_ns is when the read starts (the end of the previous one: one
 * clock reading per sensor, not two); it is moved to when it ended. */
static int temp_read(struct sensors *s, struct temp_sensor *t, int64_t now_ms, uint64_t *clock_ns) {
        char buf[32];
        int32_t mc;
        ssize_t n;
        int r;

        if (t->fd < 0)
                return -t->error;
        n = sensors_pread(s, t->fd, buf, sizeof(buf));
        *clock_ns = temp_note_time(t, *clock_ns);
        r = n < 0 ? (int) n : sensors_parse_temp_sticky(buf, &mc, &t->unit_quirk, &t->unit_fixed);
        if (r < 0) {
                t->ok = false;
                t->error = -r;
                sensors_note_error(s, r);
                return r;
        }
        t->ok = true;
        t->error = 0;
        t->temp_mc = mc;
        t->last_good_ms = now_ms;
        return 0;
}

/* Counts one failed read in *errors; returns 1 for a failure, else 0. */
static int count_failure(int r, uint64_t *errors) {
        if (r >= 0)
                return 0;
        (*errors)++;
        return 1;
}

int sensors_read(struct sensors *s, int64_t now_ms) {
        uint64_t start, clock;
        int failed = 0;

        s->time_ms = now_ms;
        sensors_poll_watch(s);
        start = clock = sensors_now_ns();
        for (size_t i = 0; i < s->n_temps; i++) {
                struct temp_sensor *t = &s->temps[i];

                if (t->slow)
                        continue;
                failed += count_failure(temp_read(s, t, now_ms, &clock), &t->read_errors);
                /* Too slow for the tick: the reader thread takes it (when it
                 * cannot start, the sensor stays here). */
                t->slow_reads = s->slow_us > 0 && t->read_us > s->slow_us ? t->slow_reads + 1 : 0;
                if (t->slow_reads >= SENSORS_SLOW_READS && t->fd >= 0) {
                        (void) reader_add(s, t);
                        clock = sensors_now_ns();       /* starting the thread is no sensor's read */
                }
        }
        failed += reader_tick(s, now_ms);
        for (size_t i = 0; i < s->n_cooling; i++)
                failed += count_failure(cooling_read(s, &s->cooling[i]), &s->cooling[i].read_errors);
        for (size_t i = 0; i < s->n_policies; i++)
                failed += count_failure(cpufreq_read(s, &s->policies[i]), &s->policies[i].read_errors);
        failed += count_failure(load_read(s), &s->load.read_errors);
        if (vcio_read(s) < 0)
                failed++;
        if (power_read(s) < 0)
                failed++;
        s->read_ns = sensors_now_ns() - start;
        return failed;
}

static int sensors_set_roots(struct sensors *s, const char *sysfs_root, const char *procfs_root) {
        char path[300];
        struct statfs sfs;
        struct stat st;
        int r;

        if (strlen(sysfs_root) >= sizeof(s->sysfs_root) || strlen(procfs_root) >= sizeof(s->procfs_root))
                return -ENAMETOOLONG;
        strcpy(s->sysfs_root, sysfs_root);
        strcpy(s->procfs_root, procfs_root);

        /* A wrong --sysfs-root should fail loudly, not give an empty board. */
        r = sysfs_path(path, sizeof(path), "%s/sys", sysfs_prefix(sysfs_root));
        if (r < 0)
                return r;
        if (stat(path, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;
        if (stat(procfs_root, &st) < 0)
                return -errno;

        /* Real sysfs answers ENODEV for a removed device; a fixture tree on
         * tmpfs/ext4 keeps serving a deleted file, so there we fstat(). */
        s->check_unlinked = !(statfs(path, &sfs) == 0 && sfs.f_type == SYSFS_MAGIC_NUMBER);
        if (s->check_unlinked) {
                s->watch_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
                if (s->watch_fd < 0)
                        return -errno;
        }
        return 0;
}

/* Two timed reads of each temperature: slow both times, it goes to the
 * reader thread before the first tick. */
static void sensors_probe_slow(struct sensors *s) {
        for (size_t i = 0; i < s->n_temps; i++) {
                struct temp_sensor *t = &s->temps[i];
                bool slow = t->fd >= 0;
                char buf[32];

                for (int k = 0; k < 2 && slow; k++) {
                        uint64_t start = sensors_now_ns();

                        (void) sysfs_pread(t->fd, buf, sizeof(buf));
                        temp_note_time(t, start);
                        slow = t->read_us > s->slow_us;
                }
                if (slow)
                        (void) reader_add(s, t);
        }
}

int sensors_probe(const char *sysfs_root, const char *procfs_root, struct sensors **ret) {
        struct sensors *s;
        int r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->load.fd = -1;
        s->watch_fd = -1;
        s->slow_us = SENSORS_SLOW_US;
        s->firmware.fd = -1;
        s->power.fd = -1;

        r = sensors_set_roots(s, sysfs_root ? sysfs_root : "/", procfs_root ? procfs_root : "/");
        if (r >= 0)
                r = board_probe(s);
        if (r >= 0)
                r = thermal_probe(s);
        if (r >= 0)
                r = hwmon_probe(s);
        if (r >= 0)
                r = cpufreq_probe(s);
        if (r >= 0)
                r = load_probe(s);
        if (r >= 0)
                r = vcio_probe(s);
        if (r >= 0)
                r = power_probe(s);
        if (r >= 0) {
                channels_name(s);
                sensors_probe_slow(s);
        }
        if (r < 0) {
                sensors_free(s);
                return r;
        }
        *ret = s;
        return 0;
}

void sensors_free(struct sensors *s) {
        if (!s)
                return;
        reader_stop(s);                 /* before the fds it reads are closed */
        for (size_t i = 0; i < s->n_temps; i++)
                if (s->temps[i].fd >= 0)
                        close(s->temps[i].fd);
        free(s->temps);
        thermal_free(s);
        cpufreq_free(s);
        load_free(&s->load);
        vcio_free(s);
        power_free(s);
        if (s->watch_fd >= 0)
                close(s->watch_fd);
        free(s);
}

static const struct temp_sensor *find_temp(const struct sensors *s, const char *id) {
        for (size_t i = 0; i < s->n_temps; i++)
                if (strcmp(s->temps[i].id, id) == 0)
                        return &s->temps[i];
        return NULL;
}

static void carry_temps(struct sensors *to, const struct sensors *from) {
        for (size_t i = 0; i < to->n_temps; i++) {
                struct temp_sensor *t = &to->temps[i];
                const struct temp_sensor *o = find_temp(from, t->id);

                if (!o)
                        continue;
                t->temp_mc = o->temp_mc;
                t->last_good_ms = o->last_good_ms;
                t->unit_quirk = o->unit_quirk;
                t->unit_fixed = o->unit_fixed;
                t->read_errors = o->read_errors;
                t->read_us = o->read_us;
                t->read_us_max = o->read_us_max;
                if (t->fd >= 0) {
                        /* Reopened fine: show the old state until the next read. */
                        t->ok = o->ok;
                        t->error = o->error;
                }
        }
}

static void carry_cooling(struct sensors *to, const struct sensors *from) {
        for (size_t i = 0; i < to->n_cooling; i++)
                for (size_t j = 0; j < from->n_cooling; j++) {
                        struct cooling_device *c = &to->cooling[i];
                        const struct cooling_device *o = &from->cooling[j];

                        if (strcmp(c->id, o->id) != 0)
                                continue;
                        c->read_errors = o->read_errors;
                        if (c->fd_cur < 0)
                                continue;
                        c->cur_state = o->cur_state;
                        c->ok = o->ok;
                        c->error = o->error;
                }
}

static void carry_policies(struct sensors *to, const struct sensors *from) {
        for (size_t i = 0; i < to->n_policies; i++)
                for (size_t j = 0; j < from->n_policies; j++) {
                        struct cpufreq_policy *p = &to->policies[i];
                        const struct cpufreq_policy *o = &from->policies[j];

                        if (strcmp(p->id, o->id) != 0)
                                continue;
                        p->read_errors = o->read_errors;
                        if (p->fd_cur < 0)
                                continue;
                        /* governor and limits were just read again by the probe */
                        p->cur_khz = o->cur_khz;
                        p->cpuinfo_cur_khz = o->cpuinfo_cur_khz;
                        p->scaling_max_khz = o->scaling_max_khz;
                        p->n_tis = o->n_tis;
                        memcpy(p->tis_khz, o->tis_khz, sizeof(p->tis_khz));
                        memcpy(p->tis_10ms, o->tis_10ms, sizeof(p->tis_10ms));
                        p->ok = o->ok;
                        p->error = o->error;
                }
}

static void missing_add(struct sensors *s, const char *id) {
        if (find_temp(s, id))
                return;
        for (size_t i = 0; i < s->n_missing; i++)
                if (strcmp(s->missing[i], id) == 0)
                        return;
        if (s->n_missing == SENSORS_MISSING_MAX) {
                /* full: the one missing longest is forgotten */
                memmove(s->missing[0], s->missing[1], (SENSORS_MISSING_MAX - 1) * sizeof s->missing[0]);
                s->n_missing--;
        }
        memcpy(s->missing[s->n_missing++], id, SENSORS_ID_MAX);
}

/* What to look for again: what old missed and what it had, minus what s has. */
static void carry_missing(struct sensors *s, const struct sensors *old) {
        for (size_t i = 0; i < old->n_missing; i++)
                missing_add(s, old->missing[i]);
        for (size_t i = 0; i < old->n_temps; i++)
                missing_add(s, old->temps[i].id);
}

int sensors_reprobe(struct sensors **sp) {
        struct sensors *old = *sp, *s;
        int r;

        r = sensors_probe(old->sysfs_root, old->procfs_root, &s);
        if (r < 0)
                return r;       /* the old set stays in use */
        carry_temps(s, old);
        s->slow_us = old->slow_us;
        for (size_t i = 0; i < s->n_temps; i++) {
                const struct temp_sensor *o = find_temp(old, s->temps[i].id);

                if (o && o->slow && s->temps[i].fd >= 0)
                        (void) reader_add(s, &s->temps[i]);
        }
        carry_missing(s, old);
        carry_cooling(s, old);
        carry_policies(s, old);
        load_carry_over(&s->load, &old->load);
        s->load.read_errors = old->load.read_errors;
        s->time_ms = old->time_ms;
        s->read_ns = old->read_ns;
        sensors_free(old);
        *sp = s;
        return 0;
}

static bool policy_has_cpu(const struct cpufreq_policy *p, int cpu) {
        for (size_t i = 0; i < p->n_cpus; i++)
                if (p->cpus[i] == cpu)
                        return true;
        return false;
}

/* Does cooling device type act on policy number index (with CPUs of p)? */
static bool cooling_acts_on(const char *type, size_t index, const struct cpufreq_policy *p) {
        static const char *const per_cluster[] = { "thermal-cpufreq-", "thermal-budget-", "thermal-cpucore-" };
        char *end;
        long n;

        if (strncmp(type, "cpufreq-cpu", 11) == 0) {
                n = strtol(type + 11, &end, 10);
                return end != type + 11 && *end == '\0' && n >= 0 && n <= INT_MAX && policy_has_cpu(p, (int) n);
        }
        for (size_t i = 0; i < sizeof(per_cluster) / sizeof(per_cluster[0]); i++) {
                size_t len = strlen(per_cluster[i]);

                if (strncmp(type, per_cluster[i], len) != 0)
                        continue;
                n = strtol(type + len, &end, 10);
                return end != type + len && *end == '\0' && n >= 0 && (size_t) n == index;
        }
        return false;
}

bool sensors_policy_throttled(const struct sensors *s, const struct cpufreq_policy *p) {
        size_t index = (size_t) (p - s->policies);

        for (size_t i = 0; i < s->n_cooling; i++) {
                const struct cooling_device *c = &s->cooling[i];

                if (c->ok && c->cur_state > 0 && cooling_acts_on(c->type, index, p))
                        return true;
        }
        return false;
}

int sensors_undervoltage(const struct sensors *s) {
        bool known = false, low = false;

        if (s->power.present && s->power.ok) {
                known = true;
                low |= s->power.undervoltage;
        }
        if (s->firmware.present && s->firmware.ok) {
                known = true;
                low |= (s->firmware.throttled & 1u) != 0;
        }
        return known ? low : -1;
}

int sensors_firmware_throttled(const struct sensors *s) {
        if (!s->firmware.present || !s->firmware.ok)
                return -1;
        return (s->firmware.throttled & 6u) != 0;
}

const struct temp_sensor *sensors_hottest(const struct sensors *s) {
        const struct temp_sensor *best = NULL;

        for (size_t i = 0; i < s->n_temps; i++) {
                const struct temp_sensor *t = &s->temps[i];

                if (t->ok && !t->mirror_of[0] && (!best || t->temp_mc > best->temp_mc))
                        best = t;
        }
        return best;
}

/* A trip at 0 C or below is a disabled trip (x86_pkg_temp prints 0), not a limit. */
static bool trip_is_hot(const struct trip_point *tp) {
        return tp->has_temp && tp->temp_mc > 0 &&
                (strcmp(tp->type, "hot") == 0 || strcmp(tp->type, "critical") == 0);
}

bool sensors_lowest_hot_trip(const struct sensors *s, int32_t *ret_mc) {
        bool found = false;
        int32_t low = 0;

        for (size_t i = 0; i < s->n_temps; i++) {
                const struct temp_sensor *t = &s->temps[i];

                for (size_t k = 0; k < t->n_trips; k++)
                        if (trip_is_hot(&t->trips[k]) && (!found || t->trips[k].temp_mc < low)) {
                                low = t->trips[k].temp_mc;
                                found = true;
                        }
                if (t->has_crit && t->crit_mc > 0 && (!found || t->crit_mc < low)) {
                        low = t->crit_mc;
                        found = true;
                }
        }
        if (found && ret_mc)
                *ret_mc = low;
        return found;
}
