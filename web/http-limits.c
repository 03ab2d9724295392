/* http-limits.c — who a client is for the limits: IPv4 per address, IPv6 per /64, loopback as one. */
#include "http.h"

#include <netinet/in.h>
#include <string.h>

/* A host on a LAN holds a whole IPv6 /64 and takes as many addresses in it
 * as it likes (privacy addresses, or on purpose): counting per address
 * would give it a share per address. An IPv4-mapped IPv6 address (a
 * dual-stack socket's IPv4 client) is its IPv4 address. */
bool http_peer_of(const struct sockaddr *sa, struct http_peer *ret) {
        *ret = (struct http_peer) {};
        if (!sa)
                return false;
        if (sa->sa_family == AF_INET) {
                const struct sockaddr_in *in = (const struct sockaddr_in *) sa;
                uint8_t b[4];

                memcpy(b, &in->sin_addr, sizeof b);
                if (b[0] == 127)
                        return true;
                ret->family = AF_INET;
                memcpy(ret->bytes, b, sizeof b);
                return false;
        }
        if (sa->sa_family == AF_INET6) {
                struct in6_addr in6;

                memcpy(&in6, &((const struct sockaddr_in6 *) sa)->sin6_addr, sizeof in6);
                if (IN6_IS_ADDR_V4MAPPED(&in6)) {
                        if (in6.s6_addr[12] == 127)
                                return true;
                        ret->family = AF_INET;
                        memcpy(ret->bytes, &in6.s6_addr[12], 4);
                        return false;
                }
                if (IN6_IS_ADDR_LOOPBACK(&in6))
                        return true;
                ret->family = AF_INET6;
                memcpy(ret->bytes, in6.s6_addr, 8);
                return false;
        }
        return false;
}

bool http_peer_equal(const struct http_peer *a, const struct http_peer *b) {
        return memcmp(a, b, sizeof *a) == 0;
}
