/* plateau-interval.c — the 95 % interval of the plateau: the profile of T_inf under a wide model, by NNLS. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "analysis-internal.h"

/* See plateau.c for the method. */
#define NNLS_MAX_ACTIVE         12
#define PROFILE_TOL_C           0.005   /* interval ends to this precision */

/* Cholesky solve of the active columns P (np of them) of the raw Gram
 * matrix; false when singular. */
static bool nnls_solve(const struct scan *sc, const size_t *P, size_t np, const double *rhs, double *x) {
        double l[NNLS_MAX_ACTIVE][NNLS_MAX_ACTIVE], y[NNLS_MAX_ACTIVE];
        size_t nu = sc->nu;

        for (size_t i = 0; i < np; i++)
                for (size_t j = 0; j <= i; j++) {
                        double s = sc->raw[P[i] * nu + P[j]];
                        if (i == j)
                                s *= 1 + 1e-11;         /* ridge: neighbouring columns are nearly collinear */
                        for (size_t r = 0; r < j; r++)
                                s -= l[i][r] * l[j][r];
                        if (i == j) {
                                if (!(s > 0))
                                        return false;
                                l[i][i] = sqrt(s);
                        } else
                                l[i][j] = s / l[j][j];
                }
        for (size_t i = 0; i < np; i++) {
                double s = rhs[P[i]];
                for (size_t r = 0; r < i; r++)
                        s -= l[i][r] * y[r];
                y[i] = s / l[i][i];
        }
        for (size_t i = np; i-- > 0;) {
                double s = y[i];
                for (size_t r = i + 1; r < np; r++)
                        s -= l[r][i] * x[r];
                x[i] = s / l[i][i];
        }
        return true;
}

/* Adds column j to the active set P and solves; Lawson-Hanson's inner
 * loop steps back to feasibility where an amplitude would go negative.
 * False when j did not stay in the set (rounding): the caller stops. */
static bool nnls_enter(const struct scan *sc, size_t *P, size_t *np, size_t j, double *a, const double *rhs) {
        double x[NNLS_MAX_ACTIVE];

        P[(*np)++] = j;
        while (*np > 0 && nnls_solve(sc, P, *np, rhs, x)) {
                double alpha = 1, amax = 0;
                size_t i, keep = 0;
                for (i = 0; i < *np && x[i] > 0; i++)
                        ;
                if (i == *np) {
                        for (i = 0; i < *np; i++)
                                a[P[i]] = x[i];
                        break;
                }
                for (i = 0; i < *np; i++) {
                        if (x[i] <= 0)
                                alpha = fmin(alpha, a[P[i]] / (a[P[i]] - x[i]));
                        amax = fmax(amax, a[P[i]]);
                }
                for (i = 0; i < *np; i++) {
                        a[P[i]] += alpha * (x[i] - a[P[i]]);
                        if (a[P[i]] > 1e-14 * amax)
                                P[keep++] = P[i];
                        else
                                a[P[i]] = 0;
                }
                if (keep == *np)
                        break;
                *np = keep;
        }
        for (size_t i = 0; i < *np; i++)
                if (P[i] == j)
                        return a[j] > 0;
        return false;
}

/*
 * Profile SSE at a fixed level T (in sign * C): min over amplitudes a >= 0
 * of sum w (ys - T + sum a_k e_k)^2 with Lawson-Hanson's active set method
 * on the normal equations, rhs = sum w e_k (T - ys).
 */
