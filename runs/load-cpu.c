/* load-cpu.c — the cpu load: workers running a compute kernel (sqrt, fma or matrix) for a duty cycle; work in ops. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "load-driver.h"
#include "util.h"

#define FMA_CHAINS 16
#define MATRIX_N 64

/* On targets where fma() is one instruction (arm64, armhf with VFPv4 and
 * -mfpu=neon-vfpv4, x86-64 with -mfma) math.h defines FP_FAST_FMA; elsewhere
 * the plain expression is as fast and the compiler may still fuse it. */
#ifdef FP_FAST_FMA
#define MADD(a, b, c) fma((a), (b), (c))
#else
#define MADD(a, b, c) ((a) * (b) + (c))
#endif

/* One worker's state; lives only in the child. */
struct cpu_worker {
        struct load_worker *w;
        uint64_t (*kernel)(struct cpu_worker *c, uint64_t n);  /* does n units, returns ops done */
        double sink;                    /* results, so no kernel is optimised away */
        double *ma, *mb, *mc;           /* matrix: MATRIX_N^2 each */
};

static const char *const cpu_method_table[_CPU_METHOD_MAX] = {
        [CPU_METHOD_SQRT] = "sqrt",
        [CPU_METHOD_FMA] = "fma",
        [CPU_METHOD_MATRIX] = "matrix",
};

const char *cpu_method_to_string(enum cpu_method m) {
        return (unsigned) m < _CPU_METHOD_MAX ? cpu_method_table[m] : NULL;
}

int cpu_method_from_string(const char *s) {
        for (int i = 0; s && i < _CPU_METHOD_MAX; i++)
                if (strcmp(s, cpu_method_table[i]) == 0)
                        return i;
        return -EINVAL;
}

static int cpu_validate(const struct stress_spec *spec, unsigned workers, char *err, size_t n) {
        if ((unsigned) spec->method >= _CPU_METHOD_MAX)
                return util_errorf(err, n, -EINVAL, "load.method: must be sqrt, fma or matrix");
        return 0;
}

/* ---- the kernels (child side); each does n units and returns ops done ---- */

static uint64_t kernel_sqrt(struct cpu_worker *c, uint64_t n) {
        double sum = 0;

        /* rand() and all, like stress: its lock and state are part of the load. */
        for (uint64_t i = 0; i < n; i++)
                sum += sqrt((double) rand());
        c->sink += sum;
        return n;
}

/* FMA_CHAINS independent chains a = a*m + c keep the FP pipes full. They tend
 * to c/(1-m) = 1 so slowly (1e-7 per step) that values, and the bits the
 * multipliers toggle, keep changing; every batch starts from fresh values. */
static uint64_t kernel_fma(struct cpu_worker *c, uint64_t n) {
        const double m = 1.0 - 1e-7, add = 1e-7;
        double a[FMA_CHAINS];

        for (int j = 0; j < FMA_CHAINS; j++)
                a[j] = 0.5 + (double) (load_xorshift64(&c->w->rng) >> 11) * 0x1p-53;
        for (uint64_t i = 0; i < n; i++) {
                /* Unrolled, the chains live in registers instead of on the stack. */
#pragma GCC unroll 16
                for (int j = 0; j < FMA_CHAINS; j++)
                        a[j] = MADD(a[j], m, add);
        }
        for (int j = 0; j < FMA_CHAINS; j++)
                c->sink += a[j];
        return n * FMA_CHAINS;
}

/* c = a * b, i-k-j order so the inner loop is a vectorisable multiply-add. */
static uint64_t kernel_matrix(struct cpu_worker *c, uint64_t n) {
        for (uint64_t r = 0; r < n; r++) {
                memset(c->mc, 0, sizeof(double) * MATRIX_N * MATRIX_N);
                for (int i = 0; i < MATRIX_N; i++)
                        for (int k = 0; k < MATRIX_N; k++) {
                                double aik = c->ma[i * MATRIX_N + k];
                                double *ci = c->mc + i * MATRIX_N;
                                const double *bk = c->mb + k * MATRIX_N;
                                for (int j = 0; j < MATRIX_N; j++)
                                        ci[j] = MADD(aik, bk[j], ci[j]);
                        }
                c->sink += c->mc[(r % MATRIX_N) * (MATRIX_N + 1)];
        }
        return n * MATRIX_N * MATRIX_N * MATRIX_N;
}

static uint64_t cpu_work(void *state, uint64_t n) {
        struct cpu_worker *c = state;

        return c->kernel(c, n);
}

static void cpu_init_matrix(struct cpu_worker *c) {
        size_t size = sizeof(double) * MATRIX_N * MATRIX_N;

        c->ma = malloc(size);
        c->mb = malloc(size);
        c->mc = malloc(size);
        if (!c->ma || !c->mb || !c->mc)
                _exit(EXIT_FAILURE);
        for (size_t i = 0; i < (size_t) MATRIX_N * MATRIX_N; i++) {
                c->ma[i] = (double) (load_xorshift64(&c->w->rng) >> 11) * 0x1p-53 / MATRIX_N;
                c->mb[i] = (double) (load_xorshift64(&c->w->rng) >> 11) * 0x1p-53;
        }
}

static void cpu_run(const struct stress_spec *spec, struct load_worker *w) {
        struct cpu_worker c = { .w = w };

        load_worker_setup(w);
        c.kernel = spec->method == CPU_METHOD_SQRT ? kernel_sqrt :
                   spec->method == CPU_METHOD_FMA ? kernel_fma : kernel_matrix;
        if (spec->method == CPU_METHOD_MATRIX)
                cpu_init_matrix(&c);
        load_worker_loop(w, spec->duty_pct, cpu_work, &c);
}

const struct load_driver load_cpu_driver = {
        .name = "cpu",
        .unit = "ops",
        .per_cpu = true,
        .pinned = true,
        .cpu_bound = true,
        .validate = cpu_validate,
        .run = cpu_run,
};
