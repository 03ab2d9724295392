/* gpio.c — one GPIO output line through libgpiod; the 1.6 and 2.x APIs differ only in the "backend" block. */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpiod.h>

#include "gpio.h"

#if !defined(HEATCURVE_GPIOD_API) || (HEATCURVE_GPIOD_API != 1 && HEATCURVE_GPIOD_API != 2)
#error "HEATCURVE_GPIOD_API must be 1 or 2 (alerts/meson.build sets it from libgpiod's version)"
#endif

#define GPIO_CONSUMER_MAX 32            /* bytes, with the NUL: the kernel's GPIO_MAX_NAME_SIZE */

struct gpio_out {
        struct gpio_spec spec;          /* as the caller gave it, for messages */
        bool on;                        /* logical value last set */
#if HEATCURVE_GPIOD_API == 1
        struct gpiod_chip *chip;        /* 1.6: the line belongs to the open chip */
        struct gpiod_line *line;
#else
        struct gpiod_line_request *request;     /* 2.x: the request has its own fd */
#endif
};

/* An open chip, as much as the lookup and the range check need. */
struct chip {
        struct gpiod_chip *chip;
        char label[64];
        unsigned n_lines;
};

__attribute__((format(printf, 4, 5)))
static int fail(int r, char *err, size_t errlen, const char *fmt, ...) {
        va_list ap;

        if (err && errlen > 0) {
                va_start(ap, fmt);
                vsnprintf(err, errlen, fmt, ap);
                va_end(ap);
        }
        return r;
}

/* ---- backend: libgpiod 1.6 ---- */
#if HEATCURVE_GPIOD_API == 1

static int chip_open(const char *path, struct chip *c) {
        c->chip = gpiod_chip_open(path);
        if (!c->chip)
                return -errno;
        snprintf(c->label, sizeof(c->label), "%s", gpiod_chip_label(c->chip));
        c->n_lines = gpiod_chip_num_lines(c->chip);
        return 0;
}

static void chip_close(struct chip *c) {
        if (c->chip)
                gpiod_chip_close(c->chip);
        c->chip = NULL;
}

/* Who holds the line, "" when that cannot be told. */
static void chip_line_consumer(struct chip *c, unsigned offset, char *buf, size_t len) {
        struct gpiod_line *line = gpiod_chip_get_line(c->chip, offset);
        const char *who = NULL;

        if (line && gpiod_line_update(line) == 0)
                who = gpiod_line_consumer(line);
        snprintf(buf, len, "%s", who ? who : "");
}

/* Takes over the open chip on success. */
static int line_request(struct gpio_out *g, struct chip *c, const char *consumer, bool active_low, int value) {
        struct gpiod_line *line = gpiod_chip_get_line(c->chip, g->spec.line);

        if (!line)
                return -errno;
        if (gpiod_line_request_output_flags(line, consumer,
                                            active_low ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0,
                                            value) < 0)
                return -errno;
        g->chip = c->chip;
        g->line = line;
        c->chip = NULL;
        return 0;
}

static int line_set(struct gpio_out *g, int value) {
        return gpiod_line_set_value(g->line, value) < 0 ? -errno : 0;
}

static void line_release(struct gpio_out *g) {
        if (g->line)
                gpiod_line_release(g->line);
        if (g->chip)
                gpiod_chip_close(g->chip);
}

const char *gpio_library_version(void) {
        return gpiod_version_string();
}

/* ---- backend: libgpiod 2.x ---- */
#else

static int chip_open(const char *path, struct chip *c) {
        struct gpiod_chip_info *info;
        int r;

        c->chip = gpiod_chip_open(path);
        if (!c->chip)
                return -errno;
        info = gpiod_chip_get_info(c->chip);
        if (!info) {
                r = -errno;
                gpiod_chip_close(c->chip);
                c->chip = NULL;
                return r;
        }
        snprintf(c->label, sizeof(c->label), "%s", gpiod_chip_info_get_label(info));
        c->n_lines = (unsigned) gpiod_chip_info_get_num_lines(info);
        gpiod_chip_info_free(info);
        return 0;
}

static void chip_close(struct chip *c) {
        if (c->chip)
                gpiod_chip_close(c->chip);
        c->chip = NULL;
}

