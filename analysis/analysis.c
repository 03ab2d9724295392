/* analysis.c — exponential curve fits, stop rules and run metrics; pure functions, no I/O. */
#include "analysis.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define GRID1_RATIO     1.12    /* exp1 tau grid step */
#define GRID2_RATIO     1.40    /* exp2 tau grid step (coarse, refined by Nelder-Mead) */
#define EXP2_MIN_RATIO  1.5     /* tau / tau_fast */
#define BIN_FRACTION    0.03    /* bin width, as a share of the time since the first sample */
#define U_TOL           1e-5    /* tolerance on ln(tau) */
#define RUNS_Z_STRUCTURED (-3.0)
#define BIC_MARGIN      6.0
#define RHO_MAX         0.95
#define DECAY_REANCHOR  256u
#define FREQ_TOLERANCE  0.005   /* below max_allowed by more than 0.5 %: throttled */

const char *analysis_model_to_string(enum analysis_model m) {
        switch (m) {
        case ANALYSIS_MODEL_EXP1:
                return "exp1";
        case ANALYSIS_MODEL_EXP2:
                return "exp2";
        default:
                return NULL;
        }
}

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

static void series_done(struct series *s) {
        free(s->owned);
        s->owned = NULL;
}

static void series_stats(struct series *s) {
        double sw = 0, swy = 0, syy = 0;

        for (size_t i = 0; i < s->n; i++) {
                double w = s->w ? s->w[i] : 1.0;
                sw += w;
                swy += w * s->y[i];
        }
        s->wsum = sw;
        s->ybar = swy / sw;
        for (size_t i = 0; i < s->n; i++) {
                double w = s->w ? s->w[i] : 1.0, d = s->y[i] - s->ybar;
                syy += w * d * d;
        }
        s->syy = syy;
        s->span = s->t[s->n - 1] - s->t[0];
        s->dt0 = s->n > 1 ? s->span / (double) (s->n - 1) : 0;
}

/* Checks times, drops NaN temperatures (copying only when there are any);
 * with_stats false leaves wsum, ybar and syy unset (saves two passes). */
static int series_init_stats(struct series *s, const double *t, const double *y, size_t n, size_t min_n,
                             bool with_stats) {
        size_t m = 0;
        double last = -INFINITY;

        *s = (struct series) {};
        if (!t || !y)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                if (isnan(y[i]))
                        continue;
                if (!isfinite(y[i]) || !isfinite(t[i]) || t[i] <= last)
                        return -EINVAL;
                last = t[i];
                m++;
        }
        if (m < min_n)
                return -ENODATA;
        s->t = t;
        s->y = y;
        s->n = m;
        if (m < n) {
                double *buf = malloc(2 * m * sizeof(double));
                if (!buf)
                        return -ENOMEM;
                for (size_t i = 0, k = 0; i < n; i++)
                        if (!isnan(y[i])) {
                                buf[k] = t[i];
                                buf[m + k++] = y[i];
                        }
                s->owned = buf;
                s->t = buf;
                s->y = buf + m;
        }
        s->t0 = s->t[0];
        if (with_stats)
                series_stats(s);
        else {
                s->span = s->t[s->n - 1] - s->t[0];
                s->dt0 = s->n > 1 ? s->span / (double) (s->n - 1) : 0;
        }
        return 0;
}

static int series_init(struct series *s, const double *t, const double *y, size_t n, size_t min_n) {
        return series_init_stats(s, t, y, n, min_n, true);
}

/*
 * Geometric bins for the coarse searches: a bin spans at most BIN_FRACTION
 * of the time elapsed since the first sample, so the first seconds stay
 * sample by sample and the tail is averaged. An exponential's curvature
 * inside such a bin changes the bin mean by under 1e-4 of its amplitude.
 */
static size_t bins_count(const struct series *s, double fraction) {
        size_t nb = 0;

        for (size_t i = 0; i < s->n; nb++) {
                double start = s->t[i] - s->t0, width = fraction * start;
                for (i++; i < s->n && s->t[i] - s->t0 - start < width; i++)
                        ;
        }
        return nb;
}

static int bins_init_fraction(const struct series *s, double fraction, struct series *ret) {
        size_t nb = bins_count(s, fraction), b = 0;
        double *buf, within = 0;

        buf = malloc(3 * nb * sizeof(double));
        if (!buf)
                return -ENOMEM;
        *ret = (struct series) { .t = buf, .y = buf + nb, .w = buf + 2 * nb, .n = nb, .owned = buf };
        for (size_t i = 0; i < s->n; b++) {
                double start = s->t[i] - s->t0, width = fraction * start;
                double st = 0, sy = 0, syy = 0, k = 0, y0 = s->y[i];
                do {
                        double d = s->y[i] - y0;        /* about the first value: no cancellation */
                        st += s->t[i] - s->t0;
                        sy += d;
                        syy += d * d;
                        k++;
                        i++;
                } while (i < s->n && s->t[i] - s->t0 - start < width);
                buf[b] = st / k;
                buf[nb + b] = y0 + sy / k;
                within += fmax(syy - sy * sy / k, 0.0);
                buf[2 * nb + b] = k;
        }
        series_stats(ret);
        ret->t0 = 0;
        ret->within = within;
        return 0;
}

static int bins_init(const struct series *s, struct series *ret) {
        return bins_init_fraction(s, BIN_FRACTION, ret);
}

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

