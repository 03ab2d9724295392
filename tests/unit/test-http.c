/* test-http.c — unit tests for the transport's pure decisions (who is let in, which bodies are refused early) and its footprint. */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <cmocka.h>

#include "http.h"

#if defined(__SANITIZE_ADDRESS__)
#define HEAP_COUNTED 0          /* the sanitizer's allocator is not glibc's: mallinfo2() says nothing */
#elif defined(__GLIBC__)
#define HEAP_COUNTED 1
#else
#define HEAP_COUNTED 0
#endif

static void dispatch_none(void *userdata, struct http_request *r) {
}

/* A libmicrohttpd built with HTTPS has had GnuTLS build its global state
 * (about 100 KB of ASN.1 trees) before main(); a server that never speaks
 * TLS gives it back when it starts. */
static void test_tls_state_released(void **state) {
#if HEAP_COUNTED
        struct http_server *s = NULL;
        sd_event *e = NULL;
        size_t before, after;
        int fd;

        if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
                skip();         /* no GnuTLS in this process: nothing to give back */
        assert_int_equal(sd_event_new(&e), 0);
        fd = http_listen("127.0.0.1", 0);
        assert_true(fd >= 0);
        before = mallinfo2().uordblks;
        if (before == 0)
                skip();         /* another allocator answers malloc (valgrind): nothing counted */
        assert_int_equal(http_new(e, fd, dispatch_none, NULL, &s), 0);
        after = mallinfo2().uordblks;
        /* the server's own objects are a few KB; the trees were ~100 KB */
        assert_true(after + 64 * 1024 < before);
        http_free(s);
        sd_event_unref(e);
#else
        skip();
#endif
}

static void test_admit_loopback_reserve(void **state) {
        /* remote clients leave the last HTTP_LOOPBACK_RESERVED slots free */
        assert_true(http_admit(HTTP_CONNECTIONS_MAX - HTTP_LOOPBACK_RESERVED - 1, 0, false));
        assert_false(http_admit(HTTP_CONNECTIONS_MAX - HTTP_LOOPBACK_RESERVED, 0, false));
        assert_true(http_admit(HTTP_CONNECTIONS_MAX - 1, 0, true));
        assert_false(http_admit(HTTP_CONNECTIONS_MAX, 0, true));
}

static void test_admit_per_address(void **state) {
        assert_true(http_admit(20, HTTP_CONNECTIONS_PER_ADDRESS - 1, false));
        assert_false(http_admit(20, HTTP_CONNECTIONS_PER_ADDRESS, false));
        /* loopback is not counted per address (it has the request deadline) */
        assert_true(http_admit(100, 100, true));
}

static bool peer_of(const char *text, struct http_peer *ret) {
        struct sockaddr_in in = { .sin_family = AF_INET };
        struct sockaddr_in6 in6 = { .sin6_family = AF_INET6 };

        if (inet_pton(AF_INET, text, &in.sin_addr) == 1)
                return http_peer_of((struct sockaddr *) &in, ret);
        assert_int_equal(inet_pton(AF_INET6, text, &in6.sin6_addr), 1);
        return http_peer_of((struct sockaddr *) &in6, ret);
}

/* One host holds a whole IPv6 /64: its addresses are one client to the limits. */
static void test_peer_per_64(void **state) {
        struct http_peer a, b, lo, lo2;

        assert_false(peer_of("2001:db8:1::1", &a));
        assert_false(peer_of("2001:db8:1::ffff:8", &b));
        assert_true(http_peer_equal(&a, &b));
        assert_false(peer_of("2001:db8:2::1", &b));
        assert_false(http_peer_equal(&a, &b));
        /* IPv4 per address, the same through a dual-stack socket */
        assert_false(peer_of("198.51.100.2", &a));
        assert_false(peer_of("::ffff:198.51.100.2", &b));
        assert_true(http_peer_equal(&a, &b));
        assert_false(peer_of("198.51.100.3", &b));
        assert_false(http_peer_equal(&a, &b));
        /* every loopback address is one */
        assert_true(peer_of("127.0.0.1", &lo));
        assert_true(peer_of("127.0.0.2", &lo2));
        assert_true(http_peer_equal(&lo, &lo2));
        assert_true(peer_of("::1", &lo2));
        assert_true(http_peer_equal(&lo, &lo2));
        assert_true(peer_of("::ffff:127.0.0.1", &lo2));
        assert_true(http_peer_equal(&lo, &lo2));
}

