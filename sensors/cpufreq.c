/* cpufreq.c — CPU frequency policies, modern cpufreq/policyN or the legacy per-cpu cpuN/cpufreq layout. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "source.h"
#include "sysfs-util.h"

/* A policy's channel id: this and its id, "cpufreq:policy0". */
#define CPUFREQ_CHANNEL_PREFIX "cpufreq:"

static int cpufreq_add_policy(struct sensors *s, const char *dir, int index) {
        struct cpufreq_policy *p;

        p = realloc(s->policies, (s->n_policies + 1) * sizeof(*p));
        if (!p)
                return -ENOMEM;
        s->policies = p;
        p = &s->policies[s->n_policies++];
        memset(p, 0, sizeof(*p));
        p->fd_cur = p->fd_scaling_max = p->fd_time_in_state = -1;
        snprintf(p->id, sizeof(p->id), "policy%d", index);
        sysfs_strlcpy(p->dir, dir, sizeof(p->dir));
        return 0;
}

static struct cpufreq_policy *cpufreq_find_dir(struct sensors *s, const char *dir) {
        for (size_t i = 0; i < s->n_policies; i++)
                if (strcmp(s->policies[i].dir, dir) == 0)
                        return &s->policies[i];
        return NULL;
}

/* Modern kernels: one directory per policy under cpu/cpufreq/. */
static int cpufreq_list_modern(struct sensors *s, const char *cpu_dir) {
        char path[600], dir[512];
        int *idx, n, r = 0;

        r = sysfs_path(path, sizeof(path), "%s/cpufreq", cpu_dir);
        if (r < 0)
                return r;
        n = sysfs_list_indices(path, "policy", "", &idx);
        for (int i = 0; i < n && r >= 0; i++) {
                r = sysfs_path(path, sizeof(path), "%s/cpufreq/policy%d", cpu_dir, idx[i]);
                if (r >= 0 && sysfs_resolve(s->sysfs_root, path, dir, sizeof(dir)) >= 0)
                        r = cpufreq_add_policy(s, dir, idx[i]);
        }
        free(idx);
        return r < 0 ? r : n;
}

/* Walk cpuN/cpufreq: on the legacy 3.x layout this creates one policy per
 * distinct directory (cpu1..3/cpufreq are symlinks to cpu0's); on both
 * layouts it records which CPUs lead to which policy, the fallback when
 * related_cpus is missing. */
static int cpufreq_walk_cpus(struct sensors *s, const char *cpu_dir, bool create) {
        char path[600], dir[512];
        int *idx, n, r = 0;

        n = sysfs_list_indices(cpu_dir, "cpu", "", &idx);
        for (int i = 0; i < n && r >= 0; i++) {
                struct cpufreq_policy *p;

                r = sysfs_path(path, sizeof(path), "%s/cpu%d/cpufreq", cpu_dir, idx[i]);
                if (r < 0 || sysfs_resolve(s->sysfs_root, path, dir, sizeof(dir)) < 0)
                        continue;
                p = cpufreq_find_dir(s, dir);
                if (!p && create) {
                        r = cpufreq_add_policy(s, dir, idx[i]);
                        p = r >= 0 ? &s->policies[s->n_policies - 1] : NULL;
                }
                if (p && p->n_cpus < SENSORS_CPUS_MAX)
                        p->cpus[p->n_cpus++] = idx[i];
        }
        free(idx);
        return r < 0 ? r : n < 0 ? n : 0;
}

static int cpufreq_open_attr(const struct cpufreq_policy *p, const char *name) {
        char path[600];

        if (sysfs_path(path, sizeof(path), "%s/%s", p->dir, name) < 0)
                return -ENAMETOOLONG;
        return sysfs_open(path);
}

static int cpufreq_read_attr(const struct cpufreq_policy *p, const char *name, char *buf, size_t size) {
        char path[600];
        ssize_t n;

        buf[0] = '\0';
        if (sysfs_path(path, sizeof(path), "%s/%s", p->dir, name) < 0)
                return -ENAMETOOLONG;
        n = sysfs_read_file(path, buf, size);
        return n < 0 ? (int) n : 0;
}

static void cpufreq_parse_available(struct cpufreq_policy *p, const char *text) {
        const char *q = text;

        while (*q && p->n_available < SENSORS_FREQS_MAX) {
                char *end;
                unsigned long long v = strtoull(q, &end, 10);

                if (end == q)
                        break;
                if (v <= UINT32_MAX)
                        p->available_khz[p->n_available++] = (uint32_t) v;     /* kHz */
                q = end;
        }
}

