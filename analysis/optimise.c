/* optimise.c — the minimisers the fits search with: Brent's method in one dimension, Nelder-Mead in two. */
#include <math.h>
#include <stdbool.h>

#include "analysis-internal.h"

double brent_min(objective1_t f, void *ctx, double a, double b, double tol, double *ret_fx) {
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

double nelder_mead2(objective2_t f, void *ctx, double u[2], double step, double tol, int max_evals) {
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
