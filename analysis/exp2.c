/* exp2.c — two exponentials: a 2-D log grid on the bins, Nelder-Mead on the raw samples; exp1 or exp2 by BIC. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "analysis-internal.h"

#define GRID2_RATIO     1.40    /* exp2 tau grid step (coarse, refined by Nelder-Mead) */
#define RUNS_Z_STRUCTURED (-3.0)

double exp2_solve(double c11, double c22, double c12, double y1, double y2,
                  double syy, double *b1, double *b2) {
        double det = c11 * c22 - c12 * c12;

        if (!(c11 > 0) || !(c22 > 0) || !(det > 1e-12 * c11 * c22))
                return INFINITY;
        *b1 = (c22 * y1 - c12 * y2) / det;
        *b2 = (c11 * y2 - c12 * y1) / det;
        return fmax(syy - *b1 * y1 - *b2 * y2, 0.0);
}

double exp2_sse(const struct series *s, double tau_fast, double tau, struct exp2_params *ret) {
        struct decay d1, d2;
        double h1 = column_shift(tau_fast, s->span), h2 = column_shift(tau, s->span);
        double s1 = 0, s2 = 0, s11 = 0, s22 = 0, s12 = 0, s1y = 0, s2y = 0, b1, b2;

        decay_init(&d1, tau_fast, s->dt0);
        decay_init(&d2, tau, s->dt0);
        for (size_t i = 0; i < s->n; i++) {
                double w = s->w ? s->w[i] : 1.0, tt = s->t[i] - s->t0, dy = s->y[i] - s->ybar;
                double c1 = decay_at(&d1, tt) - h1, c2 = decay_at(&d2, tt) - h2;
                s1 += w * c1;
                s2 += w * c2;
                s11 += w * c1 * c1;
                s22 += w * c2 * c2;
                s12 += w * c1 * c2;
                s1y += w * c1 * dy;
                s2y += w * c2 * dy;
        }
        double W = s->wsum;
        double sse = exp2_solve(s11 - s1 * s1 / W, s22 - s2 * s2 / W, s12 - s1 * s2 / W,
                                s1y, s2y, s->syy, &b1, &b2);
        if (ret && isfinite(sse)) {
                double m1 = s1 / W + h1, m2 = s2 / W + h2, c11 = s11 - s1 * s1 / W, c22 = s22 - s2 * s2 / W;
                double c12 = s12 - s1 * s2 / W;
                ret->tinf = s->ybar - b1 * m1 - b2 * m2;
                ret->a_fast = -b1;
                ret->a = -b2;
                ret->v = 1 / W + (c22 * m1 * m1 - 2 * c12 * m1 * m2 + c11 * m2 * m2) / (c11 * c22 - c12 * c12);
        }
        return sse;
}

/* Per-column sums of the coarse exp2 grid, columns precomputed on the bins. */
struct exp2_grid {
        size_t nu, nb;
        double *col, *h, *sc, *scc, *scy;       /* col: nu x nb */
};

static int exp2_grid_init(struct exp2_grid *g, const struct series *b, double umin, double du) {
        g->col = malloc((g->nu * b->n + 4 * g->nu) * sizeof(double));
        if (!g->col)
                return -ENOMEM;
        g->nb = b->n;
        g->h = g->col + g->nu * b->n;
        g->sc = g->h + g->nu;
        g->scc = g->sc + g->nu;
        g->scy = g->scc + g->nu;
        for (size_t k = 0; k < g->nu; k++) {
                double tau = exp(umin + du * (double) k), h = column_shift(tau, b->span);
                double *c = g->col + k * b->n, sc = 0, scc = 0, scy = 0;
                for (size_t j = 0; j < b->n; j++) {
                        c[j] = exp(-b->t[j] / tau) - h;
                        sc += b->w[j] * c[j];
                        scc += b->w[j] * c[j] * c[j];
                        scy += b->w[j] * c[j] * (b->y[j] - b->ybar);
                }
                g->h[k] = h, g->sc[k] = sc, g->scc[k] = scc, g->scy[k] = scy;
        }
        return 0;
}

