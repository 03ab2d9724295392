/* load.c — CPU load per CPU and in total from /proc/stat, as a busy fraction between two reads. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "source.h"
#include "sysfs-util.h"

/* "cpuNNNN" and ten counters of at most 20 digits with their blanks fit. */
#define STAT_ROW_MAX 256
#define STAT_PROBE_MAX (1024 * 1024)
/* The channel ids: this and N for CPU N, "load:cpu0"; this alone for all of them. */
#define LOAD_CHANNEL_PREFIX "load:cpu"

/* Parses the counters of one "cpu..." row starting after its label; *p is
 * left at the start of the next line. */
static int load_parse_row(const char **pp, struct cpu_times *ret) {
        uint64_t v[10] = { 0 };
        const char *p = *pp;
        int k = 0;

        for (;;) {
                uint64_t x = 0;

                while (*p == ' ')
                        p++;
                if (*p < '0' || *p > '9')
                        break;
                while (*p >= '0' && *p <= '9')
                        x = x * 10 + (uint64_t) (*p++ - '0');
                if (k < 10)
                        v[k++] = x;
        }
        while (*p && *p != '\n')
                p++;
        if (*p == '\n')
                p++;
        *pp = p;
        if (k < 4)
                return -EBADMSG;
        /* user nice system idle iowait irq softirq steal guest guest_nice:
         * guest is already counted in user, iowait is idle time. Missing
         * trailing fields (2.6 kernels) stay 0. */
        ret->busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];    /* jiffies */
        ret->total = ret->busy + v[3] + v[4];                   /* jiffies */
        return 0;
}

/* Label of a row: -1 for the "cpu" total, N for "cpuN", -2 when not a cpu row. */
static int load_row_label(const char **pp) {
        const char *p = *pp;
        int n = 0;

        if (strncmp(p, "cpu", 3) != 0)
                return -2;
        p += 3;
        if (*p == ' ') {
                *pp = p;
                return -1;
        }
        if (*p < '0' || *p > '9')
                return -2;
        while (*p >= '0' && *p <= '9' && n < 1000000)
                n = n * 10 + (*p++ - '0');
        *pp = p;
        return n;
}

/* Reads the file once at probe, as much as needed to hold all cpu rows. */
static int load_read_initial(int fd, char **ret) {
        size_t size = 16384;
        char *buf = NULL;

        for (;;) {
                char *nb = realloc(buf, size);
                ssize_t n;

                if (!nb) {
                        free(buf);
                        return -ENOMEM;
                }
                buf = nb;
                n = pread(fd, buf, size - 1, 0);
                if (n < 0) {
                        free(buf);
                        return -errno;
                }
                buf[n] = '\0';
                if ((size_t) n < size - 1 || strstr(buf, "\nintr") || size >= STAT_PROBE_MAX)
                        break;
                size *= 2;
        }
        *ret = buf;
        return 0;
}

static int load_alloc(struct cpu_load *l, size_t n) {
        size_t slots = n ? n : 1;

        l->cpu_index = calloc(slots, sizeof(*l->cpu_index));
        l->cpu_ids = calloc(slots, sizeof(*l->cpu_ids));
        l->prev = calloc(slots, sizeof(*l->prev));
        l->per_cpu = calloc(slots, sizeof(*l->per_cpu));
        l->stat_buf_size = (n + 1) * STAT_ROW_MAX + 64;
        l->stat_buf = malloc(l->stat_buf_size);
        if (!l->cpu_index || !l->cpu_ids || !l->prev || !l->per_cpu || !l->stat_buf)
                return -ENOMEM;
        l->n_cpus = n;
        return 0;
}

/* Counts and records the cpuN rows. */
static int load_scan_rows(struct cpu_load *l, const char *text) {
        const char *p = text;
        size_t n = 0;
        int r, label;

        for (int pass = 0; pass < 2; pass++) {
                for (p = text, n = 0; *p; ) {
                        struct cpu_times t;

                        label = load_row_label(&p);
                        if (label == -2)
                                break;
                        if (load_parse_row(&p, &t) < 0)
                                return -EBADMSG;
                        if (label < 0 || n >= SENSORS_CPUS_MAX)
                                continue;
                        if (pass == 1)
                                l->cpu_index[n] = label;
                        n++;
                }
                if (pass == 0 && (r = load_alloc(l, n)) < 0)
                        return r;
        }
        return 0;
}

