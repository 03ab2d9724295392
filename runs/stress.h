/* stress.h — stress loads (cpu, memory, io, command) run as child processes that report work done through shared memory. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* How this module works, in short:
 *
 * stress_start() forks the workers and returns at once; it never waits and
 * never touches an event loop. The daemon adds one sd-event child source per
 * pid (stress_n_pids()/stress_pid()), calls stress_child_exited() from that
 * callback (sd-event reaps the child only after the callback returns, so a pid
 * is never signalled after it could have been reused), calls stress_stop() at
 * phase end and stress_kill() from a timer if something is still running
 * STRESS_STOP_GRACE_MS later. stress_reap_blocking() does all of that without
 * an event loop, for tests and for shutdown.
 *
 * Every child sets PR_SET_PDEATHSIG right after fork() and then checks that its
 * parent is still the process that forked it, resets every signal disposition
 * and the signal mask (the daemon blocks signals for sd-event), and ends with
 * _exit(), never returning into the caller's code. cpu, memory and io workers
 * keep the default SIGTERM action, so they die at once on stop.
 *
 * A command load runs under a small supervisor child (the one pid reported):
 * the supervisor is a child subreaper, puts the command into a process group
 * of its own, and on SIGTERM, SIGINT, SIGHUP, on the daemon's death or when the
 * command exits, sends SIGTERM to the group, waits up to
 * STRESS_STOP_GRACE_MS, sends SIGKILL to the group and reaps every orphan
 * reparented to it before exiting. Its exit status is the command's (128 +
 * signal number when the command was killed, 127 when exec failed). A process
 * that left the group (setsid(), setpgid()) is reparented to the supervisor
 * once its parent dies, and is then killed with the group it leads. Where
 * the kernel refuses a subreaper (qemu-user), such a process escapes.
 * The command's stdin, stdout and stderr are /dev/null: tools like stress-ng
 * print a line per second, which would otherwise end in the journal.
 *
 * Work counters: each worker owns one cache-line-aligned slot in a
 * MAP_SHARED|MAP_ANONYMOUS mapping and publishes its 64-bit running total
 * after every batch of about 1 ms. The total is written as two 32-bit halves
 * under a sequence counter (a seqlock of C11 atomics), because 64-bit atomics
 * need libatomic on ARMv6 (Raspberry Pi OS armhf) and the build does not link
 * it. The reader retries a few times and otherwise keeps the last consistent
 * value, so a worker killed in the middle of an update cannot hang it.
 *
 * Each kind of load is a driver, one file each (load-cpu.c, load-memory.c,
 * load-io.c, load-command.c; the ops table is in load-driver.h); stress.c
 * holds what they share and the list of them, in the order of this enum. */

enum stress_type {
        STRESS_CPU,
        STRESS_MEMORY,
        STRESS_IO,
        STRESS_COMMAND,
        _STRESS_TYPE_MAX,
};

enum cpu_method {
        CPU_METHOD_SQRT,    /* sqrt(rand()) in a loop, what `stress --cpu` does; op = one sqrt */
        CPU_METHOD_FMA,     /* 16 independent multiply-add chains on doubles; op = one multiply-add */
        CPU_METHOD_MATRIX,  /* 64x64 double matrix product, like stress-ng matrixprod; op = one multiply-add */
        _CPU_METHOD_MAX,
};

#define STRESS_WORKERS_MAX 256u
#define STRESS_DUTY_SLICE_MS 100u                         /* a worker is busy duty_pct % of each slice */
#define STRESS_MEMORY_DEFAULT (UINT64_C(64) << 20)        /* bytes per memory worker */
#define STRESS_MEMORY_MIN (UINT64_C(1) << 20)
#define STRESS_MEMORY_MAX (UINT64_C(1) << 30)             /* also: all workers together at most half the RAM */
#define STRESS_IO_FILE_DEFAULT (UINT64_C(64) << 20)       /* bytes per io worker */
#define STRESS_IO_FILE_MIN (UINT64_C(1) << 20)
#define STRESS_IO_FILE_MAX (UINT64_C(1) << 30)            /* fits a 32-bit off_t too */
#define STRESS_IO_BLOCK 4096u                             /* bytes per I/O */
#define STRESS_STOP_GRACE_MS 1000u                      /* SIGTERM to SIGKILL */

/* What to run. The strings are the caller's and are only read during
 * stress_start(). Fill with stress_spec_init() first: it sets the defaults. */
struct stress_spec {
        enum stress_type type;
        unsigned workers;               /* processes; 0 = cpu, memory: one per CPU we may run on; io: 1. command: must be 0 or 1 */
        enum cpu_method method;         /* cpu only */
        unsigned duty_pct;              /* 1..100: % busy in each STRESS_DUTY_SLICE_MS slice; cpu, memory, io. command: must be 100 */
        uint64_t memory_bytes;          /* bytes of buffer per memory worker */
        const char *io_dir;             /* io: existing directory for the test files (one per worker, unlinked at once) */
        uint64_t io_file_bytes;         /* bytes per io worker's file, a multiple of STRESS_IO_BLOCK */
        bool io_buffered;               /* io: do not even try O_DIRECT (O_DSYNC only) */
        char **argv;                    /* command: NULL-terminated; argv[0] looked up in PATH */
};

