/* vcio.c — the Raspberry Pi firmware's own view through /dev/vcio: the measured ARM clock and the throttled bits. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "source.h"
#include "sysfs-util.h"
#include "vcio.h"

/* linux/drivers/char/broadcom/vcio.c: _IOWR(100, 0, char *) */
#define IOCTL_MBOX_PROPERTY _IOWR(100, 0, char *)

#define VCIO_CODE_REQUEST   UINT32_C(0)
#define VCIO_CODE_DONE      UINT32_C(0x80000000)
#define VCIO_CODE_FAILED    UINT32_C(0x80000001)

size_t vcio_encode(uint32_t *buf, size_t words) {
        size_t n = 0;

        if (words < VCIO_REQUEST_WORDS)
                return 0;
        buf[n++] = VCIO_REQUEST_WORDS * 4;      /* bytes */
        buf[n++] = VCIO_CODE_REQUEST;
        buf[n++] = VCIO_TAG_GET_CLOCK_MEASURED;
        buf[n++] = 8;                           /* value buffer: clock id, rate */
        buf[n++] = VCIO_CODE_REQUEST;
        buf[n++] = VCIO_CLOCK_ARM;
        buf[n++] = 0;
        buf[n++] = VCIO_TAG_GET_THROTTLED;
        buf[n++] = 4;
        buf[n++] = VCIO_CODE_REQUEST;
        buf[n++] = 0;
        buf[n++] = 0;                           /* end tag */
        buf[n++] = 0;                           /* padding to a multiple of 8 bytes */
        buf[n++] = 0;
        return n;
}

/* The value words of tag id in an answer, NULL when absent or unanswered. */
static const uint32_t *vcio_find_tag(const uint32_t *buf, size_t words, uint32_t id, uint32_t want_bytes) {
        size_t i = 2;

        while (i + 3 <= words && buf[i] != 0) {
                uint32_t size = buf[i + 1], code = buf[i + 2];
                size_t value_words = (size + 3) / 4;

                if (value_words > words - i - 3)
                        return NULL;
                if (buf[i] == id)
                        return (code & VCIO_CODE_DONE) && (code & ~VCIO_CODE_DONE) >= want_bytes &&
                               size >= want_bytes ? buf + i + 3 : NULL;
                i += 3 + value_words;
        }
        return NULL;
}

int vcio_decode(const uint32_t *buf, size_t words, uint32_t *ret_arm_hz, uint32_t *ret_throttled) {
        const uint32_t *clk, *thr;

        if (words < 3 || buf[0] != words * 4)
                return -EBADMSG;
        if (buf[1] == VCIO_CODE_FAILED)
                return -EIO;
        if (buf[1] != VCIO_CODE_DONE)
                return -EBADMSG;
        clk = vcio_find_tag(buf, words, VCIO_TAG_GET_CLOCK_MEASURED, 8);
        thr = vcio_find_tag(buf, words, VCIO_TAG_GET_THROTTLED, 4);
        if (!clk || !thr || clk[0] != VCIO_CLOCK_ARM)
                return -EBADMSG;
        *ret_arm_hz = clk[1];                   /* Hz */
        *ret_throttled = thr[0];
        return 0;
}

static int vcio_probe(struct sensors *s, void *state) {
        struct firmware_info *fw = &s->firmware;
        char path[300];
        struct stat st;
        int fd;

        fw->fd = -1;
        if (sysfs_path(path, sizeof(path), "%s/dev/vcio", sysfs_prefix(s->sysfs_root)) < 0)
                return 0;
        /* Only a character device: a file or a FIFO planted there is ignored. */
        fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                fw->error = errno;
                return 0;                       /* not a Raspberry Pi (or no access): fail soft */
        }
        if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode)) {
                close(fd);
                fw->error = ENODEV;
                return 0;
        }
        fw->fd = fd;
        fw->present = true;
        return 0;
}

/* One ioctl for both tags. */
static int vcio_read(struct sensors *s, void *state, int64_t now_ms) {
        struct firmware_info *fw = &s->firmware;
        uint32_t buf[VCIO_REQUEST_WORDS] __attribute__((aligned(16)));
        int r;

        if (fw->fd < 0)
                return 0;
        vcio_encode(buf, VCIO_REQUEST_WORDS);
        r = ioctl(fw->fd, IOCTL_MBOX_PROPERTY, buf) < 0 ? -errno : 0;
        if (r == 0)
                r = vcio_decode(buf, VCIO_REQUEST_WORDS, &fw->arm_hz, &fw->throttled);
        fw->ok = r == 0;
        fw->error = -r;
        return r < 0;
}

static void vcio_free(struct sensors *s, void *state) {
        if (s->firmware.fd >= 0)
                close(s->firmware.fd);
        s->firmware.fd = -1;
}

static size_t vcio_count(const struct sensors *s, const void *state) {
        return s->firmware.present;
}

static int vcio_value(const struct sensors *s, const void *state, size_t i, double *ret) {
        int flag = sensors_firmware_throttled(s);

        if (i != 0)
                return -1;
        *ret = flag > 0;                                /* 1 while throttled or capped */
        return flag >= 0 ? 1 : -1;
}

/* The firmware's under-voltage bit feeds power.c's channel. */
static const struct sensors_channels vcio_channels[] = {
        { .kind = SENSOR_KIND_THROTTLE, .unit = "flag", .prefix = "throttled", .exact = true,
          .count = vcio_count, .value = vcio_value },
};

const struct sensors_source vcio_source = {
        .name = "vcio",
        .probe = vcio_probe,
        .read = vcio_read,
        .free = vcio_free,
        .channels = vcio_channels,
        .n_channels = 1,
};
