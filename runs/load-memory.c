/* load-memory.c — the memory load: workers writing a buffer and reading it back, pass after pass; work in bytes. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "load-driver.h"
#include "util.h"

#define MEMORY_CHUNK (UINT64_C(64) << 10)       /* bytes per batch unit */

/* One worker's state; lives only in the child. */
struct memory_worker {
        struct load_worker *w;
        uint8_t *mem;                   /* the buffer */
        size_t size, pos;               /* bytes */
        bool reading;                   /* in the read pass */
        double sink;                    /* what was read, so the reads are not optimised away */
};

static int memory_validate(const struct stress_spec *spec, unsigned workers, char *err, size_t n) {
        uint64_t ram, total;

        if (spec->memory_bytes < STRESS_MEMORY_MIN || spec->memory_bytes > STRESS_MEMORY_MAX)
                return util_errorf(err, n, -EINVAL, "load.memory: must be between %" PRIu64 " and %" PRIu64
                                   " MiB per worker", STRESS_MEMORY_MIN >> 20, STRESS_MEMORY_MAX >> 20);
        long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
        ram = pages > 0 && page_size > 0 ? (uint64_t) pages * (uint64_t) page_size : 0;
        total = spec->memory_bytes * workers;
        if (ram > 0 && total > ram / 2)
                return util_errorf(err, n, -EINVAL, "load.memory: %u workers x %" PRIu64 " MiB exceed half the RAM (%"
                                   PRIu64 " MiB)", workers, spec->memory_bytes >> 20, ram >> 20);
        return 0;
}

/* Alternating passes: write the whole buffer, then read it all back. */
static uint64_t memory_work(void *state, uint64_t n) {
        struct memory_worker *m = state;

        for (uint64_t i = 0; i < n; i++) {
                uint8_t *p = m->mem + m->pos;

                if (m->reading) {
                        const uint64_t *q = (const uint64_t *) p;
                        uint64_t s0 = 0, s1 = 0;
                        for (size_t k = 0; k < MEMORY_CHUNK / 8; k += 2) {
                                s0 += q[k];
                                s1 += q[k + 1];
                        }
                        m->sink += (double) (s0 ^ s1);
                } else
                        memset(p, (int) (m->w->rng++ & 0xff), MEMORY_CHUNK);
                m->pos += MEMORY_CHUNK;
                if (m->pos >= m->size) {
                        m->pos = 0;
                        m->reading = !m->reading;
                }
        }
        return n * MEMORY_CHUNK;
}

static void memory_run(const struct stress_spec *spec, struct load_worker *w) {
        struct memory_worker m = { .w = w };

        load_worker_setup(w);
        m.size = (size_t) (spec->memory_bytes / MEMORY_CHUNK * MEMORY_CHUNK);
        m.mem = mmap(NULL, m.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m.mem == MAP_FAILED)
                _exit(EXIT_FAILURE);
        load_worker_loop(w, spec->duty_pct, memory_work, &m);
}

const struct load_driver load_memory_driver = {
        .name = "memory",
        .unit = "bytes",
        .per_cpu = true,
        .pinned = true,
        .cpu_bound = true,
        .validate = memory_validate,
        .run = memory_run,
};