static void decay_init(struct decay *d, double tau, double dt0) {
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
static double column_shift(double tau, double span) {
        return tau > span ? 1.0 : 0.0;
}

/* Residual sum of squares of the exp1 model at a fixed tau; the linear part
 * (T_inf, a) in closed form. INFINITY when degenerate. */
static double exp1_sse(const struct series *s, double tau, double *ret_tinf, double *ret_a, double *ret_v) {
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

/* Solves the centred 2x2 normal equations of exp2; returns the SSE. */
static double exp2_solve(double c11, double c22, double c12, double y1, double y2,
                         double syy, double *b1, double *b2) {
        double det = c11 * c22 - c12 * c12;

        if (!(c11 > 0) || !(c22 > 0) || !(det > 1e-12 * c11 * c22))
                return INFINITY;
        *b1 = (c22 * y1 - c12 * y2) / det;
        *b2 = (c11 * y2 - c12 * y1) / det;
        return fmax(syy - *b1 * y1 - *b2 * y2, 0.0);
}

struct exp2_params {
        double tinf, a_fast, a;
};

static double exp2_sse(const struct series *s, double tau_fast, double tau, struct exp2_params *ret) {
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
                ret->tinf = s->ybar - b1 * (s1 / W + h1) - b2 * (s2 / W + h2);
                ret->a_fast = -b1;
                ret->a = -b2;
        }
        return sse;
}

/* Brent's minimiser on [a, b] (golden section with parabolic steps). */
typedef double (*objective1_t)(double u, void *ctx);

static double brent_min(objective1_t f, void *ctx, double a, double b, double tol, double *ret_fx) {
        const double g = 0.3819660112501051;
        double x = a + g * (b - a), w = x, v = x, fx = f(x, ctx), fw = fx, fv = fx, d = 0, e = 0;

        for (int it = 0; it < 100; it++) {
                double m = 0.5 * (a + b), tol1 = tol + 1e-10 * fabs(x), tol2 = 2 * tol1;
                if (fabs(x - m) <= tol2 - 0.5 * (b - a))
                        break;
                bool golden = true;
                if (fabs(e) > tol1) {
                        double r = (x - w) * (fx - fv), q = (x - v) * (fx - fw), p = (x - v) * q - (x - w) * r;
                        q = 2 * (q - r);
                        if (q > 0)
                                p = -p;
                        q = fabs(q);
                        if (fabs(p) < fabs(0.5 * q * e) && p > q * (a - x) && p < q * (b - x)) {
                                e = d;
                                d = p / q;
                                if ((x + d) - a < tol2 || b - (x + d) < tol2)
                                        d = x < m ? tol1 : -tol1;
                                golden = false;
                        }
                }
                if (golden) {
                        e = (x < m ? b : a) - x;
                        d = g * e;
                }
                double u = x + (fabs(d) >= tol1 ? d : (d > 0 ? tol1 : -tol1)), fu = f(u, ctx);
                if (fu <= fx) {
                        if (u < x)
                                b = x;
                        else
                                a = x;
                        v = w, fv = fw, w = x, fw = fx, x = u, fx = fu;
                } else {
                        if (u < x)
                                a = u;
                        else
                                b = u;
                        if (fu <= fw || w == x)
                                v = w, fv = fw, w = u, fw = fu;
                        else if (fu <= fv || v == x || v == w)
                                v = u, fv = fu;
                }
        }
        *ret_fx = fx;
        return x;
}

/* Nelder-Mead in two dimensions. */
typedef double (*objective2_t)(const double u[2], void *ctx);

static void nm_sort(double p[3][2], double fp[3]) {
        for (int i = 1; i < 3; i++)
                for (int j = i; j > 0 && fp[j] < fp[j - 1]; j--) {
                        double tf = fp[j], t0 = p[j][0], t1 = p[j][1];
                        fp[j] = fp[j - 1], p[j][0] = p[j - 1][0], p[j][1] = p[j - 1][1];
                        fp[j - 1] = tf, p[j - 1][0] = t0, p[j - 1][1] = t1;
                }
}

static double nm_try(objective2_t f, void *ctx, double p[3][2], double fp[3], const double c[2], double k) {
        double q[2] = { c[0] + k * (p[2][0] - c[0]), c[1] + k * (p[2][1] - c[1]) }, fq = f(q, ctx);

        if (fq < fp[2]) {
                p[2][0] = q[0], p[2][1] = q[1], fp[2] = fq;
        }
        return fq;
}

static double nelder_mead2(objective2_t f, void *ctx, double u[2], double step, double tol, int max_evals) {
        double p[3][2] = { { u[0], u[1] }, { u[0] + step, u[1] }, { u[0], u[1] + step } }, fp[3];
        int evals = 3;

        for (int i = 0; i < 3; i++)
                fp[i] = f(p[i], ctx);
        while (evals < max_evals) {
                nm_sort(p, fp);
                double size = fmax(fmax(fabs(p[1][0] - p[0][0]), fabs(p[1][1] - p[0][1])),
                                   fmax(fabs(p[2][0] - p[0][0]), fabs(p[2][1] - p[0][1])));
                if (size < tol)
                        break;
                double c[2] = { 0.5 * (p[0][0] + p[1][0]), 0.5 * (p[0][1] + p[1][1]) };
                double fr = nm_try(f, ctx, p, fp, c, -1.0);
                evals++;
                if (fr < fp[0]) {
                        nm_try(f, ctx, p, fp, c, 2.0);  /* p[2] is now the reflected point */
                        evals++;
                } else if (!(fr < fp[1])) {
                        double fc = nm_try(f, ctx, p, fp, c, fr < fp[2] ? -0.5 : 0.5);
                        evals++;
                        if (!(fc <= fp[2]) || fp[2] >= fp[1]) {
                                for (int i = 1; i < 3; i++) {
                                        p[i][0] = 0.5 * (p[0][0] + p[i][0]);
                                        p[i][1] = 0.5 * (p[0][1] + p[i][1]);
                                        fp[i] = f(p[i], ctx);
                                }
                                evals += 2;
                        }
                }
        }
        nm_sort(p, fp);
        u[0] = p[0][0], u[1] = p[0][1];
        return fp[0];
}

/* Two-sided 95 % Student t quantile. */
static double student_t975(double df) {
        static const double table[] = { NAN, 12.706, 4.303, 3.182, 2.776, 2.571,
                                        2.447, 2.365, 2.306, 2.262, 2.228 };
        const double z = 1.959963985, z2 = z * z;

        if (df < 1)
                return NAN;
        if (df <= 10)
                return table[(int) df];
        double g1 = (z2 * z + z) / 4;
        double g2 = (5 * z2 * z2 * z + 16 * z2 * z + 3 * z) / 96;
        double g3 = (3 * z2 * z2 * z2 * z + 19 * z2 * z2 * z + 17 * z2 * z - 15 * z) / 384;
        return z + g1 / df + g2 / (df * df) + g3 / (df * df * df);
}

/* Solves M x = b for a symmetric positive definite k x k (k <= 4, lower
 * triangle used), scaled to unit diagonal first. Returns b^T x, INFINITY
 * when M is singular. */
static double chol_solve(double m[4][4], const double b[4], int k, double x[4]) {
        double l[4][4] = {}, sc[4], y[4], q = 0;

        for (int i = 0; i < k; i++) {
                if (!(m[i][i] > 0))
                        return INFINITY;
                sc[i] = 1.0 / sqrt(m[i][i]);
        }
        for (int i = 0; i < k; i++)
                for (int j = 0; j <= i; j++) {
                        double sum = m[i][j] * sc[i] * sc[j];
                        for (int r = 0; r < j; r++)
                                sum -= l[i][r] * l[j][r];
                        if (i == j) {
                                if (!(sum > 1e-13))
                                        return INFINITY;
                                l[i][i] = sqrt(sum);
                        } else
                                l[i][j] = sum / l[j][j];
                }
        for (int i = 0; i < k; i++) {
                double sum = b[i] * sc[i];
                for (int r = 0; r < i; r++)
                        sum -= l[i][r] * y[r];
                y[i] = sum / l[i][i];
        }
        for (int i = k - 1; i >= 0; i--) {
                double sum = y[i];
                for (int r = i + 1; r < k; r++)
                        sum -= l[r][i] * x[r];
                x[i] = sum / l[i][i];
        }
        for (int i = 0; i < k; i++) {
                x[i] *= sc[i];
                q += b[i] * x[i];
        }
        return q;
}

/* Residual statistics of a finished fit, accumulated in one pass: SSE,
 * lag-1 products, runs of residual signs, and the centred Gram matrix of
 * the Jacobian columns other than T_inf (Welford co-moments). */
struct fit_stats {
        double sse, lag1, rprev, mean[4], m[4][4];
        size_t pos, neg, runs;
        int last_sign;
};

static void stats_add(struct fit_stats *st, size_t i, double r, const double c[4], int k) {
        st->sse += r * r;
        if (i > 0)
                st->lag1 += r * st->rprev;
        st->rprev = r;
        if (r != 0) {
                int sign = r > 0 ? 1 : -1;
                if (sign != st->last_sign)
                        st->runs++;
                st->last_sign = sign;
                if (sign > 0)
                        st->pos++;
                else
                        st->neg++;
        }
        double delta[4], inv = 1.0 / (double) (i + 1);
        for (int a = 0; a < k; a++) {
                delta[a] = c[a] - st->mean[a];
                st->mean[a] += delta[a] * inv;
        }
        for (int a = 0; a < k; a++)
                for (int b = 0; b <= a; b++)
                        st->m[a][b] += delta[a] * (c[b] - st->mean[b]);
}

/* Runs test on residual signs: z < 0 means fewer sign changes than chance. */
static double stats_runs_z(const struct fit_stats *st) {
        double n1 = (double) st->pos, n2 = (double) st->neg, nn = n1 + n2;

        if (n1 < 1 || n2 < 1 || nn < 3)
                return NAN;
        double e = 2 * n1 * n2 / nn + 1, v = 2 * n1 * n2 * (2 * n1 * n2 - nn) / (nn * nn * (nn - 1));
        return v > 0 ? ((double) st->runs - e) / sqrt(v) : NAN;
}

/* Model value at model time tt and the Jacobian columns other than T_inf
 * (amplitudes and log time constants; signs do not matter here). */
static double fit_columns(const struct analysis_fit *f, double tt, double c[4]) {
        double e = exp(-tt / f->tau_s), v = f->t_inf_c - f->a_c * e;

        c[0] = e;
        c[1] = f->a_c * e * tt / f->tau_s;
        if (f->model == ANALYSIS_MODEL_EXP2) {
                double ef = exp(-tt / f->tau_fast_s);
                c[2] = ef;
                c[3] = f->a_fast_c * ef * tt / f->tau_fast_s;
                v -= f->a_fast_c * ef;
        }
        return v;
}

/*
 * Reading step of the sensor and the level the steps start from: readings
 * off + k q (whole degrees, 0.5, 0.25, or the 0.538 C steps of the
 * Raspberry Pi 3's sensor). q is the smallest difference between readings
 * when every reading sits on that lattice, else 0; steps under
 * QUANTUM_MIN_C do not matter and count as 0. Looks at the first and the
 * last QUANTUM_SAMPLES readings only: a sensor keeps its step.
 */
#define QUANTUM_SAMPLES 600
#define QUANTUM_MIN_C   0.05
#define QUANTUM_TOL_C   1.5e-3  /* CSV files round to 1 mC */

static bool quantum_index(size_t n, size_t k, size_t *ret) {
        if (n <= 2 * QUANTUM_SAMPLES) {
                *ret = k;
                return k < n;
        }
        *ret = k < QUANTUM_SAMPLES ? k : n - 2 * QUANTUM_SAMPLES + k;
        return k < 2 * QUANTUM_SAMPLES;
}

static double series_quantum(const struct series *s, double *ret_off) {
        double q = INFINITY, y0 = s->y[0];
        size_t i;

        *ret_off = 0;
        for (size_t k = 0; quantum_index(s->n, k, &i); k++) {
                double d = fabs(s->y[i] - y0);
                if (d > QUANTUM_TOL_C && d < q)
                        q = d;
        }
        if (!(q >= QUANTUM_MIN_C) || !isfinite(q))
                return 0;
        for (size_t k = 0; quantum_index(s->n, k, &i); k++) {
                double x = (s->y[i] - y0) / q;
                if (fabs(x - round(x)) * q > QUANTUM_TOL_C)
                        return 0;
        }
        *ret_off = y0 - q * floor(y0 / q);
        return q;
}

/*
 * Quantised readings of a slowly moving temperature carry a systematic
 * error: E[round(T + noise)] - T is a periodic function of T whose
 * harmonics have amplitude (q / (pi j)) e^{-2 pi^2 j^2 sigma^2 / q^2}. It
 * does not average out like noise, and looks like curvature when the curve
 * crosses only a few levels. T_inf is linear in the readings with weights
 * w_i, so its bias is bounded by sum_j amplitude_j |sum_i w_i e^{2 pi i j T_i / q}|
 * (first three harmonics; sigma from the RMS residual minus q^2/12).
 */
static double fit_quant_bias(const struct series *s, const struct analysis_fit *f, double m[4][4],
                             const double mean[4], int k) {
        double off, q = series_quantum(s, &off), g[4], c[4], re[3] = {}, im[3] = {}, nn = (double) s->n, bias = 0;

        if (q == 0)
                return 0;
        if (!isfinite(chol_solve(m, mean, k, g)))
                return INFINITY;
        for (size_t i = 0; i < s->n; i++) {
                double v = fit_columns(f, s->t[i] - s->t0, c), w = 1 / nn;
                for (int a = 0; a < k; a++)
                        w -= g[a] * (c[a] - mean[a]);
                double th = 2 * M_PI * (v - off) / q, zr = cos(th), zi = sin(th), hr = zr, hi = zi;
                for (int j = 0; j < 3; j++) {   /* e^{i (j+1) th} by complex products */
                        re[j] += w * hr;
                        im[j] += w * hi;
                        double t = hr * zr - hi * zi;
                        hi = hr * zi + hi * zr;
                        hr = t;
                }
        }
        double sigma2 = fmax(f->rms_c * f->rms_c - q * q / 12, 0);
        for (int j = 0; j < 3; j++) {
                double h = j + 1, amp = q / (M_PI * h) * exp(-2 * M_PI * M_PI * h * h * sigma2 / (q * q));
                bias += amp * hypot(re[j], im[j]);
        }
        return bias;
}

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

/* Widens f->ci95_c to cover the profile interval: every grid point within
 * thr_add of the minimum SSE contributes; one on the upper tau bound means
 * the plateau is not bounded by the data. */
static void fit_profile_ci(struct analysis_fit *f, const struct profile_point *p, size_t np, double thr_add) {
        double thr = f->rms_c * f->rms_c * (double) f->n + thr_add;
        double lo = f->t_inf_c - f->ci95_c, hi = f->t_inf_c + f->ci95_c;

        for (size_t i = 0; isfinite(f->ci95_c) && i < np; i++) {
                if (!(p[i].sse <= thr))
                        continue;
                if (p[i].edge) {
                        f->ci95_c = INFINITY;
                        return;
                }
                double d = sqrt((thr - p[i].sse) * p[i].v);
                lo = fmin(lo, p[i].tinf - d);
                hi = fmax(hi, p[i].tinf + d);
        }
        if (isfinite(f->ci95_c))
                f->ci95_c = fmax(hi - f->t_inf_c, f->t_inf_c - lo) + f->quant_bias_c;
}

/* RMS, residual structure and the linearised 95 % interval of T_inf (see
 * analysis.h). Returns t^2 s^2 (1 + rho) / (1 - rho), the SSE increase that
 * bounds the profile interval. */
static double fit_finish(const struct series *s, struct analysis_fit *f, bool unidentifiable) {
        struct fit_stats st = {};
        int k = f->model == ANALYSIS_MODEL_EXP2 ? 4 : 2;
        double c[4], nn = (double) s->n;

        for (size_t i = 0; i < s->n; i++) {
                double v = fit_columns(f, s->t[i] - s->t0, c);
                stats_add(&st, i, s->y[i] - v, c, k);
        }
        f->n = s->n;
        f->rms_c = sqrt(st.sse / nn);
        f->rho = st.sse > 0 ? fmax(fmin(st.lag1 / st.sse, 1.0), -1.0) : 0.0;
        f->runs_z = stats_runs_z(&st);

        double rho = fmin(fmax(f->rho, 0.0), RHO_MAX), df = nn - (k + 1);
        double g[4], factor = 1.0 / nn + chol_solve(st.m, st.mean, k, g);
        double s2 = st.sse / df * (1 + rho) / (1 - rho), tq = student_t975(df);
        f->ci95_c = unidentifiable || !isfinite(s2 * factor) ? INFINITY : tq * sqrt(s2 * factor);
        f->quant_bias_c = fit_quant_bias(s, f, st.m, st.mean, k);
        return tq * tq * s2;
}

static void tau_range(const struct series *s, double *umin, double *umax) {
        *umin = log(fmin(ANALYSIS_TAU_MIN_S, s->span / 100));
        *umax = log(ANALYSIS_TAU_MAX_SPANS * s->span);
}

static double exp1_objective(double u, void *ctx) {
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

static int exp1_fit_series(const struct series *s, struct analysis_fit *ret) {
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

struct exp2_ctx {
        const struct series *s;
        double umin, umax;
};

/* Keeps umin <= u0, u0 + ln 1.5 <= u1 <= umax; returns the squared move. */
static double exp2_project(const struct exp2_ctx *x, const double u[2], double p[2]) {
        double lr = log(EXP2_MIN_RATIO);

        p[0] = fmin(fmax(u[0], x->umin), x->umax - lr);
        p[1] = fmin(fmax(u[1], p[0] + lr), x->umax);
        return (p[0] - u[0]) * (p[0] - u[0]) + (p[1] - u[1]) * (p[1] - u[1]);
}

static double exp2_objective(const double u[2], void *ctx) {
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

static int exp2_finish(const struct exp2_ctx *x, const double u[2], struct analysis_fit *ret) {
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
 * bench/analysis-corpus.c (figures in bench/README.md).
 */
#define PLATEAU_BIN_FRACTION    0.06
#define PLATEAU_NM_EVALS        120
#define SCAN_RATIO              1.25
#define NNLS_MAX_ACTIVE         12
#define PROFILE_TAU_SPANS       4.0     /* slowest time constant of the wide model, in data spans */
#define PROFILE_TOL_C           0.005   /* interval ends to this precision */

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
                        if (sc->sign * b1 > 0 || sc->sign * b2 > 0)
                                continue;       /* an amplitude against the rise: not a heated body's curve */
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
        if (h->f2.model != ANALYSIS_MODEL_EXP2 || h->f2.tau_at_bound || !(h->sse2 < h->sse1))
                return false;
        double neff = (double) h->b.n * (1 - s2->rho) / (1 + s2->rho);
        if (neff < 8)
                return false;
        return (h->sse1 - h->sse2) / s2->s2 - 2 * log(neff) > BIC_MARGIN;
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
        while (fabs(out - in) > PROFILE_TOL_C) {
                double mid = 0.5 * (in + out);
                if (profile_objective(mid, p) > thr)
                        out = mid;
                else
                        in = mid;
        }
        return out;
}

static int honest_profile(struct honest *h, double centre, double step, double thr_add, double *lo, double *hi) {
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
        double t1 = profile_end(&p, tmin, fx + thr_add, PROFILE_TOL_C * 4, 1);
        double t2 = profile_end(&p, tmin, fx + thr_add, PROFILE_TOL_C * 4, -1);
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

/* The widest of: the chosen model's linearised interval, the exp2 grid
 * profile, the other model's optimum, and the profile interval under the
 * wide model; plus the quantisation bias bound; symmetric around the point
 * estimate. Unbounded when exp1 sees no curvature. */
static int honest_interval(struct honest *h, struct analysis_fit *f, const struct honest_stats *st) {
        double tq = student_t975(st->df), half = tq * sqrt(st->s2 * st->factor), lo, hi;
        double thr_add = tq * tq * st->s2;
        int r;

        f->quant_bias_c = st->quant_bias;
        if (!isfinite(half) || (f->model == ANALYSIS_MODEL_EXP1 && h->umax - log(f->tau_s) < 1e-3)) {
                f->ci95_c = INFINITY;
                return 0;
        }
        r = honest_profile(h, f->t_inf_c, fmax(half, 0.05), thr_add, &lo, &hi);
        if (r < 0)
                return r;
        lo = fmin(lo, f->t_inf_c - half);
        hi = fmax(hi, f->t_inf_c + half);
        double best = fmin(h->sse1, h->f2.model == ANALYSIS_MODEL_EXP2 ? h->sse2 : INFINITY);
        honest_exp2_profile(h, best + thr_add, &lo, &hi);
        if (h->f2.model == ANALYSIS_MODEL_EXP2 && h->sse2 <= h->sse1 + thr_add) {
                lo = fmin(lo, h->f2.t_inf_c);
                hi = fmax(hi, h->f2.t_inf_c);
        }
        f->ci95_c = fmax(hi - f->t_inf_c, f->t_inf_c - lo) + st->quant_bias;
        return 0;
}

static int honest_run(struct honest *h, const struct series *s, struct analysis_fit *ret) {
        struct honest_stats st1, st2, *st;
        int r;

        h->t0 = s->t0;
        h->n_raw = s->n;
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
               h->umin + h->sc.du * (double) h->sc.nu_wide <= log(PROFILE_TAU_SPANS * s->span) + 1e-9)
                h->sc.nu_wide++;
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
        return honest_interval(h, ret, st);
}

int analysis_fit_plateau(const double *t_s, const double *temp_c, size_t n, struct analysis_fit *ret) {
        struct honest h = {};
        struct series s;
        int r;

        if (!ret)
                return -EINVAL;
        r = series_init_stats(&s, t_s, temp_c, n, 4, false);
        if (r >= 0)
                r = honest_run(&h, &s, ret);
        honest_free(&h);
        series_done(&s);
        return r;
}

double analysis_fit_eval(const struct analysis_fit *f, double t_s) {
        double c[4];

        if (!f || f->model == ANALYSIS_MODEL_NONE)
                return NAN;
        return fit_columns(f, t_s - f->t_origin_s, c);
}

/* The trailing window [t_last - window_s, t_last] over the valid samples:
 * its first index, valid count and t_last. Checks the times on the way. */
struct window {
        size_t start, count;
        double t_last;
};

static int window_find(const double *t, const double *y, size_t n, double window_s, struct window *ret) {
        double next = INFINITY;

        *ret = (struct window) { .start = n, .t_last = NAN };
        if (!t || !y || !(window_s >= 0))
                return -EINVAL;
        for (size_t i = n; i-- > 0;) {
                if (isnan(y[i]))
                        continue;
                if (!isfinite(y[i]) || !isfinite(t[i]) || t[i] >= next)
                        return -EINVAL;
                if (isnan(ret->t_last))
                        ret->t_last = t[i];
                if (t[i] < ret->t_last - window_s)
                        break;
                next = t[i];
                ret->start = i;
                ret->count++;
        }
        return 0;
}

int analysis_slope(const double *t_s, const double *y, size_t n, double window_s, double *ret) {
        struct window w;
        double st = 0, sy = 0, sxx = 0, sxy = 0;
        int r = window_find(t_s, y, n, window_s, &w);

        if (r < 0)
                return r;
        if (w.count < 3)
                return -ENODATA;
        for (size_t i = w.start; i < n; i++)
                if (!isnan(y[i])) {
                        st += t_s[i] - w.t_last;
                        sy += y[i];
                }
        st /= (double) w.count;
        sy /= (double) w.count;
        for (size_t i = w.start; i < n; i++)
                if (!isnan(y[i])) {
                        double dt = t_s[i] - w.t_last - st;
                        sxx += dt * dt;
                        sxy += dt * (y[i] - sy);
                }
        if (!(sxx > 0))
                return -EDOM;
        *ret = sxy / sxx;
        return 0;
}

static int compare_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return (x > y) - (x < y);
}

/* Median of the non-NaN values of y[from..to). */
static int median_range(const double *y, size_t from, size_t to, double *ret) {
        size_t m = 0;
        double *buf;

        for (size_t i = from; i < to; i++)
                m += !isnan(y[i]);
        if (m == 0)
                return -ENODATA;
        buf = malloc(m * sizeof(double));
        if (!buf)
                return -ENOMEM;
        m = 0;
        for (size_t i = from; i < to; i++)
                if (!isnan(y[i]))
                        buf[m++] = y[i];
        qsort(buf, m, sizeof(double), compare_double);
        *ret = m % 2 ? buf[m / 2] : 0.5 * (buf[m / 2 - 1] + buf[m / 2]);
        free(buf);
        return 0;
}

int analysis_median(const double *t_s, const double *y, size_t n, double window_s, double *ret) {
        struct window w;
        int r = window_find(t_s, y, n, window_s, &w);

        if (r < 0)
                return r;
        if (!ret)
                return -EINVAL;
        return median_range(y, w.start, n, ret);
}

/* The valid samples reach back over the whole window (2 % slack for the
 * timing of samples). */
static bool window_covered(const double *t_s, const double *y, size_t n, double window_s) {
        struct window w;

        if (window_find(t_s, y, n, window_s, &w) < 0 || w.count < 3)
                return false;
        return w.t_last - t_s[w.start] >= 0.98 * window_s;
}

bool analysis_is_stable(const double *t_s, const double *temp_c, size_t n,
                        double window_s, double max_slope_c_per_s) {
        double slope;

        if (!window_covered(t_s, temp_c, n, window_s))
                return false;
        if (analysis_slope(t_s, temp_c, n, window_s, &slope) < 0)
                return false;
        return fabs(slope) <= max_slope_c_per_s;
}

bool analysis_is_at_baseline(const double *t_s, const double *temp_c, size_t n,
                             double baseline_c, double tolerance_c) {
        double m;

        if (!isfinite(baseline_c) || analysis_median(t_s, temp_c, n, ANALYSIS_BASELINE_WINDOW_S, &m) < 0)
                return false;
        return fabs(m - baseline_c) <= tolerance_c;
}

int analysis_check_plateau(const double *t_s, const double *temp_c, size_t n, struct analysis_plateau *ret) {
        return analysis_check_plateau_window(t_s, temp_c, n, ANALYSIS_PLATEAU_WINDOW_S, ret);
}

int analysis_check_plateau_window(const double *t_s, const double *temp_c, size_t n, double window_s,
                                  struct analysis_plateau *ret) {
        int r;

        if (!ret)
                return -EINVAL;
        *ret = (struct analysis_plateau) {
                .plateau_c = NAN,
                .ci95_c = NAN,
                .slope_c_per_s = NAN,
        };
        r = analysis_fit_plateau(t_s, temp_c, n, &ret->fit);
        if (r < 0)
                return r;
        ret->plateau_c = ret->fit.t_inf_c;
        ret->ci95_c = ret->fit.ci95_c;
        if (window_covered(t_s, temp_c, n, window_s) &&
            analysis_slope(t_s, temp_c, n, window_s, &ret->slope_c_per_s) < 0)
                ret->slope_c_per_s = NAN;
        ret->reached = ret->ci95_c <= ANALYSIS_PLATEAU_CI95_C &&
                fabs(ret->slope_c_per_s) <= ANALYSIS_PLATEAU_SLOPE_C_PER_S;
        return 0;
}

/* Consecutive samples of one phase kind, [start, end). */
struct segment {
        size_t start, end;
};

static bool segment_find(const enum analysis_phase *ph, size_t n, enum analysis_phase kind,
                         size_t from, struct segment *ret) {
        size_t i = from;

        while (i < n && ph[i] != kind)
                i++;
        if (i >= n)
                return false;
        ret->start = i;
        while (i < n && ph[i] == kind)
                i++;
        ret->end = i;
        return true;
}

/* The segment of that kind ending last at or before index `before`. */
static bool segment_find_last(const enum analysis_phase *ph, size_t before, enum analysis_phase kind,
                              struct segment *ret) {
        size_t i = before;

        while (i > 0 && ph[i - 1] != kind)
                i--;
        if (i == 0)
                return false;
        ret->end = i;
        while (i > 0 && ph[i - 1] == kind)
                i--;
        ret->start = i;
        return true;
}

static int metrics_check_input(const struct analysis_samples *s) {
        if (!s || !s->t_s || !s->temp_c || !s->phase)
                return -EINVAL;
        for (size_t i = 0; i < s->n; i++) {
                if (!isfinite(s->t_s[i]) || (i > 0 && s->t_s[i] <= s->t_s[i - 1]))
                        return -EINVAL;
                if (s->phase[i] > ANALYSIS_PHASE_COOLDOWN)
                        return -EINVAL;
        }
        return 0;
}

/* First time in [t_s[from], t_s[to - 1]] at which the fitted curve reaches
 * level, coming from the side of `from`; NaN when it does not. */
static double fit_time_to_level(const struct analysis_fit *f, const double *t_s, size_t from, size_t to,
                                double level, double sign) {
        double lo, hi;
        size_t i;

        for (i = from; i < to; i++)
                if ((analysis_fit_eval(f, t_s[i]) - level) * sign >= 0)
                        break;
        if (i >= to)
                return NAN;
        if (i == from)
                return t_s[from];
        lo = t_s[i - 1];
        hi = t_s[i];
        for (int k = 0; k < 60 && hi - lo > 1e-6; k++) {
                double mid = 0.5 * (lo + hi);
                if ((analysis_fit_eval(f, mid) - level) * sign >= 0)
                        hi = mid;
                else
                        lo = mid;
        }
        return hi;
}

/* The plateau and its interval are analysis_fit_plateau()'s, the numbers
 * until: plateau saw at the end of the load; the time constants, t90 and
 * the residual come from the full-resolution fit. */
static void metrics_heating(const struct analysis_samples *s, const struct segment *load, struct run_metrics *m) {
        const double *lt = s->t_s + load->start, *ly = s->temp_c + load->start;
        size_t n = load->end - load->start;
        struct analysis_fit f, p;

        if (analysis_fit_auto(lt, ly, n, &f) < 0)
                return;
        m->fit_model = f.model;
        m->fit_residual_c = f.rms_c;
        if (analysis_fit_plateau(lt, ly, n, &p) >= 0 && isfinite(p.ci95_c)) {
                m->plateau_c = p.t_inf_c;
                m->plateau_ci95_c = p.ci95_c;
        }
        if (!f.tau_at_bound) {
                m->tau_heat_s = f.tau_s;
                if (f.model == ANALYSIS_MODEL_EXP2) {
                        m->tau_heat_fast_s = f.tau_fast_s;
                        m->heat_fast_fraction = f.a_fast_c / (f.a_fast_c + f.a_c);
                }
        }
        if (isfinite(m->plateau_c)) {
                double base = isfinite(m->baseline_c) ? m->baseline_c : f.t0_c;
                double level = base + 0.9 * (m->plateau_c - base);
                double t = fit_time_to_level(&f, s->t_s, load->start, load->end, level,
                                             m->plateau_c >= base ? 1.0 : -1.0);
                m->t90_heat_s = t - s->t_s[load->start];
        }
}

static void metrics_cooling(const struct analysis_samples *s, const struct segment *cool, struct run_metrics *m) {
        const double *t = s->t_s + cool->start, *y = s->temp_c + cool->start;
        size_t len = cool->end - cool->start;
        struct analysis_fit f;

        if (analysis_fit_auto(t, y, len, &f) >= 0) {
                m->cool_fit_model = f.model;
                m->cool_fit_residual_c = f.rms_c;
                if (!f.tau_at_bound) {
                        m->tau_cool_s = f.tau_s;
                        if (f.model == ANALYSIS_MODEL_EXP2)
                                m->tau_cool_fast_s = f.tau_fast_s;
                }
        }
        for (size_t i = 0; isfinite(m->baseline_c) && i < len; i++)
                if (!isnan(y[i]) &&
                    analysis_is_at_baseline(t, y, i + 1, m->baseline_c, ANALYSIS_BASELINE_TOLERANCE_C)) {
                        m->t_back_to_baseline_s = t[i] - t[0];
                        break;
                }
}

bool analysis_sample_throttled(double freq_hz, double max_allowed_hz, bool cooling_active, int firmware_throttled) {
        return cooling_active || firmware_throttled > 0 ||
               (isfinite(freq_hz) && isfinite(max_allowed_hz) && freq_hz < max_allowed_hz * (1 - FREQ_TOLERANCE));
}

void analysis_load_freq_add(struct analysis_load_freq *a, double freq_hz, double max_allowed_hz, bool cooling_known,
                            bool cooling_active, int firmware_throttled) {
        if (isfinite(freq_hz)) {
                a->sum += freq_hz;
                a->min = a->nf ? fmin(a->min, freq_hz) : freq_hz;
                a->nf++;
        }
        /* the firmware knows better than cpufreq: the kernel's clock may be the one it asked for */
        if (cooling_known || firmware_throttled >= 0 || (isfinite(freq_hz) && isfinite(max_allowed_hz))) {
                a->known++;
                a->throttled += analysis_sample_throttled(freq_hz, max_allowed_hz, cooling_active, firmware_throttled);
        }
}

void analysis_load_freq_metrics(const struct analysis_load_freq *a, struct run_metrics *m) {
        if (a->nf > 0) {
                m->freq_mean_hz = a->sum / (double) a->nf;
                m->freq_min_hz = a->min;
        }
        if (a->known > 0)
                m->throttled_fraction = (double) a->throttled / (double) a->known;
}

/* Throttled share and frequencies under load. */
static void metrics_freq(const struct analysis_samples *s, const struct segment *load, struct run_metrics *m) {
        struct analysis_load_freq a = {};

        for (size_t i = load->start; i < load->end; i++)
                analysis_load_freq_add(&a, s->freq_hz ? s->freq_hz[i] : NAN,
                                       s->max_allowed_hz ? s->max_allowed_hz[i] : NAN, s->cooling_active != NULL,
                                       s->cooling_active && s->cooling_active[i],
                                       s->firmware_throttled ? s->firmware_throttled[i] : -1);
        analysis_load_freq_metrics(&a, m);
}

static void metrics_work(const struct analysis_samples *s, const struct segment *load, struct run_metrics *m) {
        const double *t = s->t_s;
        size_t first = load->start, last = load->end;

        if (!s->work_rate)
                return;
        while (first < load->end && t[first] < t[load->start] + ANALYSIS_WORK_RATE_WINDOW_S)
                first++;
        while (last > load->start && t[last - 1] > t[load->end - 1] - ANALYSIS_WORK_RATE_WINDOW_S)
                last--;
        if (median_range(s->work_rate, load->start, first, &m->work_rate_start) < 0)
                m->work_rate_start = NAN;
        if (median_range(s->work_rate, last, load->end, &m->work_rate_end) < 0)
                m->work_rate_end = NAN;
        if (m->work_rate_start > 0 && isfinite(m->work_rate_end))
                m->work_rate_drop_pct = 100 * (m->work_rate_start - m->work_rate_end) / m->work_rate_start;
}

double analysis_idle_baseline(const double *t_s, const double *temp_c, const enum analysis_phase *phase, size_t n) {
        struct segment idle;
        double median = NAN;

        if (segment_find_last(phase, n, ANALYSIS_PHASE_IDLE, &idle) &&
            analysis_median(t_s + idle.start, temp_c + idle.start, idle.end - idle.start, ANALYSIS_BASELINE_IDLE_S,
                            &median) < 0)
                median = NAN;
        return median;
}

void analysis_metrics_init(struct run_metrics *m, double ambient_c) {
        *m = (struct run_metrics) {
                .baseline_c = NAN, .ambient_c = ambient_c, .peak_c = NAN,
                .plateau_c = NAN, .plateau_ci95_c = NAN, .rise_c = NAN, .rise_over_ambient_c = NAN,
                .tau_heat_s = NAN, .tau_heat_fast_s = NAN, .heat_fast_fraction = NAN, .t90_heat_s = NAN,
                .tau_cool_s = NAN, .tau_cool_fast_s = NAN, .t_back_to_baseline_s = NAN,
                .throttled_fraction = NAN, .freq_mean_hz = NAN, .freq_min_hz = NAN,
                .work_rate_start = NAN, .work_rate_end = NAN, .work_rate_drop_pct = NAN,
                .fit_residual_c = NAN, .fit_model = ANALYSIS_MODEL_NONE,
                .cool_fit_residual_c = NAN, .cool_fit_model = ANALYSIS_MODEL_NONE,
        };
}

int analysis_compute_metrics(const struct analysis_samples *s, struct run_metrics *ret) {
        struct segment load = {}, cool;
        bool has_load;
        int r;

        if (!ret)
                return -EINVAL;
        r = metrics_check_input(s);
        if (r < 0)
                return r;
        analysis_metrics_init(ret, s->ambient_c);
        for (size_t i = 0; i < s->n; i++)
                if (isfinite(s->temp_c[i]) && (isnan(ret->peak_c) || s->temp_c[i] > ret->peak_c))
                        ret->peak_c = s->temp_c[i];
        has_load = segment_find(s->phase, s->n, ANALYSIS_PHASE_STRESS, 0, &load);
        ret->baseline_c = s->baseline_c ? *s->baseline_c :
                          analysis_idle_baseline(s->t_s, s->temp_c, s->phase, has_load ? load.start : s->n);
        if (!has_load)
                return 0;
        metrics_heating(s, &load, ret);
        ret->rise_c = ret->plateau_c - ret->baseline_c;
        ret->rise_over_ambient_c = ret->plateau_c - ret->ambient_c;
        if (s->load_freq)
                analysis_load_freq_metrics(s->load_freq, ret);
        else
                metrics_freq(s, &load, ret);
        metrics_work(s, &load, ret);
        if (segment_find(s->phase, s->n, ANALYSIS_PHASE_COOLDOWN, load.end, &cool))
                metrics_cooling(s, &cool, ret);
        return 0;
}
