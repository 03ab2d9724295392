/* prior.c — a board's time constant learned from its earlier runs, and the plateau interval it narrows early. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "analysis-internal.h"

/*
 * Early in a heat-up (less than a few time constants of data) the plateau
 * is loosely bound because the time constant is: a slower one with a
 * larger amplitude fits the start of the curve as well. The time constants
 * of a board and its case do not change between runs, so earlier runs
 * bound it. Under the prior the model is a rising exponential whose time
 * constant lies in the prior's range, alone or with a rising faster one
 * (a die before its heatsink); the interval is the profile of T_inf over
 * a grid of such fits, each linear in (T_inf, amplitudes) at fixed time
 * constants: T(tau) +- sqrt((thr - sse) v) where its SSE is below the
 * threshold, thr = the best SSE under the prior + PRIOR_JOINT t^2 s^2
 * (the free fit's residual variance, widened for correlated residuals).
 * The plain profile threshold (1 degree of freedom) covered 90 % of
 * quantised two-exponential curves at 2 tau; the joint one 96 %.
 */
#define PRIOR_GRID              17      /* slow time constants across the prior's range */
#define PRIOR_FAST_RATIO        1.25    /* step of the fast time constant's grid */
#define PRIOR_FAST_MAX          40      /* fast time constants per slow one at most */
#define PRIOR_BLEND             1.5     /* how much faster than the slow tau one exponential may find it */
#define PRIOR_JOINT             1.56    /* the region of (T_inf, tau) jointly: chi2(2) over chi2(1) at 95 % */
#define MAD_TO_SD               1.4826  /* a normal distribution's sd over its median absolute deviation */

static int double_cmp(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return (x > y) - (x < y);
}

