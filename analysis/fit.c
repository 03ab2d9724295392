/* fit.c — what every fit shares: the model and its Jacobian, residual statistics, the 95 % interval of T_inf. */
#include <math.h>

#include "analysis-internal.h"

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

double student_t975(double df) {
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

double chol_solve(double m[4][4], const double b[4], int k, double x[4]) {
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

double stats_runs_z(const struct fit_stats *st) {
        double n1 = (double) st->pos, n2 = (double) st->neg, nn = n1 + n2;

        if (n1 < 1 || n2 < 1 || nn < 3)
                return NAN;
        double e = 2 * n1 * n2 / nn + 1, v = 2 * n1 * n2 * (2 * n1 * n2 - nn) / (nn * nn * (nn - 1));
        return v > 0 ? ((double) st->runs - e) / sqrt(v) : NAN;
}

double fit_columns(const struct analysis_fit *f, double tt, double c[4]) {
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

/* low_c and high_c from the interval [lo, hi] (widened by the bias
 * bound), ci95_c the larger half-width; unbounded on the side the curve
 * goes when ci95_c is infinite. */
void fit_set_interval(struct analysis_fit *f, double lo, double hi) {
        f->unbounded = !isfinite(f->ci95_c);
        if (!isfinite(f->ci95_c)) {
                bool up = f->a_c >= 0;
                f->low_c = up ? fmin(lo, f->t_inf_c) : -INFINITY;
                f->high_c = up ? INFINITY : fmax(hi, f->t_inf_c);
                return;
        }
        f->low_c = fmin(lo, f->t_inf_c) - f->quant_bias_c;
        f->high_c = fmax(hi, f->t_inf_c) + f->quant_bias_c;
        f->ci95_c = fmax(f->high_c - f->t_inf_c, f->t_inf_c - f->low_c);
}

/* Widens f->ci95_c to cover the profile interval: every grid point within
 * thr_add of the minimum SSE contributes; one on the upper tau bound means
 * the plateau is not bounded by the data. */
void fit_profile_ci(struct analysis_fit *f, const struct profile_point *p, size_t np, double thr_add) {
        double thr = f->rms_c * f->rms_c * (double) f->n + thr_add;
        double lo = f->t_inf_c - f->ci95_c, hi = f->t_inf_c + f->ci95_c;

        for (size_t i = 0; isfinite(f->ci95_c) && i < np; i++) {
                if (!(p[i].sse <= thr))
                        continue;
                if (p[i].edge) {
                        f->ci95_c = INFINITY;
                        break;
                }
                double d = sqrt((thr - p[i].sse) * p[i].v);
                lo = fmin(lo, p[i].tinf - d);
                hi = fmax(hi, p[i].tinf + d);
        }
        fit_set_interval(f, lo, hi);
}

/* RMS, residual structure and the linearised 95 % interval of T_inf (see
 * analysis.h). Returns t^2 s^2 (1 + rho) / (1 - rho), the SSE increase that
 * bounds the profile interval. */
double fit_finish(const struct series *s, struct analysis_fit *f, bool unidentifiable) {
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

void tau_range(const struct series *s, double *umin, double *umax) {
        *umin = log(fmin(ANALYSIS_TAU_MIN_S, s->span / 100));
        *umax = log(ANALYSIS_TAU_MAX_SPANS * s->span);
}

double analysis_fit_eval(const struct analysis_fit *f, double t_s) {
        double c[4];

        if (!f || f->model == ANALYSIS_MODEL_NONE)
                return NAN;
        return fit_columns(f, t_s - f->t_origin_s, c);
}
