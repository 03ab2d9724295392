/* window.c — statistics over the trailing window of a series: least-squares slope, median, the rise so far. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "analysis-internal.h"

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

int median_range(const double *y, size_t from, size_t to, double *ret) {
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

bool window_covered(const double *t_s, const double *y, size_t n, double window_s) {
        struct window w;

        if (window_find(t_s, y, n, window_s, &w) < 0 || w.count < 3)
                return false;
        return w.t_last - t_s[w.start] >= 0.98 * window_s;
}

double analysis_rise_so_far(const double *t_s, const double *temp_c, size_t n) {
        double first, last;
        size_t k = 0;

        if (!t_s || !temp_c)
                return NAN;
        while (k < n && (isnan(temp_c[k]) || t_s[k] <= t_s[0] + ANALYSIS_BASELINE_WINDOW_S))
                k++;
        if (median_range(temp_c, 0, k > 0 ? k : n, &first) < 0 ||
            analysis_median(t_s, temp_c, n, ANALYSIS_BASELINE_WINDOW_S, &last) < 0)
                return NAN;
        return last - first;
}
