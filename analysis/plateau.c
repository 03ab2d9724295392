/* plateau.c — the plateau until: plateau and the run's metrics use: exp1 and exp2 on bins, the better by BIC. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "analysis-internal.h"

/*
 * The plateau estimate of until: plateau (analysis_fit_plateau).
 *
 * Everything runs on geometric bins of PLATEAU_BIN_FRACTION: a few hundred
 * points whatever the phase length, so a check costs well under a
 * millisecond at 90 min of 10 Hz samples. A bin mean of an exponential
 * differs from its value at the bin's mean time by under 1e-4 of its
 * amplitude. Weighted by their sample counts, the bins' residual sum of
 * squares estimates the per-sample variance including the short-range
 * correlation inside a bin.
 *
 * The point estimate is exp1 or exp2, whichever BIC prefers. The interval
 * is the union of:
 *  - the chosen model's linearised interval;
 *  - the exp2 profile over a grid of (tau_fast, tau) pairs with both parts
 *    rising, the slow one up to ANALYSIS_TAU_MAX_SPANS spans: a slow part
 *    that the data cannot pin down yet keeps it wide (exp1 and exp2 both
 *    inside: model uncertainty);
 *  - a profile-likelihood interval under a wider model: any sum of
 *    exponentials with time constants up to PROFILE_TAU_SPANS spans and
 *    amplitudes of the rise's sign. A heated body (die, heatsink, case)
 *    answers a step of power with such a sum, never with a part that falls
 *    back, and two, three or more time constants are all inside it; exp2
 *    alone is too low early on a three-time-constant curve. With the time
 *    constants on a dense log grid (SCAN_RATIO apart: a time constant in
 *    between is matched within 0.2 % of its amplitude) the model is linear
 *    in (T_inf, amplitudes) under non-negativity, so the profile SSE(T_inf)
 *    is convex and computed by non-negative least squares.
 * The wider model's slowest time constant is capped at a few spans because
 * with arbitrary slow parts the plateau is not identifiable at all: a part
 * much slower than the data is a ramp whose amplitude can always grow.
 * Coverage and width on two- and three-exponential curves are measured by
 * bench/analysis-corpus.c (figures in bench/analysis.md).
 */
#define PLATEAU_BIN_FRACTION    0.06
#define PLATEAU_NM_EVALS        120
#define SCAN_RATIO              1.25

static void honest_free(struct honest *h) {
        series_done(&h->b);
        free(h->sc.col);
        free(h->p2);
}

static int scan_init(struct scan *sc, const struct series *b, double umin, double umax) {
        size_t nu, nb = b->n;
        double W = b->wsum, *s;

        nu = sc->nu = (size_t) ceil((umax - umin) / log(SCAN_RATIO)) + 1;
        sc->umin = umin;
        sc->du = (umax - umin) / (double) (nu - 1);
        sc->col = malloc((nu * nb + 2 * nu * nu + 6 * nu) * sizeof(double));
        if (!sc->col)
                return -ENOMEM;
        sc->gram = sc->col + nu * nb;
        sc->raw = sc->gram + nu * nu;
        sc->m = sc->raw + nu * nu;
        sc->cy = sc->m + nu;
        sc->e1 = sc->cy + nu;
        sc->ey = sc->e1 + nu;
        s = sc->ey + nu;                /* 2 nu: sum w c_k, shift h_k */
        sc->sw = W, sc->sy = 0, sc->syy = 0;
        for (size_t j = 0; j < nb; j++) {
                sc->sy += b->w[j] * sc->sign * b->y[j];
                sc->syy += b->w[j] * b->y[j] * b->y[j];
        }
        for (size_t k = 0; k < nu; k++) {
                double tau = exp(umin + sc->du * (double) k), h = column_shift(tau, b->span);
                double *c = sc->col + k * nb, sc1 = 0, scy = 0, sey = 0;
                for (size_t j = 0; j < nb; j++) {
                        c[j] = exp(-b->t[j] / tau) - h;
                        sc1 += b->w[j] * c[j];
                        scy += b->w[j] * c[j] * (b->y[j] - b->ybar);
                        sey += b->w[j] * (c[j] + h) * sc->sign * b->y[j];
                }
                s[k] = sc1, s[nu + k] = h;
                sc->m[k] = sc1 / W + h;
                sc->cy[k] = scy;
                sc->e1[k] = sc1 + h * W;
                sc->ey[k] = sey;
        }
        for (size_t i = 0; i < nu; i++)
                for (size_t k = i; k < nu; k++) {
                        const double *ci = sc->col + i * nb, *ck = sc->col + k * nb;
                        double x = 0, hi = s[nu + i], hk = s[nu + k];
                        for (size_t j = 0; j < nb; j++)
                                x += b->w[j] * ci[j] * ck[j];
                        sc->gram[i * nu + k] = sc->gram[k * nu + i] = x - s[i] * s[k] / W;
                        sc->raw[i * nu + k] = sc->raw[k * nu + i] = x + hi * s[k] + hk * s[i] + hi * hk * W;
                }
        return 0;
}