static double nnls_profile(const struct scan *sc, double T, double *a, double *rhs) {
        size_t nu = sc->nu, P[NNLS_MAX_ACTIVE], np = 0;
        double zz = T * T * sc->sw - 2 * T * sc->sy + sc->syy, at = 0, tol = 1e-13 * (fabs(zz) + sc->sw);

        for (size_t k = 0; k < nu; k++) {
                rhs[k] = T * sc->e1[k] - sc->ey[k];
                a[k] = 0;
        }
        while (np < NNLS_MAX_ACTIVE) {
                size_t jmax = nu;
                double wmax = tol;
                for (size_t k = 0; k < sc->nu_wide; k++) {
                        if (a[k] > 0)
                                continue;
                        double w = rhs[k];
                        for (size_t i = 0; i < np; i++)
                                w -= sc->raw[k * nu + P[i]] * a[P[i]];
                        if (w > wmax)
                                wmax = w, jmax = k;
                }
                if (jmax == nu || !nnls_enter(sc, P, &np, jmax, a, rhs))
                        break;
        }
        for (size_t i = 0; i < np; i++)
                at += a[P[i]] * rhs[P[i]];
        return fmax(zz - at, 0.0);
}

/* The profile of T_inf (in sign * C) under the wide model: its minimum,
 * then each end where it crosses min + thr_add, by doubling steps and
 * bisection. An end beyond PROFILE_FAR_C counts as unbounded. */
#define PROFILE_FAR_C   1000.0

struct profile {
        const struct scan *sc;
        double *a, *rhs;
};

static double profile_objective(double T, void *ctx) {
        struct profile *p = ctx;
        return nnls_profile(p->sc, T, p->a, p->rhs);
}

static double profile_end(struct profile *p, double tmin, double thr, double step, double dir) {
        double in = tmin, out = NAN;

        for (int k = 0; k < 40 && step < PROFILE_FAR_C; k++, step *= 2) {
                double T = tmin + dir * step;
                if (profile_objective(T, p) > thr) {
                        out = T;
                        break;
                }
                in = T;
        }
        if (isnan(out))
                return dir * INFINITY;
        /* each halving must move: far from 0 two doubles can be further
         * apart than the tolerance with no double between them */
        for (int k = 0; k < 200 && fabs(out - in) > PROFILE_TOL_C; k++) {
                double mid = 0.5 * (in + out);
                if (mid == in || mid == out)
                        break;
                if (profile_objective(mid, p) > thr)
                        out = mid;
                else
                        in = mid;
        }
        return out;
}

/* The residual variance of the wide model's best fit (amplitudes in p->a
 * at level T), widened for the lag-1 autocorrelation of its residuals. */
static double profile_s2(const struct honest *h, const struct profile *p, double T, double sse) {
        const struct series *b = &h->b;
        const struct scan *sc = &h->sc;
        double lag = 0, prev = 0, sum = 0;
        size_t active = 0;

        for (size_t k = 0; k < sc->nu_wide; k++)
                active += p->a[k] > 0;
        for (size_t j = 0; j < b->n; j++) {
                double r = sc->sign * b->y[j] - T;
                for (size_t k = 0; k < sc->nu_wide; k++)
                        if (p->a[k] > 0)
                                r += p->a[k] * (sc->col[k * b->n + j] +
                                                column_shift(exp(sc->umin + sc->du * (double) k), b->span));
                double z = sqrt(b->w[j]) * r;
                if (j > 0)
                        lag += z * prev;
                prev = z;
                sum += z * z;
        }
        double df = (double) b->n - (double) (active + 1);
        if (!(df > 0) || !(sum > 0))
                return INFINITY;
        double rho = fmin(fmax(lag / sum, 0.0), RHO_MAX);
        return sse / df * (1 + rho) / (1 - rho);
}

