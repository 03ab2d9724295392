/* analysis-internal.h — what the files of the analysis library share; for internal library use only. */
#pragma once

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#include "analysis.h"

#define EXP2_MIN_RATIO  1.5     /* tau / tau_fast */
#define U_TOL           1e-5    /* tolerance on ln(tau) */
#define BIC_MARGIN      6.0
#define RHO_MAX         0.95
#define DECAY_REANCHOR  256u

/* ---- series and bins (series.c) ---- */

/*
 * A series to fit: valid samples only, times relative to t0, optional
 * weights (bins). ybar/syy are weighted mean and centred sum of squares.
 */
struct series {
        const double *t, *y, *w;
        size_t n;
        double t0;              /* s, subtracted from t */
        double dt0;             /* s, mean step */
        double span;            /* s */
        double wsum, ybar, syy;
        double within;          /* bins only: sum of squares of the samples about their bin means */
        double *owned;          /* compacted copy when some samples were NaN */
};

void series_done(struct series *s);
/* Checks times, drops NaN temperatures (copying only when there are any);
 * with_stats false leaves wsum, ybar and syy unset (saves two passes). */
int series_init_stats(struct series *s, const double *t, const double *y, size_t n, size_t min_n,
                      bool with_stats);
int series_init(struct series *s, const double *t, const double *y, size_t n, size_t min_n);
/* Geometric bins of the series, each at most fraction of the time since
 * the first sample wide; weights are the samples in a bin. */
int bins_init_fraction(const struct series *s, double fraction, struct series *ret);
int bins_init(const struct series *s, struct series *ret);
/* The reading step of the sensor (0: not quantised) and the level the
 * steps start from. */
double series_quantum(const struct series *s, double *ret_off);

/*
 * e^{-t/tau} along increasing t without one exp() per sample: for steps
 * close to the mean step dt0 the factor e^{-dt0/tau} is corrected by a
 * cubic Taylor term (error below 1e-13 per step), other steps and every
 * DECAY_REANCHOR-th sample are computed exactly. Tiny values flush to 0.
 */
struct decay {
        double rate, dt0, f0, e, t;
        unsigned k;
};

static inline void decay_init(struct decay *d, double tau, double dt0) {
        d->rate = 1.0 / tau;
        d->dt0 = dt0;
        d->f0 = exp(-d->rate * dt0);
        d->e = 0;
        d->t = NAN;
        d->k = DECAY_REANCHOR;
}

static inline double decay_at(struct decay *d, double t) {
        double x = d->rate * (t - d->t - d->dt0);

        if (d->k >= DECAY_REANCHOR || !(fabs(x) < 1e-3)) {
                d->e = exp(-d->rate * t);
                d->k = 0;
        } else {
                d->e *= d->f0 * (1.0 - x * (1.0 - x * (0.5 - x / 6.0)));
                d->k++;
        }
        if (d->e < 1e-250)
                d->e = 0;
        d->t = t;
        return d->e;
}

/* Columns are e^{-t/tau} - shift; shifting by 1 for slow taus keeps the
 * centred sums free of cancellation. The fit does not depend on it. */
static inline double column_shift(double tau, double span) {
        return tau > span ? 1.0 : 0.0;
}

/* ---- optimisers (optimise.c) ---- */

/* Brent's minimiser on [a, b] (golden section with parabolic steps). */
typedef double (*objective1_t)(double u, void *ctx);
double brent_min(objective1_t f, void *ctx, double a, double b, double tol, double *ret_fx);

/* Nelder-Mead in two dimensions. */
typedef double (*objective2_t)(const double u[2], void *ctx);
double nelder_mead2(objective2_t f, void *ctx, double u[2], double step, double tol, int max_evals);

/* ---- what every fit shares (fit.c) ---- */

/* Two-sided 95 % Student t quantile. */
double student_t975(double df);
/* Solves M x = b for a symmetric positive definite k x k (k <= 4, lower
 * triangle used), scaled to unit diagonal first. Returns b^T x, INFINITY
 * when M is singular. */
double chol_solve(double m[4][4], const double b[4], int k, double x[4]);

/* Residual statistics of a finished fit, accumulated in one pass: SSE,
 * lag-1 products, runs of residual signs, and the centred Gram matrix of
 * the Jacobian columns other than T_inf (Welford co-moments). */
struct fit_stats {
        double sse, lag1, rprev, mean[4], m[4][4];
        size_t pos, neg, runs;
        int last_sign;
};

/* Runs test on residual signs: z < 0 means fewer sign changes than chance. */
double stats_runs_z(const struct fit_stats *st);
/* Model value at model time tt and the Jacobian columns other than T_inf
 * (amplitudes and log time constants; signs do not matter here). */
double fit_columns(const struct analysis_fit *f, double tt, double c[4]);

/*
 * The grid points of a search, kept for the profile-likelihood interval of
 * T_inf: at fixed time constants the model is linear, so the set of T_inf
 * whose best SSE stays below a threshold is T(tau) +- sqrt((thr - sse) v).
 * sse is made comparable to raw SSEs by adding the within-bin sum of
 * squares (constant over tau).
 */
struct profile_point {
        double sse;             /* C^2 */
        double tinf;            /* C, best T_inf at these time constants */
        double v;               /* Var(T_inf) / sigma^2 at these time constants */
        bool edge;              /* the slow tau is on the upper search bound */
};

