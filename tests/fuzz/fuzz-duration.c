/* fuzz-duration.c — libFuzzer target: duration_parse() and its round trip through duration_format(). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char text[256], buf[DURATION_FORMAT_MAX];
        uint64_t ms, again;

        if (size >= sizeof text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        if (duration_parse(text, &ms) < 0)
                return 0;
        /* documented: every parsed value fits an int64_t and reads back the same */
        if (ms > INT64_MAX || !duration_format(ms, buf, sizeof buf) ||
            duration_parse(buf, &again) < 0 || again != ms)
                abort();
        return 0;
}
