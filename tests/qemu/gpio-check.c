/* gpio-check.c — drives alerts/gpio.c against a real kernel GPIO chip and reads each level back from debugfs. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpio.h"

/*
 * Made for the QEMU virt machine (tests/qemu/vm.sh): gpiochip0 is its PL061,
 * label 9030000.pl061, 8 lines, nothing else holds them. One line per check,
 * "PASS name: detail" or "FAIL name: detail", then a summary line that
 * tests/qemu/gpio-qemu.sh parses. A line's level is read from
 * /sys/kernel/debug/gpio (the kernel lists every requested line with its
 * consumer and its physical level); a second request to read it is not
 * possible while the line is held.
 */

#define CHIP "gpiochip0"
#define CHIP_LABEL "9030000.pl061"
#define DEBUGFS_GPIO "/sys/kernel/debug/gpio"

static unsigned n_pass, n_fail;

__attribute__((format(printf, 3, 4)))
static bool check(bool ok, const char *name, const char *fmt, ...) {
        va_list ap;

        printf("%s %s: ", ok ? "PASS" : "FAIL", name);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
        fflush(stdout);
        if (ok)
                n_pass++;
        else
                n_fail++;
        return ok;
}

/* The physical level of the requested line held by consumer on the chip
 * labelled CHIP_LABEL: 1 high, 0 low, -ENOENT not requested (by that
 * consumer), -EPROTO when offset is not the line it holds. */
static int debugfs_level(unsigned offset, const char *consumer) {
        FILE *f = fopen(DEBUGFS_GPIO, "re");
        char buf[256], who[64];
        int base = -1, gpio, r = -ENOENT;
        bool our_chip = false;

        if (!f)
                return -errno;
        while (fgets(buf, sizeof(buf), f)) {
                const char *bar = strchr(buf, '|'), *paren = bar ? strchr(bar, ')') : NULL;
                size_t len;

                /* "gpiochip0: GPIOs 512-519, parent: platform/9030000.pl061, 9030000.pl061:" */
                if (strncmp(buf, "gpiochip", 8) == 0) {
                        our_chip = strstr(buf, ", " CHIP_LABEL ":") && sscanf(strchr(buf, ' '), " GPIOs %d-", &base) == 1;
                        continue;
                }
                /* " gpio-515 (                    |heatcurved/check-a  ) out hi " */
                if (!our_chip || !paren || sscanf(buf, " gpio-%d", &gpio) != 1)
                        continue;
                len = (size_t) (paren - bar - 1);
                if (len >= sizeof(who))
                        continue;
                memcpy(who, bar + 1, len);
                while (len > 0 && who[len - 1] == ' ')
                        len--;
                who[len] = '\0';
                if (strcmp(who, consumer) != 0)
                        continue;
                if (gpio - base != (int) offset)
                        r = -EPROTO;
                else if (strstr(paren, " out hi"))
                        r = 1;
                else if (strstr(paren, " out lo"))
                        r = 0;
                else
                        r = -EPROTO;
                break;
        }
        fclose(f);
        return r;
}

static const char *level_name(int level) {
        return level == 1 ? "high" : level == 0 ? "low" : level == -ENOENT ? "not requested" : "unreadable";
}

static int open_line(const char *text, const char *name, bool active_low, bool on,
                     struct gpio_out **ret, char *err, size_t errlen) {
        struct gpio_spec spec;
        int r = gpio_spec_parse(text, &spec, err, errlen);

        return r < 0 ? r : gpio_out_new(&spec, name, active_low, on, ret, err, errlen);
}

/* Opens text as consumer name, expects the physical level want right away. */
static struct gpio_out *check_open(const char *check_name, const char *text, const char *name,
                                   bool active_low, bool on, int want) {
        struct gpio_out *g = NULL;
        char err[256] = "", consumer[64];
        struct gpio_spec spec;
        int r, level;

        r = open_line(text, name, active_low, on, &g, err, sizeof(err));
        if (!check(r == 0, check_name, "%s requested: %s", text, r == 0 ? "ok" : err))
                return NULL;
        gpio_spec_parse(text, &spec, NULL, 0);
        snprintf(consumer, sizeof(consumer), GPIO_CONSUMER_PREFIX "%s", name);
        level = debugfs_level(spec.line, consumer);
        check(level == want, check_name, "%s logical %s%s reads %s in debugfs, want %s", text,
              on ? "on" : "off", active_low ? " (active-low)" : "", level_name(level), level_name(want));
        return g;
}

static void check_set(const char *check_name, struct gpio_out *g, unsigned line, const char *name,
                      bool on, int want) {
        char err[256] = "", consumer[64];
        int r = gpio_out_set(g, on, err, sizeof(err)), level;

        snprintf(consumer, sizeof(consumer), GPIO_CONSUMER_PREFIX "%s", name);
        level = debugfs_level(line, consumer);
        check(r == 0 && level == want && gpio_out_is_on(g) == on, check_name,
              "set %s: %s, line %u reads %s, want %s", on ? "on" : "off", r == 0 ? "ok" : err, line,
              level_name(level), level_name(want));
}

