/* simulate.c — the simulated board: a copied fixture tree heated by a first-order model of the host's CPU load. */
#include "simulate.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sensors.h"
#include "sysfs-util.h"

#define SIM_MAX_TRIPS 32        /* trip_point_N_* scanned per zone */
#define SIM_MAX_FREQS 64        /* scaling_available_frequencies entries */

struct sim_file {
        int fd;                 /* temp or tempN_input in the copy, kept open */
        double offset_c;        /* degrees C from the reference sensor in the fixture */
        bool degrees;           /* the fixture printed whole degrees */
};

struct sim_policy {
        int fd_cur;             /* scaling_cur_freq */
        int fd_cpuinfo;         /* cpuinfo_cur_freq, -1 when absent */
        long cur_khz;           /* kHz, fixture value of scaling_cur_freq */
        long cpuinfo_khz;       /* kHz, fixture value of cpuinfo_cur_freq */
        long throttled_khz;     /* kHz, written while throttled */
};

struct sim_meter {
        int fd;                 /* powerN_input (uW) or currN_input (mA) in the copy, kept open */
        double volts;           /* V, the inN_input found beside a current; 0 for a power input */
        bool negative;          /* the fixture's current read negative (a shunt wired the other way) */
        double idle_w;          /* W, read at no load */
};

struct simulator {
        struct sim_params p;
        char root[PATH_MAX];            /* the copy, standing for "/" */
        int stat_fd;                    /* <host_procfs>/stat */
        uint64_t prev_busy, prev_total; /* jiffies at the previous step */
        bool started;                   /* the first step has set T */
        int64_t last_ms;                /* Unix ms of the previous step */
        double temp_c;                  /* model temperature, degrees C */
        double load;                    /* fraction 0..1 */
        double commanded;               /* fraction 0..1: own_load's, simulator_set_load() */
        int own_stat_fd;                /* own_load: the copy's proc/stat, written at each step; -1 */
        unsigned n_cpus;                /* own_load: the cpuN lines of the board's proc/stat */
        double busy_j, idle_j;          /* own_load: jiffies of one CPU so far */

        struct sim_file *files;
        size_t n_files;

        bool has_trip;                  /* the reference zone has a passive trip */
        double trip_c, hyst_c;          /* degrees C */
        bool throttled;
        struct sim_policy *policies;
        size_t n_policies;
        int fd_cooling;                 /* first cooling device cur_state, -1 when none */
        long cooling_orig;              /* its fixture value */

        struct sim_meter *meters;
        size_t n_meters;
};

/* ---- small file helpers ---- */

static int read_text_fd(int fd, char *buf, size_t size) {
        ssize_t n;

        do
                n = pread(fd, buf, size - 1, 0);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        return 0;
}

static int read_text(const char *path, char *buf, size_t size) {
        int fd, r;

        fd = sysfs_open(path);
        if (fd < 0)
                return fd;
        r = read_text_fd(fd, buf, size);
        close(fd);
        return r;
}

/* One integer followed only by whitespace. */
static int parse_long(const char *text, long *ret) {
        char *end;
        long v;

        errno = 0;
        v = strtol(text, &end, 10);
        if (errno != 0 || end == text)
                return -EBADMSG;
        while (*end == ' ' || *end == '\n' || *end == '\t')
                end++;
        if (*end != '\0')
                return -EBADMSG;
        *ret = v;
        return 0;
}

static int read_long_fd(int fd, long *ret) {
        char buf[64];
        int r;

        r = read_text_fd(fd, buf, sizeof buf);
        if (r < 0)
                return r;
        return parse_long(buf, ret);
}

static int read_long(const char *path, long *ret) {
        char buf[64];
        int r;

        r = read_text(path, buf, sizeof buf);
        if (r < 0)
                return r;
        return parse_long(buf, ret);
}

/* Rewrite in place: the reader keeps the same inode open. long long: microwatts pass 2^31 on 32-bit. */
static int write_long(int fd, long long v) {
        char buf[32];
        int len;
        ssize_t n;

        len = snprintf(buf, sizeof buf, "%lld\n", v);
        do
                n = pwrite(fd, buf, (size_t) len, 0);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        if (n != len)
                return -EIO;
        if (ftruncate(fd, len) < 0)
                return -errno;
        return 0;
}