/* f->low_c, high_c and ci95_c from the interval [lo, hi] plus the bias bound. */
void fit_set_interval(struct analysis_fit *f, double lo, double hi);
/* Widens f->ci95_c to cover the profile interval of the np points. */
void fit_profile_ci(struct analysis_fit *f, const struct profile_point *p, size_t np, double thr_add);
/* RMS, residual structure and the linearised 95 % interval of T_inf.
 * Returns the SSE increase that bounds the profile interval. */
double fit_finish(const struct series *s, struct analysis_fit *f, bool unidentifiable);
/* ln tau search range of the series (ANALYSIS_TAU_MIN_S, ANALYSIS_TAU_MAX_SPANS). */
void tau_range(const struct series *s, double *umin, double *umax);

/* ---- exp1 (exp1.c) ---- */

/* Residual sum of squares of the exp1 model at a fixed tau; the linear part
 * (T_inf, a) in closed form. INFINITY when degenerate. */
double exp1_sse(const struct series *s, double tau, double *ret_tinf, double *ret_a, double *ret_v);
/* exp1_sse() at tau = e^u; ctx is the series. */
double exp1_objective(double u, void *ctx);
int exp1_fit_series(const struct series *s, struct analysis_fit *ret);

/* ---- exp2 (exp2.c) ---- */

/* Solves the centred 2x2 normal equations of exp2; returns the SSE. */
double exp2_solve(double c11, double c22, double c12, double y1, double y2,
                  double syy, double *b1, double *b2);

struct exp2_params {
        double tinf, a_fast, a;
        double v;               /* Var(T_inf) / sigma^2 at these time constants */
};

double exp2_sse(const struct series *s, double tau_fast, double tau, struct exp2_params *ret);

struct exp2_ctx {
        const struct series *s;
        double umin, umax;
};

/* The SSE at (ln tau_fast, ln tau), kept inside the search bounds by a
 * penalty; ctx is a struct exp2_ctx. */
double exp2_objective(const double u[2], void *ctx);
/* The fit at (ln tau_fast, ln tau), projected into the bounds. */
int exp2_finish(const struct exp2_ctx *x, const double u[2], struct analysis_fit *ret);

/* ---- the plateau estimate (plateau.c) and its interval (plateau-interval.c) ---- */

#define PROFILE_TAU_SPANS       4.0     /* slowest time constant of the wide model, in data spans */

/* The columns of the grid on the bins, and their sums. */
struct scan {
        size_t nu;
        double umin, du;
        double *col;                    /* nu x bins, e^{-t/tau} - shift */
        double *gram;                   /* nu x nu, weighted, centred (exp1/exp2 grid) */
        double *m;                      /* nu, d T_inf / d beta (weighted column mean + shift) */
        double *cy;                     /* nu, weighted centred cross products with y */
        double *raw;                    /* nu x nu, sum w e_i e_k of the unshifted columns (NNLS) */
        double *e1, *ey;                /* nu, sum w e_i and sum w e_i ys (ys = sign * y) */
        double sw, sy, syy;             /* sum w, sum w ys, sum w ys^2 */
        double sign;                    /* +1 heating, -1 cooling */
        size_t nu_wide;                 /* columns of the wide model: tau up to PROFILE_TAU_SPANS spans */
};

struct honest {
        struct series b;                /* bins of the raw series, weights = sample counts */
        double within;                  /* C^2, sum of squares inside the bins */
        double t0;                      /* s, time of the first raw sample */
        size_t n_raw;
        double q, q_off;                /* C, reading step and its origin (0: not quantised) */
        double umin, umax;              /* ln tau search range */
        double horizon;                 /* s, slowest time constant the interval allows (INFINITY: no limit) */
        double span;                    /* s, of the raw samples */
        const struct analysis_prior *prior;     /* NULL: none */
        size_t k_horizon;               /* grid columns [0, k_horizon) are within the horizon */
        struct scan sc;
        double best_sse[3];             /* C^2, best grid point of one and two terms */
        size_t best_ix[3][2];
        struct profile_point *p2;       /* the exp2 grid (tau up to ANALYSIS_TAU_MAX_SPANS spans) */
        size_t n2;
        struct analysis_fit f1, f2;     /* f2.model is NONE when exp2 could not be fitted */
        double sse1, sse2;              /* C^2, bins' weighted SSE at the optima */
};

/* Weighted residual statistics of a fit on the bins. */
struct honest_stats {
        double sse, s2, rho, runs_z, factor, quant_bias, df;
};

/* The 95 % interval of f's plateau, into f->ci95_c, low_c, high_c and quant_bias_c. */
int honest_interval(struct honest *h, struct analysis_fit *f, const struct honest_stats *st);
/* Both parts of an exp2 fit go the way of the rise. */
bool honest_exp2_physical(const struct honest *h, const struct analysis_fit *f);
/* analysis_fit_plateau() on a series with a horizon (INFINITY: none) and a prior (NULL: none). */
int honest_fit(const struct series *s, double horizon_s, const struct analysis_prior *prior,
               struct analysis_fit *ret);
/* The interval of f under the prior, when the data do not contradict it
 * and it is narrower; f->prior_use says what happened. (prior.c) */
int honest_prior(const struct honest *h, struct analysis_fit *f, const struct honest_stats *st);

/* ---- trailing windows (window.c) ---- */

/* Median of the non-NaN values of y[from..to). */
int median_range(const double *y, size_t from, size_t to, double *ret);
/* The valid samples reach back over the whole window (2 % slack for the
 * timing of samples). */
bool window_covered(const double *t_s, const double *y, size_t n, double window_s);
