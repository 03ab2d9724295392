/* main.c — heatcurved: parse the command line, build the daemon, run the loop, tear down. */
#include <errno.h>
#include <getopt.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build-config.h"
#include "daemon.h"
#include "log.h"

static void help(void) {
        printf("Usage: heatcurved [OPTIONS]\n"
               "Watch SBC temperatures, CPU frequency and load; serve them over HTTP.\n\n"
               "  -c, --config FILE        config file (default " CONFIG_DEFAULT_PATH " if present)\n"
               "      --check-config       validate the configuration, print the verdict and exit\n"
               "  -l, --listen ADDR:PORT   HTTP address (default 127.0.0.1:8080; [::1]:8080 for IPv6)\n"
               "  -i, --interval DURATION  sampling interval, 100ms .. 1h (default 1s)\n"
               "      --state-dir DIR      history and runs (default /var/lib/heatcurve)\n"
               "      --sysfs-root DIR     read DIR/sys instead of /sys (fixture trees)\n"
               "      --procfs-root DIR    read DIR/proc instead of /proc\n"
               "      --simulate[=BOARD]   a simulated board heated by this machine's CPU load\n"
               "                           (default odroid-c2-3.14)\n"
               "      --allow-root         let runs start loads while heatcurved runs as root\n"
               "      --once               print one sensors snapshot as JSON and exit\n"
               "      --version            print the version and exit\n"
               "  -h, --help               this text\n\n"
               "Durations are written 250ms, 1s, 90m, 2h. Every option except --config,\n"
               "--check-config and --once can also be set in the config file.\n");
}

enum {
        OPT_CHECK_CONFIG = 0x100,
        OPT_STATE_DIR,
        OPT_SYSFS_ROOT,
        OPT_PROCFS_ROOT,
        OPT_SIMULATE,
        OPT_ALLOW_ROOT,
        OPT_ONCE,
        OPT_VERSION,
};

static int options_add(struct options *o, const char *section, const char *key, const char *value) {
        if (o->n_overrides == DAEMON_OVERRIDES_MAX) {
                fprintf(stderr, "heatcurved: too many options\n");
                return -E2BIG;
        }
        o->overrides[o->n_overrides++] = (struct config_override) { section, key, value };
        return 0;
}

/* Returns 1 to go on, 0 to exit successfully (--help), -EINVAL on a usage error. */
static int parse_argv(int argc, char *argv[], struct options *o) {
        static const struct option longopts[] = {
                { "config", required_argument, NULL, 'c' },
                { "check-config", no_argument, NULL, OPT_CHECK_CONFIG },
                { "listen", required_argument, NULL, 'l' },
                { "interval", required_argument, NULL, 'i' },
                { "state-dir", required_argument, NULL, OPT_STATE_DIR },
                { "sysfs-root", required_argument, NULL, OPT_SYSFS_ROOT },
                { "procfs-root", required_argument, NULL, OPT_PROCFS_ROOT },
                { "simulate", optional_argument, NULL, OPT_SIMULATE },
                { "allow-root", no_argument, NULL, OPT_ALLOW_ROOT },
                { "once", no_argument, NULL, OPT_ONCE },
                { "version", no_argument, NULL, OPT_VERSION },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        int c, r = 0;

        while (r >= 0 && (c = getopt_long(argc, argv, "c:l:i:h", longopts, NULL)) >= 0) {
                switch (c) {
                case 'c': o->config_path = optarg; break;
                case OPT_CHECK_CONFIG: o->check_config = true; break;
                case 'l': r = options_add(o, "daemon", "listen", optarg); break;
                case 'i': r = options_add(o, "daemon", "interval", optarg); break;
                case OPT_STATE_DIR: r = options_add(o, "daemon", "state_dir", optarg); break;
                case OPT_SYSFS_ROOT: r = options_add(o, "daemon", "sysfs_root", optarg); break;
                case OPT_PROCFS_ROOT: r = options_add(o, "daemon", "procfs_root", optarg); break;
                case OPT_SIMULATE:
                        r = options_add(o, "daemon", "simulate", "yes");
                        if (r >= 0 && optarg)
                                r = options_add(o, "simulate", "board", optarg);
                        break;
                case OPT_ALLOW_ROOT: r = options_add(o, "runs", "allow_root", "yes"); break;
                case OPT_ONCE: o->once = true; break;
                case OPT_VERSION: printf("heatcurved %s\n", HEATCURVE_VERSION); return 0;
                case 'h': help(); return 0;
                default: return -EINVAL;
                }
        }
        if (r >= 0 && optind < argc) {
                fprintf(stderr, "heatcurved: unexpected argument \"%s\" (see --help)\n", argv[optind]);
                return -EINVAL;
        }
        return r < 0 ? r : 1;
}

static int run(int argc, char *argv[]) {
        struct options opts = {};
        struct config cfg;
        struct daemon *d = NULL;
        sigset_t mask;
        char err[512];
        int r;

        log_open();
#ifdef __GLIBC__
        /* Big and short-lived allocations (a day of a run's samples, 700 kB
         * a column, read on a thread to draw it once) are mapped apart and
         * go back to the kernel when freed. glibc would otherwise raise the
         * threshold to the size of the first one freed, and keep those that
         * follow in its heap, or in the arena of the thread that read them,
         * whose top malloc_trim() does not give back: about 1 MB stayed
         * after the first drawings of a day-long run (bench/README.md). */
        mallopt(M_ARENA_MAX, 1);
        mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
        r = parse_argv(argc, argv, &opts);
        if (r <= 0)
                return r;
        r = daemon_config_build(&opts, &cfg, err, sizeof err);
        if (opts.check_config) {
                printf("%s\n", r < 0 ? err : "configuration ok");
                return r;
        }
        if (r < 0) {
                log_error("%s", err);
                return r;
        }
        /* Before anything can start a thread: sd-event takes these as signal sources. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        sigaddset(&mask, SIGCHLD);      /* load workers are child sources */
        sigprocmask(SIG_BLOCK, &mask, NULL);

        r = daemon_new(&opts, &cfg, !opts.once, &d);
        if (r < 0)
                return r;
        r = opts.once ? daemon_print_once(d) : daemon_run(d);
        daemon_free(d);
        return r;
}

int main(int argc, char *argv[]) {
        return run(argc, argv) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
