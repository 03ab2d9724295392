/* service-checks.c — start-up checks of settings that heatcurved.service's sandbox would break. */
#include "service-checks.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

#define DROP_IN "run `systemctl edit heatcurved` and add under [Service]"

/* The message for stress_dir into buf, or NULL when the directory is writable. */
static const char *service_check_stress_dir(const struct config *cfg, char *buf, size_t size) {
        const char *dir = cfg->stress_dir;

        /* Empty means state_dir, which StateDirectory= makes writable. */
        if (dir[0] == '\0' || access(dir, W_OK) == 0)
                return NULL;
        if (errno == EROFS)
                snprintf(buf, size, "stress_dir %s is on a read-only file system: io loads will "
                         "fail. heatcurved.service has ProtectSystem=strict; to allow it, "
                         DROP_IN " ReadWritePaths=%s", dir, dir);
        else
                snprintf(buf, size, "stress_dir %s is not writable (%s): io loads will fail",
                         dir, strerror(errno));
        return buf;
}

static bool service_listen_is_loopback(const char *host) {
        return strncmp(host, "127.", 4) == 0 || strcmp(host, "::1") == 0;
}

void service_checks_log(const struct config *cfg) {
        char msg[1024];

        if (service_check_stress_dir(cfg, msg, sizeof msg))
                log_warning("%s", msg);
        /* Started by systemd on a LAN address: the unit's IP filter answers
         * nothing, so clients time out with no trace in the log but this. */
        if (getenv("INVOCATION_ID") && !service_listen_is_loopback(cfg->listen_host))
                log_notice("listen = %s%s%s:%u is reachable beyond loopback only if the unit allows "
                           "it: heatcurved.service has IPAddressDeny=any, IPAddressAllow=localhost. "
                           "To open it, " DROP_IN " IPAddressAllow=<your LAN, e.g. 192.168.1.0/24>",
                           strchr(cfg->listen_host, ':') ? "[" : "",
                           cfg->listen_host[0] ? cfg->listen_host : "*",
                           strchr(cfg->listen_host, ':') ? "]" : "", cfg->listen_port);
}
