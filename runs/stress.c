/* stress.c — stress loads: forks cpu, memory, io and command workers and reads their work counters from shared memory. */
#include "stress.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NSEC_PER_MSEC UINT64_C(1000000)
#define BATCH_NS NSEC_PER_MSEC                  /* target duration of one batch of work */
#define BATCH_MAX (UINT64_C(1) << 30)           /* units per batch, whatever the clock says */
#define MEMORY_CHUNK (UINT64_C(64) << 10)       /* bytes per memory batch unit */
#define IO_LAYOUT_CHUNK (UINT64_C(1) << 20)     /* bytes per write while laying out an io file */
#define FMA_CHAINS 16
#define MATRIX_N 64
#define REAP_POLL_NS (5 * NSEC_PER_MSEC)
#define REAP_KILL_MAX_MS 10000u                 /* after SIGKILL, before giving up on a D-state child */

/* On targets where fma() is one instruction (arm64, armhf with VFPv4 and
 * -mfpu=neon-vfpv4, x86-64 with -mfma) math.h defines FP_FAST_FMA; elsewhere
 * the plain expression is as fast and the compiler may still fuse it. */
#ifdef FP_FAST_FMA
#define MADD(a, b, c) fma((a), (b), (c))
#else
#define MADD(a, b, c) ((a) * (b) + (c))
#endif

/* One per worker, in the shared mapping; written by the worker, read by us. */
struct stress_slot {
        alignas(64) _Atomic uint32_t seq;       /* odd while lo/hi are being written */
        _Atomic uint32_t lo;                    /* work done, low 32 bits, stress_work_unit() */
        _Atomic uint32_t hi;                    /* work done, high 32 bits */
        _Atomic uint32_t io_direct;             /* io: 1 while the file is open with O_DIRECT */
        _Atomic int32_t pgid;                   /* command: the command's process group, 0 before */
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
        bool stopping;                          /* stop or kill was called */
        size_t n;
        struct stress_slot *slots;              /* n slots, MAP_SHARED */
        struct stress_worker workers[];
};

/* Worker-side state; lives only in the child. */
struct worker_ctx {
        struct stress_slot *slot;
        unsigned duty_pct;
        uint64_t (*batch)(struct worker_ctx *w, uint64_t n);    /* does n units, returns work done */
        uint64_t rng;                           /* xorshift64 state */
        double sink;                            /* results, so no kernel is optimised away */
        double *ma, *mb, *mc;                   /* matrix: MATRIX_N^2 each */
        uint8_t *mem;                           /* memory: buffer */
        size_t mem_size, mem_pos;               /* bytes */
        bool mem_reading;                       /* memory: in the read pass */
        int fd;                                 /* io: the unlinked file */
        uint8_t *buf;                           /* io: one aligned block */
        uint64_t blocks, ios;                   /* io: file size in blocks, I/Os so far */
};

static const char *const stress_type_table[_STRESS_TYPE_MAX] = {
        [STRESS_CPU] = "cpu",
        [STRESS_MEMORY] = "memory",
        [STRESS_IO] = "io",
        [STRESS_COMMAND] = "command",
};

static const char *const cpu_method_table[_CPU_METHOD_MAX] = {
        [CPU_METHOD_SQRT] = "sqrt",
        [CPU_METHOD_FMA] = "fma",
        [CPU_METHOD_MATRIX] = "matrix",
};

static uint64_t now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * UINT64_C(1000000000) + (uint64_t) ts.tv_nsec;
}

static struct timespec ns_to_timespec(uint64_t ns) {
        return (struct timespec) {
                .tv_sec = (time_t) (ns / UINT64_C(1000000000)),
                .tv_nsec = (long) (ns % UINT64_C(1000000000)),
        };
}

static void sleep_until_ns(uint64_t t) {
        struct timespec ts = ns_to_timespec(t);

        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                ;
}