/* SSE (on the bins), T_inf and its unscaled variance at grid taus i < k. */
static void exp2_grid_pair(const struct exp2_grid *g, const struct series *b, size_t i, size_t k,
                           struct profile_point *p) {
        const double *ci = g->col + i * g->nb, *ck = g->col + k * g->nb;
        double s12 = 0, W = b->wsum, b1, b2;

        for (size_t j = 0; j < g->nb; j++)
                s12 += b->w[j] * ci[j] * ck[j];
        double c11 = g->scc[i] - g->sc[i] * g->sc[i] / W, c22 = g->scc[k] - g->sc[k] * g->sc[k] / W;
        double c12 = s12 - g->sc[i] * g->sc[k] / W;
        p->sse = exp2_solve(c11, c22, c12, g->scy[i], g->scy[k], b->syy, &b1, &b2);
        p->edge = k == g->nu - 1;
        if (!isfinite(p->sse))
                return;
        double m1 = g->sc[i] / W + g->h[i], m2 = g->sc[k] / W + g->h[k], det = c11 * c22 - c12 * c12;
        p->tinf = b->ybar - b1 * m1 - b2 * m2;
        p->v = 1 / W + (c22 * m1 * m1 - 2 * c12 * m1 * m2 + c11 * m2 * m2) / det;
}

/* Coarse grid on the bins: best (ln tau_fast, ln tau), and every pair as a
 * profile point (*ret_prof, to be freed). */
static int exp2_grid_search(const struct series *s, const struct series *bins, double umin, double umax,
                            double u[2], double *ret_du, struct profile_point **ret_prof, size_t *ret_np) {
        struct exp2_grid g = { .nu = (size_t) ceil((umax - umin) / log(GRID2_RATIO)) + 1 };
        double best = INFINITY, du = (umax - umin) / (double) (g.nu - 1);
        size_t dmin = (size_t) ceil(log(EXP2_MIN_RATIO) / du - 1e-9), np = 0;
        struct profile_point *prof = malloc(g.nu * g.nu / 2 * sizeof(struct profile_point) + 1);
        int r = prof ? exp2_grid_init(&g, bins, umin, du) : -ENOMEM;

        for (size_t i = 0; r >= 0 && i < g.nu; i++)
                for (size_t k = i + dmin; k < g.nu; k++) {
                        struct profile_point *p = prof + np++;
                        exp2_grid_pair(&g, bins, i, k, p);
                        p->sse += s->syy - bins->syy;
                        if (p->sse < best) {
                                best = p->sse;
                                u[0] = umin + du * (double) i;
                                u[1] = umin + du * (double) k;
                        }
                }
        free(g.col);
        if (r >= 0 && !isfinite(best))
                r = -EDOM;
        if (r < 0) {
                free(prof);
                return r;
        }
        *ret_du = du;
        *ret_prof = prof;
        *ret_np = np;
        return 0;
}

/* Keeps umin <= u0, u0 + ln 1.5 <= u1 <= umax; returns the squared move. */
static double exp2_project(const struct exp2_ctx *x, const double u[2], double p[2]) {
        double lr = log(EXP2_MIN_RATIO);

        p[0] = fmin(fmax(u[0], x->umin), x->umax - lr);
        p[1] = fmin(fmax(u[1], p[0] + lr), x->umax);
        return (p[0] - u[0]) * (p[0] - u[0]) + (p[1] - u[1]) * (p[1] - u[1]);
}

double exp2_objective(const double u[2], void *ctx) {
        const struct exp2_ctx *x = ctx;
        double p[2], d = exp2_project(x, u, p);

        return exp2_sse(x->s, exp(p[0]), exp(p[1]), NULL) + d * (x->s->syy + 1);
}

/* (ln tau_fast, ln tau): coarse grid and Nelder-Mead on the bins, then a
 * short Nelder-Mead polish on the raw samples (a raw evaluation costs
 * 20-30 times a binned one). */