/* Grid search of exp1 and exp2 (time constants EXP2_MIN_RATIO apart): the
 * best points start the refinements, and every exp2 pair is kept as a
 * profile point (slow tau up to ANALYSIS_TAU_MAX_SPANS spans). */
static int scan_best(struct honest *h) {
        const struct scan *sc = &h->sc;
        const struct series *b = &h->b;
        size_t nu = sc->nu, gap = (size_t) ceil(log(EXP2_MIN_RATIO) / sc->du - 1e-9);

        h->best_sse[1] = h->best_sse[2] = INFINITY;
        h->p2 = malloc((nu * nu / 2 + 1) * sizeof(struct profile_point));
        if (!h->p2)
                return -ENOMEM;
        for (size_t i = 0; i < nu; i++) {
                double gi = sc->gram[i * nu + i], sse = gi > 0 ? b->syy - sc->cy[i] * sc->cy[i] / gi : INFINITY;
                if (sse < h->best_sse[1]) {
                        h->best_sse[1] = sse;
                        h->best_ix[1][0] = i;
                }
                for (size_t k = i + gap; k < nu; k++) {
                        double gk = sc->gram[k * nu + k], gik = sc->gram[i * nu + k], b1, b2;
                        sse = exp2_solve(gi, gk, gik, sc->cy[i], sc->cy[k], b->syy, &b1, &b2);
                        if (!isfinite(sse))
                                continue;
                        if (sse < h->best_sse[2]) {
                                h->best_sse[2] = sse;
                                h->best_ix[2][0] = i;
                                h->best_ix[2][1] = k;
                        }
                        if (sc->sign * b1 > 0 || sc->sign * b2 > 0 || k >= h->k_horizon)
                                continue;       /* an amplitude against the rise: not a heated body's curve;
                                                 * or slower than the horizon */
                        double mi = sc->m[i], mk = sc->m[k], det = gi * gk - gik * gik;
                        h->p2[h->n2++] = (struct profile_point) {
                                .sse = sse,
                                .tinf = b->ybar - b1 * mi - b2 * mk,
                                .v = 1 / b->wsum + (gk * mi * mi - 2 * gik * mi * mk + gi * mk * mk) / det,
                        };
                }
        }
        return 0;
}

/* Influence of bin j on T_inf: w_j (1/W - g . (c_j - mean)); the bias bound
 * of fit_quant_bias() with it. */
static double honest_quant_bias(const struct honest *h, const struct analysis_fit *f, const double g[4],
                                const double mean[4], int k, double rms) {
        const struct series *b = &h->b;
        double re[3] = {}, im[3] = {}, c[4], bias = 0;

        if (h->q == 0)
                return 0;
        if (!isfinite(g[0]))
                return INFINITY;
        for (size_t j = 0; j < b->n; j++) {
                double v = fit_columns(f, b->t[j], c), w = 1 / b->wsum;
                for (int a = 0; a < k; a++)
                        w -= g[a] * (c[a] - mean[a]);
                w *= b->w[j];
                for (int m = 0; m < 3; m++) {
                        double th = 2 * M_PI * (m + 1) * (v - h->q_off) / h->q;
                        re[m] += w * cos(th);
                        im[m] += w * sin(th);
                }
        }
        double sigma2 = fmax(rms * rms - h->q * h->q / 12, 0);
        for (int m = 0; m < 3; m++) {
                double hm = m + 1, amp = h->q / (M_PI * hm) * exp(-2 * M_PI * M_PI * hm * hm * sigma2 / (h->q * h->q));
                bias += amp * hypot(re[m], im[m]);
        }
        return bias;
}

