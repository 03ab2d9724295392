/* fuzz-config.c — libFuzzer target: the INI config parser (config_load) with its [alert] and [fan] sections, and
 * the checks after it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fd = -1;
static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct config c;
        char err[1024], host[64];
        uint16_t port;

        if (size > 64 * 1024)
                return 0;
        if (fd < 0) {
                /* config_load() reads a path: an in-memory file, rewritten for each input */
                fd = memfd_create("fuzz-config", MFD_CLOEXEC);
                if (fd < 0)
                        abort();
                snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        }
        if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t) size)
                abort();
        config_defaults(&c);
        if (config_load(&c, path, err, sizeof err) == 0) {
                /* a NUL anywhere would cut its line short: never taken */
                if (memchr(data, '\0', size))
                        abort();
                config_validate(&c, err, sizeof err);
                config_history_samples(&c);
                for (size_t i = 0; i < c.alerts.n_rules; i++)
                        if (alert_rule_dwell_ms(&c.alerts.rules[i]) > 3600000)
                                abort();
        } else if (!err[0])
                abort();                /* every refusal says why */
        if (size < 128) {
                char text[128];
                memcpy(text, data, size);
                text[size] = '\0';
                config_parse_listen(text, host, sizeof host, &port);
                config_set_flag(&c, "daemon", "interval", text, err, sizeof err);
        }
        return 0;
}