void stress_spec_init(struct stress_spec *spec, enum stress_type type);

/* Names used in the API and the config: "cpu", "memory", "io", "command";
 * "sqrt", "fma", "matrix". from_string returns the enum value or -EINVAL. */
const char *stress_type_to_string(enum stress_type t);
int stress_type_from_string(const char *s);
const char *cpu_method_to_string(enum cpu_method m);
int cpu_method_from_string(const char *s);
/* Every type's name, in order, joined with ", " and last before the last
 * one: "cpu, memory, io or command". Returns the length it needed. */
size_t stress_type_names(char *buf, size_t size, const char *last);

/* What a type's driver says of it; false for no type. runs_program: it runs
 * spec->argv, anything, as the daemon's user. needs_dir: it needs io_dir,
 * known only when the run starts. cpu_bound: it keeps workers x duty_pct %
 * of the CPUs busy, so a run can tell its own load from others'. */
bool stress_type_runs_program(enum stress_type t);
bool stress_type_needs_dir(enum stress_type t);
bool stress_type_cpu_bound(enum stress_type t);

/* Checks every field that matters for spec->type; may stat() io_dir. Returns
 * 0, or -EINVAL with a message naming the field in err ("load.workers: must
 * be at most 256"). Field names: load.type, load.workers, load.method,
 * load.duty, load.memory, load.dir, load.file_size, load.command. */
int stress_spec_validate(const struct stress_spec *spec, char *err, size_t n);

struct stress;

/* Validates (-EINVAL, without message: validate first to get one), opens the
 * io files, forks the workers and pins cpu, memory and io worker i to the i-th
 * CPU of our affinity mask (wrapping). Returns at once. On failure no child
 * is left running. -errno on failure. */
int stress_start(const struct stress_spec *spec, struct stress **ret);

enum stress_type stress_get_type(const struct stress *s);
size_t stress_n_pids(const struct stress *s);
pid_t stress_pid(const struct stress *s, size_t i);
/* CPU worker i is pinned to, -1 for command loads. */
int stress_cpu(const struct stress *s, size_t i);

/* Sum of the workers' counters, in stress_work_unit(): "ops" (cpu: see enum
 * cpu_method), "bytes" (memory: bytes written plus bytes read), "ios"
 * (io: completed 4 KiB reads plus writes; per second that is IOPS), "none"
 * (command: always 0). Monotonic; work of exited workers stays counted. Not
 * const: it keeps each slot's last consistent value. io workers first write
 * their whole file sequentially (not counted) so that reads hit the disk. */
uint64_t stress_work_done(struct stress *s);
const char *stress_work_unit(const struct stress *s);

/* io: whether the files are open with O_DIRECT (false after a fallback to
 * O_DSYNC alone, e.g. on a filesystem refusing O_DIRECT). False for others. */
bool stress_io_direct(const struct stress *s);

/* command: the command's process group, 0 until the supervisor has forked it. */
pid_t stress_command_pgid(const struct stress *s);

/* SIGTERM (stop) or SIGKILL (kill) to every worker not yet exited; kill also
 * sends SIGKILL to a command's process group. Non-blocking, idempotent. */
int stress_stop(struct stress *s);
int stress_kill(struct stress *s);

/* Record that pid exited, from the si of an sd-event child source or
 * waitid(). Returns 0, or -ESRCH when pid is not one of ours. */
int stress_child_exited(struct stress *s, const siginfo_t *si);
bool stress_all_exited(const struct stress *s);
/* How worker i ended, as waitid() put it: si_code (CLD_EXITED, CLD_KILLED,
 * CLD_DUMPED) and si_status. -EBUSY while it runs. */
int stress_exit_status(const struct stress *s, size_t i, int *ret_code, int *ret_status);
/* True when some worker ended before any stop or kill: the load failed
 * (setup error, I/O error, the command finished). */
bool stress_failed(const struct stress *s);

/* Without an event loop: stop, wait up to timeout_ms for every worker (polling
 * waitid() every 5 ms), then kill and reap the rest. Only for tests and
 * shutdown, never on the daemon's loop. Returns 0 when all ended within the
 * timeout, 1 when SIGKILL was needed, -errno on error. */
int stress_reap_blocking(struct stress *s, uint64_t timeout_ms);

/* Kills and reaps any worker still running (see stress_reap_blocking), unmaps
 * the counters, frees. Disable the child sources first. Accepts NULL. */
void stress_free(struct stress *s);
static inline void stress_freep(struct stress **s) {
        stress_free(*s);
}