static void honest_stats(const struct honest *h, const struct analysis_fit *f, struct honest_stats *ret) {
        const struct series *b = &h->b;
        int k = f->model == ANALYSIS_MODEL_EXP2 ? 4 : 2;
        double c[4], mean[4] = {}, m[4][4] = {}, g[4], lag = 0, zprev = 0, W = b->wsum;
        struct fit_stats st = {};

        *ret = (struct honest_stats) {};
        for (size_t j = 0; j < b->n; j++) {
                double r = b->y[j] - fit_columns(f, b->t[j], c), z = sqrt(b->w[j]) * r;
                ret->sse += z * z;
                if (j > 0)
                        lag += z * zprev;
                zprev = z;
                if (r != 0) {
                        int sign = r > 0 ? 1 : -1;
                        st.runs += sign != st.last_sign;
                        st.last_sign = sign;
                        st.pos += sign > 0;
                        st.neg += sign < 0;
                }
                for (int a = 0; a < k; a++)
                        mean[a] += b->w[j] * c[a] / W;
        }
        for (size_t j = 0; j < b->n; j++) {
                fit_columns(f, b->t[j], c);
                for (int a = 0; a < k; a++)
                        for (int e = 0; e <= a; e++)
                                m[a][e] += b->w[j] * (c[a] - mean[a]) * (c[e] - mean[e]);
        }
        ret->runs_z = stats_runs_z(&st);
        ret->rho = ret->sse > 0 ? fmin(fmax(lag / ret->sse, 0.0), RHO_MAX) : 0.0;
        ret->df = (double) b->n - (k + 1);
        ret->s2 = ret->df > 0 ? ret->sse / ret->df * (1 + ret->rho) / (1 - ret->rho) : INFINITY;
        ret->factor = 1 / W + chol_solve(m, mean, k, g);
        if (!isfinite(ret->factor))
                g[0] = NAN;
        double rms = sqrt((ret->sse + h->within) / (double) h->n_raw);
        ret->quant_bias = honest_quant_bias(h, f, g, mean, k, rms);
}

/* exp1 by Brent's method around the best one-term grid point. */
static int honest_exp1(struct honest *h) {
        double lo = h->umin + h->sc.du * ((double) h->best_ix[1][0] - 1);
        double hi = h->umin + h->sc.du * ((double) h->best_ix[1][0] + 1);
        double fx, tinf, a, u;

        if (!isfinite(h->best_sse[1]))
                return -EDOM;
        u = brent_min(exp1_objective, &h->b, fmax(lo, h->umin), fmin(hi, h->umax), U_TOL, &fx);
        h->sse1 = exp1_sse(&h->b, exp(u), &tinf, &a, NULL);
        if (!isfinite(h->sse1))
                return -EDOM;
        h->f1 = (struct analysis_fit) {
                .model = ANALYSIS_MODEL_EXP1,
                .t_inf_c = tinf,
                .t0_c = tinf - a,
                .a_c = a,
                .tau_s = exp(u),
                .tau_fast_s = NAN,
                .tau_at_bound = h->umax - u < 1e-3 || u - h->umin < 1e-3,
        };
        return 0;
}

