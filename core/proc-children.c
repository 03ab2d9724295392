/* proc-children.c — the children of a process, found in /proc and killed: for supervisors that are subreapers. */
#include "proc-children.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

/* The parent pid and process group in /proc/PID/stat, parsed by hand (no
 * stdio after fork). -1 when the process is gone or the line is odd. */
static int proc_parent_group(const char *pid, pid_t *ppid, pid_t *pgrp) {
        char path[32] = "/proc/", buf[512];
        const char *p;
        long v[2] = { 0, 0 };
        ssize_t n;
        int fd;

        if (strlen(pid) > 20)
                return -1;
        strcat(strcat(path, pid), "/stat");
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
                return -1;
        buf[n] = '\0';
        p = strrchr(buf, ')');          /* the command name may hold anything, even ") " */
        if (!p || !p[1] || !p[2] || !p[3])
                return -1;
        p += 4;                         /* ") S " */
        for (int i = 0; i < 2; i++) {
                while (*p >= '0' && *p <= '9')
                        v[i] = v[i] * 10 + (*p++ - '0');
                if (*p++ != ' ')
                        return -1;
        }
        *ppid = (pid_t) v[0];
        *pgrp = (pid_t) v[1];
        return 0;
}

/* Raw getdents64 over /proc: no malloc after fork. */
size_t proc_kill_children(pid_t parent) {
        char buf[4096];
        size_t killed = 0;
        ssize_t n;
        int fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0)
                return 0;
        while ((n = getdents64(fd, buf, sizeof buf)) > 0)
                for (ssize_t off = 0; off < n; ) {
                        struct dirent64 *de = (struct dirent64 *) (void *) (buf + off);
                        pid_t ppid, pgrp, pid = 0;
                        off += de->d_reclen;
                        for (const char *c = de->d_name; *c >= '0' && *c <= '9' && pid < INT_MAX / 10; c++)
                                pid = pid * 10 + (*c - '0');
                        if (pid <= 0 || proc_parent_group(de->d_name, &ppid, &pgrp) < 0 || ppid != parent)
                                continue;
                        if (pgrp == pid)
                                (void) kill(-pid, SIGKILL);
                        (void) kill(pid, SIGKILL);
                        killed++;
                }
        close(fd);
        return killed;
}

