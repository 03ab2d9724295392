/* load-command.c — the command load: a program run under a supervisor that owns its process group; no work counter. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "load-driver.h"
#include "proc-children.h"
#include "util.h"

static int command_validate(const struct stress_spec *spec, unsigned workers, char *err, size_t n) {
        if (!spec->argv || !spec->argv[0] || spec->argv[0][0] == '\0')
                return util_errorf(err, n, -EINVAL, "load.command: must name a program");
        if (spec->workers > 1)
                return util_errorf(err, n, -EINVAL, "load.workers: a command load runs one command");
        if (spec->duty_pct != 100)
                return util_errorf(err, n, -EINVAL, "load.duty: a command load runs at 100 %%");
        return 0;
}

/* ---- the supervisor (child side): it owns the command's process group ---- */

static _Noreturn void command_exec(char **argv, pid_t parent) {
        sigset_t none;
        int fd;

        sigemptyset(&none);
        load_child_setup(parent, SIGKILL, &none);
        if (setpgid(0, 0) < 0)
                _exit(127);
        fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (fd < 0)
                _exit(127);
        for (int t = 0; t <= 2; t++)
                if (fd == t ? fcntl(fd, F_SETFD, 0) < 0 : dup2(fd, t) < 0)
                        _exit(127);
        execvp(argv[0], argv);
        _exit(127);
}

/* Reaps every child that has exited (the command and orphans reparented to
 * us); stores the command's wait status. Returns true once the command is. */
static bool supervisor_reap(pid_t cmd, int *cmd_status) {
        int st;
        pid_t r;

        while ((r = waitpid(-1, &st, WNOHANG)) > 0)
                if (r == cmd)
                        *cmd_status = st;
        return *cmd_status != -1;
}

static bool group_alive(pid_t pgid) {
        return kill(-pgid, 0) == 0 || errno != ESRCH;
}

/* Reaps on each SIGCHLD until the command is reaped (and, with whole_group,
 * its group is empty) or until deadline (ns). */
static void supervisor_wait_until(const sigset_t *chld, uint64_t deadline, pid_t cmd, int *st, bool whole_group) {
        for (;;) {
                bool cmd_done = supervisor_reap(cmd, st);
                if (cmd_done && (!whole_group || !group_alive(cmd)))
                        return;
                uint64_t now = load_now_ns();
                if (now >= deadline)
                        return;
                struct timespec ts = load_timespec(deadline - now);
                (void) sigtimedwait(chld, NULL, &ts);
        }
}

static int supervisor_exit_code(int st) {
        if (st == -1)
                return 128 + SIGKILL;
        if (WIFEXITED(st))
                return WEXITSTATUS(st);
        return 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : SIGKILL);
}

/* Until the command exits or we are told to stop (by signal, or by the daemon's death). */
static void supervisor_wait_command(const sigset_t *mask, pid_t cmd, int *st) {
        siginfo_t si;

        while (!supervisor_reap(cmd, st)) {
                if (sigwaitinfo(mask, &si) < 0)
                        continue;
                if (si.si_signo != SIGCHLD)
                        return;
        }
}

/* Until no child of ours is left (reaping them), bounded by deadline (ns). */
static void supervisor_kill_escaped(pid_t self, const sigset_t *chld, uint64_t deadline) {
        const struct timespec tick = { 0, 10 * 1000 * 1000 };

        while (proc_kill_children(self) > 0 && load_now_ns() < deadline) {
                while (waitpid(-1, NULL, WNOHANG) > 0)
                        ;
                (void) sigtimedwait(chld, NULL, &tick);
        }
}

static _Noreturn void supervisor_run(char **argv, struct stress_slot *slot, pid_t parent) {
        const uint64_t grace = STRESS_STOP_GRACE_MS * LOAD_NSEC_PER_MSEC;
        sigset_t mask, chld;
        int st = -1;
        pid_t self = getpid(), cmd;

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        sigaddset(&mask, SIGCHLD);
        sigemptyset(&chld);
        sigaddset(&chld, SIGCHLD);
        load_child_setup(parent, SIGTERM, &mask);
        /* Orphans of the command come to us and are reaped below. Where this
         * is refused (qemu-user) they go to init instead, which reaps them,
         * and the group kill still reaches them: not worth failing the load. */
        (void) prctl(PR_SET_CHILD_SUBREAPER, 1);
        cmd = fork();
        if (cmd < 0)
                _exit(EXIT_FAILURE);
        if (cmd == 0)
                command_exec(argv, self);
        (void) setpgid(cmd, cmd);       /* also done by the child: whichever runs first */
        atomic_store_explicit(&slot->pgid, cmd, memory_order_release);

        supervisor_wait_command(&mask, cmd, &st);
        /* Our orphans and the group's zombies hold the pgid, so it cannot be reused meanwhile. */
        if (group_alive(cmd)) {
                (void) kill(-cmd, SIGTERM);
                supervisor_wait_until(&chld, load_now_ns() + grace, cmd, &st, true);
        }
        if (group_alive(cmd))
                (void) kill(-cmd, SIGKILL);
        /* Reap the killed, bounded; then what left the group and came to us. */
        supervisor_wait_until(&chld, load_now_ns() + grace, cmd, &st, true);
        supervisor_kill_escaped(self, &chld, load_now_ns() + grace);
        while (waitpid(-1, NULL, WNOHANG) > 0)
                ;
        _exit(supervisor_exit_code(st));
}

/* The one worker is the supervisor. */
static void command_run(const struct stress_spec *spec, struct load_worker *w) {
        supervisor_run(spec->argv, w->slot, w->parent);
}

/* A kill reaches the command's group too, while the supervisor is unreaped:
 * its orphans hold the pgid, so it cannot have been reused. */
static void command_signal(struct stress_slot *slot, int sig) {
        pid_t pgid = atomic_load_explicit(&slot->pgid, memory_order_acquire);

        if (sig == SIGKILL && pgid > 0)
                (void) kill(-pgid, SIGKILL);
}

pid_t stress_command_pgid(const struct stress *s) {
        if (stress_get_type(s) != STRESS_COMMAND || stress_n_pids(s) == 0)
                return 0;
        return atomic_load_explicit(&load_slot(s, 0)->pgid, memory_order_acquire);
}

const struct load_driver load_command_driver = {
        .name = "command",
        .unit = "none",
        .runs_program = true,
        .validate = command_validate,
        .run = command_run,
        .signal = command_signal,
};