/* exp2 by Nelder-Mead from the best two-term grid point. */
static void honest_exp2(struct honest *h) {
        struct exp2_ctx x = { .s = &h->b, .umin = h->umin, .umax = h->umax };
        double u[2];

        h->f2.model = ANALYSIS_MODEL_NONE;
        if (h->b.n < 8 || !isfinite(h->best_sse[2]))
                return;
        u[0] = h->umin + h->sc.du * (double) h->best_ix[2][0];
        u[1] = h->umin + h->sc.du * (double) h->best_ix[2][1];
        nelder_mead2(exp2_objective, &x, u, 0.5 * h->sc.du, 1e-4, PLATEAU_NM_EVALS);
        if (exp2_finish(&x, u, &h->f2) < 0) {
                h->f2.model = ANALYSIS_MODEL_NONE;
                return;
        }
        h->sse2 = exp2_sse(&h->b, h->f2.tau_fast_s, h->f2.tau_s, NULL);
}

/* exp2 for the point estimate when it beats exp1 on BIC, counted with the
 * effective number of bins. */
static bool honest_exp2_preferred(const struct honest *h, const struct honest_stats *s2) {
        if (!honest_exp2_physical(h, &h->f2) || h->f2.tau_at_bound || !(h->sse2 < h->sse1))
                return false;
        double neff = (double) h->b.n * (1 - s2->rho) / (1 + s2->rho);
        if (neff < 8)
                return false;
        return (h->sse1 - h->sse2) / s2->s2 - 2 * log(neff) > BIC_MARGIN;
}

static int honest_run(struct honest *h, const struct series *s, struct analysis_fit *ret) {
        struct honest_stats st1, st2, *st;
        int r;

        h->t0 = s->t0;
        h->n_raw = s->n;
        h->span = s->span;
        h->q = series_quantum(s, &h->q_off);
        r = bins_init_fraction(s, PLATEAU_BIN_FRACTION, &h->b);
        if (r < 0)
                return r;
        h->within = h->b.within;
        if (!(h->b.syy + h->within > 0))
                return -EDOM;   /* a flat line */
        tau_range(s, &h->umin, &h->umax);
        /* heating or cooling: the last bins against the first */
        h->sc.sign = h->b.y[h->b.n - 1] >= h->b.y[0] ? 1 : -1;
        r = scan_init(&h->sc, &h->b, h->umin, h->umax);
        if (r < 0)
                return r;
        while (h->sc.nu_wide < h->sc.nu &&
               h->umin + h->sc.du * (double) h->sc.nu_wide <= log(fmin(PROFILE_TAU_SPANS * s->span, h->horizon)) + 1e-9)
                h->sc.nu_wide++;
        h->k_horizon = 0;
        while (h->k_horizon < h->sc.nu && h->umin + h->sc.du * (double) h->k_horizon <= log(h->horizon) + 1e-9)
                h->k_horizon++;
        r = scan_best(h);
        if (r < 0)
                return r;
        r = honest_exp1(h);
        if (r < 0)
                return r;
        honest_exp2(h);
        honest_stats(h, &h->f1, &st1);
        *ret = h->f1;
        st = &st1;
        if (h->f2.model == ANALYSIS_MODEL_EXP2) {
                honest_stats(h, &h->f2, &st2);
                if (honest_exp2_preferred(h, &st2)) {
                        *ret = h->f2;
                        st = &st2;
                }
        }
        ret->t_origin_s = h->t0;
        ret->n = h->n_raw;
        ret->rms_c = sqrt((st->sse + h->within) / (double) h->n_raw);
        ret->rho = st->rho;
        ret->runs_z = st->runs_z;
        r = honest_interval(h, ret, st);
        if (r >= 0 && h->prior)
                r = honest_prior(h, ret, st);
        return r;
}

int honest_fit(const struct series *s, double horizon_s, const struct analysis_prior *prior,
               struct analysis_fit *ret) {
        struct honest h = { .horizon = horizon_s, .prior = prior };
        int r = honest_run(&h, s, ret);

        honest_free(&h);
        return r;
}

int analysis_fit_plateau(const double *t_s, const double *temp_c, size_t n, struct analysis_fit *ret) {
        struct series s;
        int r;

        if (!ret)
                return -EINVAL;
        r = series_init_stats(&s, t_s, temp_c, n, 4, false);
        if (r >= 0)
                r = honest_fit(&s, INFINITY, NULL, ret);
        series_done(&s);
        return r;
}
