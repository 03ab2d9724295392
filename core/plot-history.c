/* plot-history.c — the history plot: every sensor on a wall clock, with runs, alerts and throttling. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot-internal.h"
#include "util.h"

/* Unix days to a civil date (H. Hinnant's algorithm): no time_t, so 32-bit
 * boards format dates after 2038 too, and no locale or time zone. */
static void civil_from_days(int64_t z, int *y, unsigned *m, unsigned *d) {
        z += 719468;
        int64_t era = (z >= 0 ? z : z - 146096) / 146097;
        unsigned doe = (unsigned) (z - era * 146097);
        unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
        unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        unsigned mp = (5 * doy + 2) / 153;

        *d = doy - (153 * mp + 2) / 5 + 1;
        *m = mp < 10 ? mp + 3 : mp - 9;
        *y = (int) (yoe + era * 400 + (*m <= 2));
}

void plot_format_utc(int64_t ms, char *buf, size_t size) {
        int64_t sec = ms >= 0 ? ms / 1000 : (ms - 999) / 1000, days = sec >= 0 ? sec / 86400 : (sec - 86399) / 86400;
        int64_t rem = sec - days * 86400;
        unsigned m, d;
        int y;

        civil_from_days(days, &y, &m, &d);
        snprintf(buf, size, "%04d-%02u-%02u %02u:%02u:%02u", y, m, d, (unsigned) (rem / 3600),
                 (unsigned) (rem / 60 % 60), (unsigned) (rem % 60));
}

static const double time_steps_s[] = { 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200,
                                       10800, 21600, 43200, 86400, 172800, 604800 };

/* Wall-clock ticks: x is seconds since from_ms, labels are UTC times of day
 * (dates when a step is a day or more). */
static void draw_clock_axis(struct svg *s, const struct panel *p, int64_t from_ms, bool labels) {
        double span = p->x1 - p->x0, target = fmax(2, p->w / 110), step = time_steps_s[ELEMENTSOF(time_steps_s) - 1];
        double t0 = (double) from_ms / 1000.0;
        char buf[32];

        for (size_t i = 0; i < ELEMENTSOF(time_steps_s); i++)
                if (span / time_steps_s[i] <= target) {
                        step = time_steps_s[i];
                        break;
                }
        if (span / step > target)       /* months and more: whole weeks, as many as fit */
                step *= ceil(span / step / target);
        /* counted, not only compared: far from 1970 a small step no longer moves t */
        for (size_t i = 0, n = (size_t) target + 2; i < n; i++) {
                double t = (ceil((t0 + p->x0) / step) + (double) i) * step, x = px(p, t - t0);

                if (t > t0 + p->x1 + 1e-6)
                        break;
                svg_line(s, x, p->y, x, p->y + p->h, GRID, 1, NULL);
                if (!labels)
                        continue;
                plot_format_utc((int64_t) llround(t * 1000), buf, sizeof buf);
                if (step >= 86400) {
                        buf[10] = '\0';                 /* "YYYY-MM-DD" */
                } else {
                        memmove(buf, buf + 11, 8);      /* "HH:MM:SS" */
                        buf[step >= 60 ? 5 : 8] = '\0';
                }
                svg_text(s, x, p->y + p->h + 15, "middle", FONT_SMALL, AXIS, buf);
        }
        if (labels) {
                plot_format_utc(from_ms, buf, sizeof buf);
                svg_textf(s, p->x + p->w / 2, p->y + p->h + 32, "middle", FONT, AXIS, "time (UTC) from %s", buf);
        }
}

static double kind_scale(enum plot_kind k) {
        return k == PLOT_KIND_FREQ ? 1e-6 : k == PLOT_KIND_LOAD ? 100 : 1;
}

static const char *kind_title(enum plot_kind k) {
        return k == PLOT_KIND_FREQ ? "CPU MHz" : k == PLOT_KIND_LOAD ? "load %" : "temperature °C";
}

/* One band (max forward, min back) and the mean line per run of buckets
 * without a gap; colour i of the palette. */