static void chip_line_consumer(struct chip *c, unsigned offset, char *buf, size_t len) {
        struct gpiod_line_info *info = gpiod_chip_get_line_info(c->chip, offset);
        const char *who = info ? gpiod_line_info_get_consumer(info) : NULL;

        snprintf(buf, len, "%s", who ? who : "");
        gpiod_line_info_free(info);
}

/* The chip stays the caller's: a 2.x request outlives its chip. */
static int line_request(struct gpio_out *g, struct chip *c, const char *consumer, bool active_low, int value) {
        struct gpiod_line_settings *settings = gpiod_line_settings_new();
        struct gpiod_line_config *lc = gpiod_line_config_new();
        struct gpiod_request_config *rc = gpiod_request_config_new();
        unsigned offset = g->spec.line;
        int r = -ENOMEM;

        if (!settings || !lc || !rc)
                goto finish;
        if (gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_OUTPUT) < 0 ||
            gpiod_line_settings_set_output_value(settings, value ? GPIOD_LINE_VALUE_ACTIVE
                                                                 : GPIOD_LINE_VALUE_INACTIVE) < 0) {
                r = -errno;
                goto finish;
        }
        gpiod_line_settings_set_active_low(settings, active_low);
        if (gpiod_line_config_add_line_settings(lc, &offset, 1, settings) < 0) {
                r = -errno;
                goto finish;
        }
        gpiod_request_config_set_consumer(rc, consumer);
        g->request = gpiod_chip_request_lines(c->chip, rc, lc);
        r = g->request ? 0 : -errno;
finish:
        gpiod_request_config_free(rc);
        gpiod_line_config_free(lc);
        gpiod_line_settings_free(settings);
        return r;
}

static int line_set(struct gpio_out *g, int value) {
        return gpiod_line_request_set_value(g->request, g->spec.line,
                                            value ? GPIOD_LINE_VALUE_ACTIVE
                                                  : GPIOD_LINE_VALUE_INACTIVE) < 0 ? -errno : 0;
}

static void line_release(struct gpio_out *g) {
        if (g->request)
                gpiod_line_request_release(g->request);
}

const char *gpio_library_version(void) {
        return gpiod_api_version();
}

#endif
/* ---- end of backend ---- */

int gpio_spec_parse(const char *text, struct gpio_spec *ret, char *err, size_t errlen) {
        const char *colon = text ? strrchr(text, ':') : NULL;
        size_t chip_len;
        unsigned long line = 0;

        if (!colon)
                return fail(-EINVAL, err, errlen, "\"%s\": expected CHIP:LINE, such as gpiochip0:17",
                            text ? text : "");
        chip_len = (size_t) (colon - text);
        if (chip_len == 0)
                return fail(-EINVAL, err, errlen, "\"%s\": no chip before the ':'", text);
        if (chip_len >= sizeof(ret->chip))
                return fail(-EINVAL, err, errlen, "\"%s\": the chip name is longer than %zu bytes",
                            text, sizeof(ret->chip) - 1);
        for (const char *p = text; p < colon; p++)
                if ((unsigned char) *p <= ' ' || *p == 0x7f)
                        return fail(-EINVAL, err, errlen, "\"%s\": blank or control character in the chip name",
                                    text);
        if (colon[1] == '\0')
                return fail(-EINVAL, err, errlen, "\"%s\": no line number after the ':'", text);
        /* Digits only: strtoul alone would take " 17", "+17" and "-1". */
        for (const char *p = colon + 1; *p; p++) {
                if (*p < '0' || *p > '9')
                        return fail(-EINVAL, err, errlen, "\"%s\": the line must be a decimal number", text);
                line = line * 10 + (unsigned long) (*p - '0');
                if (line > GPIO_LINE_MAX)
                        return fail(-EINVAL, err, errlen, "\"%s\": line number above %u", text, GPIO_LINE_MAX);
        }
        memcpy(ret->chip, text, chip_len);
        ret->chip[chip_len] = '\0';
        ret->line = (unsigned) line;
        return 0;
}

static bool is_chip_name(const char *s) {
        if (strncmp(s, "gpiochip", 8) != 0 || s[8] == '\0')
                return false;
        for (s += 8; *s; s++)
                if (*s < '0' || *s > '9')
                        return false;
        return true;
}