static void cpufreq_read_static(struct cpufreq_policy *p) {
        char text[1024];
        int r;

        if (cpufreq_read_attr(p, "cpuinfo_min_freq", text, sizeof(text)) >= 0)
                (void) sysfs_parse_khz(text, &p->min_khz);
        if (cpufreq_read_attr(p, "cpuinfo_max_freq", text, sizeof(text)) >= 0)
                (void) sysfs_parse_khz(text, &p->max_khz);
        if (cpufreq_read_attr(p, "scaling_min_freq", text, sizeof(text)) >= 0)
                (void) sysfs_parse_khz(text, &p->scaling_min_khz);
        if (cpufreq_read_attr(p, "scaling_governor", text, sizeof(text)) >= 0)
                sysfs_strlcpy(p->governor, text, sizeof(p->governor));
        if (cpufreq_read_attr(p, "scaling_driver", text, sizeof(text)) >= 0)
                sysfs_strlcpy(p->driver, text, sizeof(p->driver));
        if (cpufreq_read_attr(p, "scaling_available_frequencies", text, sizeof(text)) >= 0)
                cpufreq_parse_available(p, text);

        /* related_cpus (3.x and later), else affected_cpus, else the CPUs
         * whose cpufreq link resolved here (already in p->cpus). */
        r = cpufreq_read_attr(p, "related_cpus", text, sizeof(text));
        if (r >= 0)
                r = sysfs_parse_cpu_list(text, p->cpus, SENSORS_CPUS_MAX);
        if (r <= 0 && cpufreq_read_attr(p, "affected_cpus", text, sizeof(text)) >= 0)
                r = sysfs_parse_cpu_list(text, p->cpus, SENSORS_CPUS_MAX);
        if (r > 0)
                p->n_cpus = (size_t) r;
}

static int cpufreq_open_policy(struct sensors *s, struct cpufreq_policy *p) {
        /* One current frequency per tick: scaling_cur_freq (the kernel's
         * value, cheap), else cpuinfo_cur_freq (asks the driver, which can
         * mean a firmware call; 0400, so root only). */
        const char *cur = "scaling_cur_freq";
        char path[600];

        p->fd_cur = cpufreq_open_attr(p, cur);
        if (p->fd_cur < 0) {
                int fd = cpufreq_open_attr(p, "cpuinfo_cur_freq");

                if (fd >= 0) {
                        p->fd_cur = fd;
                        p->has_cpuinfo_cur = true;
                        cur = "cpuinfo_cur_freq";
                }
        }
        if (p->fd_cur < 0) {
                p->error = -p->fd_cur;
                p->fd_cur = -1;
        } else if (sysfs_path(path, sizeof(path), "%s/%s", p->dir, cur) >= 0)
                sensors_watch(s, path);
        /* Optional (no stats/ without CONFIG_CPU_FREQ_STAT). */
        p->fd_scaling_max = cpufreq_open_attr(p, "scaling_max_freq");
        p->fd_time_in_state = cpufreq_open_attr(p, "stats/time_in_state");
        if (p->fd_scaling_max < 0)
                p->fd_scaling_max = -1;
        if (p->fd_time_in_state < 0)
                p->fd_time_in_state = -1;
        cpufreq_read_static(p);
        return 0;
}

static int cpufreq_probe(struct sensors *s, void *state) {
        char cpu_dir[400];
        int r;

        r = sysfs_path(cpu_dir, sizeof(cpu_dir), "%s/sys/devices/system/cpu", sysfs_prefix(s->sysfs_root));
        if (r < 0)
                return r;
        r = cpufreq_list_modern(s, cpu_dir);
        if (r < 0)
                return r;
        r = cpufreq_walk_cpus(s, cpu_dir, r == 0);
        if (r < 0)
                return r;
        for (size_t i = 0; i < s->n_policies; i++) {
                struct cpufreq_policy *p = &s->policies[i];

                snprintf(p->channel_id, sizeof p->channel_id, "%s%s", CPUFREQ_CHANNEL_PREFIX, p->id);
                cpufreq_open_policy(s, p);
        }
        return 0;
}

/* Only scaling_cur_freq is checked for deletion (sensors_pread): one fstat
 * per policy is enough to notice a vanished policy in a fixture tree. */
static int cpufreq_read_khz(struct sensors *s, int fd, uint32_t *ret) {
        char buf[32];
        ssize_t n;

        n = s ? sensors_pread(s, fd, buf, sizeof(buf)) : sysfs_pread(fd, buf, sizeof(buf));
        if (n < 0)
                return (int) n;
        return sysfs_parse_khz(buf, ret) < 0 ? -EBADMSG : 0;
}

