/* stress.c — stress loads: what every kind shares (workers, counters, stop, reaping) and the list of kinds. */
#include "stress.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "load-driver.h"
#include "util.h"

#define BATCH_NS LOAD_NSEC_PER_MSEC             /* target duration of one batch of work */
#define BATCH_MAX (UINT64_C(1) << 30)           /* units per batch, whatever the clock says */
#define REAP_POLL_NS (5 * LOAD_NSEC_PER_MSEC)
#define REAP_KILL_MAX_MS 10000u                 /* after SIGKILL, before giving up on a D-state child */

/* Every kind of load, by its enum stress_type: its driver (load-*.c). */
static const struct load_driver *const load_drivers[_STRESS_TYPE_MAX] = {
        [STRESS_CPU] = &load_cpu_driver,
        [STRESS_MEMORY] = &load_memory_driver,
        [STRESS_IO] = &load_io_driver,
        [STRESS_COMMAND] = &load_command_driver,
};

struct stress_worker {
        pid_t pid;                              /* 0 = not started */
        int cpu;                                /* pinned to, -1 = not pinned */
        bool exited;                            /* reaped, pid no longer ours */
        bool early;                             /* exited before any stop or kill */
        int code, status;                       /* si_code, si_status once exited */
        uint64_t done;                          /* last consistent counter value, unit of the load */
};

struct stress {
        enum stress_type type;
        const struct load_driver *driver;
        bool stopping;                          /* stop or kill was called */
        size_t n;
        struct stress_slot *slots;              /* n slots, MAP_SHARED */
        struct stress_worker workers[];
};

uint64_t load_now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * UINT64_C(1000000000) + (uint64_t) ts.tv_nsec;
}

struct timespec load_timespec(uint64_t ns) {
        return (struct timespec) {
                .tv_sec = (time_t) (ns / UINT64_C(1000000000)),
                .tv_nsec = (long) (ns % UINT64_C(1000000000)),
        };
}

static void sleep_until_ns(uint64_t t) {
        struct timespec ts = load_timespec(t);

        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                ;
}

uint64_t load_xorshift64(uint64_t *state) {
        uint64_t x = *state;

        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return *state = x;
}

/* ---- counters: a seqlock over two 32-bit halves (see stress.h) ---- */

static void slot_publish(struct stress_slot *slot, uint64_t v) {
        uint32_t seq = atomic_load_explicit(&slot->seq, memory_order_relaxed);

        atomic_store_explicit(&slot->seq, seq + 1, memory_order_relaxed);
        atomic_thread_fence(memory_order_release);
        atomic_store_explicit(&slot->lo, (uint32_t) v, memory_order_relaxed);
        atomic_store_explicit(&slot->hi, (uint32_t) (v >> 32), memory_order_relaxed);
        atomic_store_explicit(&slot->seq, seq + 2, memory_order_release);
}

static bool slot_read(struct stress_slot *slot, uint64_t *ret) {
        for (unsigned try = 0; try < 64; try++) {
                uint32_t s1 = atomic_load_explicit(&slot->seq, memory_order_acquire);
                if (s1 & 1)
                        continue;
                uint32_t lo = atomic_load_explicit(&slot->lo, memory_order_relaxed);
                uint32_t hi = atomic_load_explicit(&slot->hi, memory_order_relaxed);
                atomic_thread_fence(memory_order_acquire);
                if (atomic_load_explicit(&slot->seq, memory_order_relaxed) == s1) {
                        *ret = (uint64_t) hi << 32 | lo;
                        return true;
                }
        }
        return false;
}

/* ---- the kinds, defaults, validation ---- */

const struct load_driver *load_driver_get(enum stress_type t) {
        return (unsigned) t < _STRESS_TYPE_MAX ? load_drivers[t] : NULL;
}

const char *stress_type_to_string(enum stress_type t) {
        const struct load_driver *d = load_driver_get(t);

        return d ? d->name : NULL;
}

int stress_type_from_string(const char *s) {
        for (int i = 0; s && i < _STRESS_TYPE_MAX; i++)
                if (strcmp(s, load_drivers[i]->name) == 0)
                        return i;
        return -EINVAL;
}

size_t stress_type_names(char *buf, size_t size, const char *last) {
        size_t len = 0;

        if (size > 0)
                buf[0] = '\0';
        for (int i = 0; i < _STRESS_TYPE_MAX; i++) {
                const char *sep = i == 0 ? "" : i + 1 == _STRESS_TYPE_MAX ? last : ", ";
                int k = snprintf(buf + len, size > len ? size - len : 0, "%s%s", sep, load_drivers[i]->name);
                len += k > 0 ? (size_t) k : 0;
        }
        return len;
}

