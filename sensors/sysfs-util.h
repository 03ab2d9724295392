/* sysfs-util.h — small helpers to build paths under a root, open, read and parse sysfs/procfs attributes. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Prefix of every path: "" for "/", otherwise the root without trailing slashes. */
const char *sysfs_prefix(const char *root);

/* snprintf into buf; -ENAMETOOLONG when it does not fit. */
int sysfs_path(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* open(path, O_RDONLY|O_CLOEXEC|O_NONBLOCK) of a regular file (what sysfs
 * and procfs attributes are); returns the fd or -errno: -EISDIR for a
 * directory, -EBADFD for a FIFO, socket or device, which are never read. */
int sysfs_open(const char *path);

/* Read a whole small file once (probe time), trailing whitespace and NULs
 * stripped. Returns the length or -errno. */
ssize_t sysfs_read_file(const char *path, char *buf, size_t size);

/* pread(fd, 0) into buf, NUL-terminated, trailing whitespace stripped.
 * Returns the length or -errno. No allocation: called on every tick. */
ssize_t sysfs_pread(int fd, char *buf, size_t size);

/* -ENOENT when the file behind fd was deleted (st_nlink == 0), else 0. */
int sysfs_check_linked(int fd);

/* Resolve path to an absolute canonical path. A symlink whose target is
 * absolute is taken relative to root, so fixture trees may hold copies of
 * absolute links. Returns 0 or -errno. */
int sysfs_resolve(const char *root, const char *path, char *buf, size_t size);

/* Basename of a path without trailing slashes, into buf. */
void sysfs_basename(const char *path, char *buf, size_t size);

/* Strict parsers: whole text must be a number (surrounding whitespace ok). */
int sysfs_parse_ll(const char *text, long long *ret);
int sysfs_parse_u64(const char *text, uint64_t *ret);
int sysfs_parse_khz(const char *text, uint32_t *ret);

/* "0 1 2 3", "0-3", "0-1,4-5" into a sorted array; returns the count or -errno. */
int sysfs_parse_cpu_list(const char *text, int *cpus, size_t max);

/* If name is prefix followed by digits only (and suffix), store the number. */
bool sysfs_match_index(const char *name, const char *prefix, const char *suffix, int *ret);

/* Sorted indices N of the entries "<prefix>N<suffix>" in dir. *ret is
 * malloc()ed; returns the count (0 when dir is missing) or -errno. */
int sysfs_list_indices(const char *dir, const char *prefix, const char *suffix, int **ret);

/* Copy with truncation, always NUL-terminated. */
void sysfs_strlcpy(char *dst, const char *src, size_t size);
