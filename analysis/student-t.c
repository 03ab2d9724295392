/* student-t.c — Student's t distribution for any real degrees of freedom: its CDF and its quantiles. */
#include <math.h>

#include "analysis-internal.h"

/*
 * Beyond this many degrees of freedom the t quantile is the normal one plus
 * the Cornish-Fisher terms in 1/df (their error is below 1e-12 there), and
 * the continued fraction below, which needs O(sqrt(df)) terms, is not used.
 */
#define T_DF_ASYMPTOTIC 1e5
#define CF_MAX_TERMS    20000
#define CF_EPS          1e-15
#define CF_TINY         1e-300

/* The continued fraction of the regularised incomplete beta function
 * I_x(a, b), modified Lentz (Numerical Recipes' betacf). y = 1 - x, given
 * separately so that x close to 1 loses nothing. */
static double beta_cf(double a, double b, double x) {
        double qab = a + b, qap = a + 1, qam = a - 1;
        double c = 1, d = 1 - qab * x / qap, h;

        if (fabs(d) < CF_TINY)
                d = CF_TINY;
        d = 1 / d;
        h = d;
        for (int m = 1; m <= CF_MAX_TERMS; m++) {
                double m2 = 2.0 * m, aa, del;

                aa = m * (b - m) * x / ((qam + m2) * (a + m2));
                d = 1 + aa * d;
                c = 1 + aa / c;
                d = 1 / (fabs(d) < CF_TINY ? CF_TINY : d);
                c = fabs(c) < CF_TINY ? CF_TINY : c;
                h *= d * c;
                aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
                d = 1 + aa * d;
                c = 1 + aa / c;
                d = 1 / (fabs(d) < CF_TINY ? CF_TINY : d);
                c = fabs(c) < CF_TINY ? CF_TINY : c;
                del = d * c;
                h *= del;
                if (fabs(del - 1) < CF_EPS)
                        break;
        }
        return h;
}

/* ln B(a, b); lgamma_r: lgamma() writes the global signgam. */
static double log_beta(double a, double b) {
        int sa, sb, sab;

        return lgamma_r(a, &sa) + lgamma_r(b, &sb) - lgamma_r(a + b, &sab);
}

/* I_x(a, b) with y = 1 - x, 0 <= x <= 1. */
static double inc_beta(double a, double b, double x, double y) {
        double front;

        if (x <= 0)
                return 0;
        if (y <= 0)
                return 1;
        front = exp(a * log(x) + b * log(y) - log_beta(a, b));
        if (x < (a + 1) / (a + b + 2))
                return front * beta_cf(a, b, x) / a;
        return 1 - front * beta_cf(b, a, y) / b;
}

/* P(T > t) for t >= 0: I_{df/(df+t^2)}(df/2, 1/2) / 2, the tail computed
 * directly so that it keeps its digits when small. */
static double t_upper(double t, double df) {
        double t2 = t * t;

        if (isinf(df))
                return 0.5 * erfc(t / M_SQRT2);
        return 0.5 * inc_beta(df / 2, 0.5, df / (df + t2), t2 / (df + t2));
}

/* The density of t at t; lnb = ln B(df/2, 1/2). */
static double t_density(double t, double df, double lnb) {
        if (isinf(df))
                return exp(-t * t / 2) / sqrt(2 * M_PI);
        return exp(-(df + 1) / 2 * log1p(t * t / df) - lnb) / sqrt(df);
}

double analysis_t_cdf(double t, double df) {
        if (isnan(t) || !(df > 0))
                return NAN;
        return t >= 0 ? 1 - t_upper(t, df) : t_upper(-t, df);
}

/* The t >= 0 with P(T > t) = q, 0 < q <= 1/2: Newton's method on the tail,
 * kept inside a bracket that bisection shrinks whenever a step leaves it. */
static double t_upper_inverse(double q, double df) {
        double lnb = isinf(df) ? 0 : log_beta(df / 2, 0.5);
        double lo = 0, hi = 1, t;

        while (t_upper(hi, df) > q && hi < 1e300)
                hi *= 2;
        t = hi / 2;
        for (int i = 0; i < 400; i++) {
                double g = t_upper(t, df) - q, step, next;

                if (g > 0)
                        lo = t;
                else
                        hi = t;
                step = g / t_density(t, df, lnb);       /* d tail / dt = -density */
                next = t + step;
                if (!(next > lo && next < hi))
                        next = (lo + hi) / 2;
                if (fabs(next - t) <= 1e-13 * fmax(t, 1e-3) || hi - lo <= 1e-13 * hi)
                        return next;
                t = next;
        }
        return t;
}

/* The normal quantile with the Cornish-Fisher expansion of t in 1/df. */
static double t_quantile_asymptotic(double q, double df) {
        double z = t_upper_inverse(q, INFINITY), z2 = z * z;
        double g1 = (z2 * z + z) / 4;
        double g2 = (5 * z2 * z2 * z + 16 * z2 * z + 3 * z) / 96;
        double g3 = (3 * z2 * z2 * z2 * z + 19 * z2 * z2 * z + 17 * z2 * z - 15 * z) / 384;

        if (isinf(df))
                return z;
        return z + g1 / df + g2 / (df * df) + g3 / (df * df * df);
}

double analysis_t_quantile(double p, double df) {
        double q;

        if (!(p > 0 && p < 1) || !(df > 0))
                return NAN;
        if (p == 0.5)
                return 0;
        q = p > 0.5 ? 1 - p : p;
        q = df > T_DF_ASYMPTOTIC ? t_quantile_asymptotic(q, df) : t_upper_inverse(q, df);
        return p > 0.5 ? q : -q;
}
