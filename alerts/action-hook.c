/* action-hook.c — the hook action: a rule's exec= program for each transition, one at a time, killed after its timeout. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "alert-action.h"
#include "log.h"
#include "proc-children.h"
#include "util.h"


extern char **environ;

/* Beside the rules: every hook started, running or finished. */
struct hook_runner {
        sd_event *event;                /* hooks are child sources with a timeout; NULL: no hooks */
        struct alert_hook *hooks;
};

/* Per rule. */
struct hook_rule {
        const struct alert_rule_config *cfg;    /* the rule's, for a run that waited */
        struct alert_hook *hook;        /* running, or NULL */
        bool pending;                   /* a transition came while it ran: run again for it */
        struct alert_transition next;   /* that transition */
};

struct alert_hook {
        struct alert_hook *next;        /* every hook of the runner, running or finished */
        bool finished;                  /* its child source fired; freed at the next sample */
        struct hook_runner *runner;
        struct hook_rule *rule;         /* NULL once the rule is gone (a reload) */
        char name[ALERT_NAME_MAX];
        pid_t pid;
        uint64_t timeout_ms;
        sd_event_source *child, *timer;
};

static void hook_start(struct hook_runner *hr, struct hook_rule *r, const struct alert_transition *t);

static void hook_free(struct alert_hook *h) {
        sd_event_source_disable_unref(h->child);
        sd_event_source_disable_unref(h->timer);
        free(h);
}

static int hook_on_exit(sd_event_source *es, const siginfo_t *si, void *userdata) {
        struct alert_hook *h = userdata;
        struct hook_rule *r = h->rule;
        char field[ALERT_NAME_MAX + 8];
        const char *fields[] = { field, NULL };

        snprintf(field, sizeof field, "ALERT=%s", h->name);
        if (si->si_code == CLD_EXITED && si->si_status == 0)
                log_fields(LOG_INFO, fields, "Alert %s: hook finished", h->name);
        else if (si->si_code == CLD_EXITED)
                log_fields(LOG_WARNING, fields, "Alert %s: hook exited with status %d", h->name, si->si_status);
        else
                log_fields(LOG_WARNING, fields, "Alert %s: hook killed by signal %d", h->name, si->si_status);
        /* not freed here: sd-event reaps the child after this callback returns */
        h->finished = true;
        h->timer = sd_event_source_disable_unref(h->timer);
        if (r) {
                r->hook = NULL;
                if (r->pending) {
                        r->pending = false;
                        hook_start(h->runner, r, &r->next);
                }
        }
        return 0;
}

/* Frees the hooks whose child has been reaped. */
static void hook_sample(void *self) {
        struct hook_runner *hr = self;

        for (struct alert_hook **p = &hr->hooks; *p; ) {
                struct alert_hook *h = *p;
                if (!h->finished) {
                        p = &h->next;
                        continue;
                }
                *p = h->next;
                hook_free(h);
        }
}

static int hook_on_timeout(sd_event_source *es, uint64_t usec, void *userdata) {
        struct alert_hook *h = userdata;
        char field[ALERT_NAME_MAX + 8];
        const char *fields[] = { field, NULL };

        snprintf(field, sizeof field, "ALERT=%s", h->name);
        log_fields(LOG_WARNING, fields, "Alert %s: hook still running after %llu ms, killing it", h->name,
                   (unsigned long long) h->timeout_ms);
        kill(h->pid, SIGTERM);          /* the supervisor kills the hook and all it started */
        return 0;
}

/* argv from "program arg arg", split on blanks (no shell); strings point into buf. */
static size_t hook_argv(char *buf, char **argv, size_t max) {
        size_t n = 0;

        for (char *save = NULL, *w = strtok_r(buf, " \t", &save); w && n + 1 < max; w = strtok_r(NULL, " \t", &save))
                argv[n++] = w;
        argv[n] = NULL;
        return n;
}

/* environ plus the HEATCURVE_* variables of the transition; strings in vars. */
static char **hook_env(const struct alert_transition *t, const char *rule_name, char vars[7][160]) {
        size_t n = 0, k = 0;
        char **env;

        while (environ && environ[n])
                n++;
        env = calloc(n + 8, sizeof *env);
        if (!env)
                return NULL;
        for (size_t i = 0; i < n; i++)
                if (strncmp(environ[i], "HEATCURVE_", 10) != 0)
                        env[k++] = environ[i];
        snprintf(vars[0], 160, "HEATCURVE_ALERT=%s", rule_name);
        snprintf(vars[1], 160, "HEATCURVE_SENSOR=%s", t->sensor);
        snprintf(vars[2], 160, "HEATCURVE_STATE=%s", alert_state_to_string(t->state));
        snprintf(vars[3], 160, "HEATCURVE_PREVIOUS=%s", alert_state_to_string(t->previous));
        if (isfinite(t->value_c))
                snprintf(vars[4], 160, "HEATCURVE_TEMP_C=%.3f", t->value_c);
        else
                snprintf(vars[4], 160, "HEATCURVE_TEMP_C=");
        if (isfinite(t->threshold_c))
                snprintf(vars[5], 160, "HEATCURVE_THRESHOLD_C=%.3f", t->threshold_c);
        else
                snprintf(vars[5], 160, "HEATCURVE_THRESHOLD_C=");
        for (size_t i = 0; i < 6; i++)
                env[k++] = vars[i];
        if (isfinite(t->eta_s)) {       /* into forecast only */
                snprintf(vars[6], 160, "HEATCURVE_ETA_S=%.0f", t->eta_s);
                env[k++] = vars[6];
        }
        env[k] = NULL;
        return env;
}

