/* board.c — board identity: device-tree or DMI model, kernel release, hostname and CPU count. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "source.h"
#include "sysfs-util.h"

/* Reads root/rel into buf; "" when absent. NULs and newlines at the end are stripped. */
static bool board_read(const char *root, const char *rel, char *buf, size_t size) {
        char path[600], text[256];

        buf[0] = '\0';
        if (sysfs_path(path, sizeof(path), "%s%s", sysfs_prefix(root), rel) < 0)
                return false;
        if (sysfs_read_file(path, text, sizeof(text)) <= 0)
                return false;
        sysfs_strlcpy(buf, text, size);
        return true;
}

static int board_count_cpus(const struct sensors *s) {
        char path[400], text[256];
        int *idx, n, cpus[SENSORS_CPUS_MAX];

        if (sysfs_path(path, sizeof(path), "%s/sys/devices/system/cpu", sysfs_prefix(s->sysfs_root)) < 0)
                return 1;
        n = sysfs_list_indices(path, "cpu", "", &idx);
        free(idx);
        if (n > 0)
                return n;
        /* No cpuN directories in a minimal tree: the "possible" range ("0-3"). */
        if (board_read(s->sysfs_root, "/sys/devices/system/cpu/possible", text, sizeof(text)))
                n = sysfs_parse_cpu_list(text, cpus, SENSORS_CPUS_MAX);
        return n > 0 ? n : 1;
}

static int board_probe(struct sensors *s, void *state) {
        struct board_info *b = &s->board;

        /* The device-tree model is a NUL-terminated string; the sysfs copy
         * is the same file for trees without /proc/device-tree. */
        if (!board_read(s->procfs_root, "/proc/device-tree/model", b->model, sizeof(b->model)) &&
            !board_read(s->sysfs_root, "/sys/firmware/devicetree/base/model", b->model, sizeof(b->model)))
                board_read(s->sysfs_root, "/sys/class/dmi/id/product_name", b->model, sizeof(b->model));
        board_read(s->procfs_root, "/proc/sys/kernel/osrelease", b->kernel, sizeof(b->kernel));
        board_read(s->procfs_root, "/proc/sys/kernel/hostname", b->hostname, sizeof(b->hostname));
        b->cpus = board_count_cpus(s);
        return 0;
}

/* Identity only: no channels, nothing to read per tick. */
const struct sensors_source board_source = {
        .name = "board",
        .probe = board_probe,
};