static int exp2_search(struct exp2_ctx *x, double u[2], struct profile_point **ret_prof, size_t *ret_np) {
        struct series bins;
        double du;
        int r;

        r = bins_init(x->s, &bins);
        if (r < 0)
                return r;
        r = exp2_grid_search(x->s, &bins, x->umin, x->umax, u, &du, ret_prof, ret_np);
        if (r >= 0) {
                const struct series *raw = x->s;
                x->s = &bins;
                nelder_mead2(exp2_objective, x, u, 0.5 * du, 1e-4, 300);
                x->s = raw;
                nelder_mead2(exp2_objective, x, u, 0.01, 1e-4, 60);
        }
        series_done(&bins);
        return r;
}

int exp2_finish(const struct exp2_ctx *x, const double u[2], struct analysis_fit *ret) {
        struct exp2_params q;
        double p[2];

        exp2_project(x, u, p);
        if (!isfinite(exp2_sse(x->s, exp(p[0]), exp(p[1]), &q)))
                return -EDOM;
        *ret = (struct analysis_fit) {
                .model = ANALYSIS_MODEL_EXP2,
                .t_origin_s = x->s->t0,
                .t_inf_c = q.tinf,
                .t0_c = q.tinf - q.a - q.a_fast,
                .a_c = q.a,
                .tau_s = exp(p[1]),
                .a_fast_c = q.a_fast,
                .tau_fast_s = exp(p[0]),
                .tau_at_bound = x->umax - p[1] < 1e-3 || p[0] - x->umin < 1e-3 ||
                                p[1] - p[0] - log(EXP2_MIN_RATIO) < 1e-3,
        };
        return 0;
}

static int exp2_fit_series(const struct series *s, struct analysis_fit *ret) {
        struct exp2_ctx x = { .s = s };
        struct profile_point *prof = NULL;
        double u[2];
        size_t np = 0;
        int r;

        if (!(s->syy > 0))
                return -EDOM;
        tau_range(s, &x.umin, &x.umax);
        r = exp2_search(&x, u, &prof, &np);
        if (r >= 0)
                r = exp2_finish(&x, u, ret);
        if (r >= 0) {
                double thr = fit_finish(s, ret, x.umax - log(ret->tau_s) < 1e-3);
                fit_profile_ci(ret, prof, np, thr);
        }
        free(prof);
        return r;
}

int analysis_fit_exp2(const double *t_s, const double *temp_c, size_t n, struct analysis_fit *ret) {
        struct series s;
        int r;

        if (!ret)
                return -EINVAL;
        r = series_init(&s, t_s, temp_c, n, 8);
        if (r >= 0)
                r = exp2_fit_series(&s, ret);
        series_done(&s);
        return r;
}

/* BIC difference (exp1 minus exp2) with the effective sample size of exp2's
 * residuals, so that correlated residuals (quantisation) do not count as
 * independent evidence for the bigger model. */
static bool exp2_preferred(const struct analysis_fit *f1, const struct analysis_fit *f2) {
        double rho = fmin(fmax(f2->rho, 0.0), RHO_MAX);
        double neff = (double) f2->n * (1 - rho) / (1 + rho);

        if (f2->tau_at_bound || !(f2->rms_c < f1->rms_c) || neff < 8)
                return false;
        if (f2->rms_c == 0)
                return true;
        double dbic = neff * 2 * log(f1->rms_c / f2->rms_c) - 2 * log(neff);
        return dbic > BIC_MARGIN;
}

int analysis_fit_auto(const double *t_s, const double *temp_c, size_t n, struct analysis_fit *ret) {
        struct analysis_fit f1, f2;
        struct series s;
        int r;

        if (!ret)
                return -EINVAL;
        r = series_init(&s, t_s, temp_c, n, 4);
        if (r >= 0)
                r = exp1_fit_series(&s, &f1);
        if (r >= 0) {
                *ret = f1;
                if (s.n >= 8 && f1.runs_z < RUNS_Z_STRUCTURED &&
                    exp2_fit_series(&s, &f2) >= 0 && exp2_preferred(&f1, &f2))
                        *ret = f2;
        }
        series_done(&s);
        return r;
}
