/* gpio.h — one GPIO output line (an alert's LED, buzzer or relay, a fan) through libgpiod 1.6 or 2.x. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/*
 * Library contract: no logging, no globals. Functions return 0 or a negative
 * errno and, on error, write into err a message that names the line as the
 * user wrote it ("gpiochip0:17: ..."), so the caller can log it once with the
 * rule's name. Which libgpiod API is used (1.6 or 2.x) is decided when the
 * project is configured; this header is the same for both.
 */

#define GPIO_CHIP_MAX 64                /* bytes for the chip part of a spec, with the NUL */
#define GPIO_LINE_MAX 65535u            /* largest offset a spec may name */
#define GPIO_CONSUMER_PREFIX "heatcurved/"

/* A line as written in the configuration: "CHIP:LINE". */
struct gpio_spec {
        char chip[GPIO_CHIP_MAX];       /* "gpiochip0", a path "/dev/gpiochip0", or a chip label */
        unsigned line;                  /* offset on that chip, 0-based */
};

struct gpio_out;

/* Parses "gpiochip0:17", "/dev/gpiochip0:17" or "pinctrl-bcm2711:17" (split at
 * the last ':'; LINE is decimal, 0..GPIO_LINE_MAX). Checks only the syntax:
 * whether the chip and line exist is gpio_out_new()'s business.
 * -EINVAL with err saying what is wrong. */
int gpio_spec_parse(const char *text, struct gpio_spec *ret, char *err, size_t errlen);

/* Finds the chip (a name "gpiochipN" is /dev/gpiochipN; a path is opened as
 * it is; anything else is looked up among /dev/gpiochip* by label), requests
 * the line as an output with consumer "heatcurved/<name>" (the kernel keeps
 * 31 bytes of it) and drives it to on (logical: with active_low, on is the
 * low level). Errors, with err naming the chip and line:
 *   -ENOENT  no such chip (or no chip with that label)
 *   -ENODEV  the path is not a GPIO chip
 *   -ERANGE  the chip has no such line (err gives the chip's range)
 *   -EBUSY   the line is held by another request (err names its consumer)
 *   -EACCES, -EPERM  not allowed to open the chip
 *   other -errno from the kernel, -ENOMEM */
int gpio_out_new(const struct gpio_spec *spec, const char *name, bool active_low, bool on,
                 struct gpio_out **ret, char *err, size_t errlen);
/* Drives the line to on (logical). -errno with err on failure; the line stays
 * requested either way. */
int gpio_out_set(struct gpio_out *g, bool on, char *err, size_t errlen);
/* The logical value last set successfully. */
bool gpio_out_is_on(const struct gpio_out *g);
/* Releases the line and closes the chip. The kernel leaves a released output
 * at its last level: to switch it off, gpio_out_set(g, false) first. Accepts NULL. */
void gpio_out_free(struct gpio_out *g);

/* The libgpiod in use, "1.6.3" or "2.1.3" (the loaded library's own answer). */
const char *gpio_library_version(void);