static uint64_t xorshift64(uint64_t *state) {
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

/* ---- names, defaults, validation ---- */

const char *stress_type_to_string(enum stress_type t) {
        return (unsigned) t < _STRESS_TYPE_MAX ? stress_type_table[t] : NULL;
}

int stress_type_from_string(const char *s) {
        for (int i = 0; s && i < _STRESS_TYPE_MAX; i++)
                if (strcmp(s, stress_type_table[i]) == 0)
                        return i;
        return -EINVAL;
}

const char *cpu_method_to_string(enum cpu_method m) {
        return (unsigned) m < _CPU_METHOD_MAX ? cpu_method_table[m] : NULL;
}

int cpu_method_from_string(const char *s) {
        for (int i = 0; s && i < _CPU_METHOD_MAX; i++)
                if (strcmp(s, cpu_method_table[i]) == 0)
                        return i;
        return -EINVAL;
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

__attribute__((format(printf, 3, 4)))
static int errf(char *err, size_t n, const char *fmt, ...) {
        va_list ap;

        if (err && n > 0) {
                va_start(ap, fmt);
                vsnprintf(err, n, fmt, ap);
                va_end(ap);
        }
        return -EINVAL;
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

static unsigned spec_workers(const struct stress_spec *spec) {
        int cpus[CPU_SETSIZE];

        if (spec->workers > 0)
                return spec->workers;
        if (spec->type == STRESS_CPU || spec->type == STRESS_MEMORY)
                return (unsigned) cpus_usable(cpus);
        return 1;
}

static int validate_memory(const struct stress_spec *spec, char *err, size_t n) {
        uint64_t ram, total;

        if (spec->memory_bytes < STRESS_MEMORY_MIN || spec->memory_bytes > STRESS_MEMORY_MAX)
                return errf(err, n, "load.memory: must be between %" PRIu64 " and %" PRIu64 " MiB per worker",
                            STRESS_MEMORY_MIN >> 20, STRESS_MEMORY_MAX >> 20);
        long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
        ram = pages > 0 && page_size > 0 ? (uint64_t) pages * (uint64_t) page_size : 0;
        total = spec->memory_bytes * spec_workers(spec);
        if (ram > 0 && total > ram / 2)
                return errf(err, n, "load.memory: %u workers x %" PRIu64 " MiB exceed half the RAM (%" PRIu64 " MiB)",
                            spec_workers(spec), spec->memory_bytes >> 20, ram >> 20);
        return 0;
}

static int validate_io(const struct stress_spec *spec, char *err, size_t n) {
        struct statvfs sv;
        struct stat st;
        uint64_t need, avail;

        if (!spec->io_dir || spec->io_dir[0] != '/')
                return errf(err, n, "load.dir: must be an absolute path");
        if (stat(spec->io_dir, &st) < 0)
                return errf(err, n, "load.dir: %s: %s", spec->io_dir, strerror(errno));
        if (!S_ISDIR(st.st_mode))
                return errf(err, n, "load.dir: %s: not a directory", spec->io_dir);
        if (faccessat(AT_FDCWD, spec->io_dir, W_OK | X_OK, AT_EACCESS) < 0)
                return errf(err, n, "load.dir: %s: %s", spec->io_dir, strerror(errno));
        if (spec->io_file_bytes < STRESS_IO_FILE_MIN || spec->io_file_bytes > STRESS_IO_FILE_MAX ||
            spec->io_file_bytes % STRESS_IO_BLOCK != 0)
                return errf(err, n, "load.file_size: must be a multiple of 4 KiB between %" PRIu64 " and %" PRIu64 " MiB",
                            STRESS_IO_FILE_MIN >> 20, STRESS_IO_FILE_MAX >> 20);
        need = spec->io_file_bytes * spec_workers(spec);
        if (statvfs(spec->io_dir, &sv) == 0) {
                avail = (uint64_t) sv.f_bavail * (uint64_t) sv.f_frsize;
                if (need > avail)
                        return errf(err, n, "load.file_size: %" PRIu64 " MiB needed, %" PRIu64 " MiB free in %s",
                                    need >> 20, avail >> 20, spec->io_dir);
        }
        return 0;
}

static int validate_command(const struct stress_spec *spec, char *err, size_t n) {
        if (!spec->argv || !spec->argv[0] || spec->argv[0][0] == '\0')
                return errf(err, n, "load.command: must name a program");
        if (spec->workers > 1)
                return errf(err, n, "load.workers: a command load runs one command");
        if (spec->duty_pct != 100)
                return errf(err, n, "load.duty: a command load runs at 100 %%");
        return 0;
}

int stress_spec_validate(const struct stress_spec *spec, char *err, size_t n) {
        if ((unsigned) spec->type >= _STRESS_TYPE_MAX)
                return errf(err, n, "load.type: must be cpu, memory, io or command");
        if (spec->workers > STRESS_WORKERS_MAX)
                return errf(err, n, "load.workers: must be at most %u", STRESS_WORKERS_MAX);
        if (spec->duty_pct < 1 || spec->duty_pct > 100)
                return errf(err, n, "load.duty: must be between 1 and 100 (%%)");
        switch (spec->type) {
        case STRESS_CPU:
                if ((unsigned) spec->method >= _CPU_METHOD_MAX)
                        return errf(err, n, "load.method: must be sqrt, fma or matrix");
                return 0;
        case STRESS_MEMORY:
                return validate_memory(spec, err, n);
        case STRESS_IO:
                return validate_io(spec, err, n);
        default:
                return validate_command(spec, err, n);
        }
}

/* ---- compute kernels (child side); each does n units and returns work done ---- */

static uint64_t kernel_sqrt(struct worker_ctx *w, uint64_t n) {
        double sum = 0;

        /* rand() and all, like stress: its lock and state are part of the load. */
        for (uint64_t i = 0; i < n; i++)
                sum += sqrt((double) rand());
        w->sink += sum;
        return n;
}

/* FMA_CHAINS independent chains a = a*m + c keep the FP pipes full. They tend
 * to c/(1-m) = 1 so slowly (1e-7 per step) that values, and the bits the
 * multipliers toggle, keep changing; every batch starts from fresh values. */
static uint64_t kernel_fma(struct worker_ctx *w, uint64_t n) {
        const double m = 1.0 - 1e-7, c = 1e-7;
        double a[FMA_CHAINS];

        for (int j = 0; j < FMA_CHAINS; j++)
                a[j] = 0.5 + (double) (xorshift64(&w->rng) >> 11) * 0x1p-53;
        for (uint64_t i = 0; i < n; i++) {
                /* Unrolled, the chains live in registers instead of on the stack. */
#pragma GCC unroll 16
                for (int j = 0; j < FMA_CHAINS; j++)
                        a[j] = MADD(a[j], m, c);
        }
        for (int j = 0; j < FMA_CHAINS; j++)
                w->sink += a[j];
        return n * FMA_CHAINS;
}

/* c = a * b, i-k-j order so the inner loop is a vectorisable multiply-add. */
static uint64_t kernel_matrix(struct worker_ctx *w, uint64_t n) {
        for (uint64_t r = 0; r < n; r++) {
                memset(w->mc, 0, sizeof(double) * MATRIX_N * MATRIX_N);
                for (int i = 0; i < MATRIX_N; i++)
                        for (int k = 0; k < MATRIX_N; k++) {
                                double aik = w->ma[i * MATRIX_N + k];
                                double *ci = w->mc + i * MATRIX_N;
                                const double *bk = w->mb + k * MATRIX_N;
                                for (int j = 0; j < MATRIX_N; j++)
                                        ci[j] = MADD(aik, bk[j], ci[j]);
                        }
                w->sink += w->mc[(r % MATRIX_N) * (MATRIX_N + 1)];
        }
        return n * MATRIX_N * MATRIX_N * MATRIX_N;
}

/* Alternating passes: write the whole buffer, then read it all back. */
static uint64_t kernel_memory(struct worker_ctx *w, uint64_t n) {
        for (uint64_t i = 0; i < n; i++) {
                uint8_t *p = w->mem + w->mem_pos;

                if (w->mem_reading) {
                        const uint64_t *q = (const uint64_t *) p;
                        uint64_t s0 = 0, s1 = 0;
                        for (size_t k = 0; k < MEMORY_CHUNK / 8; k += 2) {
                                s0 += q[k];
                                s1 += q[k + 1];
                        }
                        w->sink += (double) (s0 ^ s1);
                } else
                        memset(p, (int) (w->rng++ & 0xff), MEMORY_CHUNK);
                w->mem_pos += MEMORY_CHUNK;
                if (w->mem_pos >= w->mem_size) {
                        w->mem_pos = 0;
                        w->mem_reading = !w->mem_reading;
                }
        }
        return n * MEMORY_CHUNK;
}

/* The filesystem took O_DIRECT at open but refuses it on I/O: go on without. */
static void io_drop_direct(struct worker_ctx *w) {
        int flags = fcntl(w->fd, F_GETFL);

        if (flags < 0 || !(flags & O_DIRECT) || fcntl(w->fd, F_SETFL, flags & ~O_DIRECT) < 0)
                _exit(EXIT_FAILURE);
        atomic_store_explicit(&w->slot->io_direct, 0, memory_order_relaxed);
}

static void io_one(struct worker_ctx *w, void *buf, size_t size, uint64_t off, bool write) {
        for (;;) {
                ssize_t r = write ? pwrite(w->fd, buf, size, (off_t) off) : pread(w->fd, buf, size, (off_t) off);
                if (r == (ssize_t) size)
                        return;
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0 && errno == EINVAL) {
                        io_drop_direct(w);
                        continue;
                }
                _exit(EXIT_FAILURE);    /* I/O error, ENOSPC, short I/O: the load has failed */
        }
}

/* Random 4 KiB blocks, writes and reads alternating. */
static uint64_t kernel_io(struct worker_ctx *w, uint64_t n) {
        for (uint64_t i = 0; i < n; i++) {
                uint64_t off = (xorshift64(&w->rng) % w->blocks) * STRESS_IO_BLOCK;
                io_one(w, w->buf, STRESS_IO_BLOCK, off, (w->ios++ & 1) == 0);
        }
        return n;
}

/* ---- worker processes ---- */

static void child_setup(pid_t parent, int deathsig, const sigset_t *mask) {
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

static _Noreturn void worker_loop(struct worker_ctx *w) {
        const uint64_t slice = STRESS_DUTY_SLICE_MS * NSEC_PER_MSEC;
        const uint64_t busy = slice * w->duty_pct / 100;
        uint64_t n = 1, total = 0, start = now_ns();

        for (;;) {
                uint64_t t0 = now_ns(), t1;

                total += w->batch(w, n);
                slot_publish(w->slot, total);
                t1 = now_ns();
                n = batch_next(n, t1 - t0);
                if (w->duty_pct < 100 && t1 - start >= busy) {
                        start += slice;
                        if (start > t1)
                                sleep_until_ns(start);
                        else
                                start = t1;     /* the busy part overran the slice */
                }
        }
}

static void worker_init_matrix(struct worker_ctx *w) {
        size_t size = sizeof(double) * MATRIX_N * MATRIX_N;

        w->ma = malloc(size);
        w->mb = malloc(size);
        w->mc = malloc(size);
        if (!w->ma || !w->mb || !w->mc)
                _exit(EXIT_FAILURE);
        for (size_t i = 0; i < (size_t) MATRIX_N * MATRIX_N; i++) {
                w->ma[i] = (double) (xorshift64(&w->rng) >> 11) * 0x1p-53 / MATRIX_N;
                w->mb[i] = (double) (xorshift64(&w->rng) >> 11) * 0x1p-53;
        }
}

static void worker_init_memory(struct worker_ctx *w, uint64_t bytes) {
        w->mem_size = (size_t) (bytes / MEMORY_CHUNK * MEMORY_CHUNK);
        w->mem = mmap(NULL, w->mem_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (w->mem == MAP_FAILED)
                _exit(EXIT_FAILURE);
}

/* Write the whole file once, so that reads hit the device rather than holes. */
static void worker_init_io(struct worker_ctx *w, int fd, uint64_t bytes) {
        void *p;

        w->fd = fd;
        w->blocks = bytes / STRESS_IO_BLOCK;
        if (posix_memalign(&p, STRESS_IO_BLOCK, IO_LAYOUT_CHUNK) != 0)
                _exit(EXIT_FAILURE);
        for (size_t i = 0; i < IO_LAYOUT_CHUNK; i++)
                ((uint8_t *) p)[i] = (uint8_t) xorshift64(&w->rng);
        for (uint64_t off = 0; off < bytes; off += IO_LAYOUT_CHUNK) {
                uint64_t len = bytes - off < IO_LAYOUT_CHUNK ? bytes - off : IO_LAYOUT_CHUNK;
                io_one(w, p, (size_t) len, off, true);
        }
        w->buf = p;     /* its first block serves the random I/Os */
}

static _Noreturn void worker_run(const struct stress_spec *spec, struct stress_slot *slot,
                                 unsigned index, int fd, pid_t parent) {
        struct worker_ctx w = {
                .slot = slot,
                .duty_pct = spec->duty_pct,
                .rng = UINT64_C(0x9e3779b97f4a7c15) * (index + 1),
                .fd = -1,
        };
        sigset_t none;

        sigemptyset(&none);
        child_setup(parent, SIGKILL, &none);
        switch (spec->type) {
        case STRESS_CPU:
                w.batch = spec->method == CPU_METHOD_SQRT ? kernel_sqrt :
                          spec->method == CPU_METHOD_FMA ? kernel_fma : kernel_matrix;
                if (spec->method == CPU_METHOD_MATRIX)
                        worker_init_matrix(&w);
                break;
        case STRESS_MEMORY:
                w.batch = kernel_memory;
                worker_init_memory(&w, spec->memory_bytes);
                break;
        default:
                w.batch = kernel_io;
                worker_init_io(&w, fd, spec->io_file_bytes);
                break;
        }
        worker_loop(&w);
}

/* ---- command loads: a supervisor owning the command's process group ---- */

static _Noreturn void command_exec(char **argv, pid_t parent) {
        sigset_t none;
        int fd;

        sigemptyset(&none);
        child_setup(parent, SIGKILL, &none);
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
                uint64_t now = now_ns();
                if (now >= deadline)
                        return;
                struct timespec ts = ns_to_timespec(deadline - now);
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

/* SIGKILL to every child of ours and to the group it leads: what left the
 * command's group (setsid, setpgid) comes to us, the subreaper, once its
 * parent is gone. Raw getdents64: no malloc after fork. Returns how many. */
static size_t supervisor_kill_children(pid_t self) {
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
                        if (pid <= 0 || proc_parent_group(de->d_name, &ppid, &pgrp) < 0 || ppid != self)
                                continue;
                        if (pgrp == pid)
                                (void) kill(-pid, SIGKILL);
                        (void) kill(pid, SIGKILL);
                        killed++;
                }
        close(fd);
        return killed;
}

/* Until no child of ours is left (reaping them), bounded by deadline (ns). */
static void supervisor_kill_escaped(pid_t self, const sigset_t *chld, uint64_t deadline) {
        const struct timespec tick = { 0, 10 * 1000 * 1000 };

        while (supervisor_kill_children(self) > 0 && now_ns() < deadline) {
                while (waitpid(-1, NULL, WNOHANG) > 0)
                        ;
                (void) sigtimedwait(chld, NULL, &tick);
        }
}

static _Noreturn void supervisor_run(char **argv, struct stress_slot *slot, pid_t parent) {
        const uint64_t grace = STRESS_STOP_GRACE_MS * NSEC_PER_MSEC;
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
        child_setup(parent, SIGTERM, &mask);
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
                supervisor_wait_until(&chld, now_ns() + grace, cmd, &st, true);
        }
        if (group_alive(cmd))
                (void) kill(-cmd, SIGKILL);
        /* Reap the killed, bounded; then what left the group and came to us. */
        supervisor_wait_until(&chld, now_ns() + grace, cmd, &st, true);
        supervisor_kill_escaped(self, &chld, now_ns() + grace);
        while (waitpid(-1, NULL, WNOHANG) > 0)
                ;
        _exit(supervisor_exit_code(st));
}

/* ---- io files ---- */

/* A named file, removed at once, for filesystems without O_TMPFILE. A crash
 * between open and unlink can leave a name behind: skip over it. */
static int io_open_named(const char *dir, int flags) {
        char path[PATH_MAX];

        for (unsigned i = 0; i < 100; i++) {
                if (snprintf(path, sizeof path, "%s/.heatcurve-io-%d-%u", dir, (int) getpid(), i) >= (int) sizeof path)
                        return -ENAMETOOLONG;
                int fd = open(path, flags | O_CREAT | O_EXCL, 0600);
                if (fd >= 0) {
                        (void) unlink(path);
                        return fd;
                }
                if (errno != EEXIST)
                        return -errno;
        }
        return -EEXIST;
}

/* Opens an unlinked file in dir: O_TMPFILE where supported, else a named file.
 * O_DIRECT unless refused (EINVAL: tmpfs before Linux 6.6, some FUSE, ...). */
static int io_open(const char *dir, bool buffered, bool *ret_direct) {
        for (int direct = !buffered; direct >= 0; direct--) {
                int flags = O_RDWR | O_CLOEXEC | O_DSYNC | (direct ? O_DIRECT : 0);
                int fd = open(dir, flags | O_TMPFILE, 0600);

                if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR))
                        fd = io_open_named(dir, flags);
                else if (fd < 0)
                        fd = -errno;
                if (fd >= 0) {
                        *ret_direct = direct;
                        return fd;
                }
                if (fd != -EINVAL)
                        return fd;
        }
        return -EINVAL;
}

/* ---- the parent side ---- */

static int stress_fork_one(struct stress *s, const struct stress_spec *spec, size_t i,
                           const int *fds, int cpu) {
        pid_t parent = getpid(), pid;

        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                for (size_t j = 0; fds && j < s->n; j++)
                        if (j != i)
                                (void) close(fds[j]);
                if (spec->type == STRESS_COMMAND)
                        supervisor_run(spec->argv, &s->slots[i], parent);
                worker_run(spec, &s->slots[i], (unsigned) i, fds ? fds[i] : -1, parent);
        }
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

static int stress_open_io(struct stress *s, const struct stress_spec *spec, int *fds) {
        for (size_t i = 0; i < s->n; i++) {
                bool direct;
                int fd = io_open(spec->io_dir, spec->io_buffered, &direct);
                if (fd < 0)
                        return fd;
                fds[i] = fd;
                atomic_store_explicit(&s->slots[i].io_direct, direct, memory_order_relaxed);
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
        r = stress_new(spec->type, spec_workers(spec), &s);
        if (r < 0)
                return r;
        if (spec->type == STRESS_IO) {
                fds = malloc(s->n * sizeof *fds);
                if (!fds) {
                        r = -ENOMEM;
                        goto fail;
                }
                memset(fds, 0xff, s->n * sizeof *fds);  /* all -1 */
                r = stress_open_io(s, spec, fds);
                if (r < 0)
                        goto fail;
        }
        for (size_t i = 0; i < s->n; i++) {
                r = stress_fork_one(s, spec, i, fds, spec->type == STRESS_COMMAND ? -1 : cpus[i % ncpus]);
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
        static const char *const units[_STRESS_TYPE_MAX] = {
                [STRESS_CPU] = "ops",
                [STRESS_MEMORY] = "bytes",
                [STRESS_IO] = "ios",
                [STRESS_COMMAND] = "none",
        };
        return units[s->type];
}

bool stress_io_direct(const struct stress *s) {
        if (s->type != STRESS_IO)
                return false;
        for (size_t i = 0; i < s->n; i++)
                if (!atomic_load_explicit(&s->slots[i].io_direct, memory_order_relaxed))
                        return false;
        return true;
}

pid_t stress_command_pgid(const struct stress *s) {
        if (s->type != STRESS_COMMAND || s->n == 0)
                return 0;
        return atomic_load_explicit(&s->slots[0].pgid, memory_order_acquire);
}

static int stress_signal(struct stress *s, int sig) {
        int r = 0;

        s->stopping = true;
        for (size_t i = 0; i < s->n; i++) {
                struct stress_worker *w = &s->workers[i];
                if (w->pid <= 0 || w->exited)
                        continue;
                /* Only while the supervisor is unreaped: its orphans hold the pgid. */
                if (sig == SIGKILL && s->type == STRESS_COMMAND && stress_command_pgid(s) > 0)
                        (void) kill(-stress_command_pgid(s), SIGKILL);
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
                uint64_t now = now_ns();
                if (now >= deadline)
                        return false;
                struct timespec ts = ns_to_timespec(deadline - now < REAP_POLL_NS ? deadline - now : REAP_POLL_NS);
                (void) nanosleep(&ts, NULL);
        }
}

int stress_reap_blocking(struct stress *s, uint64_t timeout_ms) {
        /* Signalling errors are not fatal here: waitid() tells what is left. */
        (void) stress_stop(s);
        if (stress_reap_until(s, now_ns() + timeout_ms * NSEC_PER_MSEC))
                return 0;
        (void) stress_kill(s);
        return stress_reap_until(s, now_ns() + REAP_KILL_MAX_MS * NSEC_PER_MSEC) ? 1 : -ETIMEDOUT;
}

void stress_free(struct stress *s) {
        if (!s)
                return;
        if (!stress_all_exited(s))
                (void) stress_reap_blocking(s, 0);
        (void) munmap(s->slots, s->n * sizeof s->slots[0]);
        free(s);
}