bool stress_type_runs_program(enum stress_type t) {
        return load_driver_get(t) && load_drivers[t]->runs_program;
}

bool stress_type_needs_dir(enum stress_type t) {
        return load_driver_get(t) && load_drivers[t]->needs_dir;
}

bool stress_type_cpu_bound(enum stress_type t) {
        return load_driver_get(t) && load_drivers[t]->cpu_bound;
}

void stress_spec_init(struct stress_spec *spec, enum stress_type type) {
        *spec = (struct stress_spec) {
                .type = type,
                .method = CPU_METHOD_SQRT,
                .duty_pct = 100,
                .memory_bytes = STRESS_MEMORY_DEFAULT,
                .io_file_bytes = STRESS_IO_FILE_DEFAULT,
        };
}

/* The CPUs of our affinity mask, in order. Returns how many (at least 1). */
static size_t cpus_usable(int cpus[static CPU_SETSIZE]) {
        cpu_set_t set;
        size_t n = 0;

        if (sched_getaffinity(0, sizeof set, &set) < 0) {
                cpus[0] = -1;   /* cannot tell: run one worker, unpinned */
                return 1;
        }
        for (int c = 0; c < CPU_SETSIZE; c++)
                if (CPU_ISSET(c, &set))
                        cpus[n++] = c;
        if (n == 0)
                cpus[n++] = -1;
        return n;
}

unsigned load_spec_workers(const struct stress_spec *spec) {
        int cpus[CPU_SETSIZE];

        if (spec->workers > 0)
                return spec->workers;
        if (load_drivers[spec->type]->per_cpu)
                return (unsigned) cpus_usable(cpus);
        return 1;
}

int stress_spec_validate(const struct stress_spec *spec, char *err, size_t n) {
        char names[128];

        if ((unsigned) spec->type >= _STRESS_TYPE_MAX) {
                stress_type_names(names, sizeof names, " or ");
                return util_errorf(err, n, -EINVAL, "load.type: must be %s", names);
        }
        if (spec->workers > STRESS_WORKERS_MAX)
                return util_errorf(err, n, -EINVAL, "load.workers: must be at most %u", STRESS_WORKERS_MAX);
        if (spec->duty_pct < 1 || spec->duty_pct > 100)
                return util_errorf(err, n, -EINVAL, "load.duty: must be between 1 and 100 (%%)");
        const struct load_driver *d = load_drivers[spec->type];
        return d->validate ? d->validate(spec, load_spec_workers(spec), err, n) : 0;
}

/* ---- worker processes ---- */

void load_child_setup(pid_t parent, int deathsig, const sigset_t *mask) {
        struct sigaction sa = { .sa_handler = SIG_DFL };

        for (int sig = 1; sig < _NSIG; sig++)
                if (sig != SIGKILL && sig != SIGSTOP)
                        (void) sigaction(sig, &sa, NULL);       /* glibc-internal ones fail: fine */
        if (sigprocmask(SIG_SETMASK, mask, NULL) < 0)
                _exit(EXIT_FAILURE);
        if (prctl(PR_SET_PDEATHSIG, deathsig) < 0)
                _exit(EXIT_FAILURE);
        /* The parent may have died before prctl(): then nobody will signal us. */
        if (getppid() != parent)
                _exit(EXIT_FAILURE);
}

/* Next batch size, aiming at BATCH_NS, changing by at most a factor of 2. */
static uint64_t batch_next(uint64_t n, uint64_t took_ns) {
        uint64_t m = took_ns > 0 ? n * BATCH_NS / took_ns : n * 2;

        if (m > n * 2)
                m = n * 2;
        if (m < n / 2)
                m = n / 2;
        return m < 1 ? 1 : m > BATCH_MAX ? BATCH_MAX : m;
}

void load_worker_setup(const struct load_worker *w) {
        sigset_t none;

        sigemptyset(&none);
        load_child_setup(w->parent, SIGKILL, &none);
}