static void draw_band(struct svg *s, const struct panel *p, const double *x, size_t n, int64_t gap,
                      const int64_t *t_ms, const struct plot_band *b, double scale, const char *colour) {
        struct svg_path band, mean;

        for (size_t a = 0, e; a < n; a = e) {
                for (e = a + 1; e < n && t_ms[e] - t_ms[e - 1] <= gap; e++)
                        ;
                svg_path_begin(&band, s);
                for (size_t i = a; i < e; i++)
                        if (isfinite(b->max[i]))
                                svg_path_point(&band, x[i], py(p, b->max[i] * scale));
                for (size_t i = e; i-- > a; )
                        if (isfinite(b->min[i]))
                                svg_path_point(&band, x[i], py(p, b->min[i] * scale));
                svg_path_end(&band, NULL, 0, NULL, colour, 0.25);
        }
        svg_path_begin(&mean, s);
        for (size_t i = 0; i < n; i++) {
                if (i > 0 && t_ms[i] - t_ms[i - 1] > gap)
                        svg_path_point(&mean, NAN, NAN);
                svg_path_point(&mean, x[i], isfinite(b->mean[i]) ? py(p, b->mean[i] * scale) : NAN);
        }
        svg_path_end(&mean, colour, 1.4, NULL, NULL, 1);
}

bool plot_throttled(double freq_hz, double max_hz, double load) {
        /* a NaN load is unknown: the frequency alone decides */
        return isfinite(freq_hz) && max_hz > 0 && freq_hz < max_hz * (1 - PLOT_THROTTLE_TOLERANCE) &&
               !(load < PLOT_THROTTLE_LOAD);
}

#define STRIP_H 36.0                    /* px, a frequency panel whose values do not change */
#define WARN_COLOUR "#E69F00"

/* What the history's panels share. */
struct history_plot {
        const int64_t *t_ms;
        size_t n;
        int64_t bucket_ms, from_ms;
        const struct plot_band *bands;
        size_t n_bands;
        const struct plot_history_marks *marks;
        double *x;                      /* px, each bucket's middle */
        bool *throttled;                /* each bucket's */
        bool any_throttled;
        double top, bottom;             /* px, the first panel's top and the last one's bottom */
};

/* A bucket is throttled when one of the frequencies is, by the load of the
 * first load series; without a load series, by the frequency alone. */
static void history_throttled(struct history_plot *h) {
        const double *load = NULL;

        for (size_t i = 0; i < h->n_bands && !load; i++)
                if (h->bands[i].kind == PLOT_KIND_LOAD)
                        load = h->bands[i].mean;
        for (size_t b = 0; b < h->n; b++) {
                h->throttled[b] = false;
                if (load && !isfinite(load[b]))
                        continue;       /* a load is shown but not known here: not counted */
                for (size_t i = 0; i < h->n_bands; i++)
                        if (h->bands[i].kind == PLOT_KIND_FREQ &&
                            plot_throttled(h->bands[i].mean[b], h->bands[i].max_hz, load ? load[b] : NAN))
                                h->throttled[b] = true;
                h->any_throttled |= h->throttled[b];
        }
}

/* The frequencies do not change over the window (within 1 MHz): a strip says so. */
static bool history_freq_flat(const struct history_plot *h, double *value) {
        struct range r = RANGE_EMPTY;

        for (size_t i = 0; i < h->n_bands; i++)
                if (h->bands[i].kind == PLOT_KIND_FREQ) {
                        plot_range_add_array(&r, h->bands[i].min, h->n, 0, 1e-6);
                        plot_range_add_array(&r, h->bands[i].max, h->n, 0, 1e-6);
                }
        *value = r.hi;
        return r.lo <= r.hi && r.hi - r.lo < 1;
}

static double history_px(const struct panel *p, const struct history_plot *h, int64_t t_ms) {
        return px(p, (double) (t_ms - h->from_ms) / 1000.0);
}