/* stats/time_in_state: "<kHz> <10 ms units>" per line. At most 64 rows of
 * at most 32 bytes each, so the buffer never cuts a row we keep. */
static int cpufreq_read_tis(struct cpufreq_policy *p) {
        char buf[4096];
        const char *q = buf;
        size_t k = 0;
        ssize_t n;

        n = sysfs_pread(p->fd_time_in_state, buf, sizeof(buf));
        if (n < 0)
                return (int) n;
        /* Digits by hand, as sysfs_parse_u64 does: this runs every tick. */
        while (k < SENSORS_FREQS_MAX) {
                uint64_t v[2] = { 0, 0 };

                for (int f = 0; f < 2; f++) {
                        while (*q == ' ' || *q == '\t' || *q == '\n')
                                q++;
                        if (*q < '0' || *q > '9')
                                goto done;
                        for (; *q >= '0' && *q <= '9'; q++)
                                v[f] = v[f] * 10 + (uint64_t) (*q - '0');   /* wraps only on garbage */
                }
                if (v[0] > UINT32_MAX)
                        break;
                p->tis_khz[k] = (uint32_t) v[0];        /* kHz */
                p->tis_10ms[k] = v[1];                  /* 10 ms units (USER_HZ ticks on old kernels) */
                k++;
        }
done:
        p->n_tis = k;
        return 0;
}

static int cpufreq_read_one(struct sensors *s, struct cpufreq_policy *p) {
        int r, first = 0;

        if (p->fd_cur < 0)
                return -p->error;
        r = cpufreq_read_khz(s, p->fd_cur, &p->cur_khz);
        if (r < 0)
                first = r;
        else if (p->has_cpuinfo_cur)
                p->cpuinfo_cur_khz = p->cur_khz;
        if (p->fd_scaling_max >= 0 && (r = cpufreq_read_khz(NULL, p->fd_scaling_max, &p->scaling_max_khz)) < 0 && first == 0)
                first = r;
        if (p->fd_time_in_state >= 0 && (r = cpufreq_read_tis(p)) < 0 && first == 0)
                first = r;

        p->ok = first == 0;
        p->error = -first;
        sensors_note_error(s, first);
        return first;
}

static int cpufreq_read(struct sensors *s, void *state, int64_t now_ms) {
        int failed = 0;

        for (size_t i = 0; i < s->n_policies; i++)
                failed += sensors_count_failure(cpufreq_read_one(s, &s->policies[i]), &s->policies[i].read_errors);
        return failed;
}

static void cpufreq_carry(struct sensors *to, void *to_state, const struct sensors *from, const void *from_state) {
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

static void cpufreq_free(struct sensors *s, void *state) {
        for (size_t i = 0; i < s->n_policies; i++) {
                struct cpufreq_policy *p = &s->policies[i];
                int fds[] = { p->fd_cur, p->fd_scaling_max, p->fd_time_in_state };

                for (size_t k = 0; k < sizeof(fds) / sizeof(fds[0]); k++)
                        if (fds[k] >= 0)
                                close(fds[k]);
        }
        free(s->policies);
        s->policies = NULL;
        s->n_policies = 0;
}

static size_t cpufreq_count(const struct sensors *s, const void *state) {
        return s->n_policies;
}

static const char *cpufreq_id(const struct sensors *s, const void *state, size_t i) {
        return s->policies[i].channel_id;
}

static uint64_t cpufreq_errors(const struct sensors *s, const void *state, size_t i) {
        return s->policies[i].read_errors;
}

/* A frequency of 0 is a driver with none to say: ok, no value. */
static int cpufreq_value(const struct sensors *s, const void *state, size_t i, double *ret) {
        if (i >= s->n_policies)
                return -1;
        *ret = s->policies[i].cur_khz * 1000.0;         /* kHz -> Hz */
        return !s->policies[i].ok ? -1 : s->policies[i].cur_khz ? 1 : 0;
}

static const struct sensors_channels cpufreq_channels[] = {
        { .kind = SENSOR_KIND_FREQUENCY, .unit = "hz", .prefix = CPUFREQ_CHANNEL_PREFIX, .counts_errors = true,
          .count = cpufreq_count, .id = cpufreq_id, .errors = cpufreq_errors, .value = cpufreq_value },
};

const struct sensors_source cpufreq_source = {
        .name = "cpufreq",
        .probe = cpufreq_probe,
        .read = cpufreq_read,
        .carry = cpufreq_carry,
        .free = cpufreq_free,
        .channels = cpufreq_channels,
        .n_channels = 1,
};