void load_worker_loop(struct load_worker *w, unsigned duty_pct, uint64_t (*work)(void *state, uint64_t n), void *state) {
        const uint64_t slice = STRESS_DUTY_SLICE_MS * LOAD_NSEC_PER_MSEC;
        const uint64_t busy = slice * duty_pct / 100;
        uint64_t n = 1, total = 0, start = load_now_ns();

        for (;;) {
                uint64_t t0 = load_now_ns(), t1;

                total += work(state, n);
                slot_publish(w->slot, total);
                t1 = load_now_ns();
                n = batch_next(n, t1 - t0);
                if (duty_pct < 100 && t1 - start >= busy) {
                        start += slice;
                        if (start > t1)
                                sleep_until_ns(start);
                        else
                                start = t1;     /* the busy part overran the slice */
                }
        }
}

/* ---- the parent side ---- */

/* The child of fork(): it keeps only its own inherited fd and becomes the driver's worker. */
static _Noreturn void stress_child(struct stress *s, const struct stress_spec *spec, size_t i, const int *fds,
                                   pid_t parent) {
        struct load_worker w = {
                .slot = &s->slots[i],
                .index = (unsigned) i,
                .parent = parent,
                .fd = fds ? fds[i] : -1,
                .rng = UINT64_C(0x9e3779b97f4a7c15) * (i + 1),
        };

        for (size_t j = 0; fds && j < s->n; j++)
                if (j != i)
                        (void) close(fds[j]);
        s->driver->run(spec, &w);
        _exit(EXIT_FAILURE);
}

static int stress_fork_one(struct stress *s, const struct stress_spec *spec, size_t i,
                           const int *fds, int cpu) {
        pid_t parent = getpid(), pid;

        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0)
                stress_child(s, spec, i, fds, parent);
        s->workers[i].pid = pid;
        s->workers[i].cpu = cpu;
        if (cpu >= 0) {
                cpu_set_t set;
                CPU_ZERO(&set);
                CPU_SET(cpu, &set);
                if (sched_setaffinity(pid, sizeof set, &set) < 0)
                        return -errno;
        }
        return 0;
}

/* The driver's fd for each worker, all opened before the first fork. */
static int stress_open_fds(struct stress *s, const struct stress_spec *spec, int **ret) {
        int *fds = malloc(s->n * sizeof *fds);

        *ret = fds;
        if (!fds)
                return -ENOMEM;
        memset(fds, 0xff, s->n * sizeof *fds);  /* all -1 */
        for (size_t i = 0; i < s->n; i++) {
                int fd = s->driver->open(spec, &s->slots[i]);
                if (fd < 0)
                        return fd;
                fds[i] = fd;
        }
        return 0;
}

static void fds_close(int *fds, size_t n) {
        for (size_t i = 0; fds && i < n; i++)
                if (fds[i] >= 0)
                        (void) close(fds[i]);
        free(fds);
}