/* The sysfs rule: a positive raw value below 1000 is whole degrees. */
static double raw_to_c(long raw, bool *ret_degrees) {
        bool deg = raw > 0 && raw < 1000;

        if (ret_degrees)
                *ret_degrees = deg;
        return deg ? (double) raw : raw / 1000.0;
}

/* ---- copying the fixture ---- */

static int copy_file(int src_dir, int dst_dir, const char *name, mode_t mode) {
        char buf[8192];
        int in, out, r = 0;
        ssize_t n;

        out = openat(dst_dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (out < 0)
                return -errno;
        /* The copy stays writable by us: the simulator rewrites some files. */
        if (fchmod(out, (mode & 07777) | S_IWUSR) < 0)
                r = -errno;
        in = openat(src_dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (in < 0) {
                /* An unreadable fixture file (a permission test) stays an empty, unreadable file. */
                if (errno != EACCES && r == 0)
                        r = -errno;
                close(out);
                return r;
        }
        while (r == 0 && (n = read(in, buf, sizeof buf)) != 0) {
                if (n < 0) {
                        if (errno != EINTR)
                                r = -errno;
                        continue;
                }
                if (write(out, buf, (size_t) n) != n)
                        r = errno ? -errno : -EIO;
        }
        close(in);
        if (close(out) < 0 && r == 0)
                r = -errno;
        return r;
}

static int copy_link(int src_dir, int dst_dir, const char *name) {
        char target[PATH_MAX];
        ssize_t n;

        n = readlinkat(src_dir, name, target, sizeof target - 1);
        if (n < 0)
                return -errno;
        target[n] = '\0';
        if (symlinkat(target, dst_dir, name) < 0)
                return -errno;
        return 0;
}

static int copy_dir(int src_dir, int dst_dir);

static int copy_subdir(int src_dir, int dst_dir, const char *name, mode_t mode) {
        int s, d, r;

        if (mkdirat(dst_dir, name, 0700) < 0)
                return -errno;
        s = openat(src_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (s < 0)
                return -errno;
        d = openat(dst_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (d < 0) {
                r = -errno;
                close(s);
                return r;
        }
        r = copy_dir(s, d);
        /* Keep u+rwx so the tree can always be removed. */
        if (r == 0 && fchmod(d, (mode & 07777) | S_IRWXU) < 0)
                r = -errno;
        close(s);
        close(d);
        return r;
}

/* Copies the entries of src_dir into dst_dir; symlinks as links, never followed.
 * Sockets, fifos and device nodes are skipped. */
static int copy_dir(int src_dir, int dst_dir) {
        struct dirent *de;
        struct stat st;
        DIR *d;
        int fd, r = 0;

        fd = fcntl(src_dir, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                r = -errno;
                close(fd);
                return r;
        }
        while (r == 0 && (errno = 0, de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (fstatat(src_dir, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        r = -errno;
                else if (S_ISLNK(st.st_mode))
                        r = copy_link(src_dir, dst_dir, de->d_name);
                else if (S_ISDIR(st.st_mode))
                        r = copy_subdir(src_dir, dst_dir, de->d_name, st.st_mode);
                else if (S_ISREG(st.st_mode))
                        r = copy_file(src_dir, dst_dir, de->d_name, st.st_mode);
        }
        if (r == 0 && errno != 0)
                r = -errno;
        closedir(d);
        return r;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) ftw;
        if (flag == FTW_DP || flag == FTW_D || flag == FTW_DNR)
                rmdir(path);
        else
                unlink(path);
        return 0;
}

/* FTW_PHYS: symlinks are unlinked, never followed; FTW_MOUNT: stay on our filesystem. */
static void remove_tree(const char *root) {
        nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

/* proc/stat of the copy becomes a link to the host's, so the load reader sees real load.
 * O_NOFOLLOW: a fixture whose proc/ were a link must not make us unlink a file elsewhere. */
static int link_host_stat(const char *root, const char *host_stat) {
        char path[PATH_MAX];
        int dir, r = 0;

        if (sysfs_path(path, sizeof path, "%s/proc", root) < 0)
                return -ENAMETOOLONG;
        if (mkdir(path, 0755) < 0 && errno != EEXIST)
                return -errno;
        dir = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dir < 0)
                return -errno;
        if (unlinkat(dir, "stat", 0) < 0 && errno != ENOENT)
                r = -errno;
        else if (symlinkat(host_stat, dir, "stat") < 0)
                r = -errno;
        close(dir);
        return r;
}

/* With own_load the board's proc/stat stays a file of the copy, its CPUs
 * busy by the commanded load: the load the daemon reads is the board's own,
 * as the heat is, whatever else this machine runs. */
static int open_own_stat(struct simulator *s) {
        char path[PATH_MAX], buf[4096], *line;
        int r;

        if (sysfs_path(path, sizeof path, "%s/proc/stat", s->root) < 0)
                return -ENAMETOOLONG;
        s->own_stat_fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        if (s->own_stat_fd < 0)
                return -errno;
        r = read_text_fd(s->own_stat_fd, buf, sizeof buf);
        if (r < 0)
                return r;
        for (line = buf; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
                if (strncmp(line, "cpu", 3) == 0 && line[3] >= '0' && line[3] <= '9')
                        s->n_cpus++;
        if (s->n_cpus == 0)
                s->n_cpus = 1;
        return 0;
}

/* The board's CPUs dt_s further on, busy by s->load (USER_HZ jiffies). */
static int write_own_stat(struct simulator *s, double dt_s) {
        char buf[4096];
        ssize_t w;
        int n;

        s->busy_j += s->load * dt_s * 100.0;
        s->idle_j += (1.0 - s->load) * dt_s * 100.0;
        n = snprintf(buf, sizeof buf, "cpu  %.0f 0 0 %.0f 0 0 0 0 0 0\n", s->busy_j * s->n_cpus,
                     s->idle_j * s->n_cpus);
        for (unsigned i = 0; i < s->n_cpus && n > 0 && (size_t) n < sizeof buf; i++)
                n += snprintf(buf + n, sizeof buf - (size_t) n, "cpu%u %.0f 0 0 %.0f 0 0 0 0 0 0\n", i, s->busy_j,
                              s->idle_j);
        if (n < 0 || (size_t) n >= sizeof buf)
                return -ENOBUFS;
        w = pwrite(s->own_stat_fd, buf, (size_t) n, 0);
        if (w < 0 || ftruncate(s->own_stat_fd, (off_t) n) < 0)
                return -errno;
        return w == n ? 0 : -EIO;
}

static int make_copy(struct simulator *s, const char *boards_dir, const char *host_stat) {
        char tmpl[PATH_MAX], board[PATH_MAX];
        const char *tmp = getenv("TMPDIR");
        int src, dst, r;

        if (!tmp || !*tmp)
                tmp = "/tmp";
        if (sysfs_path(board, sizeof board, "%s/%s", boards_dir, s->p.board) < 0 ||
            sysfs_path(tmpl, sizeof tmpl, "%s/heatcurve-sim-XXXXXX", tmp) < 0)
                return -ENAMETOOLONG;
        src = open(board, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (src < 0)
                return -errno;
        if (!mkdtemp(tmpl)) {
                r = -errno;
                close(src);
                return r;
        }
        /* Canonical, so open_in_copy() can compare resolved paths against it. */
        if (!realpath(tmpl, s->root))
                strcpy(s->root, tmpl);
        dst = open(s->root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dst < 0) {
                r = -errno;
                close(src);
                return r;
        }
        r = copy_dir(src, dst);
        close(src);
        close(dst);
        if (r < 0)
                return r;
        return s->p.own_load ? open_own_stat(s) : link_host_stat(s->root, host_stat);
}

/* ---- finding the files to write ---- */

/* Opens root-relative path for reading and writing, only when it resolves inside the copy. */
static int open_in_copy(const struct simulator *s, const char *path) {
        char real[PATH_MAX];
        size_t n = strlen(s->root);
        int fd;

        if (!realpath(path, real))
                return -errno;
        if (strncmp(real, s->root, n) != 0 || real[n] != '/')
                return -EXDEV;
        fd = open(real, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

static bool same_file_open(const struct simulator *s, int fd) {
        struct stat a, b;

        if (fstat(fd, &a) < 0)
                return false;
        for (size_t i = 0; i < s->n_files; i++)
                if (fstat(s->files[i].fd, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
                        return true;
        return false;
}

/* Adds one temperature file; files that are unreadable or hold no number are left alone. */
static int add_temp_file(struct simulator *s, const char *path, bool *have_ref, double *ref_c) {
        struct sim_file *f;
        long raw;
        double c;
        bool deg;
        int fd;

        fd = open_in_copy(s, path);
        if (fd < 0)
                return 0;
        if (read_long_fd(fd, &raw) < 0 || same_file_open(s, fd)) {
                close(fd);
                return 0;
        }
        f = realloc(s->files, (s->n_files + 1) * sizeof *f);
        if (!f) {
                close(fd);
                return -ENOMEM;
        }
        s->files = f;
        c = raw_to_c(raw, &deg);
        if (!*have_ref) {
                *have_ref = true;
                *ref_c = c;
        }
        s->files[s->n_files++] = (struct sim_file) { .fd = fd, .offset_c = c - *ref_c, .degrees = deg };
        return 0;
}

static int entry_has_prefix(const struct dirent *de, const char *prefix) {
        return strncmp(de->d_name, prefix, strlen(prefix)) == 0;
}

static int filter_thermal_zone(const struct dirent *de) { return entry_has_prefix(de, "thermal_zone"); }
static int filter_cooling(const struct dirent *de) { return entry_has_prefix(de, "cooling_device"); }
static int filter_hwmon(const struct dirent *de) { return entry_has_prefix(de, "hwmon"); }
static int filter_policy(const struct dirent *de) { return entry_has_prefix(de, "policy"); }

static int filter_cpu(const struct dirent *de) {
        return entry_has_prefix(de, "cpu") && de->d_name[3] >= '0' && de->d_name[3] <= '9';
}

static int filter_temp_input(const struct dirent *de) {
        size_t n = strlen(de->d_name);

        return entry_has_prefix(de, "temp") && n > 10 && strcmp(de->d_name + n - 6, "_input") == 0;
}

/* scandir in version order (thermal_zone2 before thermal_zone10); a missing dir is empty. */
static int list_dir(const char *dir, int (*filter)(const struct dirent *), struct dirent ***ret) {
        int n = scandir(dir, ret, filter, versionsort);

        if (n < 0) {
                *ret = NULL;
                return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
        }
        return n;
}

static void free_list(struct dirent **list, int n) {
        for (int i = 0; i < n; i++)
                free(list[i]);
        free(list);
}

/* Every thermal zone, then every hwmon input (in the chip dir and under device/).
 * The first file that holds a number is the reference the offsets are taken from. */
static int find_temp_files(struct simulator *s, bool *ret_zone_ref) {
        char dir[PATH_MAX], path[PATH_MAX + 300];
        struct dirent **zones, **chips, **inputs;
        static const char *const subdirs[] = { "", "/device" };
        bool have_ref = false;
        double ref_c = 0;
        int nz, nc, r = 0;

        sysfs_path(dir, sizeof dir, "%s/sys/class/thermal", s->root);
        nz = list_dir(dir, filter_thermal_zone, &zones);
        for (int i = 0; r == 0 && i < nz; i++) {
                sysfs_path(path, sizeof path, "%s/%s/temp", dir, zones[i]->d_name);
                r = add_temp_file(s, path, &have_ref, &ref_c);
        }
        free_list(zones, nz);
        *ret_zone_ref = have_ref;

        sysfs_path(dir, sizeof dir, "%s/sys/class/hwmon", s->root);
        nc = list_dir(dir, filter_hwmon, &chips);
        for (int i = 0; r == 0 && i < nc; i++)
                for (size_t k = 0; r == 0 && k < 2; k++) {
                        char chip[PATH_MAX + 300];
                        int ni;

                        sysfs_path(chip, sizeof chip, "%s/%s%s", dir, chips[i]->d_name, subdirs[k]);
                        ni = list_dir(chip, filter_temp_input, &inputs);
                        for (int j = 0; r == 0 && j < ni; j++) {
                                sysfs_path(path, sizeof path, "%s/%s", chip, inputs[j]->d_name);
                                r = add_temp_file(s, path, &have_ref, &ref_c);
                        }
                        free_list(inputs, ni);
                }
        free_list(chips, nc);
        return nz < 0 ? nz : nc < 0 ? nc : r;
}

/* Lowest passive trip of the reference zone; hysteresis in the zone's unit. */
static void find_passive_trip(struct simulator *s, const char *zone_dir, bool zone_degrees) {
        char path[PATH_MAX + 64], type[32];
        long raw, hyst;

        for (int i = 0; i < SIM_MAX_TRIPS; i++) {
                sysfs_path(path, sizeof path, "%s/trip_point_%d_type", zone_dir, i);
                if (read_text(path, type, sizeof type) < 0 || strncmp(type, "passive", 7) != 0 ||
                    (type[7] != '\0' && type[7] != '\n'))
                        continue;
                sysfs_path(path, sizeof path, "%s/trip_point_%d_temp", zone_dir, i);
                if (read_long(path, &raw) < 0)
                        continue;
                if (s->has_trip && raw_to_c(raw, NULL) >= s->trip_c)
                        continue;
                sysfs_path(path, sizeof path, "%s/trip_point_%d_hyst", zone_dir, i);
                if (read_long(path, &hyst) < 0 || hyst < 0)
                        hyst = 0;
                s->has_trip = true;
                s->trip_c = raw_to_c(raw, NULL);
                s->hyst_c = zone_degrees ? (double) hyst : hyst / 1000.0;
        }
}

/* The reference zone is the first zone whose temp held a number. */
static void find_reference_trip(struct simulator *s) {
        char dir[PATH_MAX], zone[PATH_MAX + 300];
        struct dirent **zones;
        struct stat a, b;
        int n;

        if (s->n_files == 0 || fstat(s->files[0].fd, &a) < 0)
                return;
        sysfs_path(dir, sizeof dir, "%s/sys/class/thermal", s->root);
        n = list_dir(dir, filter_thermal_zone, &zones);
        for (int i = 0; i < n; i++) {
                char temp[PATH_MAX + 310];

                sysfs_path(zone, sizeof zone, "%s/%s", dir, zones[i]->d_name);
                sysfs_path(temp, sizeof temp, "%s/temp", zone);
                if (stat(temp, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
                        find_passive_trip(s, zone, s->files[0].degrees);
                        break;
                }
        }
        free_list(zones, n);
}

/* Next available step below cur_khz; none listed: 80 % of the hardware maximum when lower. */
static long throttled_khz(const char *policy_dir, long cur_khz) {
        char path[PATH_MAX + 64], text[1024], *p, *end;
        long best = -1, max_khz;
        bool listed = false;

        sysfs_path(path, sizeof path, "%s/scaling_available_frequencies", policy_dir);
        if (read_text(path, text, sizeof text) == 0)
                for (p = text;; p = end) {
                        long v = strtol(p, &end, 10);

                        if (end == p)
                                break;
                        listed = true;
                        if (v < cur_khz && v > best)
                                best = v;
                }
        if (best > 0)
                return best;
        if (listed)
                return cur_khz;
        sysfs_path(path, sizeof path, "%s/cpuinfo_max_freq", policy_dir);
        if (read_long(path, &max_khz) < 0)
                max_khz = cur_khz;
        return max_khz * 8 / 10 < cur_khz ? max_khz * 8 / 10 : cur_khz;
}

static bool policy_known(const struct simulator *s, int fd) {
        struct stat a, b;

        if (fstat(fd, &a) < 0)
                return true;
        for (size_t i = 0; i < s->n_policies; i++)
                if (fstat(s->policies[i].fd_cur, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
                        return true;
        return false;
}

/* One policy directory; the legacy cpuN/cpufreq links to cpu0's are found once. */
static int add_policy(struct simulator *s, const char *dir) {
        char path[PATH_MAX + 64];
        struct sim_policy *np, pol = { .fd_cpuinfo = -1 };

        sysfs_path(path, sizeof path, "%s/scaling_cur_freq", dir);
        pol.fd_cur = open_in_copy(s, path);
        if (pol.fd_cur < 0)
                return 0;
        if (read_long_fd(pol.fd_cur, &pol.cur_khz) < 0 || policy_known(s, pol.fd_cur)) {
                close(pol.fd_cur);
                return 0;
        }
        np = realloc(s->policies, (s->n_policies + 1) * sizeof *np);
        if (!np) {
                close(pol.fd_cur);
                return -ENOMEM;
        }
        s->policies = np;
        pol.throttled_khz = throttled_khz(dir, pol.cur_khz);
        sysfs_path(path, sizeof path, "%s/cpuinfo_cur_freq", dir);
        pol.fd_cpuinfo = open_in_copy(s, path);
        if (pol.fd_cpuinfo >= 0 && read_long_fd(pol.fd_cpuinfo, &pol.cpuinfo_khz) < 0) {
                close(pol.fd_cpuinfo);
                pol.fd_cpuinfo = -1;
        }
        if (pol.fd_cpuinfo < 0)
                pol.fd_cpuinfo = -1;
        s->policies[s->n_policies++] = pol;
        return 0;
}

static int find_policies(struct simulator *s) {
        char base[PATH_MAX], dir[PATH_MAX + 300];
        struct dirent **list;
        int n, r = 0;

        sysfs_path(base, sizeof base, "%s/sys/devices/system/cpu/cpufreq", s->root);
        n = list_dir(base, filter_policy, &list);
        for (int i = 0; r == 0 && i < n; i++) {
                sysfs_path(dir, sizeof dir, "%s/%s", base, list[i]->d_name);
                r = add_policy(s, dir);
        }
        free_list(list, n);
        if (n < 0 || r < 0)
                return n < 0 ? n : r;

        sysfs_path(base, sizeof base, "%s/sys/devices/system/cpu", s->root);
        n = list_dir(base, filter_cpu, &list);
        for (int i = 0; r == 0 && i < n; i++) {
                sysfs_path(dir, sizeof dir, "%s/%s/cpufreq", base, list[i]->d_name);
                r = add_policy(s, dir);
        }
        free_list(list, n);
        return n < 0 ? n : r;
}

static void find_cooling_device(struct simulator *s) {
        char dir[PATH_MAX], path[PATH_MAX + 300];
        struct dirent **list;
        int n;

        sysfs_path(dir, sizeof dir, "%s/sys/class/thermal", s->root);
        n = list_dir(dir, filter_cooling, &list);
        if (n > 0) {
                sysfs_path(path, sizeof path, "%s/%s/cur_state", dir, list[0]->d_name);
                s->fd_cooling = open_in_copy(s, path);
                if (s->fd_cooling >= 0 && read_long_fd(s->fd_cooling, &s->cooling_orig) < 0) {
                        close(s->fd_cooling);
                        s->fd_cooling = -1;
                }
                if (s->fd_cooling < 0)
                        s->fd_cooling = -1;
        }
        free_list(list, n);
}

/* ---- the power meters ---- */

/* <dir>/<what>N_input: a meter when it holds a number (and, for a current, inN_input a positive voltage). */
static int add_meter(struct simulator *s, const char *dir, const char *what, int n) {
        char path[PATH_MAX + 64];
        struct sim_meter m = { .fd = -1 }, *nm;
        long raw, mv = 0;

        if (strcmp(what, "curr") == 0 &&
            (sysfs_path(path, sizeof path, "%s/in%d_input", dir, n) < 0 || read_long(path, &mv) < 0 || mv <= 0))
                return 0;
        if (sysfs_path(path, sizeof path, "%s/%s%d_input", dir, what, n) < 0 || (m.fd = open_in_copy(s, path)) < 0)
                return 0;
        if (read_long_fd(m.fd, &raw) < 0) {
                close(m.fd);
                return 0;
        }
        m.volts = mv / 1000.0;                                  /* mV -> V */
        m.negative = mv > 0 && raw < 0;
        m.idle_w = mv > 0 ? fabs((double) raw) * m.volts / 1000.0 : raw / 1e6;  /* mA x V, uW -> W */
        if (isfinite(s->p.power_idle_w))
                m.idle_w = s->p.power_idle_w;
        nm = realloc(s->meters, (s->n_meters + 1) * sizeof *nm);
        if (!nm) {
                close(m.fd);
                return -ENOMEM;
        }
        s->meters = nm;
        s->meters[s->n_meters++] = m;
        return 0;
}

static int meter_found(void *userdata, const char *dir, const char *chip, int hwmon, const char *what, int n) {
        return add_meter(userdata, dir, what, n);
}

/* The board's meters by the power source's rule (sensors_power_meters_each()). A directory it cannot
 * list ends the search quietly: the meters found by then are the board's. */
static int find_meters(struct simulator *s) {
        char base[PATH_MAX];
        int r;

        if (sysfs_path(base, sizeof base, "%s/sys/class/hwmon", s->root) < 0)
                return -ENAMETOOLONG;
        r = sensors_power_meters_each(base, meter_found, s);
        return r == -ENOMEM ? r : 0;
}

/* What meter m reads at the current load: microwatts, or milliamperes at its voltage. */
static long long meter_value(const struct simulator *s, const struct sim_meter *m) {
        double w = m->idle_w + s->p.power_load_w * s->load;

        if (m->volts <= 0)
                return llround(w * 1e6);
        return llround(w / m->volts * 1000.0) * (m->negative ? -1 : 1);
}

/* ---- the model ---- */

/* Busy and total jiffies of the "cpu" line. */
static int read_host_times(const struct simulator *s, uint64_t *ret_busy, uint64_t *ret_total) {
        char buf[1024], *p, *end;
        unsigned long long f[8] = { 0 };
        int r, n;

        r = read_text_fd(s->stat_fd, buf, sizeof buf);
        if (r < 0)
                return r;
        if (strncmp(buf, "cpu ", 4) != 0)
                return -EBADMSG;
        p = buf + 4;
        for (n = 0; n < 8; n++, p = end) {
                errno = 0;
                f[n] = strtoull(p, &end, 10);
                if (end == p || errno != 0 || (*end != ' ' && *end != '\n')) {
                        f[n] = 0;
                        break;
                }
        }
        if (n < 4)
                return -EBADMSG;
        *ret_busy = f[0] + f[1] + f[2] + f[5] + f[6] + f[7];
        *ret_total = *ret_busy + f[3] + f[4];
        return 0;
}

/* Load since the previous call; kept when no jiffies passed or the counters went back. */
static int update_load(struct simulator *s) {
        uint64_t busy, total;
        int r;

        r = read_host_times(s, &busy, &total);
        if (r < 0)
                return r;
        if (total > s->prev_total && busy >= s->prev_busy) {
                double l = (double) (busy - s->prev_busy) / (double) (total - s->prev_total);

                s->load = l > 1.0 ? 1.0 : l;
        }
        s->prev_busy = busy;
        s->prev_total = total;
        return 0;
}

static long file_value(const struct simulator *s, const struct sim_file *f) {
        double c = s->temp_c + f->offset_c;

        if (f->degrees)
                return lround(c);
        return s->p.quantize ? lround(c) * 1000 : lround(c * 1000.0);
}

static int set_throttle(struct simulator *s, bool on) {
        int r = 0, k;

        for (size_t i = 0; i < s->n_policies; i++) {
                const struct sim_policy *p = &s->policies[i];

                k = write_long(p->fd_cur, on ? p->throttled_khz : p->cur_khz);
                if (k < 0 && r == 0)
                        r = k;
                if (p->fd_cpuinfo >= 0) {
                        k = write_long(p->fd_cpuinfo, on ? p->throttled_khz : p->cpuinfo_khz);
                        if (k < 0 && r == 0)
                                r = k;
                }
        }
        if (s->fd_cooling >= 0) {
                k = write_long(s->fd_cooling, on ? 1 : s->cooling_orig);
                if (k < 0 && r == 0)
                        r = k;
        }
        s->throttled = on;
        return r;
}

/* Writes every sensor file and moves the throttle state; returns the first error. */
static int write_state(struct simulator *s) {
        int r = 0, k;

        for (size_t i = 0; i < s->n_files; i++) {
                k = write_long(s->files[i].fd, file_value(s, &s->files[i]));
                if (k < 0 && r == 0)
                        r = k;
        }
        for (size_t i = 0; i < s->n_meters; i++) {
                k = write_long(s->meters[i].fd, meter_value(s, &s->meters[i]));
                if (k < 0 && r == 0)
                        r = k;
        }
        if (s->has_trip) {
                k = 0;
                if (!s->throttled && s->temp_c >= s->trip_c)
                        k = set_throttle(s, true);
                else if (s->throttled && s->temp_c < s->trip_c - s->hyst_c)
                        k = set_throttle(s, false);
                if (k < 0 && r == 0)
                        r = k;
        }
        return r;
}

int simulator_step(struct simulator *s, int64_t now_ms) {
        double dt_s, target;
        int r, k;

        if (!s)
                return -EINVAL;
        dt_s = now_ms > s->last_ms ? (double) (now_ms - s->last_ms) / 1000.0 : 0.0;
        s->last_ms = now_ms;
        if (s->p.own_load) {
                s->load = s->commanded;
                r = write_own_stat(s, dt_s);
        } else
                r = update_load(s);
        target = s->p.ambient_c + s->p.rise_c * s->load;
        if (!s->started) {
                s->temp_c = target;
                s->started = true;
        } else
                s->temp_c += (target - s->temp_c) * -expm1(-dt_s / s->p.tau_s);
        k = write_state(s);
        return r < 0 ? r : k;
}

/* ---- life cycle ---- */

static int check_params(const struct sim_params *p) {
        if (!p || !p->board[0] || strchr(p->board, '/') || strcmp(p->board, ".") == 0 ||
            strcmp(p->board, "..") == 0 || !memchr(p->board, '\0', sizeof p->board))
                return -EINVAL;
        if (!isfinite(p->ambient_c) || !isfinite(p->rise_c) || !isfinite(p->tau_s) || p->tau_s <= 0)
                return -EINVAL;
        if (!(p->power_load_w >= 0) || !isfinite(p->power_load_w) || p->power_idle_w < 0 ||
            isinf(p->power_idle_w))
                return -EINVAL;
        return 0;
}

/* The host's stat as an absolute path: the link in the copy must not depend on our cwd. */
static int host_stat_path(const char *host_procfs, char *buf, size_t size) {
        char real[PATH_MAX];

        if (!realpath(host_procfs ? host_procfs : "/proc", real))
                return -errno;
        return sysfs_path(buf, size, "%s/stat", strcmp(real, "/") == 0 ? "" : real);
}

static int simulator_setup(struct simulator *s, const char *boards_dir, const char *host_stat) {
        bool zone_ref;
        int r;

        s->stat_fd = sysfs_open(host_stat);
        if (s->stat_fd < 0)
                return s->stat_fd;
        r = read_host_times(s, &s->prev_busy, &s->prev_total);
        if (r < 0)
                return r;
        r = make_copy(s, boards_dir, host_stat);
        if (r < 0)
                return r;
        r = find_temp_files(s, &zone_ref);
        if (r < 0)
                return r;
        if (zone_ref)
                find_reference_trip(s);
        r = find_policies(s);
        if (r < 0)
                return r;
        find_cooling_device(s);
        r = find_meters(s);
        if (r < 0)
                return r;
        if (s->p.own_load && (r = write_own_stat(s, 0)) < 0)
                return r;
        return write_state(s);
}

int simulator_new(const char *boards_dir, const char *host_procfs, const struct sim_params *p,
                  int64_t now_ms, struct simulator **ret) {
        char host_stat[PATH_MAX];
        struct simulator *s;
        int r;

        if (!boards_dir || !ret)
                return -EINVAL;
        r = check_params(p);
        if (r < 0)
                return r;
        r = host_stat_path(host_procfs, host_stat, sizeof host_stat);
        if (r < 0)
                return r;
        s = calloc(1, sizeof *s);
        if (!s)
                return -ENOMEM;
        s->p = *p;
        s->stat_fd = -1;
        s->own_stat_fd = -1;
        s->fd_cooling = -1;
        s->last_ms = now_ms;
        s->temp_c = p->ambient_c;
        r = simulator_setup(s, boards_dir, host_stat);
        if (r < 0) {
                simulator_free(s);
                return r;
        }
        *ret = s;
        return 0;
}

void simulator_free(struct simulator *s) {
        if (!s)
                return;
        for (size_t i = 0; i < s->n_files; i++)
                close(s->files[i].fd);
        for (size_t i = 0; i < s->n_policies; i++) {
                close(s->policies[i].fd_cur);
                if (s->policies[i].fd_cpuinfo >= 0)
                        close(s->policies[i].fd_cpuinfo);
        }
        for (size_t i = 0; i < s->n_meters; i++)
                close(s->meters[i].fd);
        if (s->fd_cooling >= 0)
                close(s->fd_cooling);
        if (s->stat_fd >= 0)
                close(s->stat_fd);
        if (s->own_stat_fd >= 0)
                close(s->own_stat_fd);
        if (s->root[0])
                remove_tree(s->root);
        free(s->files);
        free(s->policies);
        free(s->meters);
        free(s);
}

const char *simulator_sysfs_root(const struct simulator *s) {
        return s->root;
}

const char *simulator_procfs_root(const struct simulator *s) {
        return s->root;
}

double simulator_temp_c(const struct simulator *s) {
        return s->temp_c;
}

void simulator_set_load(struct simulator *s, double load) {
        if (s && isfinite(load))
                s->commanded = load < 0 ? 0 : load > 1 ? 1 : load;
}

double simulator_load(const struct simulator *s) {
        return s->load;
}

bool simulator_throttled(const struct simulator *s) {
        return s->throttled;
}

size_t simulator_power_meters(const struct simulator *s, double *ret_idle_w) {
        if (!s)
                return 0;
        if (ret_idle_w && s->n_meters > 0)
                *ret_idle_w = s->meters[0].idle_w;
        return s->n_meters;
}