static int honest_profile(struct honest *h, double centre, double step, double *thr_add, double tq,
                          double *lo, double *hi) {
        struct profile p = { .sc = &h->sc };
        double c = h->sc.sign * centre, a, b, fx, tmin;

        p.a = malloc(2 * h->sc.nu * sizeof(double));
        if (!p.a)
                return -ENOMEM;
        p.rhs = p.a + h->sc.nu;
        /* bracket the minimum of the convex profile around the point estimate */
        double fc = profile_objective(c, &p);
        a = c - step, b = c + step;
        for (int k = 0; k < 30; k++, step *= 2) {
                double fa = profile_objective(a, &p);
                if (!(fa < fc))
                        break;
                b = c, c = a, fc = fa, a -= 2 * step;
        }
        for (int k = 0; k < 30; k++, step *= 2) {
                double fb = profile_objective(b, &p);
                if (!(fb < fc))
                        break;
                a = c, c = b, fc = fb, b += 2 * step;
        }
        tmin = brent_min(profile_objective, &p, a, b, PROFILE_TOL_C * 0.2, &fx);
        if (!(fabs(tmin - h->sc.sign * centre) <= PROFILE_FAR_C)) {
                /* a minimum run off to no temperature at all: the data bound nothing */
                *lo = -INFINITY;
                *hi = INFINITY;
                free(p.a);
                return 0;
        }
        /* with a horizon the wide model holds every curve it allows: its own
         * residuals measure the noise when the chosen model misfits */
        if (isfinite(h->horizon)) {
                fx = profile_objective(tmin, &p);
                *thr_add = fmin(*thr_add, tq * tq * profile_s2(h, &p, tmin, fx));
        }
        double t1 = profile_end(&p, tmin, fx + *thr_add, PROFILE_TOL_C * 4, 1);
        double t2 = profile_end(&p, tmin, fx + *thr_add, PROFILE_TOL_C * 4, -1);
        *lo = fmin(h->sc.sign * t1, h->sc.sign * t2);
        *hi = fmax(h->sc.sign * t1, h->sc.sign * t2);
        free(p.a);
        return 0;
}

/* exp2 grid points within the threshold, slow tau up to
 * ANALYSIS_TAU_MAX_SPANS spans: how far a slow part beyond the data may
 * take the plateau. */
static void honest_exp2_profile(const struct honest *h, double thr, double *lo, double *hi) {
        for (size_t i = 0; i < h->n2; i++) {
                const struct profile_point *p = h->p2 + i;
                if (!(p->sse <= thr))
                        continue;
                double d = sqrt((thr - p->sse) * p->v);
                *lo = fmin(*lo, p->tinf - d);
                *hi = fmax(*hi, p->tinf + d);
        }
}

/* Whether an exp2 fit is a heated body's curve: both parts go the way of
 * the whole rise. */
bool honest_exp2_physical(const struct honest *h, const struct analysis_fit *f) {
        return f->model == ANALYSIS_MODEL_EXP2 && h->sc.sign * f->a_c > 0 && h->sc.sign * f->a_fast_c > 0;
}

/* The widest of: the chosen model's linearised interval, the exp2 grid
 * profile, the other model's optimum when physical, and the profile
 * interval under the wide model; plus the quantisation bias bound.
 * Unbounded when exp1 sees no curvature. */
int honest_interval(struct honest *h, struct analysis_fit *f, const struct honest_stats *st) {
        double tq = student_t975(st->df), half = tq * sqrt(st->s2 * st->factor), lo, hi;
        double thr_add = tq * tq * st->s2;
        int r;

        f->quant_bias_c = st->quant_bias;
        if (!isfinite(half) || (f->model == ANALYSIS_MODEL_EXP1 && h->umax - log(f->tau_s) < 1e-3)) {
                f->ci95_c = INFINITY;
                fit_set_interval(f, -INFINITY, INFINITY);
                return 0;
        }
        r = honest_profile(h, f->t_inf_c, fmax(half, 0.05), &thr_add, tq, &lo, &hi);
        if (r < 0)
                return r;
        half = fmin(half, sqrt(thr_add * st->factor));
        lo = fmin(lo, f->t_inf_c - half);
        hi = fmax(hi, f->t_inf_c + half);
        double best = fmin(h->sse1, h->f2.model == ANALYSIS_MODEL_EXP2 ? h->sse2 : INFINITY);
        honest_exp2_profile(h, best + thr_add, &lo, &hi);
        if (honest_exp2_physical(h, &h->f2) && h->sse2 <= h->sse1 + thr_add) {
                lo = fmin(lo, h->f2.t_inf_c);
                hi = fmax(hi, h->f2.t_inf_c);
        }
        fit_set_interval(f, lo, hi);
        return 0;
}