/* ---- the supervisor: forked by the daemon, the hook's parent and subreaper.
 * No malloc and no stdio from fork() to the hook's execve(). */

/* Default dispositions, this mask, and deathsig when parent goes; gone when it already has. */
static void hook_child_setup(pid_t parent, int deathsig, const sigset_t *mask) {
        struct sigaction sa = { .sa_handler = SIG_DFL };

        for (int sig = 1; sig < _NSIG; sig++)
                if (sig != SIGKILL && sig != SIGSTOP)
                        (void) sigaction(sig, &sa, NULL);       /* glibc-internal ones fail: fine */
        if (sigprocmask(SIG_SETMASK, mask, NULL) < 0 || prctl(PR_SET_PDEATHSIG, deathsig) < 0 ||
            getppid() != parent)
                _exit(127);
}

/* Every fd but stdin, stdout and stderr: the daemon's sockets and files are not the hook's. */
static void hook_close_fds(void) {
        char buf[1024];
        ssize_t n;
        int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (dir < 0)
                return;
        while ((n = getdents64(dir, buf, sizeof buf)) > 0)
                for (ssize_t off = 0; off < n; ) {
                        struct dirent64 *de = (struct dirent64 *) (void *) (buf + off);
                        int fd = 0;
                        off += de->d_reclen;
                        for (const char *c = de->d_name; *c >= '0' && *c <= '9' && fd < 1 << 24; c++)
                                fd = fd * 10 + (*c - '0');
                        if (fd > STDERR_FILENO && fd != dir)
                                (void) close(fd);
                }
        close(dir);
}

static _Noreturn void hook_exec(char **argv, char **env, pid_t parent) {
        sigset_t none;
        int fd;

        sigemptyset(&none);
        hook_child_setup(parent, SIGKILL, &none);
        if (setpgid(0, 0) < 0)
                _exit(127);
        fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fd < 0 || (fd == STDIN_FILENO ? fcntl(fd, F_SETFD, 0) : dup2(fd, STDIN_FILENO)) < 0)
                _exit(127);
        execve(argv[0], argv, env);
        _exit(127);
}

/* Kills the hook's group and whatever left it (it comes to us, the
 * subreaper, once its parent is gone), reaping, until none is left; 2 s at
 * most. /proc is read once the group is gone: once, when nothing left it. */
static void hook_kill_all(pid_t self, pid_t cmd, const sigset_t *chld) {
        const struct timespec tick = { 0, 10 * 1000 * 1000 };

        for (int i = 0; i < 200; i++) {
                (void) kill(-cmd, SIGKILL);
                while (waitpid(-1, NULL, WNOHANG) > 0)
                        ;
                if (kill(-cmd, 0) < 0 && errno == ESRCH && proc_kill_children(self) == 0)
                        return;
                (void) sigtimedwait(chld, NULL, &tick);
        }
}

/* Until the hook exits, or SIGTERM: the daemon's timeout, its end, or its
 * death (PR_SET_PDEATHSIG). Either way nothing the hook started outlives
 * it, as with a oneshot unit's cgroup; the hook's end is ours for the
 * daemon to see (a timeout: killed by signal 9). */
static _Noreturn void hook_supervise(char **argv, char **env, pid_t daemon) {
        sigset_t mask, chld;
        pid_t self = getpid(), cmd, r;
        int st = SIGKILL, w;            /* a wait status: killed by SIGKILL, as when the daemon killed it */
        bool done = false;

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGCHLD);
        sigemptyset(&chld);
        sigaddset(&chld, SIGCHLD);
        hook_child_setup(daemon, SIGTERM, &mask);
        hook_close_fds();
        (void) setpgid(0, 0);
        /* where this is refused (qemu-user) orphans go to init; the group kill still reaches the rest */
        (void) prctl(PR_SET_CHILD_SUBREAPER, 1);
        cmd = fork();
        if (cmd < 0)
                _exit(127);
        if (cmd == 0)
                hook_exec(argv, env, self);
        (void) setpgid(cmd, cmd);       /* also done by the child: whichever runs first */
        while (!done) {
                while ((r = waitpid(-1, &w, WNOHANG)) > 0)
                        if (r == cmd) {
                                st = w;
                                done = true;
                        }
                if (!done && sigwaitinfo(&mask, NULL) == SIGTERM)
                        break;
        }
        hook_kill_all(self, cmd, &chld);
        if (done && WIFEXITED(st))
                _exit(WEXITSTATUS(st));
        /* the hook's own death, told the same way; its core, if any, was the hook's to leave */
        (void) setrlimit(RLIMIT_CORE, &(struct rlimit) { 0, 0 });
        sigemptyset(&mask);
        (void) sigprocmask(SIG_SETMASK, &mask, NULL);
        (void) kill(self, WTERMSIG(st));
        _exit(128 + WTERMSIG(st));
}

