/* exp1.c — one exponential: linear part in closed form, a log grid over tau, Brent's method on the raw samples. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "analysis-internal.h"

#define GRID1_RATIO     1.12    /* exp1 tau grid step */

double exp1_sse(const struct series *s, double tau, double *ret_tinf, double *ret_a, double *ret_v) {
        struct decay d;
        double shift = column_shift(tau, s->span), sc = 0, scc = 0, scy = 0;

        decay_init(&d, tau, s->dt0);
        for (size_t i = 0; i < s->n; i++) {
                double w = s->w ? s->w[i] : 1.0;
                double c = decay_at(&d, s->t[i] - s->t0) - shift;
                sc += w * c;
                scc += w * c * c;
                scy += w * c * (s->y[i] - s->ybar);
        }
        double cc = scc - sc * sc / s->wsum;
        if (!(cc > 1e-14 * scc) || !(cc > 0))
                return INFINITY;
        double beta = scy / cc, alpha = s->ybar - beta * sc / s->wsum;
        if (ret_tinf)
                *ret_tinf = alpha - beta * shift;
        if (ret_a)
                *ret_a = -beta;
        if (ret_v)      /* Var(T_inf) / sigma^2 at this fixed tau */
                *ret_v = 1 / s->wsum + (sc / s->wsum + shift) * (sc / s->wsum + shift) / cc;
        return fmax(s->syy - beta * scy, 0.0);
}

double exp1_objective(double u, void *ctx) {
        return exp1_sse(ctx, exp(u), NULL, NULL, NULL);
}

/* Coarse log grid over tau on the bins; returns the best grid index. */
static int exp1_grid(const struct series *s, double umin, double du, size_t nu,
                     struct profile_point *prof, size_t *ret) {
        struct series bins;
        double best = INFINITY;
        int r = bins_init(s, &bins);

        if (r < 0)
                return r;
        for (size_t k = 0; k < nu; k++) {
                struct profile_point *p = prof + k;
                p->sse = exp1_sse(&bins, exp(umin + du * (double) k), &p->tinf, NULL, &p->v) + s->syy - bins.syy;
                p->edge = k == nu - 1;
                if (p->sse < best) {
                        best = p->sse;
                        *ret = k;
                }
        }
        series_done(&bins);
        return isfinite(best) ? 0 : -EDOM;
}

static int exp1_refine(const struct series *s, double umin, double umax, double du, size_t nu, size_t kbest,
                       struct analysis_fit *ret) {
        double lo = umin + du * (double) (kbest > 0 ? kbest - 1 : 0);
        double hi = umin + du * (double) (kbest + 1 < nu ? kbest + 1 : nu - 1);
        double fx, tinf, a, u = brent_min(exp1_objective, (void *) s, lo, hi, U_TOL, &fx);

        if (!isfinite(exp1_sse(s, exp(u), &tinf, &a, NULL)))
                return -EDOM;
        *ret = (struct analysis_fit) {
                .model = ANALYSIS_MODEL_EXP1,
                .t_origin_s = s->t0,
                .t_inf_c = tinf,
                .t0_c = tinf - a,
                .a_c = a,
                .tau_s = exp(u),
                .tau_fast_s = NAN,
                .tau_at_bound = umax - u < 1e-3 || u - umin < 1e-3,
        };
        return 0;
}

int exp1_fit_series(const struct series *s, struct analysis_fit *ret) {
        struct profile_point *prof;
        double umin, umax;
        size_t kbest = 0, nu;
        int r;

        if (!(s->syy > 0))
                return -EDOM;
        tau_range(s, &umin, &umax);
        nu = (size_t) ceil((umax - umin) / log(GRID1_RATIO)) + 1;
        double du = (umax - umin) / (double) (nu - 1);
        prof = malloc(nu * sizeof(struct profile_point));
        if (!prof)
                return -ENOMEM;
        r = exp1_grid(s, umin, du, nu, prof, &kbest);
        if (r >= 0)
                r = exp1_refine(s, umin, umax, du, nu, kbest, ret);
        if (r >= 0) {
                double thr = fit_finish(s, ret, umax - log(ret->tau_s) < 1e-3);
                fit_profile_ci(ret, prof, nu, thr);
        }
        free(prof);
        return r;
}

int analysis_fit_exp1(const double *t_s, const double *temp_c, size_t n, struct analysis_fit *ret) {
        struct series s;
        int r;

        if (!ret)
                return -EINVAL;
        r = series_init(&s, t_s, temp_c, n, 4);
        if (r >= 0)
                r = exp1_fit_series(&s, ret);
        series_done(&s);
        return r;
}

int analysis_fit_exp1_after(const double *t_s, const double *temp_c, size_t n,
                            double tau_fast_s, double k, struct analysis_fit *ret) {
        size_t i = 0;

        if (!t_s || !temp_c || n == 0 || !(tau_fast_s >= 0) || !(k >= 0) || !isfinite(tau_fast_s * k))
                return -EINVAL;
        while (i < n && !(t_s[i] >= t_s[0] + k * tau_fast_s))
                i++;
        return analysis_fit_exp1(t_s + i, temp_c + i, n - i, ret);
}
