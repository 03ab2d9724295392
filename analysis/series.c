/* series.c — the samples a fit sees: valid ones only, geometric bins of them, the sensor's reading step. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "analysis-internal.h"

#define BIN_FRACTION    0.03    /* bin width, as a share of the time since the first sample */

void series_done(struct series *s) {
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

int series_init_stats(struct series *s, const double *t, const double *y, size_t n, size_t min_n,
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

int series_init(struct series *s, const double *t, const double *y, size_t n, size_t min_n) {
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

int bins_init_fraction(const struct series *s, double fraction, struct series *ret) {
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

int bins_init(const struct series *s, struct series *ret) {
        return bins_init_fraction(s, BIN_FRACTION, ret);
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

double series_quantum(const struct series *s, double *ret_off) {
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
