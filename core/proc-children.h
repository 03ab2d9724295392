/* proc-children.h — the children of a process, found in /proc and killed: for supervisors that are subreapers. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* SIGKILL to every process whose parent is parent, and to the process
 * group each of them leads: what left a supervised group (setsid, setpgid)
 * comes to its subreaper once its own parent is gone, and is found here.
 * No malloc and no stdio: safe in the child of fork() of a threaded
 * program. Returns how many were found. */
size_t proc_kill_children(pid_t parent);
