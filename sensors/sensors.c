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

#include "source.h"
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

/* Each source of the table in its order; each counts its own failures. */
int sensors_read(struct sensors *s, int64_t now_ms) {
        uint64_t start;
        int failed = 0;

        s->time_ms = now_ms;
        sensors_poll_watch(s);
        start = sensors_now_ns();
        for (size_t i = 0; i < sensors_n_sources; i++)
                if (sensors_sources[i]->read)
                        failed += sensors_sources[i]->read(s, sensors_source_state(s, i), now_ms);
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

/* The first n sources of the table (those probed), in reverse order, the
 * temperatures they found, and s itself. */
static void sensors_free_sources(struct sensors *s, size_t n) {
        for (size_t i = n; i-- > 0; )
                if (sensors_sources[i]->free)
                        sensors_sources[i]->free(s, sensors_source_state(s, i));
        sensors_free_temps(s);
        if (s->source_state)
                for (size_t i = 0; i < sensors_n_sources; i++)
                        free(s->source_state[i]);
        free(s->source_state);
        if (s->watch_fd >= 0)
                close(s->watch_fd);
        free(s);
}

static int sensors_alloc_state(struct sensors *s) {
        s->source_state = calloc(sensors_n_sources, sizeof(*s->source_state));
        if (!s->source_state)
                return -ENOMEM;
        for (size_t i = 0; i < sensors_n_sources; i++)
                if (sensors_sources[i]->state_size > 0 &&
                    !(s->source_state[i] = calloc(1, sensors_sources[i]->state_size)))
                        return -ENOMEM;
        return 0;
}

int sensors_probe(const char *sysfs_root, const char *procfs_root, struct sensors **ret) {
        struct sensors *s;
        size_t n = 0;
        int r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->watch_fd = -1;
        s->slow_us = SENSORS_SLOW_US;

        r = sensors_set_roots(s, sysfs_root ? sysfs_root : "/", procfs_root ? procfs_root : "/");
        if (r >= 0)
                r = sensors_alloc_state(s);
        /* A source that failed is freed too: it leaves itself safe to free. */
        for (; r >= 0 && n < sensors_n_sources; n++)
                if (sensors_sources[n]->probe)
                        r = sensors_sources[n]->probe(s, sensors_source_state(s, n));
        if (r < 0) {
                sensors_free_sources(s, n);
                return r;
        }
        *ret = s;
        return 0;
}

void sensors_free(struct sensors *s) {
        if (s)
                sensors_free_sources(s, sensors_n_sources);
}

int sensors_reprobe(struct sensors **sp) {
        struct sensors *old = *sp, *s;
        int r;

        r = sensors_probe(old->sysfs_root, old->procfs_root, &s);
        if (r < 0)
                return r;       /* the old set stays in use */
        s->slow_us = old->slow_us;
        for (size_t i = 0; i < sensors_n_sources; i++)
                if (sensors_sources[i]->carry)
                        sensors_sources[i]->carry(s, sensors_source_state(s, i), old, sensors_source_state(old, i));
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
