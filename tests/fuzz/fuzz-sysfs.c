/* fuzz-sysfs.c — libFuzzer target: the sysfs value parsers of sensors/ (temperatures, numbers, CPU lists). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sensors.h"
#include "sysfs-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char text[4096];
        long long ll;
        uint64_t u64;
        uint32_t khz;
        int32_t mc;
        bool quirk;
        int cpus[64], index;

        if (size >= sizeof text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        if (sensors_parse_temp(text, &mc, &quirk) == 0 && sensors_temp_is_sentinel(mc))
                abort();        /* sentinels are -ERANGE, never a temperature */
        sysfs_parse_ll(text, &ll);
        sysfs_parse_u64(text, &u64);
        sysfs_parse_khz(text, &khz);
        int n = sysfs_parse_cpu_list(text, cpus, sizeof cpus / sizeof cpus[0]);
        if (n > (int) (sizeof cpus / sizeof cpus[0]))
                abort();
        for (int i = 1; i < n; i++)
                if (cpus[i] < cpus[i - 1])
                        abort();        /* documented: sorted */
        sysfs_match_index(text, "temp", "_input", &index);
        sysfs_match_index(text, "policy", "", &index);
        return 0;
}