static int load_probe(struct sensors *s, void *state) {
        struct cpu_load *l = &s->load;
        char path[300], *text = NULL;
        int r;

        l->fd = -1;
        r = sysfs_path(path, sizeof(path), "%s/proc/stat", sysfs_prefix(s->procfs_root));
        if (r < 0)
                return r;
        l->fd = sysfs_open(path);
        if (l->fd < 0) {
                l->error = -l->fd;
                l->fd = -1;
                return 0;
        }
        r = load_read_initial(l->fd, &text);
        if (r >= 0)
                r = load_scan_rows(l, text);
        free(text);
        if (r == -EBADMSG) {
                l->error = EBADMSG;     /* unreadable format: no load, the rest still works */
                close(l->fd);
                l->fd = -1;
                return 0;
        }
        for (size_t i = 0; r >= 0 && i < l->n_cpus; i++)
                snprintf(l->cpu_ids[i], sizeof l->cpu_ids[i], "%s%d", LOAD_CHANNEL_PREFIX, l->cpu_index[i]);
        return r;
}

static double load_rate(const struct cpu_times *prev, const struct cpu_times *cur) {
        double f;

        /* No previous sample, or counters went backwards (hotplug, NO_HZ idle accounting). */
        if (prev->total == 0 || cur->total <= prev->total || cur->busy < prev->busy)
                return 0.0;
        f = (double) (cur->busy - prev->busy) / (double) (cur->total - prev->total);
        return f > 1.0 ? 1.0 : f;
}

/* Maps a cpuN label to its slot; rows come in increasing N so a cursor does. */
static size_t load_find_slot(const struct cpu_load *l, int label, size_t *cursor) {
        for (size_t k = 0; k < l->n_cpus; k++) {
                size_t i = (*cursor + k) % l->n_cpus;

                if (l->cpu_index[i] == label) {
                        *cursor = i + 1;
                        return i;
                }
        }
        return SIZE_MAX;
}

static int load_parse(struct cpu_load *l, const char *text, bool *seen) {
        const char *p = text;
        bool have_total = false;
        size_t cursor = 0;

        while (*p) {
                struct cpu_times t;
                size_t i;
                int label = load_row_label(&p);

                if (label == -2)
                        break;
                if (load_parse_row(&p, &t) < 0)
                        return -EBADMSG;
                if (label == -1) {
                        l->total = load_rate(&l->prev_total, &t);
                        l->prev_total = t;
                        have_total = true;
                } else if (l->n_cpus > 0 && (i = load_find_slot(l, label, &cursor)) != SIZE_MAX) {
                        l->per_cpu[i] = load_rate(&l->prev[i], &t);
                        l->prev[i] = t;
                        seen[i] = true;
                }
        }
        return have_total ? 0 : -EBADMSG;
}

/* pread the rows; a row cut by the end of the buffer is dropped, not misparsed. */
static int load_pread(struct cpu_load *l) {
        ssize_t n;

        n = pread(l->fd, l->stat_buf, l->stat_buf_size - 1, 0);
        if (n < 0)
                return -errno;
        if ((size_t) n == l->stat_buf_size - 1) {
                while (n > 0 && l->stat_buf[n - 1] != '\n')
                        n--;
        }
        l->stat_buf[n] = '\0';
        return 0;
}

static int load_read_all(struct sensors *s) {
        struct cpu_load *l = &s->load;
        bool seen[SENSORS_CPUS_MAX] = { false };
        bool had_prev = l->prev_total.total != 0;
        int r;

        if (l->fd < 0)
                return l->error == ENOENT ? 0 : -l->error;
        r = load_pread(l);
        if (r >= 0)
                r = load_parse(l, l->stat_buf, seen);
        if (r < 0) {
                l->ok = false;
                l->error = -r;
                return r;
        }
        /* An offline CPU has no row: it keeps its slot, at 0, and starts
         * over when it comes back. */
        for (size_t i = 0; i < l->n_cpus; i++)
                if (!seen[i]) {
                        l->per_cpu[i] = 0.0;
                        l->prev[i] = (struct cpu_times) { 0, 0 };
                }
        /* have_prev: these rates span two reads (the first read gives 0). */
        l->have_prev = had_prev;
        l->ok = true;
        l->error = 0;
        return 0;
}

