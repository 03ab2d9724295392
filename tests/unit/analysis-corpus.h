/* analysis-corpus.h — generated multi-exponential heating curves for the plateau interval's coverage (unit test and bench). */
#pragma once

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis.h"

/*
 * One curve of the corpus: baseline + rise (1 - sum_k share_k e^{-t/tau_k}),
 * two or three exponentials (fast 3-20 s, slow 1-20 min, slow share 20-80 %,
 * a middle one between them for three), rise 10-45 C, 1 Hz, Gaussian noise
 * 0-0.3 C, then quantised to the class's step. Everything follows from
 * (class, seed), so a failing case can be replayed alone.
 */
#define CORPUS_QUANTA   4
#define CORPUS_CUTS     7

static const double corpus_quanta[CORPUS_QUANTA] = { 1.0, 0.538, 0.25, 0.001 };
/* Cuts, in slow time constants: "and earlier points" before 1. */
static const double corpus_cuts[CORPUS_CUTS] = { 0.25, 0.5, 0.75, 1, 1.5, 2, 3 };

struct corpus_curve {
        unsigned n_exp;                 /* 2 or 3 */
        double base, rise;              /* C */
        double tau[3], share[3];        /* s, fraction of the rise; [0] fast, [n_exp - 1] slow */
        double noise, quantum;          /* C */
        double q_off;                   /* C, origin of the quantisation lattice */
        uint64_t seed;
};

static inline uint64_t corpus_next(uint64_t *s) {
        uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

static inline double corpus_uniform(uint64_t *s) {
        return ((double) (corpus_next(s) >> 11) + 0.5) / 9007199254740992.0;
}

static inline double corpus_gauss(uint64_t *s) {
        double u1 = corpus_uniform(s), u2 = corpus_uniform(s);
        return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

static inline double corpus_loguniform(uint64_t *s, double lo, double hi) {
        return lo * exp(corpus_uniform(s) * log(hi / lo));
}

static inline void corpus_curve_make(struct corpus_curve *c, unsigned n_exp, double quantum, uint64_t seed) {
        uint64_t s = seed * UINT64_C(1000003) + n_exp * 17 + (uint64_t) (quantum * 1000);
        double slow = 0.2 + 0.6 * corpus_uniform(&s);

        *c = (struct corpus_curve) { .n_exp = n_exp, .quantum = quantum, .seed = seed };
        c->base = 30 + 15 * corpus_uniform(&s);
        c->rise = 10 + 35 * corpus_uniform(&s);
        c->noise = 0.3 * corpus_uniform(&s);
        c->q_off = quantum == 0.538 ? 0.138 : 0;        /* the Pi 3's levels are not multiples of 0.538 */
        c->tau[0] = corpus_loguniform(&s, 3, 20);
        c->tau[n_exp - 1] = corpus_loguniform(&s, 60, 1200);
        c->share[n_exp - 1] = slow;
        if (n_exp == 3) {
                double f = corpus_uniform(&s);
                c->tau[1] = corpus_loguniform(&s, 3 * c->tau[0], c->tau[2] / 3);
                c->share[0] = (1 - slow) * (0.2 + 0.6 * f);
                c->share[1] = 1 - slow - c->share[0];
        } else
                c->share[0] = 1 - slow;
}

static inline double corpus_truth_at(const struct corpus_curve *c, double t) {
        double v = 1;

        for (unsigned k = 0; k < c->n_exp; k++)
                v -= c->share[k] * exp(-t / c->tau[k]);
        return c->base + c->rise * v;
}

static inline double corpus_plateau(const struct corpus_curve *c) {
        return c->base + c->rise;
}

static inline double corpus_slow_tau(const struct corpus_curve *c) {
        return c->tau[c->n_exp - 1];
}

/* Seconds until the curve has made 99 % of its rise. */
static inline double corpus_t99(const struct corpus_curve *c) {
        double lo = 0, hi = 20 * corpus_slow_tau(c);

        for (int k = 0; k < 60; k++) {
                double mid = 0.5 * (lo + hi);
                if (corpus_truth_at(c, mid) - c->base >= 0.99 * c->rise)
                        hi = mid;
                else
                        lo = mid;
        }
        return hi;
}

/* n samples at 1 Hz from the load start. */
static inline void corpus_samples(const struct corpus_curve *c, double *t, double *y, size_t n) {
        uint64_t s = c->seed * 31 + 7;

        for (size_t i = 0; i < n; i++) {
                double v = corpus_truth_at(c, (double) i) + c->noise * corpus_gauss(&s);
                t[i] = (double) i;
                y[i] = c->q_off + c->quantum * round((v - c->q_off) / c->quantum);
        }
}