static int stress_new(enum stress_type type, size_t n, struct stress **ret) {
        struct stress *s;

        s = calloc(1, sizeof *s + n * sizeof s->workers[0]);
        if (!s)
                return -ENOMEM;
        s->type = type;
        s->driver = load_drivers[type];
        s->n = n;
        s->slots = mmap(NULL, n * sizeof s->slots[0], PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (s->slots == MAP_FAILED) {
                free(s);
                return -ENOMEM;
        }
        *ret = s;
        return 0;
}

int stress_start(const struct stress_spec *spec, struct stress **ret) {
        int cpus[CPU_SETSIZE], *fds = NULL, r;
        size_t ncpus = cpus_usable(cpus);
        struct stress *s;

        if (stress_spec_validate(spec, NULL, 0) < 0)
                return -EINVAL;
        r = stress_new(spec->type, load_spec_workers(spec), &s);
        if (r < 0)
                return r;
        if (s->driver->open && (r = stress_open_fds(s, spec, &fds)) < 0)
                goto fail;
        for (size_t i = 0; i < s->n; i++) {
                r = stress_fork_one(s, spec, i, fds, s->driver->pinned ? cpus[i % ncpus] : -1);
                if (r < 0)
                        goto fail;
        }
        fds_close(fds, s->n);
        *ret = s;
        return 0;
fail:
        fds_close(fds, s->n);
        stress_free(s);
        return r;
}

enum stress_type stress_get_type(const struct stress *s) {
        return s->type;
}

size_t stress_n_pids(const struct stress *s) {
        return s->n;
}

pid_t stress_pid(const struct stress *s, size_t i) {
        return i < s->n ? s->workers[i].pid : -1;
}

int stress_cpu(const struct stress *s, size_t i) {
        return i < s->n ? s->workers[i].cpu : -1;
}

struct stress_slot *load_slot(const struct stress *s, size_t i) {
        return &s->slots[i];
}

uint64_t stress_work_done(struct stress *s) {
        uint64_t sum = 0;

        for (size_t i = 0; i < s->n; i++) {
                uint64_t v;
                if (slot_read(&s->slots[i], &v) && v > s->workers[i].done)
                        s->workers[i].done = v;
                sum += s->workers[i].done;
        }
        return sum;
}

const char *stress_work_unit(const struct stress *s) {
        return s->driver->unit;
}

static int stress_signal(struct stress *s, int sig) {
        int r = 0;

        s->stopping = true;
        for (size_t i = 0; i < s->n; i++) {
                struct stress_worker *w = &s->workers[i];
                if (w->pid <= 0 || w->exited)
                        continue;
                if (s->driver->signal)
                        s->driver->signal(&s->slots[i], sig);
                if (kill(w->pid, sig) < 0 && errno != ESRCH && r == 0)
                        r = -errno;
        }
        return r;
}

int stress_stop(struct stress *s) {
        return stress_signal(s, SIGTERM);
}

int stress_kill(struct stress *s) {
        return stress_signal(s, SIGKILL);
}

int stress_child_exited(struct stress *s, const siginfo_t *si) {
        for (size_t i = 0; i < s->n; i++) {
                struct stress_worker *w = &s->workers[i];
                if (w->pid != si->si_pid || w->exited)
                        continue;
                w->exited = true;
                w->code = si->si_code;
                w->status = si->si_status;
                w->early = !s->stopping;
                return 0;
        }
        return -ESRCH;
}

bool stress_all_exited(const struct stress *s) {
        for (size_t i = 0; i < s->n; i++)
                if (s->workers[i].pid > 0 && !s->workers[i].exited)
                        return false;
        return true;
}

int stress_exit_status(const struct stress *s, size_t i, int *ret_code, int *ret_status) {
        if (i >= s->n)
                return -EINVAL;
        if (!s->workers[i].exited)
                return -EBUSY;
        *ret_code = s->workers[i].code;
        *ret_status = s->workers[i].status;
        return 0;
}

bool stress_failed(const struct stress *s) {
        for (size_t i = 0; i < s->n; i++)
                if (s->workers[i].exited && s->workers[i].early)
                        return true;
        return false;
}

/* waitid() on each of our running workers, without blocking. */
static void stress_reap_ready(struct stress *s) {
        for (size_t i = 0; i < s->n; i++) {
                struct stress_worker *w = &s->workers[i];
                siginfo_t si = {};

                if (w->pid <= 0 || w->exited)
                        continue;
                if (waitid(P_PID, (id_t) w->pid, &si, WEXITED | WNOHANG) < 0) {
                        if (errno == ECHILD) {  /* reaped behind our back: it is gone */
                                si.si_pid = w->pid;
                                si.si_code = CLD_EXITED;
                                (void) stress_child_exited(s, &si);
                        }
                        continue;
                }
                if (si.si_pid == w->pid)
                        (void) stress_child_exited(s, &si);
        }
}

/* Polls until every worker is reaped or the deadline (ns) passes. */
static bool stress_reap_until(struct stress *s, uint64_t deadline) {
        for (;;) {
                stress_reap_ready(s);
                if (stress_all_exited(s))
                        return true;
                uint64_t now = load_now_ns();
                if (now >= deadline)
                        return false;
                struct timespec ts = load_timespec(deadline - now < REAP_POLL_NS ? deadline - now : REAP_POLL_NS);
                (void) nanosleep(&ts, NULL);
        }
}

int stress_reap_blocking(struct stress *s, uint64_t timeout_ms) {
        /* Signalling errors are not fatal here: waitid() tells what is left. */
        (void) stress_stop(s);
        if (stress_reap_until(s, load_now_ns() + timeout_ms * LOAD_NSEC_PER_MSEC))
                return 0;
        (void) stress_kill(s);
        return stress_reap_until(s, load_now_ns() + REAP_KILL_MAX_MS * LOAD_NSEC_PER_MSEC) ? 1 : -ETIMEDOUT;
}

void stress_free(struct stress *s) {
        if (!s)
                return;
        if (!stress_all_exited(s))
                (void) stress_reap_blocking(s, 0);
        (void) munmap(s->slots, s->n * sizeof s->slots[0]);
        free(s);
}