/* Each stretch of throttled buckets, shaded over the panel. Samples further
 * apart than a bucket leave buckets empty: the stretch goes on over gaps of
 * up to two sample spacings (the shortest step between buckets). */
static void draw_history_throttled(struct svg *s, const struct panel *p, const struct history_plot *h) {
        int64_t step = 0;

        if (!h->any_throttled)
                return;
        for (size_t i = 1; i < h->n; i++)
                if (step == 0 || h->t_ms[i] - h->t_ms[i - 1] < step)
                        step = h->t_ms[i] - h->t_ms[i - 1];
        if (step < h->bucket_ms)
                step = h->bucket_ms;
        svg_raw(s, "<g class=\"throttled\">\n");
        for (size_t a = 0, e; a < h->n; a = e) {
                for (e = a + 1; e < h->n && h->throttled[e] == h->throttled[a] &&
                     h->t_ms[e] - h->t_ms[e - 1] <= 2 * step; e++)
                        ;
                if (!h->throttled[a])
                        continue;
                double x0 = fmax(p->x, history_px(p, h, h->t_ms[a]));
                double x1 = fmin(p->x + p->w, history_px(p, h, h->t_ms[e - 1] + h->bucket_ms));
                if (x1 > x0)
                        svg_rect(s, x0, p->y, x1 - x0, p->h, LEVEL_COLOUR, 0.12);
        }
        svg_raw(s, "</g>\n");
}

static void draw_history_panel(struct svg *s, const struct panel *p_in, enum plot_kind kind,
                               const struct history_plot *h, bool last, bool strip) {
        struct panel p = *p_in;
        struct range r = RANGE_EMPTY;
        double scale = kind_scale(kind), flat = NAN;
        const struct plot_history_marks *m = h->marks;
        size_t k = 0;

        for (size_t i = 0; i < h->n_bands; i++)
                if (h->bands[i].kind == kind) {
                        plot_range_add_array(&r, h->bands[i].min, h->n, 0, scale);
                        plot_range_add_array(&r, h->bands[i].max, h->n, 0, scale);
                }
        if (kind == PLOT_KIND_TEMP && m) {
                struct range d = r;
                for (size_t i = 0; i < m->n_levels; i++)
                        if (!(d.lo <= d.hi) || m->levels[i].temp_c <= d.hi + 20)
                                range_add(&r, m->levels[i].temp_c);
        }
        if (strip) {
                flat = r.hi;
                p.y0 = flat - 1;
                p.y1 = flat + 1;
        } else {
                plot_panel_y_range(&p, r, kind == PLOT_KIND_TEMP ? 5 : 10);
        }
        draw_history_throttled(s, &p, h);
        plot_draw_frame(s, &p);
        draw_clock_axis(s, &p, h->from_ms, last);
        if (strip) {
                svg_text(s, p.x - 4, p.y + 12, "end", FONT_SMALL, AXIS, kind_title(kind));
                svg_text(s, p.x - 4, p.y + p.h - 6, "end", FONT_SMALL, AXIS, svg_num(flat, 0, (char[32]) {}, 32));
        } else
                plot_draw_y_axis(s, &p, 1, false, kind_title(kind), AXIS);
        if (kind == PLOT_KIND_TEMP && m)
                plot_draw_levels(s, &p, m->levels, m->n_levels);
        for (size_t i = 0; i < h->n_bands; i++) {
                char text[320];
                if (h->bands[i].kind != kind)
                        continue;
                draw_band(s, &p, h->x, h->n, 2 * h->bucket_ms, h->t_ms, &h->bands[i], scale, svg_palette(i));
                snprintf(text, sizeof text, "%s%s", h->bands[i].id, strip ? ": unchanged" : "");
                plot_draw_legend_line(s, p.x + 8, (strip ? p.y + p.h / 2 + 4 : p.y + 16) + 15.0 * (double) k++,
                                      svg_palette(i), NULL, text);
        }
}

