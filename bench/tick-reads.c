/* tick-reads.c — bench helper: the physical limit of a sampling tick, the same preads on the same tree and nothing else.
 *
 *   tick-reads ROOT INTERVAL_MS SECONDS
 *       Probes ROOT (sysfs and procfs root, as heatcurved --sysfs-root
 *       --procfs-root) with the sensors library only to learn which files a
 *       tick reads, then opens them itself and, every INTERVAL_MS for
 *       SECONDS, preads each one into a buffer of the size the tick uses:
 *       every temperature, every cooling device's cur_state, per cpufreq
 *       policy its one current frequency, scaling_max_freq and
 *       stats/time_in_state, and /proc/stat. No parsing, no allocation, no
 *       event loop. Between ticks it waits as the daemon's loop does, in
 *       epoll_wait() on an empty set with the milliseconds left to the wall
 *       clock's grid of the interval as its timeout, so that the two wake at
 *       the same instants and share what waking costs on the machine of the
 *       moment (a clock_nanosleep() wakes on the grid itself, about a
 *       millisecond before the daemon). Prints key=value lines:
 *       files, ticks, cpu_ns (this process's CPU time over the ticks) and
 *       us_per_tick.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "sensors.h"
#include "util.h"

#define MAX_FILES 1024

struct file {
        int fd;
        size_t size;                    /* bytes the tick's pread asks for */
};

static struct file files[MAX_FILES];
static size_t n_files;
static char buf[1 << 16];

static void add(const char *path, size_t size) {
        int fd;

        if (n_files == MAX_FILES)
                return;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
                return;
        files[n_files++] = (struct file) { fd, size < sizeof buf ? size : sizeof buf };
}

/* The same sizes as the sensors library: 32 bytes for a value, 4096 for
 * time_in_state, (cpus + 1) x 256 + 64 for /proc/stat. */
static void collect(const struct sensors *s) {
        char path[1200];

        for (size_t i = 0; i < s->n_temps; i++)
                if (s->temps[i].fd >= 0)
                        add(s->temps[i].path, 31);
        for (size_t i = 0; i < s->n_cooling; i++)
                if (s->cooling[i].fd_cur >= 0) {
                        snprintf(path, sizeof path, "%s/sys/class/thermal/%s/cur_state",
                                 strcmp(s->sysfs_root, "/") ? s->sysfs_root : "", s->cooling[i].id);
                        add(path, 31);
                }
        for (size_t i = 0; i < s->n_policies; i++) {
                const struct cpufreq_policy *p = &s->policies[i];

                if (p->fd_cur < 0)
                        continue;
                snprintf(path, sizeof path, "%s/%s", p->dir, p->has_cpuinfo_cur ? "cpuinfo_cur_freq" : "scaling_cur_freq");
                add(path, 31);
                if (p->fd_scaling_max >= 0) {
                        snprintf(path, sizeof path, "%s/scaling_max_freq", p->dir);
                        add(path, 31);
                }
                if (p->fd_time_in_state >= 0) {
                        snprintf(path, sizeof path, "%s/stats/time_in_state", p->dir);
                        add(path, 4095);
                }
        }
        if (s->load.fd >= 0) {
                snprintf(path, sizeof path, "%s/proc/stat", strcmp(s->procfs_root, "/") ? s->procfs_root : "");
                add(path, s->load.stat_buf_size - 1);
        }
}

/* One tick: the preads, nothing else. Not inlined, so callgrind can count it. */
__attribute__((noinline)) void bare_tick(void);
__attribute__((noinline)) void bare_tick(void) {
        for (size_t i = 0; i < n_files; i++)
                if (pread(files[i].fd, buf, files[i].size, 0) < 0)
                        buf[0] = 0;
}

static int64_t ns(clockid_t clock) {
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(int argc, char *argv[]) {
        struct sensors *s;
        long interval_ms, seconds, ticks;
        int64_t cpu0, cpu1;
        uint64_t next, interval_ns;
        int r, ep;

        if (argc != 4) {
                fprintf(stderr, "usage: tick-reads ROOT INTERVAL_MS SECONDS\n");
                return 2;
        }
        interval_ms = strtol(argv[2], NULL, 10);
        seconds = strtol(argv[3], NULL, 10);
        if (interval_ms <= 0 || seconds <= 0)
                return 2;
        r = sensors_probe(argv[1], argv[1], &s);
        if (r < 0) {
                fprintf(stderr, "probe %s: %s\n", argv[1], strerror(-r));
                return 1;
        }
        collect(s);
        sensors_free(s);
        ep = epoll_create1(EPOLL_CLOEXEC);
        if (ep < 0) {
                fprintf(stderr, "epoll_create1: %s\n", strerror(errno));
                return 1;
        }

        ticks = seconds * 1000 / interval_ms;
        interval_ns = (uint64_t) interval_ms * 1000000u;
        /* on the daemon's grid (util_grid_next_ns), so that both wake at the same instants */
        next = util_grid_next_now_ns(interval_ns, 0);
        cpu0 = ns(CLOCK_PROCESS_CPUTIME_ID);
        for (long k = 0; k < ticks;) {
                uint64_t now = util_monotonic_ns();
                struct epoll_event ev;

                if (now >= next) {      /* as daemon_loop(): a tick missed is dropped */
                        bare_tick();
                        next = util_grid_after_ns(next, now, interval_ns);
                        k++;
                        continue;
                }
                /* sd_event_run()'s timeout: milliseconds, rounded up */
                (void) epoll_wait(ep, &ev, 1, (int) ((next - now + 999999u) / 1000000u));
        }
        cpu1 = ns(CLOCK_PROCESS_CPUTIME_ID);
        printf("files=%zu\nticks=%ld\ncpu_ns=%lld\nus_per_tick=%.1f\n", n_files, ticks,
               (long long) (cpu1 - cpu0), (double) (cpu1 - cpu0) / 1e3 / (double) ticks);
        close(ep);
        return 0;
}