/* The supervisor, which runs the hook; -errno when the program cannot be run. */
static int hook_spawn(const char *exec, char **env, pid_t *ret) {
        char buf[ALERT_EXEC_MAX], *argv[ALERT_EXEC_ARGS_MAX + 1];
        pid_t parent = getpid(), pid;

        snprintf(buf, sizeof buf, "%s", exec);
        if (hook_argv(buf, argv, ELEMENTSOF(argv)) == 0)
                return -EINVAL;
        /* what posix_spawn() said at once: the hook's own execve() is two forks away */
        if (access(argv[0], X_OK) < 0)
                return -errno;
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0)
                hook_supervise(argv, env, parent);
        *ret = pid;
        return 0;
}

static void hook_start(struct hook_runner *hr, struct hook_rule *r, const struct alert_transition *t) {
        const struct alert_rule_config *cfg = r->cfg;
        char vars[7][160], field[ALERT_NAME_MAX + 8];
        const char *fields[] = { field, NULL };
        struct alert_hook *h;
        char **env;
        int e;

        if (!cfg->exec[0] || !hr->event)
                return;
        if (r->hook) {
                /* never two at once for a rule: the latest transition runs next */
                r->pending = true;
                r->next = *t;
                return;
        }
        snprintf(field, sizeof field, "ALERT=%s", cfg->name);
        h = calloc(1, sizeof *h);
        env = hook_env(t, cfg->name, vars);
        e = h && env ? hook_spawn(cfg->exec, env, &h->pid) : -ENOMEM;
        free(env);
        if (e >= 0)
                e = sd_event_add_child(hr->event, &h->child, h->pid, WEXITED, hook_on_exit, h);
        if (e >= 0)
                e = sd_event_add_time_relative(hr->event, &h->timer, CLOCK_MONOTONIC,
                                               cfg->exec_timeout_ms * 1000u, 0, hook_on_timeout, h);
        if (e < 0) {
                log_fields(LOG_ERR, fields, "Alert %s: cannot run hook %s: %s", cfg->name, cfg->exec, strerror(-e));
                if (h && h->pid > 0) {
                        kill(h->pid, SIGTERM);
                        waitpid(h->pid, NULL, 0);
                }
                if (h)
                        hook_free(h);
                return;
        }
        h->next = hr->hooks;
        hr->hooks = h;
        h->runner = hr;
        h->rule = r;
        h->timeout_ms = cfg->exec_timeout_ms;
        snprintf(h->name, sizeof h->name, "%s", cfg->name);
        r->hook = h;
}

static int hook_new(const struct alerts_host *host, void **ret) {
        struct hook_runner *hr = calloc(1, sizeof *hr);

        if (!hr)
                return -ENOMEM;
        hr->event = host->event;
        *ret = hr;
        return 0;
}

/* Kills the hooks still running (and what they started), waits for them. */
static void hook_runner_free(void *self) {
        struct hook_runner *hr = self;

        if (!hr)
                return;
        while (hr->hooks) {
                struct alert_hook *h = hr->hooks;
                hr->hooks = h->next;
                if (!h->finished) {
                        kill(h->pid, SIGTERM);  /* its supervisor ends it and all it started, 2 s at most */
                        sd_event_source_disable_unref(h->child);
                        h->child = NULL;
                        waitpid(h->pid, NULL, 0);
                }
                hook_free(h);
        }
        free(hr);
}

static void hook_rule_open(void *self, void *rule, const struct alert_rule_config *cfg, enum alert_state state) {
        struct hook_rule *r = rule;

        r->cfg = cfg;
}

static void hook_rule_close(void *self, void *rule) {
        struct hook_rule *r = rule;

        if (r->hook)
                r->hook->rule = NULL;   /* it finishes on its own */
}

static void hook_transition(void *self, void *rule, const struct alert_rule_config *cfg,
                            const struct alert_transition *t) {
        hook_start(self, rule, t);
}

static void hook_status(const void *rule, struct alert_status *ret) {
        const struct hook_rule *r = rule;

        ret->hook_running = r->hook != NULL;
}

const struct alert_action alert_action_hook = {
        .name = "hook",
        .rule_size = sizeof(struct hook_rule),
        .after_save = true,
        .new = hook_new,
        .free = hook_runner_free,
        .sample = hook_sample,
        .rule_open = hook_rule_open,
        .rule_close = hook_rule_close,
        .transition = hook_transition,
        .status = hook_status,
};
