/* test-vcio.c — unit tests for the Raspberry Pi firmware mailbox messages (sensors/vcio.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "sensors.h"
#include "vcio.h"

/* The request, word by word, as the property interface documents it. */
static void test_encode(void **state) {
        static const uint32_t want[VCIO_REQUEST_WORDS] = {
                56, 0,                                  /* 14 words, request */
                0x00030047, 8, 0, 3, 0,                 /* measured clock of the ARM (id 3) */
                0x00030046, 4, 0, 0,                    /* throttled */
                0, 0, 0,                                /* end tag, padding */
        };
        uint32_t buf[VCIO_REQUEST_WORDS + 2];

        assert_int_equal(vcio_encode(buf, 4), 0);
        assert_int_equal(vcio_encode(buf, VCIO_REQUEST_WORDS + 2), VCIO_REQUEST_WORDS);
        assert_memory_equal(buf, want, sizeof(want));
}

/* An answer as the firmware fills the request in place: a Pi 4 at
 * 1.5 GHz that is under-voltage now and has been throttled since boot
 * (0x50005, what `vcgencmd get_throttled` prints then). Built from the
 * documented protocol, not captured on a board. */
static void answer(uint32_t *buf) {
        static const uint32_t a[VCIO_REQUEST_WORDS] = {
                56, 0x80000000,
                0x00030047, 8, 0x80000008, 3, 1500000000,
                0x00030046, 4, 0x80000004, 0x50005,
                0, 0, 0,
        };

        memcpy(buf, a, sizeof(a));
}

static void test_decode(void **state) {
        uint32_t buf[VCIO_REQUEST_WORDS], hz = 0, thr = 0;

        answer(buf);
        assert_int_equal(vcio_decode(buf, VCIO_REQUEST_WORDS, &hz, &thr), 0);
        assert_int_equal(hz, 1500000000);
        assert_int_equal(thr, 0x50005);
        assert_true(thr & VCIO_UNDER_VOLTAGE);
        assert_true(thr & (VCIO_THROTTLED << 16));
        assert_false(thr & VCIO_FREQ_CAPPED);

        /* the firmware could not parse the request */
        answer(buf);
        buf[1] = 0x80000001;
        assert_int_equal(vcio_decode(buf, VCIO_REQUEST_WORDS, &hz, &thr), -EIO);
        /* not answered at all (the request came back as it was) */
        vcio_encode(buf, VCIO_REQUEST_WORDS);
        assert_int_equal(vcio_decode(buf, VCIO_REQUEST_WORDS, &hz, &thr), -EBADMSG);
        /* one tag unanswered: no response bit */
        answer(buf);
        buf[9] = 0;
        assert_int_equal(vcio_decode(buf, VCIO_REQUEST_WORDS, &hz, &thr), -EBADMSG);
        /* the clock of another id */
        answer(buf);
        buf[5] = 4;
        assert_int_equal(vcio_decode(buf, VCIO_REQUEST_WORDS, &hz, &thr), -EBADMSG);
        /* a value size running past the message */
        answer(buf);
        buf[3] = 4000;
        assert_int_equal(vcio_decode(buf, VCIO_REQUEST_WORDS, &hz, &thr), -EBADMSG);
        /* a total size that is not the buffer's */
        answer(buf);
        buf[0] = 60;
        assert_int_equal(vcio_decode(buf, VCIO_REQUEST_WORDS, &hz, &thr), -EBADMSG);
        assert_int_equal(vcio_decode(buf, 2, &hz, &thr), -EBADMSG);
        /* a short answer value (the firmware answered 4 bytes for the clock) */
        answer(buf);
        buf[4] = 0x80000004;
        assert_int_equal(vcio_decode(buf, VCIO_REQUEST_WORDS, &hz, &thr), -EBADMSG);
}

/* No /dev/vcio (here), or a plain file in its place: the probe fails soft. */
static void test_absent(void **state) {
        char root[] = "/tmp/test-vcio-XXXXXX", path[300];
        struct sensors *s;
        FILE *f;

        assert_non_null(mkdtemp(root));
        snprintf(path, sizeof(path), "%s/sys", root);
        assert_int_equal(mkdir(path, 0755), 0);
        assert_int_equal(sensors_probe(root, root, &s), 0);
        assert_false(s->firmware.present);
        assert_int_equal(s->firmware.error, ENOENT);
        assert_int_equal(sensors_read(s, 1000), 0);
        assert_false(s->firmware.ok);
        sensors_free(s);

        snprintf(path, sizeof(path), "%s/dev", root);
        assert_int_equal(mkdir(path, 0755), 0);
        snprintf(path, sizeof(path), "%s/dev/vcio", root);
        f = fopen(path, "w");
        assert_non_null(f);
        fclose(f);
        assert_int_equal(sensors_probe(root, root, &s), 0);
        assert_false(s->firmware.present);
        assert_int_equal(s->firmware.error, ENODEV);
        assert_int_equal(sensors_read(s, 1000), 0);
        sensors_free(s);
        unlink(path);
        snprintf(path, sizeof(path), "%s/dev", root);
        rmdir(path);
        snprintf(path, sizeof(path), "%s/sys", root);
        rmdir(path);
        rmdir(root);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_encode),
                cmocka_unit_test(test_decode),
                cmocka_unit_test(test_absent),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