/* The chip whose label is label, among /dev/gpiochip*. -ENOENT when none is. */
static int chip_open_by_label(const char *label, struct chip *c) {
        DIR *d = opendir("/dev");
        struct dirent *de;
        char path[300];
        int r = -ENOENT;

        if (!d)
                return -errno;
        while (r < 0 && (de = readdir(d))) {
                if (!is_chip_name(de->d_name))
                        continue;
                snprintf(path, sizeof(path), "/dev/%s", de->d_name);
                if (chip_open(path, c) < 0)
                        continue;       /* unreadable chips cannot be the one asked for */
                if (strcmp(c->label, label) == 0)
                        r = 0;
                else
                        chip_close(c);
        }
        closedir(d);
        return r;
}

static int chip_open_spec(const struct gpio_spec *spec, struct chip *c, char *err, size_t errlen) {
        char path[GPIO_CHIP_MAX + 8];
        const char *sp = spec->chip;
        int r;

        if (spec->chip[0] == '/') {
                r = chip_open(spec->chip, c);
        } else if (is_chip_name(spec->chip)) {
                snprintf(path, sizeof(path), "/dev/%s", spec->chip);
                r = chip_open(path, c);
        } else {
                r = chip_open_by_label(spec->chip, c);
                if (r == -ENOENT)
                        return fail(r, err, errlen, "%s:%u: no GPIO chip is labelled \"%s\"",
                                    sp, spec->line, sp);
        }
        if (r == -ENOENT)
                return fail(r, err, errlen, "%s:%u: no such GPIO chip", sp, spec->line);
        if (r == -ENOTTY || r == -ENODEV)
                return fail(-ENODEV, err, errlen, "%s:%u: not a GPIO chip", sp, spec->line);
        if (r < 0)
                return fail(r, err, errlen, "%s:%u: cannot open the GPIO chip: %s", sp, spec->line,
                            strerror(-r));
        return 0;
}

int gpio_out_new(const struct gpio_spec *spec, const char *name, bool active_low, bool on,
                 struct gpio_out **ret, char *err, size_t errlen) {
        struct chip c = { 0 };
        struct gpio_out *g;
        char consumer[GPIO_CONSUMER_MAX], holder[GPIO_CONSUMER_MAX];
        int r;

        r = chip_open_spec(spec, &c, err, errlen);
        if (r < 0)
                return r;
        if (spec->line >= c.n_lines) {
                r = fail(-ERANGE, err, errlen, "%s:%u: chip %s has %u lines (0-%u)", spec->chip,
                         spec->line, c.label, c.n_lines, c.n_lines ? c.n_lines - 1 : 0);
                goto out_chip;
        }
        g = calloc(1, sizeof(*g));
        if (!g) {
                r = fail(-ENOMEM, err, errlen, "%s:%u: out of memory", spec->chip, spec->line);
                goto out_chip;
        }
        g->spec = *spec;
        snprintf(consumer, sizeof(consumer), GPIO_CONSUMER_PREFIX "%s", name ? name : "");
        r = line_request(g, &c, consumer, active_low, on);
        if (r == -EBUSY) {
                chip_line_consumer(&c, spec->line, holder, sizeof(holder));
                fail(r, err, errlen, "%s:%u: the line is in use by %s%s%s", spec->chip, spec->line,
                     holder[0] ? "\"" : "another consumer", holder, holder[0] ? "\"" : "");
        } else if (r < 0) {
                fail(r, err, errlen, "%s:%u: cannot request the line as an output: %s",
                     spec->chip, spec->line, strerror(-r));
        }
        if (r < 0) {
                free(g);
                goto out_chip;
        }
        g->on = on;
        *ret = g;
out_chip:
        chip_close(&c);
        return r;
}

int gpio_out_set(struct gpio_out *g, bool on, char *err, size_t errlen) {
        int r = line_set(g, on);

        if (r < 0)
                return fail(r, err, errlen, "%s:%u: cannot set the line %s: %s", g->spec.chip,
                            g->spec.line, on ? "on" : "off", strerror(-r));
        g->on = on;
        return 0;
}

bool gpio_out_is_on(const struct gpio_out *g) {
        return g->on;
}

void gpio_out_free(struct gpio_out *g) {
        if (!g)
                return;
        line_release(g);
        free(g);
}