/* Each run's start (solid) and end (dashed) over every panel, its label above the first. */
static void draw_history_runs(struct svg *s, const struct panel *p, const struct history_plot *h) {
        double last_label = -INFINITY;

        if (!h->marks || h->marks->n_runs == 0)
                return;
        svg_raw(s, "<g class=\"runs\">\n");
        for (size_t i = 0; i < h->marks->n_runs; i++) {
                const struct plot_span *r = &h->marks->runs[i];
                double a = history_px(p, h, r->from_ms), b = history_px(p, h, r->to_ms);

                if (b < p->x || a > p->x + p->w)
                        continue;
                if (a >= p->x)
                        svg_line(s, a, h->top, a, h->bottom, MUTED, 1, NULL);
                if (b <= p->x + p->w && r->to_ms > r->from_ms)
                        svg_line(s, b, h->top, b, h->bottom, MUTED, 1, "4 3");
                a = fmax(a, p->x);
                if (a - last_label < 90)        /* labels of runs close together would overlap */
                        continue;
                svg_text(s, a + 2, h->top - 4, "start", FONT_SMALL, MUTED, str(r->label));
                last_label = a;
        }
        svg_raw(s, "</g>\n");
}

/* A triangle on the top edge of the panel and a dotted line under it, per change to warn or crit. */
static void draw_history_alerts(struct svg *s, const struct panel *p, const struct history_plot *h) {
        char a[32], b[32], c[32], y0[32], y1[32];

        if (!h->marks || h->marks->n_alerts == 0)
                return;
        svg_raw(s, "<g class=\"alerts\">\n");
        for (size_t i = 0; i < h->marks->n_alerts; i++) {
                const struct plot_alert_mark *m = &h->marks->alerts[i];
                const char *colour = m->crit ? LEVEL_COLOUR : WARN_COLOUR;
                double x = history_px(p, h, m->t_ms);

                if (x < p->x || x > p->x + p->w)
                        continue;
                svg_line(s, x, p->y, x, p->y + p->h, colour, 1, "1 3");
                svg_raw(s, "<path d=\"M%s %sL%s %sL%s %sZ\" fill=\"%s\"><title>", svg_num(x - 5, 1, a, sizeof a),
                        svg_num(p->y, 1, y0, sizeof y0), svg_num(x + 5, 1, b, sizeof b), y0,
                        svg_num(x, 1, c, sizeof c), svg_num(p->y + 8, 1, y1, sizeof y1), colour);
                svg_escaped(s, str(m->label));
                svg_raw(s, "</title></path>\n");
        }
        svg_raw(s, "</g>\n");
}

/* "throttled" under the temperature panel's legend: at the top right it
 * ran into the labels of the trips near the top (and stays there above
 * another kind's panel, whose legend may be a strip's). */
static void draw_history_key(struct svg *s, const struct panel *p, enum plot_kind kind,
                             const struct history_plot *h) {
        double x = p->x + p->w - 92, y = p->y + 16;

        if (!h->any_throttled)
                return;
        if (kind == PLOT_KIND_TEMP) {
                x = p->x + 8;
                for (size_t i = 0; i < h->n_bands; i++)
                        if (h->bands[i].kind == kind)
                                y += 15;
        }
        svg_rect(s, x, y - 9, 22, 10, LEVEL_COLOUR, 0.25);
        svg_text(s, x + 28, y, "start", FONT_SMALL, AXIS, "throttled");
}

static int history_check(const int64_t *t_ms, size_t n_buckets, int64_t bucket_ms, int64_t from_ms,
                         int64_t to_ms, const struct plot_band *bands, size_t n_bands,
                         const struct plot_history_marks *marks, unsigned width, unsigned height) {
        if (plot_check_size(width, height) < 0 || to_ms < from_ms || n_buckets > PLOT_BUCKETS_MAX ||
            (n_buckets && !t_ms) || (n_bands && !bands) || bucket_ms <= 0)
                return -EINVAL;
        if (marks && (marks->n_levels > PLOT_LEVELS_MAX || (marks->n_runs && !marks->runs) ||
                      (marks->n_alerts && !marks->alerts)))
                return -EINVAL;
        for (size_t i = 0; i < n_bands; i++)
                if (bands[i].kind >= _PLOT_KIND_MAX || (n_buckets && (!bands[i].min || !bands[i].max || !bands[i].mean)))
                        return -EINVAL;
        return 0;
}

