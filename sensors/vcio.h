/* vcio.h — the Raspberry Pi firmware's own view through /dev/vcio: the measured ARM clock and the throttled bits. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/*
 * The VideoCore mailbox property interface (the one vcgencmd uses), through
 * the ioctl IOCTL_MBOX_PROPERTY of /dev/vcio. A message is 32-bit words in
 * the firmware's byte order (little-endian; so are the boards):
 *   [0] total size in bytes, [1] 0 = request (answer: 0x80000000 done,
 *   0x80000001 parse error), then tags { id, value buffer bytes,
 *   0 = request (answer: 0x80000000 | value bytes), value words }, then 0.
 * We ask two tags in one message: the measured clock of the ARM (clock id
 * 3), which is what the CPU really runs at when the firmware throttles while
 * scaling_cur_freq still shows what the kernel asked for; and the
 * throttled bits (as `vcgencmd get_throttled` prints them).
 */

#define VCIO_TAG_GET_CLOCK_MEASURED UINT32_C(0x00030047)
#define VCIO_TAG_GET_THROTTLED      UINT32_C(0x00030046)
#define VCIO_CLOCK_ARM              3
#define VCIO_REQUEST_WORDS          14

/* Bits of the throttled word: now, and (shifted by 16) since boot. */
#define VCIO_UNDER_VOLTAGE   (UINT32_C(1) << 0)
#define VCIO_FREQ_CAPPED     (UINT32_C(1) << 1)
#define VCIO_THROTTLED       (UINT32_C(1) << 2)
#define VCIO_SOFT_TEMP_LIMIT (UINT32_C(1) << 3)

/* Writes the request into buf (at least VCIO_REQUEST_WORDS words); returns the word count. */
size_t vcio_encode(uint32_t *buf, size_t words);

/* Reads an answer: 0, -EIO when the firmware reports a failure, -EBADMSG
 * for anything malformed or a tag without its answer. */
int vcio_decode(const uint32_t *buf, size_t words, uint32_t *ret_arm_hz, uint32_t *ret_throttled);