static void test_framing(void **state) {
        const char *one[] = { "12" }, *same[] = { "12", "12" }, *diff[] = { "12", "40" };
        const char *big[] = { "2000000" }, *huge[] = { "99999999999999999999999" };
        const char *edge[] = { "65536" }, *over[] = { "65537" }, *zeros[] = { "000000000012" };
        unsigned status;

        assert_null(http_check_framing(NULL, 0, false, HTTP_BODY_MAX, &status));
        assert_int_equal(status, 0);
        assert_null(http_check_framing(NULL, 0, true, HTTP_BODY_MAX, &status));
        assert_int_equal(status, 0);
        assert_null(http_check_framing(one, 1, false, HTTP_BODY_MAX, &status));
        assert_int_equal(status, 0);
        assert_null(http_check_framing(same, 2, false, HTTP_BODY_MAX, &status));
        assert_int_equal(status, 0);
        assert_non_null(http_check_framing(diff, 2, false, HTTP_BODY_MAX, &status));
        assert_int_equal(status, 400);
        assert_non_null(http_check_framing(one, 1, true, HTTP_BODY_MAX, &status));
        assert_int_equal(status, 400);
        http_check_framing(big, 1, false, HTTP_BODY_MAX, &status);
        assert_int_equal(status, 413);
        http_check_framing(huge, 1, false, HTTP_BODY_MAX, &status);
        assert_int_equal(status, 413);
        http_check_framing(edge, 1, false, HTTP_BODY_MAX, &status);
        assert_int_equal(status, 0);
        http_check_framing(over, 1, false, HTTP_BODY_MAX, &status);
        assert_int_equal(status, 413);
        http_check_framing(zeros, 1, false, HTTP_BODY_MAX, &status);
        assert_int_equal(status, 0);
        /* a route that takes more: its own limit, to the byte */
        http_check_framing(big, 1, false, 2000000, &status);
        assert_int_equal(status, 0);
        http_check_framing(big, 1, false, 1999999, &status);
        assert_int_equal(status, 413);
        http_check_framing(huge, 1, false, SIZE_MAX, &status);
        assert_int_equal(status, 413);
}

/* A body has the time it takes at the minimum rate, on top of the fixed
 * deadline, and no more than the bound. */
static void test_request_deadline_scales_with_body(void **state) {
        assert_int_equal(http_request_deadline_us(0), HTTP_REQUEST_DEADLINE_S * UINT64_C(1000000));
        assert_int_equal(http_request_deadline_us(HTTP_BODY_RATE_MIN), (HTTP_REQUEST_DEADLINE_S + 1) * UINT64_C(1000000));
        assert_int_equal(http_request_deadline_us(HTTP_BODY_RATE_MIN / 2), HTTP_REQUEST_DEADLINE_S * UINT64_C(1000000) + 500000);
        /* 32 MiB, an import's largest: 128 s more */
        assert_int_equal(http_request_deadline_us(32 * 1024 * 1024), (HTTP_REQUEST_DEADLINE_S + 128) * UINT64_C(1000000));
        assert_int_equal(http_request_deadline_us(UINT64_C(1) << 40), HTTP_REQUEST_DEADLINE_MAX_S * UINT64_C(1000000));
        assert_int_equal(http_request_deadline_us(UINT64_MAX), HTTP_REQUEST_DEADLINE_MAX_S * UINT64_C(1000000));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_admit_loopback_reserve),
                cmocka_unit_test(test_admit_per_address),
                cmocka_unit_test(test_peer_per_64),
                cmocka_unit_test(test_framing),
                cmocka_unit_test(test_request_deadline_scales_with_body),
                cmocka_unit_test(test_tls_state_released),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
