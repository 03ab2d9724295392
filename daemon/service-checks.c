/* service-checks.c — start-up checks of settings that heatcurved.service's sandbox would break. */
#include "service-checks.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
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

/* One IPAddressAllow=/IPAddressDeny= list of the unit, as systemd's
 * manager gives it (a(iayu): family, address bytes, prefix length): how
 * many entries, whether one lets in everything (prefix 0) and the ones
 * beyond loopback as text. */
struct service_ip_list {
        size_t n;
        bool all;                       /* 0.0.0.0/0 or ::/0: IPAddress...=any */
        size_t wide;                    /* entries beyond loopback */
        char text[256];                 /* them, "ADDR/PREFIX ..." */
};

static bool service_ip_is_loopback(int family, const uint8_t *a, size_t len, uint32_t prefix) {
        if (family == AF_INET && len == 4)
                return a[0] == 127 && prefix >= 8;
        return family == AF_INET6 && len == 16 && prefix == 128 && IN6_IS_ADDR_LOOPBACK((const struct in6_addr *) a);
}

static int service_ip_list_read(sd_bus_message *m, struct service_ip_list *ret) {
        int r = sd_bus_message_enter_container(m, 'a', "(iayu)");

        *ret = (struct service_ip_list) { 0 };
        while (r >= 0 && (r = sd_bus_message_enter_container(m, 'r', "iayu")) > 0) {
                char addr[INET6_ADDRSTRLEN] = "?";
                struct in6_addr a = { 0 };
                const void *bytes;
                uint32_t prefix;
                int32_t family;
                size_t len, k;

                r = sd_bus_message_read(m, "i", &family);
                if (r >= 0)
                        r = sd_bus_message_read_array(m, 'y', &bytes, &len);
                if (r >= 0)
                        r = sd_bus_message_read(m, "u", &prefix);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r < 0 || len > sizeof a)
                        return r < 0 ? r : -EBADMSG;
                memcpy(&a, bytes, len);
                ret->n++;
                ret->all |= prefix == 0;
                if (service_ip_is_loopback(family, (const uint8_t *) &a, len, prefix))
                        continue;
                ret->wide++;
                (void) inet_ntop(family, &a, addr, sizeof addr);
                k = strlen(ret->text);
                snprintf(ret->text + k, sizeof ret->text - k, "%s%s/%u", k ? " " : "", addr, prefix);
        }
        return r < 0 ? r : sd_bus_message_exit_container(m);
}

static int service_ip_list_get(sd_bus *bus, const char *path, const char *iface, const char *prop,
                               struct service_ip_list *ret) {
        sd_bus_error err = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        int r = sd_bus_get_property(bus, "org.freedesktop.systemd1", path, iface, prop, &err, &reply, "a(iayu)");

        if (r >= 0)
                r = service_ip_list_read(reply, ret);
        sd_bus_message_unref(reply);
        sd_bus_error_free(&err);
        return r;
}

/* The unit heatcurved runs in and its address filter, from systemd over
 * the system bus (GetUnitByPID, then the unit's properties). -errno when
 * there is no bus or systemd does not say. */
static int service_ip_filter(char *unit, size_t size, struct service_ip_list *allow, struct service_ip_list *deny) {
        sd_bus_error err = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        const char *path = NULL, *iface;
        char *id = NULL;
        sd_bus *bus = NULL;
        int r = sd_bus_open_system(&bus);

        if (r >= 0)
                r = sd_bus_set_method_call_timeout(bus, 2 * 1000000u);  /* us: never hold up the start long */
        if (r >= 0)
                r = sd_bus_call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                       "org.freedesktop.systemd1.Manager", "GetUnitByPID", &err, &reply, "u",
                                       (uint32_t) getpid());
        if (r >= 0)
                r = sd_bus_message_read(reply, "o", &path);
        if (r >= 0)
                r = sd_bus_get_property_string(bus, "org.freedesktop.systemd1", path, "org.freedesktop.systemd1.Unit",
                                               "Id", &err, &id);
        if (r >= 0) {
                snprintf(unit, size, "%s", id);
                iface = strstr(id, ".scope") ? "org.freedesktop.systemd1.Scope" : "org.freedesktop.systemd1.Service";
                r = service_ip_list_get(bus, path, iface, "IPAddressAllow", allow);
        }
        if (r >= 0)
                r = service_ip_list_get(bus, path, iface, "IPAddressDeny", deny);
        free(id);
        sd_bus_message_unref(reply);
        sd_bus_error_free(&err);
        sd_bus_flush_close_unref(bus);
        return r;
}

/* Started by systemd on a LAN address: the unit's IP filter answers
 * nothing, so clients time out with no trace in the log but this. Said
 * when the unit lets in only loopback, or when systemd cannot be asked;
 * not when a drop-in opened it. */
static void service_check_listen(const struct config *cfg) {
        struct service_ip_list allow, deny;
        char where[300], unit[128];
        bool v6 = strchr(cfg->listen_host, ':');

        if (!getenv("INVOCATION_ID") || service_listen_is_loopback(cfg->listen_host))
                return;
        snprintf(where, sizeof where, "listen = %s%s%s:%u", v6 ? "[" : "",
                 cfg->listen_host[0] ? cfg->listen_host : "*", v6 ? "]" : "", cfg->listen_port);
        if (service_ip_filter(unit, sizeof unit, &allow, &deny) < 0)
                log_notice("%s is reachable beyond loopback only if the unit allows "
                           "it: heatcurved.service has IPAddressDeny=any, IPAddressAllow=localhost. "
                           "To open it, " DROP_IN " IPAddressAllow=<your LAN, e.g. 192.168.1.0/24>", where);
        else if (deny.all && allow.wide == 0)
                log_notice("%s is not reachable beyond loopback: %s has IPAddressDeny=any and allows "
                           "only localhost. To open it, " DROP_IN " IPAddressAllow=<your LAN, e.g. "
                           "192.168.1.0/24>", where, unit);
        else if (deny.n > 0)
                log_info("%s: %s lets in %s%s%s", where, unit, deny.all ? "only " : "all but IPAddressDeny= ",
                         deny.all ? "localhost and " : "", deny.all ? allow.text : deny.text);
}

void service_checks_log(const struct config *cfg) {
        char msg[1024];

        if (service_check_stress_dir(cfg, msg, sizeof msg))
                log_warning("%s", msg);
        service_check_listen(cfg);
}