static void load_carry_over(struct cpu_load *to, const struct cpu_load *from) {
        if (from->prev_total.total == 0 || to->fd < 0)
                return;
        to->prev_total = from->prev_total;
        to->total = from->total;
        to->have_prev = from->have_prev;
        to->ok = from->ok;
        to->error = from->error;
        for (size_t i = 0; i < to->n_cpus; i++)
                for (size_t j = 0; j < from->n_cpus; j++)
                        if (to->cpu_index[i] == from->cpu_index[j]) {
                                to->prev[i] = from->prev[j];
                                to->per_cpu[i] = from->per_cpu[j];
                        }
}

static void load_free(struct sensors *s, void *state) {
        struct cpu_load *l = &s->load;

        if (l->fd >= 0)
                close(l->fd);
        l->fd = -1;
        free(l->cpu_index);
        free(l->cpu_ids);
        free(l->prev);
        free(l->per_cpu);
        free(l->stat_buf);
}

/* One read of /proc/stat for every CPU and the total. */
static int load_read(struct sensors *s, void *state, int64_t now_ms) {
        return sensors_count_failure(load_read_all(s), &s->load.read_errors);
}

static void load_carry(struct sensors *to, void *to_state, const struct sensors *from, const void *from_state) {
        load_carry_over(&to->load, &from->load);
        to->load.read_errors = from->load.read_errors;
}

static size_t load_cpus_count(const struct sensors *s, const void *state) {
        return s->load.n_cpus;
}

static const char *load_cpu_id(const struct sensors *s, const void *state, size_t i) {
        return s->load.cpu_ids[i];
}

static uint64_t load_errors(const struct sensors *s, const void *state, size_t i) {
        return s->load.read_errors;
}

/* A rate spans two reads: none after the first. */
static int load_cpu_value(const struct sensors *s, const void *state, size_t i, double *ret) {
        if (i >= s->load.n_cpus)
                return -1;
        *ret = s->load.per_cpu[i];                      /* fraction 0..1 */
        return !s->load.ok ? -1 : s->load.have_prev;
}

static size_t load_total_count(const struct sensors *s, const void *state) {
        return 1;
}

static int load_total_value(const struct sensors *s, const void *state, size_t i, double *ret) {
        if (i != 0)
                return -1;
        *ret = s->load.total;                           /* fraction 0..1 */
        return !s->load.ok ? -1 : s->load.have_prev;
}

/* Each CPU, then all of them; a CPU's read errors are the total's, not its own. */
static const struct sensors_channels load_channels[] = {
        { .kind = SENSOR_KIND_CPU_LOAD, .unit = "fraction", .prefix = LOAD_CHANNEL_PREFIX,
          .count = load_cpus_count, .id = load_cpu_id, .errors = load_errors, .value = load_cpu_value },
        { .kind = SENSOR_KIND_LOAD, .unit = "fraction", .prefix = LOAD_CHANNEL_PREFIX, .exact = true,
          .counts_errors = true, .count = load_total_count, .errors = load_errors, .value = load_total_value },
};

double cpu_load_step(uint64_t interval_ms, size_t cpus) {
        long hz = sysconf(_SC_CLK_TCK);
        double jiffies = (double) (hz > 0 ? hz : 100) * (double) interval_ms / 1000.0 * (double) cpus;

        return jiffies > 1.0 ? 1.0 / jiffies : 1.0;
}

const struct sensors_source load_source = {
        .name = "load",
        .probe = load_probe,
        .read = load_read,
        .carry = load_carry,
        .free = load_free,
        .channels = load_channels,
        .n_channels = 2,
};