int plot_history_svg(const int64_t *t_ms, size_t n_buckets, int64_t bucket_ms, int64_t from_ms, int64_t to_ms,
                     const struct plot_band *bands, size_t n_bands, const struct plot_history_marks *marks,
                     unsigned width, unsigned height, char **ret, size_t *ret_len) {
        struct history_plot h = { t_ms, n_buckets, bucket_ms, from_ms, bands, n_bands, marks };
        bool present[_PLOT_KIND_MAX] = {}, strip;
        struct panel ps[_PLOT_KIND_MAX];
        enum plot_kind kinds[_PLOT_KIND_MAX];
        size_t n_panels = 0, k = 0;
        double panel_h, strip_h, y = 40, flat;
        struct svg s;
        char a[32], b[32];
        int e = history_check(t_ms, n_buckets, bucket_ms, from_ms, to_ms, bands, n_bands, marks, width, height);

        if (e < 0)
                return e;
        for (size_t i = 0; i < n_bands; i++) {
                n_panels += !present[bands[i].kind];
                present[bands[i].kind] = true;
        }
        h.x = malloc((n_buckets ? n_buckets : 1) * sizeof *h.x);
        h.throttled = malloc((n_buckets ? n_buckets : 1) * sizeof *h.throttled);
        if (!h.x || !h.throttled || svg_begin(&s, width, height, "heatcurve: history") < 0) {
                free(h.x);
                free(h.throttled);
                return -ENOMEM;
        }
        history_throttled(&h);
        strip = present[PLOT_KIND_FREQ] && n_panels > 1 && history_freq_flat(&h, &flat);
        strip_h = strip ? STRIP_H : 0;
        plot_format_utc(from_ms, a, sizeof a);
        plot_format_utc(to_ms, b, sizeof b);
        svg_textf(&s, 12, 22, "start", FONT_TITLE, AXIS, "History %s — %s UTC", a, b + 11);
        if (n_panels == 0)
                svg_text(&s, width / 2.0, height / 2.0, "middle", FONT_TITLE, MUTED, "no sensors selected");
        panel_h = (height - 40.0 - 50.0 - 14.0 * (double) (n_panels ? n_panels - 1 : 0) - strip_h) /
                  (double) (n_panels ? n_panels - strip : 1);
        for (enum plot_kind kind = 0; kind < _PLOT_KIND_MAX; kind++) {
                bool thin = strip && kind == PLOT_KIND_FREQ;
                if (!present[kind])
                        continue;
                ps[k] = (struct panel) { .x = 64, .y = y, .w = width - 64 - 24, .h = thin ? strip_h : panel_h };
                plot_panel_x_range(&ps[k], 0, (double) (to_ms - from_ms) / 1000.0);
                kinds[k++] = kind;
                y += ps[k - 1].h + 14;
        }
        if (n_panels) {
                /* a bucket is drawn at its middle */
                for (size_t i = 0; i < n_buckets; i++)
                        h.x[i] = fmin(ps[0].x + ps[0].w, px(&ps[0], ((double) (t_ms[i] - from_ms) + 0.5 * (double) bucket_ms) / 1000.0));
                h.top = ps[0].y;
                h.bottom = ps[n_panels - 1].y + ps[n_panels - 1].h;
        }
        for (size_t i = 0; i < n_panels; i++)
                draw_history_panel(&s, &ps[i], kinds[i], &h, i + 1 == n_panels, strip && kinds[i] == PLOT_KIND_FREQ);
        if (n_panels) {
                draw_history_runs(&s, &ps[0], &h);
                draw_history_alerts(&s, &ps[0], &h);
                draw_history_key(&s, &ps[0], kinds[0], &h);
        }
        free(h.x);
        free(h.throttled);
        return svg_end(&s, ret, ret_len);
}
