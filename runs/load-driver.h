/* load-driver.h — for runs/ only: the ops table each kind of stress load exports (load-*.c), and what stress.c lends them. */
#pragma once

#include <signal.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "stress.h"

/* A kind of load is one file exporting one struct load_driver, one entry in
 * stress.c's list of drivers and one value of enum stress_type. stress.c does
 * what every kind shares: validating the common fields, forking the workers
 * and pinning them, the counters, stopping, reaping. The driver checks its
 * own fields, prepares what a worker inherits, and is the worker. */

/* One per worker, in the shared mapping; written by the worker, read by us. */
struct stress_slot {
        alignas(64) _Atomic uint32_t seq;       /* odd while lo/hi are being written */
        _Atomic uint32_t lo;                    /* work done, low 32 bits, the driver's unit */
        _Atomic uint32_t hi;                    /* work done, high 32 bits */
        _Atomic uint32_t io_direct;             /* io: 1 while the file is open with O_DIRECT */
        _Atomic int32_t pgid;                   /* command: the command's process group, 0 before */
};

/* What a worker gets, in the child. */
struct load_worker {
        struct stress_slot *slot;
        unsigned index;                 /* 0 .. workers - 1 */
        pid_t parent;                   /* the process that forked it */
        int fd;                         /* from the driver's open(), -1 without */
        uint64_t rng;                   /* xorshift64 state, seeded by index */
};

struct load_driver {
        const char *name;               /* the type in the API, run.json and the log: "cpu" */
        const char *unit;               /* of the work counter: "ops", "bytes", "ios", "none" */
        bool per_cpu;                   /* workers 0: one per CPU we may run on; else 1 */
        bool pinned;                    /* worker i runs on the i-th CPU of our mask (wrapping) */
        bool runs_program;              /* runs spec->argv, anything, as the daemon's user */
        bool needs_dir;                 /* spec->io_dir, known when the run starts: validated then */
        bool cpu_bound;                 /* keeps workers x duty_pct % of the CPUs busy, nothing else */
        /* The fields that are this kind's, once the common ones passed;
         * workers is the count the load will have. 0, or -EINVAL with a
         * message naming the field in err ("load.memory: ..."). NULL: the
         * kind has no fields of its own. */
        int (*validate)(const struct stress_spec *spec, unsigned workers, char *err, size_t n);
        /* In the parent, before any fork, for each worker: an fd it inherits
         * (io: its file), or -errno. NULL: none. */
        int (*open)(const struct stress_spec *spec, struct stress_slot *slot);
        /* In the child, right after fork(): the worker. Never returns; ends
         * with _exit(). Most call load_worker_setup() and load_worker_loop(). */
        void (*run)(const struct stress_spec *spec, struct load_worker *w);
        /* In the parent, before sig (SIGTERM: stop, SIGKILL: kill) goes to a
         * worker still running: whatever else must get it. NULL: nothing. */
        void (*signal)(struct stress_slot *slot, int sig);
};

extern const struct load_driver load_cpu_driver;
extern const struct load_driver load_memory_driver;
extern const struct load_driver load_io_driver;
extern const struct load_driver load_command_driver;

/* The driver of a type, NULL for none. */
const struct load_driver *load_driver_get(enum stress_type t);
/* The workers a spec asks for: spec->workers, or what 0 means for its kind. */
unsigned load_spec_workers(const struct stress_spec *spec);
/* Worker i's slot, for the drivers' own accessors (stress_io_direct ...). */
struct stress_slot *load_slot(const struct stress *s, size_t i);

/* ---- for the worker, in the child ---- */

#define LOAD_NSEC_PER_MSEC UINT64_C(1000000)

uint64_t load_now_ns(void);
struct timespec load_timespec(uint64_t ns);
uint64_t load_xorshift64(uint64_t *state);
/* Default dispositions for every signal, mask as the signal mask,
 * PR_SET_PDEATHSIG deathsig; _exit()s when the parent is already gone. */
void load_child_setup(pid_t parent, int deathsig, const sigset_t *mask);
/* load_child_setup() for a plain worker: SIGKILL on the parent's death, nothing blocked. */
void load_worker_setup(const struct load_worker *w);
/* Runs work(state, n) in batches of about 1 ms and publishes the running
 * total of what it returns (the driver's unit) after each; busy duty_pct %
 * of each STRESS_DUTY_SLICE_MS slice, asleep for the rest. */
__attribute__((noreturn))
void load_worker_loop(struct load_worker *w, unsigned duty_pct, uint64_t (*work)(void *state, uint64_t n), void *state);