/* Expects open to fail with want_r and a message holding both needles. */
static void check_open_fails(const char *check_name, const char *text, int want_r,
                             const char *needle1, const char *needle2) {
        struct gpio_out *g = NULL;
        char err[256] = "";
        int r = open_line(text, "check-fail", false, false, &g, err, sizeof(err));

        check(r == want_r && !g && strstr(err, needle1) && strstr(err, needle2), check_name,
              "%s: %d (want %d), \"%s\"", text, r, want_r, err);
        gpio_out_free(g);
}

/* A child process holds gpiochip0:5 as heatcurved/holder until the parent
 * closes the pipe; meanwhile the parent must get EBUSY, naming the holder. */
static void check_busy_other_process(void) {
        int ready[2], hold[2];
        pid_t pid;
        char c = 0;

        if (pipe(ready) < 0 || pipe(hold) < 0) {
                check(false, "busy-other-process", "pipe: %s", strerror(errno));
                return;
        }
        pid = fork();
        if (pid == 0) {
                struct gpio_out *g = NULL;
                char err[256];

                close(ready[0]);
                close(hold[1]);
                c = open_line(CHIP ":5", "holder", false, true, &g, err, sizeof(err)) == 0 ? 'y' : 'n';
                if (write(ready[1], &c, 1) != 1 || c != 'y')
                        _exit(1);
                while (read(hold[0], &c, 1) > 0)
                        ;
                gpio_out_free(g);
                _exit(0);
        }
        close(ready[1]);
        close(hold[0]);
        if (pid < 0 || read(ready[0], &c, 1) != 1 || c != 'y') {
                check(false, "busy-other-process", "the holder process could not request " CHIP ":5");
        } else {
                check(debugfs_level(5, "heatcurved/holder") == 1, "busy-other-process",
                      "holder's line 5 reads high in debugfs");
                check_open_fails("busy-other-process", CHIP ":5", -EBUSY, CHIP ":5", "\"heatcurved/holder\"");
        }
        close(hold[1]);
        close(ready[0]);
        if (pid > 0)
                waitpid(pid, NULL, 0);
        /* the holder has exited: the line is free again */
        gpio_out_free(check_open("busy-after-holder-exit", CHIP ":5", "check-g", false, false, 0));
}

/* argv[1]: the libgpiod API the build chose, "1" or "2"; the library loaded
 * here must be that one (the VM could have been given the wrong one). */
int main(int argc, char **argv) {
        const char *version = gpio_library_version();
        struct gpio_out *a, *b, *c, *d, *e;

        printf("gpio-check: libgpiod %s\n", version);
        if (argc > 1)
                check(version[0] == argv[1][0] && version[1] == '.', "library",
                      "libgpiod %s loaded, the build chose the %s API", version,
                      argv[1][0] == '2' ? "2.x" : "1.6");

        a = check_open("open-by-name", CHIP ":3", "check-a", false, false, 0);
        if (a) {
                check_set("set-on", a, 3, "check-a", true, 1);
                check_set("set-off", a, 3, "check-a", false, 0);
                check_set("set-on-again", a, 3, "check-a", true, 1);
        }
        b = check_open("active-low-on", CHIP ":4", "check-b", true, true, 0);
        if (b)
                check_set("active-low-off", b, 4, "check-b", false, 1);
        c = check_open("initial-on", CHIP ":2", "check-c", false, true, 1);
        d = check_open("open-by-path", "/dev/" CHIP ":6", "check-d", false, true, 1);
        e = check_open("open-by-label", CHIP_LABEL ":7", "check-e", false, true, 1);

        check_open_fails("busy-same-process", CHIP ":3", -EBUSY, CHIP ":3", "\"heatcurved/check-a\"");
        check_busy_other_process();
        check_open_fails("out-of-range", CHIP ":8", -ERANGE, CHIP ":8", "8 lines (0-7)");
        check_open_fails("out-of-range-far", CHIP ":4000", -ERANGE, CHIP ":4000", CHIP_LABEL);
        check_open_fails("missing-chip", "gpiochip1:0", -ENOENT, "gpiochip1:0", "no such GPIO chip");
        check_open_fails("missing-label", "no-such-chip:0", -ENOENT, "no-such-chip:0", "labelled");

        gpio_out_free(a);
        check(debugfs_level(3, "heatcurved/check-a") == -ENOENT, "release", "line 3 is no longer listed after free");
        gpio_out_free(check_open("reopen-after-release", CHIP ":3", "check-f", false, false, 0));

        gpio_out_free(b);
        gpio_out_free(c);
        gpio_out_free(d);
        gpio_out_free(e);
        printf("gpio-check: %u passed, %u failed\n", n_pass, n_fail);
        return n_fail ? 1 : 0;
}
