/* stress-driver.c — runs one heatcurve stress load for a while and prints its work rate, for bench/stress-compare.sh. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "stress.h"

/* Usage: stress-driver TYPE METHOD WORKERS DUTY SECONDS [DIR | ARGV...]
 * TYPE cpu, memory, io (DIR: the io directory) or command (ARGV: the command;
 * METHOD and DUTY ignored, WORKERS only divides the CPU time below).
 * Prints one line per second "t=<s> rate=<n> <unit>/s" on stderr, then on
 * stdout "total=<work> unit=<unit> seconds=<s> rate=<work per s> workers=<n>
 * own=<%>", own being the CPU time of all the load's processes (reaped
 * children, so a command's own children count too) per worker and wall second. */

static uint64_t mono_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * UINT64_C(1000000000) + (uint64_t) ts.tv_nsec;
}

/* CPU seconds of our reaped children and their reaped descendants. */
static double children_cpu_s(void) {
        struct rusage ru;

        if (getrusage(RUSAGE_CHILDREN, &ru) < 0)
                return 0;
        return (double) ru.ru_utime.tv_sec + (double) ru.ru_stime.tv_sec +
               ((double) ru.ru_utime.tv_usec + (double) ru.ru_stime.tv_usec) / 1e6;
}

static int parse_spec(int argc, char **argv, struct stress_spec *spec, unsigned *seconds) {
        int type, method;

        if (argc < 6)
                return -EINVAL;
        type = stress_type_from_string(argv[1]);
        method = cpu_method_from_string(argv[2]);
        if (type < 0)
                return -EINVAL;
        stress_spec_init(spec, (enum stress_type) type);
        *seconds = (unsigned) strtoul(argv[5], NULL, 10);
        if (type == STRESS_COMMAND) {
                spec->argv = argc > 6 ? argv + 6 : NULL;
                return 0;
        }
        if (method < 0)
                return -EINVAL;
        spec->method = (enum cpu_method) method;
        spec->workers = (unsigned) strtoul(argv[3], NULL, 10);
        spec->duty_pct = (unsigned) strtoul(argv[4], NULL, 10);
        spec->io_dir = argc > 6 ? argv[6] : NULL;
        return 0;
}

int main(int argc, char **argv) {
        struct stress_spec spec;
        struct stress *s;
        char err[256];
        unsigned seconds;
        uint64_t start, prev_work = 0, total;
        const char *unit;
        int r;

        if (parse_spec(argc, argv, &spec, &seconds) < 0) {
                fprintf(stderr, "usage: %s cpu|memory|io|command sqrt|fma|matrix|- WORKERS DUTY SECONDS [DIR|ARGV...]\n", argv[0]);
                return 2;
        }
        if (stress_spec_validate(&spec, err, sizeof err) < 0) {
                fprintf(stderr, "%s\n", err);
                return 2;
        }
        r = stress_start(&spec, &s);
        if (r < 0) {
                fprintf(stderr, "stress_start: %s\n", strerror(-r));
                return 1;
        }
        unit = stress_work_unit(s);
        start = mono_ns();
        for (unsigned t = 1; t <= seconds; t++) {
                struct timespec ts = { .tv_sec = (time_t) (start / 1000000000u + t), .tv_nsec = (long) (start % 1000000000u) };
                while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                        ;
                uint64_t w = stress_work_done(s);
                fprintf(stderr, "t=%u rate=%" PRIu64 " %s/s\n", t, w - prev_work, stress_work_unit(s));
                prev_work = w;
        }
        total = stress_work_done(s);
        double secs = (double) (mono_ns() - start) / 1e9;
        unsigned workers = strtoul(argv[3], NULL, 10) > 0 ? (unsigned) strtoul(argv[3], NULL, 10) : (unsigned) stress_n_pids(s);
        pid_t pgid = stress_command_pgid(s);
        r = stress_reap_blocking(s, 2 * STRESS_STOP_GRACE_MS);
        stress_free(s);
        /* A command's process group must be empty once its supervisor is reaped. */
        bool leftover = pgid > 0 && !(kill(-pgid, 0) < 0 && errno == ESRCH);
        printf("total=%" PRIu64 " unit=%s seconds=%.2f rate=%.0f workers=%u own=%.1f leftover=%d\n",
               total, unit, secs, (double) total / secs, workers, 100 * children_cpu_s() / secs / workers, leftover);
        return r < 0 ? 1 : 0;
}