static double sorted_median(const double *v, size_t n) {
        return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int analysis_prior_from_taus(const double *tau_s, size_t n, size_t runs, struct analysis_prior *ret) {
        double *u, *d, med, mad;
        size_t m = 0;

        if (!ret || (n > 0 && !tau_s))
                return -EINVAL;
        *ret = (struct analysis_prior) { .tau_s = NAN, .spread = NAN, .low_s = NAN, .high_s = NAN, .runs = runs };
        u = malloc(2 * (n ? n : 1) * sizeof(double));
        if (!u)
                return -ENOMEM;
        d = u + n;
        for (size_t i = 0; i < n; i++)
                if (isfinite(tau_s[i]) && tau_s[i] > 0)
                        u[m++] = log(tau_s[i]);
        if (m == 0) {
                free(u);
                return -ENODATA;
        }
        qsort(u, m, sizeof *u, double_cmp);
        med = sorted_median(u, m);
        for (size_t i = 0; i < m; i++)
                d[i] = fabs(u[i] - med);
        qsort(d, m, sizeof *d, double_cmp);
        mad = sorted_median(d, m);
        free(u);
        ret->tau_s = exp(med);
        ret->spread = fmax(MAD_TO_SD * mad, runs <= 1 ? ANALYSIS_PRIOR_SPREAD_ONE : ANALYSIS_PRIOR_SPREAD_MIN);
        ret->low_s = exp(med - ANALYSIS_PRIOR_RANGE * ret->spread);
        ret->high_s = exp(med + ANALYSIS_PRIOR_RANGE * ret->spread);
        return 0;
}

/* One fit of the prior's grid on the bins. */
struct prior_point {
        double sse, tinf, v;            /* C^2, C, Var(T_inf) / sigma^2 */
        double tau, a, tau_fast, a_fast;        /* tau_fast NaN: one exponential */
};

/* The fit at these time constants (tau_fast NaN: one exponential); false
 * when degenerate or not rising the way of the curve. */
static bool prior_point_fit(const struct honest *h, double tau, double tau_fast, struct prior_point *p) {
        *p = (struct prior_point) { .tau = tau, .tau_fast = tau_fast };
        if (isnan(tau_fast)) {
                p->sse = exp1_sse(&h->b, tau, &p->tinf, &p->a, &p->v);
                return isfinite(p->sse) && h->sc.sign * p->a > 0;
        }
        struct exp2_params q;
        p->sse = exp2_sse(&h->b, tau_fast, tau, &q);
        p->tinf = q.tinf, p->a = q.a, p->a_fast = q.a_fast, p->v = q.v;
        return isfinite(p->sse) && isfinite(q.v) && q.v > 0 && h->sc.sign * q.a > 0 && h->sc.sign * q.a_fast > 0;
}

/* Every fit of the grid: slow tau across the prior's range, alone and with
 * each faster one from the search's lower bound up. Returns the count. */
static size_t prior_scan(const struct honest *h, struct prior_point *pts) {
        const struct analysis_prior *pr = h->prior;
        double ulo = fmax(log(pr->low_s), h->umin), uhi = fmin(log(pr->high_s), h->umax);
        size_t np = 0;

        if (!(ulo <= uhi))
                return 0;
        for (size_t i = 0; i < PRIOR_GRID; i++) {
                double tau = exp(ulo + (uhi - ulo) * (double) i / (PRIOR_GRID - 1));
                if (prior_point_fit(h, tau, NAN, pts + np))
                        np++;
                double tf = exp(h->umin);
                for (size_t k = 0; k < PRIOR_FAST_MAX && tf * EXP2_MIN_RATIO <= tau; k++, tf *= PRIOR_FAST_RATIO)
                        if (h->b.n >= 8 && prior_point_fit(h, tau, tf, pts + np))
                                np++;
        }
        return np;
}

/* The best fit in the range. */
static const struct prior_point *prior_best(const struct prior_point *pts, size_t np) {
        const struct prior_point *best = NULL;

        for (size_t i = 0; i < np; i++)
                if (!best || pts[i].sse < best->sse)
                        best = pts + i;
        return best;
}

/* The best SSE of one rising exponential with tau from lo_s to hi_s: on
 * the grid, then by Brent's method around the best grid point (noise-free
 * readings leave no room for the grid's step). */
static double prior_best_exp1(const struct honest *h, double lo_s, double hi_s) {
        double ulo = fmax(log(lo_s), h->umin), uhi = fmin(log(hi_s), h->umax), du = (uhi - ulo) / (PRIOR_GRID - 1);
        double best = INFINITY, ubest = NAN, tinf, a, fx;

        for (size_t i = 0; ulo <= uhi && i < PRIOR_GRID; i++) {
                double sse = exp1_sse(&h->b, exp(ulo + du * (double) i), &tinf, &a, NULL);
                if (isfinite(sse) && h->sc.sign * a > 0 && sse < best)
                        best = sse, ubest = ulo + du * (double) i;
        }
        if (isnan(ubest) || !(du > 0))
                return best;
        double u = brent_min(exp1_objective, (void *) &h->b, fmax(ubest - du, ulo), fmin(ubest + du, uhi), U_TOL, &fx);
        double sse = exp1_sse(&h->b, exp(u), &tinf, &a, NULL);
        return isfinite(sse) && h->sc.sign * a > 0 ? fmin(best, sse) : best;
}

/* Whether the data contradict the prior: its best fit is significantly
 * worse than the free one, or the time constant of one exponential fitted
 * to them has its 95 % region outside the range (widened by PRIOR_BLEND
 * downwards). */
static bool prior_contradicted(const struct honest *h, double best, double best1, double thr_add) {
        double free_best = h->sse1;

        if (honest_exp2_physical(h, &h->f2))
                free_best = fmin(free_best, h->sse2);
        if (best - free_best > thr_add)
                return true;
        /* one exponential's time constant is pinned down elsewhere (a faster
         * part beside the prior's may fit as well: the simpler curve wins) */
        return !h->f1.tau_at_bound && best1 - h->sse1 > thr_add;
}

/* The fit the prior prefers, with the interval of the profile over pts. */
static void prior_fit_set(const struct analysis_fit *f, const struct prior_point *best, const struct prior_point *pts,
                          size_t np, double thr, double quant_bias, struct analysis_fit *ret) {
        double lo = INFINITY, hi = -INFINITY;

        for (size_t i = 0; i < np; i++) {
                if (!(pts[i].sse <= thr))
                        continue;
                double d = sqrt((thr - pts[i].sse) * pts[i].v);
                lo = fmin(lo, pts[i].tinf - d);
                hi = fmax(hi, pts[i].tinf + d);
        }
        *ret = *f;
        ret->model = isnan(best->tau_fast) ? ANALYSIS_MODEL_EXP1 : ANALYSIS_MODEL_EXP2;
        ret->t_inf_c = best->tinf;
        ret->a_c = best->a;
        ret->tau_s = best->tau;
        ret->a_fast_c = isnan(best->tau_fast) ? 0 : best->a_fast;
        ret->tau_fast_s = best->tau_fast;
        ret->t0_c = best->tinf - ret->a_c - ret->a_fast_c;
        ret->tau_at_bound = false;
        ret->quant_bias_c = quant_bias;
        ret->ci95_c = 0;
        fit_set_interval(ret, lo, hi);
        ret->unbounded = false;
}

int honest_prior(const struct honest *h, struct analysis_fit *f, const struct honest_stats *st) {
        double tq = student_t975(st->df), thr_add = tq * tq * st->s2;
        struct prior_point *pts;
        struct analysis_fit g;

        f->prior_use = ANALYSIS_PRIOR_NOT_NEEDED;
        if (h->span >= ANALYSIS_PRIOR_SPANS * h->prior->tau_s || !isfinite(thr_add))
                return 0;
        pts = malloc(PRIOR_GRID * (PRIOR_FAST_MAX + 1) * sizeof *pts);
        if (!pts)
                return -ENOMEM;
        size_t np = prior_scan(h, pts);
        const struct prior_point *best = prior_best(pts, np);
        double best1 = prior_best_exp1(h, h->prior->low_s / PRIOR_BLEND, h->prior->high_s);
        if (!best || prior_contradicted(h, fmin(best->sse, prior_best_exp1(h, h->prior->low_s, h->prior->high_s)),
                                        best1, thr_add))
                f->prior_use = ANALYSIS_PRIOR_CONTRADICTED;
        else {
                prior_fit_set(f, best, pts, np, best->sse + PRIOR_JOINT * thr_add, st->quant_bias, &g);
                /* the prior only narrows */
                if (f->unbounded || !(f->high_c - f->low_c <= g.high_c - g.low_c)) {
                        *f = g;
                        f->prior_use = ANALYSIS_PRIOR_USED;
                }
        }
        free(pts);
        return 0;
}
