/* plot.c — a run and runs compared as SVG, from plain data: no I/O, no daemon (the history: plot-history.c). */
#include "plot.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svg.h"
#include "util.h"

#include "plot-internal.h"

void plot_range_add_array(struct range *r, const double *v, size_t n, double offset, double scale) {
        for (size_t i = 0; v && i < n; i++)
                range_add(r, (v[i] - offset) * scale);
}

/* Rounds the y range out to whole ticks, with a little room; a flat or
 * empty range gets a span of its own. */
void plot_panel_y_range(struct panel *p, struct range r, double min_span) {
        double step, first;

        if (!(r.lo <= r.hi)) {
                r.lo = 0;
                r.hi = min_span;
        }
        if (r.hi - r.lo < min_span) {
                double mid = 0.5 * (r.lo + r.hi);
                r.lo = mid - 0.5 * min_span;
                r.hi = mid + 0.5 * min_span;
        }
        svg_ticks(r.lo, r.hi, 6, &step, &first);
        p->y0 = floor(r.lo / step + 1e-9) * step;
        p->y1 = ceil(r.hi / step - 1e-9) * step;
        if (p->y1 - p->y0 < step)
                p->y1 = p->y0 + step;
}

void plot_panel_x_range(struct panel *p, double lo, double hi) {
        if (!(lo < hi) || !isfinite(lo) || !isfinite(hi)) {
                lo = isfinite(lo) ? lo : 0;
                hi = lo + 1;
        }
        p->x0 = lo;
        p->x1 = hi;
}

void plot_draw_frame(struct svg *s, const struct panel *p) {
        svg_raw(s, "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"none\" stroke=\"%s\"/>\n",
                svg_num(p->x, 1, (char[32]) {}, 32), svg_num(p->y, 1, (char[32]) {}, 32),
                svg_num(p->w, 1, (char[32]) {}, 32), svg_num(p->h, 1, (char[32]) {}, 32), AXIS);
}

/* Horizontal grid lines and labels on the left (or right) edge; title along the axis. */
void plot_draw_y_axis(struct svg *s, const struct panel *p, double scale_div, bool right, const char *title,
                        const char *colour) {
        double step, first, x = right ? p->x + p->w + 4 : p->x - 4;
        size_t n = svg_ticks(p->y0, p->y1, p->h >= 160 ? 6 : 3, &step, &first);
        int dec = svg_step_decimals(step / scale_div);
        char buf[32];

        for (size_t i = 0; i < n; i++) {
                double v = first + (double) i * step, y = py(p, v);
                if (!right)
                        svg_line(s, p->x, y, p->x + p->w, y, GRID, 1, NULL);
                svg_text(s, x, y + 4, right ? "start" : "end", FONT_SMALL, colour, svg_num(v / scale_div, dec, buf, sizeof buf));
        }
        svg_raw(s, "<text transform=\"translate(%s %s) rotate(-90)\" font-size=\"%d\" fill=\"%s\" text-anchor=\"middle\">",
                svg_num(right ? p->x + p->w + 46 : p->x - 46, 1, buf, sizeof buf),
                svg_num(p->y + p->h / 2, 1, (char[32]) {}, 32), FONT, colour);
        svg_escaped(s, title);
        svg_raw(s, "</text>\n");
}

/* Time of a run: s, min or h, whichever keeps the labels short. */
struct time_unit {
        double s;
        const char *name;
};

static struct time_unit time_unit_for(double span_s) {
        if (span_s <= 180)
                return (struct time_unit) { 1, "s" };
        if (span_s <= 3 * 3600)
                return (struct time_unit) { 60, "min" };
        return (struct time_unit) { 3600, "h" };
}

static void draw_x_axis(struct svg *s, const struct panel *p, bool labels, const char *title) {
        struct time_unit u = time_unit_for(p->x1 - p->x0);
        double step, first;
        size_t n = svg_ticks(p->x0 / u.s, p->x1 / u.s, (size_t) fmax(2, p->w / 90), &step, &first);
        int dec = svg_step_decimals(step);
        char buf[32], t[96];

        for (size_t i = 0; i < n; i++) {
                double x = px(p, (first + (double) i * step) * u.s);
                svg_line(s, x, p->y, x, p->y + p->h, GRID, 1, NULL);
                if (labels)
                        svg_text(s, x, p->y + p->h + 15, "middle", FONT_SMALL, AXIS,
                                 svg_num(first + (double) i * step, dec, buf, sizeof buf));
        }
        if (labels) {
                snprintf(t, sizeof t, "%s (%s)", title, u.name);
                svg_text(s, p->x + p->w / 2, p->y + p->h + 32, "middle", FONT, AXIS, t);
        }
}

/* min and max of each bucket of the samples in [x0, x1], in time order: at
 * most 2 x buckets points whatever n. A bucket whose samples are all
 * missing lifts the pen. */
static void draw_series(struct svg *s, const struct panel *p, const double *t, const double *y, size_t n,
                        double offset, double scale, const char *colour, double width) {
        size_t nb = (size_t) fmin(PLOT_BUCKETS_MAX, fmax(1, floor(p->w))), cur = SIZE_MAX;
        size_t imin = 0, imax = 0;
        bool any = false, seen = false;
        struct svg_path path;

        svg_path_begin(&path, s);
        for (size_t i = 0; i <= n; i++) {
                size_t b = 0;
                if (i < n) {
                        if (!isfinite(t[i]) || t[i] < p->x0 || t[i] > p->x1)
                                continue;
                        b = (size_t) fmin((double) nb - 1, floor((t[i] - p->x0) / (p->x1 - p->x0) * (double) nb));
                }
                if (i == n || b != cur) {
                        if (any) {
                                size_t a = imin < imax ? imin : imax, c = imin < imax ? imax : imin;
                                svg_path_point(&path, px(p, t[a]), py(p, (y[a] - offset) * scale));
                                if (c != a)
                                        svg_path_point(&path, px(p, t[c]), py(p, (y[c] - offset) * scale));
                        } else if (seen) {
                                svg_path_point(&path, NAN, NAN);
                        }
                        if (i == n)
                                break;
                        cur = b;
                        any = false;
                        seen = true;
                }
                if (!isfinite(y[i]))
                        continue;
                if (!any || y[i] < y[imin])
                        imin = i;
                if (!any || y[i] > y[imax])
                        imax = i;
                any = true;
        }
        svg_path_end(&path, colour, width, NULL, NULL, 1);
}

static void draw_fit(struct svg *s, const struct panel *p, const struct analysis_fit *f, double from, double to,
                     const char *colour) {
        struct svg_path path;

        if (f->model == ANALYSIS_MODEL_NONE || !(to > from))
                return;
        svg_path_begin(&path, s);
        for (size_t i = 0; i <= FIT_POINTS; i++) {
                double t = from + (to - from) * (double) i / FIT_POINTS, v = analysis_fit_eval(f, t);
                svg_path_point(&path, px(p, t), in_y(p, v) ? py(p, v) : NAN);
        }
        svg_path_end(&path, colour, 2, DASH_FIT, NULL, 1);
}

/* A horizontal line across the panel with its label at the right end. */
static void draw_level(struct svg *s, const struct panel *p, double v, const char *colour, const char *dash,
                       const char *label) {
        char text[96];

        if (!in_y(p, v))
                return;
        svg_line(s, p->x, py(p, v), p->x + p->w, py(p, v), colour, 1.2, dash);
        snprintf(text, sizeof text, "%s %s °C", label, svg_num(v, 1, (char[32]) {}, 32));
        svg_text(s, p->x + p->w - 4, py(p, v) - 3, "end", FONT_SMALL, colour, text);
}

static void fmt_c(char *buf, size_t size, double v) {
        if (isfinite(v))
                snprintf(buf, size, "%s °C", svg_num(v, 1, (char[32]) {}, 32));
        else
                snprintf(buf, size, "—");
}

static void fmt_duration(char *buf, size_t size, double v) {
        if (!isfinite(v))
                snprintf(buf, size, "—");
        else if (fabs(v) < 120)
                snprintf(buf, size, "%s s", svg_num(v, 0, (char[32]) {}, 32));
        else if (fabs(v) < 7200)
                snprintf(buf, size, "%s min", svg_num(v / 60, 1, (char[32]) {}, 32));
        else
                snprintf(buf, size, "%s h", svg_num(v / 3600, 2, (char[32]) {}, 32));
}

void plot_run_fits(const double *t_s, const double *temp_c, const enum analysis_phase *phase, size_t n,
                   struct analysis_fit *heat, struct analysis_fit *cool) {
        size_t a = 0, b, c, d;

        heat->model = cool->model = ANALYSIS_MODEL_NONE;
        while (a < n && phase[a] != ANALYSIS_PHASE_STRESS)
                a++;
        for (b = a; b < n && phase[b] == ANALYSIS_PHASE_STRESS; b++)
                ;
        if (b > a && analysis_fit_plateau(t_s + a, temp_c + a, b - a, heat) < 0)
                heat->model = ANALYSIS_MODEL_NONE;
        for (c = b; c < n && phase[c] != ANALYSIS_PHASE_COOLDOWN; c++)
                ;
        for (d = c; d < n && phase[d] == ANALYSIS_PHASE_COOLDOWN; d++)
                ;
        if (d > c && analysis_fit_plateau(t_s + c, temp_c + c, d - c, cool) < 0)
                cool->model = ANALYSIS_MODEL_NONE;
}

int plot_check_size(unsigned width, unsigned height) {
        return width < PLOT_SIZE_MIN || width > PLOT_SIZE_MAX || height < PLOT_SIZE_MIN || height > PLOT_SIZE_MAX ?
               -EINVAL : 0;
}

static const char *phase_fill(enum analysis_phase k) {
        return k == ANALYSIS_PHASE_STRESS ? "#E69F00" : k == ANALYSIS_PHASE_COOLDOWN ? "#56B4E9" : "#999999";
}

static const char *phase_name(enum analysis_phase k) {
        return k == ANALYSIS_PHASE_STRESS ? "stress" : k == ANALYSIS_PHASE_COOLDOWN ? "cooldown" : "idle";
}

static void draw_phases(struct svg *s, const struct plot_run *r, const struct panel *top, const struct panel *bottom) {
        for (size_t i = 0; i < r->n_phases; i++) {
                const struct plot_phase *ph = &r->phases[i];
                double a = fmax(top->x0, ph->start_s), b = fmin(top->x1, ph->end_s);
                if (!(b > a))
                        continue;
                svg_rect(s, px(top, a), top->y, px(top, b) - px(top, a), top->h, phase_fill(ph->kind), 0.14);
                svg_rect(s, px(bottom, a), bottom->y, px(bottom, b) - px(bottom, a), bottom->h,
                         phase_fill(ph->kind), 0.14);
                if (ph->disturbed) {
                        svg_rect(s, px(top, a), top->y, px(top, b) - px(top, a), top->h, "url(#disturbed)", 1);
                        svg_rect(s, px(bottom, a), bottom->y, px(bottom, b) - px(bottom, a), bottom->h,
                                 "url(#disturbed)", 1);
                }
                if (px(top, b) - px(top, a) >= 48)
                        svg_text(s, 0.5 * (px(top, a) + px(top, b)), top->y + 14, "middle", FONT, MUTED,
                                 phase_name(ph->kind));
        }
}

/* [start, end] of the first phase of that kind (from index `from`), NaN when none. */
static bool run_phase_span(const struct plot_run *r, enum analysis_phase kind, double after, double *a, double *b) {
        for (size_t i = 0; i < r->n_phases; i++)
                if (r->phases[i].kind == kind && r->phases[i].start_s >= after) {
                        *a = r->phases[i].start_s;
                        *b = r->phases[i].end_s;
                        return true;
                }
        return false;
}

/* The temperature range: samples, fits, the plateau band, reference lines;
 * levels only when near the data (the others are named as off scale). */
/* The plateau's 95 % interval: its own ends, or +- ci95 for a run from
 * before they were kept. False when there is none. */
static bool plateau_band(const struct run_metrics *m, double *lo, double *hi) {
        if (!isfinite(m->plateau_c))
                return false;
        if (isfinite(m->plateau_low_c) && isfinite(m->plateau_high_c)) {
                *lo = m->plateau_low_c;
                *hi = m->plateau_high_c;
                return true;
        }
        *lo = m->plateau_c - m->plateau_ci95_c;
        *hi = m->plateau_c + m->plateau_ci95_c;
        return isfinite(m->plateau_ci95_c);
}

static struct range run_temp_range(const struct plot_run *r) {
        const struct run_metrics *m = &r->metrics;
        struct range d = RANGE_EMPTY, all;
        double lo, hi;

        plot_range_add_array(&d, r->temp_c, r->n, 0, 1);
        all = d;
        if (plateau_band(m, &lo, &hi) && hi - lo < 40) {
                range_add(&all, lo);
                range_add(&all, hi);
        }
        range_add(&all, m->baseline_c);
        if (isfinite(m->ambient_c) && d.lo - m->ambient_c < 40)
                range_add(&all, m->ambient_c);
        for (size_t i = 0; i < r->n_levels; i++)
                if (r->levels[i].temp_c <= d.hi + 20)
                        range_add(&all, r->levels[i].temp_c);
        return all;
}

/* Trip lines across the panel; those off its scale are named in its corner. */
void plot_draw_levels(struct svg *s, const struct panel *p, const struct plot_level *levels, size_t n) {
        char off[256] = "";

        for (size_t i = 0; i < n; i++) {
                const struct plot_level *l = &levels[i];
                if (in_y(p, l->temp_c))
                        draw_level(s, p, l->temp_c, LEVEL_COLOUR, "8 3 2 3", l->label);
                else
                        snprintf(off + strlen(off), sizeof off - strlen(off), "%s%s %s °C", off[0] ? ", " : "",
                                 l->label, svg_num(l->temp_c, 1, (char[32]) {}, 32));
        }
        if (off[0])
                svg_textf(s, p->x + 4, p->y + p->h - 6, "start", FONT_SMALL, LEVEL_COLOUR, "off scale: %s", off);
}

static void draw_run_temps(struct svg *s, const struct plot_run *r, const struct panel *p) {
        const struct run_metrics *m = &r->metrics;
        double a = NAN, b = NAN, c, d, lo, hi;

        if (analysis_regulated(m))      /* held by throttling: the limit it was held at, no plateau */
                draw_level(s, p, m->regulated_c, svg_palette(1), DASH_FIT, "regulated");
        else if (run_phase_span(r, ANALYSIS_PHASE_STRESS, -INFINITY, &a, &b) && plateau_band(m, &lo, &hi)) {
                hi = fmin(p->y1, hi);
                lo = fmax(p->y0, lo);
                if (hi > lo)
                        svg_rect(s, px(p, a), py(p, hi), px(p, fmin(p->x1, b)) - px(p, a), py(p, lo) - py(p, hi),
                                 svg_palette(1), 0.15);
                draw_level(s, p, m->plateau_c, svg_palette(1), DASH_FIT, "plateau");
        }
        draw_level(s, p, m->baseline_c, MUTED, DASH_REF, "baseline");
        draw_level(s, p, m->ambient_c, MUTED, "2 3", "ambient");
        plot_draw_levels(s, p, r->levels, r->n_levels);
        draw_series(s, p, r->t_s, r->temp_c, r->n, 0, 1, svg_palette(0), 1.5);
        if (run_phase_span(r, ANALYSIS_PHASE_STRESS, -INFINITY, &a, &b))
                draw_fit(s, p, &r->heat, r->heat.t_origin_s, fmin(b, p->x1), svg_palette(1));
        if (run_phase_span(r, ANALYSIS_PHASE_COOLDOWN, isfinite(b) ? b : -INFINITY, &c, &d))
                draw_fit(s, p, &r->cool, r->cool.t_origin_s, fmin(d, p->x1), svg_palette(2));
}

static void draw_run_lower(struct svg *s, const struct plot_run *r, const struct panel *p_in) {
        struct panel p = *p_in, w = *p_in;
        struct range fr = RANGE_EMPTY, wr = RANGE_EMPTY;
        bool work = r->work_rate && r->work_unit && r->work_unit[0];
        char title[64];
        double div;

        plot_range_add_array(&fr, r->freq_hz, r->n, 0, 1e-6);
        plot_panel_y_range(&p, fr, 100);
        p.y0 *= 1e6;
        p.y1 *= 1e6;
        plot_draw_frame(s, &p);
        draw_x_axis(s, &p, true, "time since the run started");
        plot_draw_y_axis(s, &p, 1e6, false, "CPU MHz", svg_palette(0));
        if (r->freq_hz)
                draw_series(s, &p, r->t_s, r->freq_hz, r->n, 0, 1, svg_palette(0), 1.2);
        if (!work)
                return;
        plot_range_add_array(&wr, r->work_rate, r->n, 0, 1);
        if (!(wr.lo <= wr.hi))
                return;
        wr.lo = fmin(0, wr.lo);
        plot_panel_y_range(&w, wr, 1);
        /* SI prefixes keep the labels of billions of ops/s short */
        div = w.y1 >= 1e10 ? 1e9 : w.y1 >= 1e7 ? 1e6 : w.y1 >= 1e4 ? 1e3 : 1;
        snprintf(title, sizeof title, "work %s%s/s", div == 1e9 ? "G" : div == 1e6 ? "M" : div == 1e3 ? "k" : "",
                 r->work_unit);
        plot_draw_y_axis(s, &w, div, true, title, svg_palette(2));
        draw_series(s, &w, r->t_s, r->work_rate, r->n, 0, 1, svg_palette(2), 1.2);
}

void plot_draw_legend_line(struct svg *s, double x, double y, const char *colour, const char *dash,
                             const char *text) {
        svg_line(s, x, y - 4, x + 22, y - 4, colour, 2, dash);
        svg_text(s, x + 28, y, "start", FONT_SMALL, AXIS, text);
}

static bool run_disturbed_phase(const struct plot_run *r) {
        for (size_t i = 0; i < r->n_phases; i++)
                if (r->phases[i].disturbed)
                        return true;
        return false;
}

/* Diagonal lines over a disturbed phase: it reads as such without colour too. */
static void draw_hatch_def(struct svg *s) {
        svg_raw(s, "<defs><pattern id=\"disturbed\" width=\"8\" height=\"8\" patternUnits=\"userSpaceOnUse\" "
                "patternTransform=\"rotate(45)\"><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"8\" stroke=\"%s\" "
                "stroke-width=\"2\" stroke-opacity=\"0.4\"/></pattern></defs>\n", LEVEL_COLOUR);
}

/* The quality under the legend: what the hatching means, and the word. */
static void draw_run_quality(struct svg *s, const struct plot_run *r, double x, double y) {
        if (run_disturbed_phase(r)) {
                svg_rect(s, x, y - 9, 22, 10, "url(#disturbed)", 1);
                svg_text(s, x + 28, y, "start", FONT_SMALL, AXIS, "disturbed phase");
                y += 17;
        }
        if (str(r->quality)[0])
                svg_textf(s, x, y, "start", FONT_SMALL, LEVEL_COLOUR, "quality: %s", r->quality);
}

static void draw_run_box(struct svg *s, const struct plot_run *r, double x, double y, double w) {
        const struct run_metrics *m = &r->metrics;
        char a[48], b[48], line[128];
        double yy = y + 18;
        int extra = 17 * (run_disturbed_phase(r) + (str(r->quality)[0] != '\0'));

        svg_raw(s, "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%d\" fill=\"#f7f7f7\" stroke=\"#cccccc\"/>\n",
                svg_num(x, 1, (char[32]) {}, 32), svg_num(y, 1, (char[32]) {}, 32), svg_num(w, 1, (char[32]) {}, 32),
                176 + extra);
        fmt_c(a, sizeof a, m->plateau_c);
        if (isfinite(m->plateau_c) && isfinite(m->plateau_low_c) && isfinite(m->plateau_high_c))
                snprintf(a, sizeof a, "%s °C (%s–%s)", svg_num(m->plateau_c, 1, (char[32]) {}, 32),
                         svg_num(m->plateau_low_c, 1, (char[32]) {}, 32),
                         svg_num(m->plateau_high_c, 1, (char[32]) {}, 32));
        else if (isfinite(m->plateau_c) && isfinite(m->plateau_ci95_c))
                snprintf(a, sizeof a, "%s ± %s °C", svg_num(m->plateau_c, 1, (char[32]) {}, 32),
                         svg_num(m->plateau_ci95_c, 1, (char[32]) {}, 32));
        snprintf(line, sizeof line, "plateau %s", a);
        if (analysis_regulated(m))      /* held by throttling: the limit, not a plateau */
                snprintf(line, sizeof line, "%sregulated at %s °C", analysis_regulated_possibly(m) ? "possibly " : "",
                         svg_num(m->regulated_c, 1, (char[32]) {}, 32));
        svg_text(s, x + 8, yy, "start", FONT, AXIS, line);
        fmt_c(a, sizeof a, m->rise_over_ambient_c);
        snprintf(line, sizeof line, "rise over ambient %s", a);
        svg_text(s, x + 8, yy += 17, "start", FONT, AXIS, line);
        fmt_duration(a, sizeof a, m->tau_heat_s);
        fmt_duration(b, sizeof b, m->t90_heat_s);
        snprintf(line, sizeof line, "τ heat %s, t90 %s", a, b);
        svg_text(s, x + 8, yy += 17, "start", FONT, AXIS, line);
        fmt_duration(a, sizeof a, m->tau_cool_s);
        snprintf(line, sizeof line, "τ cool %s", a);
        svg_text(s, x + 8, yy += 17, "start", FONT, AXIS, line);
        svg_num(-m->work_rate_drop_pct, 1, b, sizeof b);
        if (isfinite(m->throttled_fraction) && analysis_regulated(m) && isfinite(m->work_rate_drop_pct))
                snprintf(line, sizeof line, "throttled %s %%, work %s%s %%",
                         svg_num(100 * m->throttled_fraction, 0, (char[32]) {}, 32), b[0] == '-' ? "" : "+", b);
        else if (isfinite(m->throttled_fraction))
                snprintf(line, sizeof line, "throttled %s %%", svg_num(100 * m->throttled_fraction, 0, (char[32]) {}, 32));
        else
                snprintf(line, sizeof line, "throttled —");
        svg_text(s, x + 8, yy += 17, "start", FONT, AXIS, line);
        plot_draw_legend_line(s, x + 8, yy += 24, svg_palette(0), NULL,
                              r->sensor && r->sensor[0] ? r->sensor : "samples");
        plot_draw_legend_line(s, x + 8, yy += 17, svg_palette(1), DASH_FIT, "heat-up fit");
        plot_draw_legend_line(s, x + 8, yy += 17, svg_palette(2), DASH_FIT, "cool-down fit");
        if (!analysis_regulated(m)) {
                svg_rect(s, x + 8, (yy += 17) - 9, 22, 10, svg_palette(1), 0.15);
                svg_text(s, x + 36, yy, "start", FONT_SMALL, AXIS, "plateau 95 % band");
        }
        draw_run_quality(s, r, x + 8, yy + 17);
}

static void draw_title(struct svg *s, double x, double y, const char *a, const char *b, const char *c) {
        char t[512];

        snprintf(t, sizeof t, "%s%s%s%s%s", a, b[0] && a[0] ? " — " : "", b, c[0] && (a[0] || b[0]) ? " — " : "", c);
        svg_text(s, x, y, "start", FONT_TITLE, AXIS, t);
}


int plot_run_svg(const struct plot_run *r, unsigned width, unsigned height, char **ret, size_t *ret_len) {
        double box_w = fmin(210, width * 0.28), plot_h;
        struct panel top, bottom;
        struct svg s;
        double t_end;
        char date[96];

        if (!r || plot_check_size(width, height) < 0 || (r->n && (!r->t_s || !r->temp_c)) ||
            (r->n_phases && !r->phases) || r->n_levels > PLOT_LEVELS_MAX)
                return -EINVAL;
        if (svg_begin(&s, width, height, r->label && r->label[0] ? r->label : "heatcurve run") < 0)
                return -ENOMEM;
        snprintf(date, sizeof date, "%s%s%s", str(r->date), str(r->date)[0] && str(r->quality)[0] ? " — " : "",
                 str(r->quality));
        draw_title(&s, 12, 22, str(r->label)[0] ? r->label : "run", str(r->board), date);
        if (run_disturbed_phase(r))
                draw_hatch_def(&s);
        plot_h = height - 40.0 - 58.0;
        top = (struct panel) { .x = 64, .y = 40, .w = width - 64 - box_w - 70, .h = plot_h * 0.68 - 10 };
        bottom = top;
        bottom.y = top.y + top.h + 20;
        bottom.h = plot_h - top.h - 20;
        t_end = r->n ? r->t_s[r->n - 1] : 0;
        for (size_t i = 0; i < r->n_phases; i++)
                if (isfinite(r->phases[i].end_s))
                        t_end = fmax(t_end, r->phases[i].end_s);
        plot_panel_x_range(&top, r->n ? fmin(0, r->t_s[0]) : 0, t_end);
        plot_panel_x_range(&bottom, top.x0, top.x1);
        plot_panel_y_range(&top, run_temp_range(r), 5);
        draw_phases(&s, r, &top, &bottom);
        plot_draw_frame(&s, &top);
        draw_x_axis(&s, &top, false, NULL);
        plot_draw_y_axis(&s, &top, 1, false, "temperature °C", AXIS);
        draw_run_temps(&s, r, &top);
        draw_run_lower(&s, r, &bottom);
        draw_run_box(&s, r, width - box_w - 8, top.y, box_w);
        return svg_end(&s, ret, ret_len);
}

/* What the compare plot subtracts for y=rise: ambient, else the baseline. */
static double curve_reference(const struct plot_curve *c, bool *over_baseline) {
        *over_baseline = !isfinite(c->metrics.ambient_c);
        return *over_baseline ? c->metrics.baseline_c : c->metrics.ambient_c;
}

static void curve_name(const struct plot_curve *c, char *buf, size_t size) {
        if (str(c->label)[0])
                snprintf(buf, size, "%s", c->label);
        else
                snprintf(buf, size, "run %u", c->id);
        if (c->origin && c->origin[0])
                snprintf(buf + strlen(buf), size - strlen(buf), " (%s)", c->origin);
}

/* Text from x, squeezed into w px when an estimate of its width (0.6 em a
 * character) says it would run past: a long verdict or legend on a phone. */
static void draw_text_within(struct svg *s, double x, double y, unsigned size, const char *fill, const char *text,
                             double w) {
        size_t chars = 0;

        for (const char *p = text; *p; p++)
                chars += ((unsigned char) *p & 0xc0) != 0x80;
        svg_raw(s, "<text x=\"%s\" y=\"%s\" font-size=\"%u\" fill=\"%s\"", svg_num(x, 1, (char[32]) {}, 32),
                svg_num(y, 1, (char[32]) {}, 32), size, fill);
        if ((double) chars * 0.6 * size > w)
                svg_raw(s, " textLength=\"%s\" lengthAdjust=\"spacingAndGlyphs\"", svg_num(w, 1, (char[32]) {}, 32));
        svg_raw(s, ">");
        svg_escaped(s, text);
        svg_raw(s, "</text>\n");
}

#define LEGEND_ROW 15.0                 /* px */
#define LEGEND_TOP 52.0                 /* px, the first row's baseline: under the title and the verdict */

/* Above the plot area, not over it: a curve along the top frame stays in sight. */
static void draw_compare_legend(struct svg *s, const struct plot_curve *curves, size_t n, bool rise,
                                const struct panel *p) {
        for (size_t i = 0; i < n; i++) {
                char name[160], plateau[48], t90[48], line[320];
                bool over_baseline;
                double ref = rise ? curve_reference(&curves[i], &over_baseline) : 0;

                curve_name(&curves[i], name, sizeof name);
                fmt_c(plateau, sizeof plateau, curves[i].metrics.plateau_c - ref);
                fmt_duration(t90, sizeof t90, curves[i].metrics.t90_heat_s);
                snprintf(line, sizeof line, "%s%s%s: %s %s, t90 %s%s", name, str(curves[i].quality)[0] ? " — " : "",
                         str(curves[i].quality), rise ? "rise" : "plateau", plateau, t90,
                         rise && over_baseline ? " (over baseline: no ambient)" : "");
                svg_line(s, p->x, LEGEND_TOP + LEGEND_ROW * (double) i - 4, p->x + 22, LEGEND_TOP + LEGEND_ROW * (double) i - 4,
                         svg_palette(i), 2, NULL);
                draw_text_within(s, p->x + 28, LEGEND_TOP + LEGEND_ROW * (double) i, FONT_SMALL, AXIS, line, p->w - 28);
        }
}

/* "+1.2 °C" / "−30 s" against the first run; "" for the first run or unknowns. */
static void fmt_diff(char *buf, size_t size, double v, double first, bool duration) {
        char tmp[48];

        if (!isfinite(v) || !isfinite(first)) {
                snprintf(buf, size, "—");
                return;
        }
        if (duration)
                fmt_duration(tmp, sizeof tmp, v - first);
        else
                fmt_c(tmp, sizeof tmp, v - first);
        snprintf(buf, size, "%s%s", v - first >= 0 ? "+" : "", tmp);
}

#define TABLE_ROW 16.0                  /* px */

#define TABLE_NARROW 600.0               /* px: below, the table leaves out the differences */

/* buf cut to max characters, the last one "…" when cut: a name that would run into the next column. */
static void fit_chars(char *buf, size_t size, size_t max) {
        size_t chars = 0, cut = 0;

        for (size_t i = 0; buf[i]; i++)
                if (((unsigned char) buf[i] & 0xc0) != 0x80 && chars++ == (max ? max - 1 : 0))
                        cut = i;
        if (chars > max && max > 0 && cut + 4 <= size)
                snprintf(buf + cut, size - cut, "…");
}

/* The metrics of each run against the first; with rise, the rise (over
 * ambient, else baseline, as the curves) in place of the plateau. Narrower
 * than TABLE_NARROW (a phone), the differences are left out and the names
 * cut, so no text runs into the next column (0.6 em a character estimates
 * a width). */
static void draw_compare_table(struct svg *s, const struct plot_curve *curves, size_t n, bool rise, double x,
                               double y, double w) {
        const char *const head[] = { "run", rise ? "rise" : "plateau", rise ? "Δ rise" : "Δ plateau", "t90 heat",
                                     "Δ t90", "τ cool", "Δ τ cool" };
        const double wide[] = { 0, 0.34, 0.45, 0.56, 0.67, 0.78, 0.89 }, narrow[] = { 0, 0.34, -1, 0.58, -1, 0.82, -1 };
        const double *col = w < TABLE_NARROW ? narrow : wide;
        const struct run_metrics *f = &curves[0].metrics;
        bool first_ob = false, ob = false;
        double first = f->plateau_c - (rise ? curve_reference(&curves[0], &first_ob) : 0);

        for (size_t k = 0; k < ELEMENTSOF(head); k++)
                if (col[k] >= 0)
                        svg_text(s, x + col[k] * w, y, "start", col == narrow ? FONT_SMALL : FONT, AXIS, head[k]);
        svg_line(s, x, y + 4, x + w, y + 4, AXIS, 1, NULL);
        for (size_t i = 0; i < n; i++) {
                const struct run_metrics *m = &curves[i].metrics;
                double yy = y + TABLE_ROW * (double) (i + 1);
                char cell[7][160];

                double level = m->plateau_c - (rise ? curve_reference(&curves[i], &ob) : 0);

                curve_name(&curves[i], cell[0], sizeof cell[0]);
                fmt_c(cell[1], sizeof cell[1], level);
                fmt_duration(cell[3], sizeof cell[3], m->t90_heat_s);
                fmt_duration(cell[5], sizeof cell[5], m->tau_cool_s);
                /* a rise over its baseline against one over ambient is no difference of cases */
                fmt_diff(cell[2], sizeof cell[2], level, ob == first_ob ? first : NAN, false);
                fmt_diff(cell[4], sizeof cell[4], m->t90_heat_s, f->t90_heat_s, true);
                fmt_diff(cell[6], sizeof cell[6], m->tau_cool_s, f->tau_cool_s, true);
                if (i == 0)
                        snprintf(cell[2], sizeof cell[2], "%s", "");
                if (i == 0)
                        cell[4][0] = cell[6][0] = '\0';
                fit_chars(cell[0], sizeof cell[0], (size_t) fmax(4, (col[1] * w - 20) / (0.6 * FONT_SMALL)));
                svg_rect(s, x, yy - 9, 10, 10, svg_palette(i), 1);
                svg_text(s, x + 14, yy, "start", FONT_SMALL, AXIS, cell[0]);
                for (size_t k = 1; k < ELEMENTSOF(head); k++)
                        if (col[k] >= 0)
                                svg_text(s, x + col[k] * w, yy, "start", FONT_SMALL, AXIS, cell[k]);
        }
}

/* The groups' names as GET /api/v1/compare gives them: the label, else
 * "#3" (with where it comes from, when known). */
static void curve_group_name(const struct plot_curve *c, char *buf, size_t size) {
        if (str(c->label)[0])
                snprintf(buf, size, "%s", c->label);
        else if (c->origin && c->origin[0])
                snprintf(buf, size, "#%u (%s)", c->id, c->origin);
        else
                snprintf(buf, size, "#%u", c->id);
}

#define SUBTITLE_MAX 2400               /* bytes: four labels and the numbers */

/* The verdict between the first two groups, the sentence the API gives,
 * under the title; nothing when the runs make one group. An estimate of its
 * width (0.6 em a character) squeezes a long one into the plot's width. */
static void draw_compare_verdict(struct svg *s, const struct plot_curve *curves, size_t n, double x, double y,
                                 double w) {
        const struct run_metrics *runs[PLOT_COMPARE_MAX];
        const char *labels[PLOT_COMPARE_MAX];
        char names[PLOT_COMPARE_MAX][160], text[SUBTITLE_MAX];

        for (size_t i = 0; i < n; i++) {
                curve_group_name(&curves[i], names[i], sizeof names[i]);
                labels[i] = names[i];
                runs[i] = &curves[i].metrics;
        }
        if (analysis_first_verdict_text(runs, labels, n, text, sizeof text) <= 0)
                return;
        draw_text_within(s, x, y, FONT_SMALL, MUTED, text, w);
}

/* A group's mean and 95 % interval as an error bar, in its first run's colour. */
struct compare_bar {
        double mean, low, high;         /* C: the plateau, or over the curves' reference for rise */
        size_t first;                   /* the group's first curve: its colour */
};

/* The groups the verdict is on (by label, analysis_groups()), each with an
 * interval: the plateau, or with rise the rise (only when the groups' rise
 * is over what every curve subtracts: all over ambient, or all over their
 * baselines). */
static size_t compare_bars(const struct plot_curve *curves, size_t n, bool rise, struct compare_bar *bars) {
        const struct run_metrics *runs[PLOT_COMPARE_MAX] = { NULL };
        const char *labels[PLOT_COMPARE_MAX];
        char names[PLOT_COMPARE_MAX][160];
        struct analysis_group g[PLOT_COMPARE_MAX];
        bool over_ambient;
        size_t k = 0;
        int ng;

        for (size_t i = 0; i < n; i++) {
                curve_group_name(&curves[i], names[i], sizeof names[i]);
                labels[i] = names[i];
                runs[i] = &curves[i].metrics;
        }
        over_ambient = analysis_rise_over_ambient(runs, n);
        for (size_t i = 0; i < n && rise; i++)
                if (isfinite(curves[i].metrics.ambient_c) != over_ambient)
                        return 0;
        ng = analysis_groups(runs, labels, n, over_ambient, g);
        for (int i = 0; i < ng; i++) {
                const struct analysis_stat *st = &g[i].stat[rise ? ANALYSIS_METRIC_RISE : ANALYSIS_METRIC_PLATEAU];
                size_t first = 0;

                if (!isfinite(st->low) || !isfinite(st->high))
                        continue;
                while (first < n && strcmp(labels[first], g[i].label) != 0)
                        first++;
                bars[k++] = (struct compare_bar) { st->mean, st->low, st->high, first < n ? first : 0 };
        }
        return k;
}

/* Each bar at the right of the panel, the first group rightmost but one
 * bar's width in, a dot at its mean and caps at its interval's ends. */
static void draw_compare_bars(struct svg *s, const struct compare_bar *bars, size_t n, const struct panel *p) {
        for (size_t i = 0; i < n; i++) {
                double x = p->x + p->w - 14 - 12.0 * (double) (n - 1 - i);
                double lo = py(p, bars[i].low), hi = py(p, bars[i].high), mid = py(p, bars[i].mean);
                const char *colour = svg_palette(bars[i].first);
                char a[32], b[32], c[32];

                svg_line(s, x, lo, x, hi, colour, 2, NULL);
                svg_line(s, x - 4, lo, x + 4, lo, colour, 2, NULL);
                svg_line(s, x - 4, hi, x + 4, hi, colour, 2, NULL);
                svg_raw(s, "<circle cx=\"%s\" cy=\"%s\" r=\"%s\" fill=\"%s\"/>\n", svg_num(x, 1, a, sizeof a),
                        svg_num(mid, 1, b, sizeof b), svg_num(3, 1, c, sizeof c), colour);
        }
}

int plot_compare_svg(const struct plot_curve *curves, size_t n, bool rise, unsigned width, unsigned height,
                     char **ret, size_t *ret_len) {
        double table_h = TABLE_ROW * (double) (n + 1) + 16, top = LEGEND_TOP + LEGEND_ROW * (double) n - 4;
        struct range yr = RANGE_EMPTY;
        double lo = INFINITY, hi = -INFINITY;
        struct compare_bar bars[PLOT_COMPARE_MAX];
        size_t nbars;
        struct panel p;
        struct svg s;

        if (!curves || n == 0 || n > PLOT_COMPARE_MAX || plot_check_size(width, height) < 0)
                return -EINVAL;
        if (height < top + 50 + 120 + table_h)
                return -ERANGE;
        for (size_t i = 0; i < n; i++) {
                bool ob;
                double ref = rise ? curve_reference(&curves[i], &ob) : 0;
                if (curves[i].n && (!curves[i].t_s || !curves[i].temp_c))
                        return -EINVAL;
                if (curves[i].n) {
                        lo = fmin(lo, curves[i].t_s[0]);
                        hi = fmax(hi, curves[i].t_s[curves[i].n - 1]);
                }
                if (isfinite(ref) || !rise)
                        plot_range_add_array(&yr, curves[i].temp_c, curves[i].n, ref, 1);
        }
        nbars = compare_bars(curves, n, rise, bars);
        for (size_t i = 0; i < nbars; i++) {
                range_add(&yr, bars[i].low);
                range_add(&yr, bars[i].high);
        }
        if (svg_begin(&s, width, height, rise ? "heatcurve: rise compared" : "heatcurve: runs compared") < 0)
                return -ENOMEM;
        draw_title(&s, 12, 22, rise ? "Rise over ambient, aligned on the load start" :
                   "Temperature, aligned on the load start", "", "");
        draw_compare_verdict(&s, curves, n, 12, 36, width - 24.0);
        p = (struct panel) { .x = 64, .y = top, .w = width - 64 - 24, .h = height - top - 50 - table_h };
        plot_panel_x_range(&p, lo, hi);
        if (rise)
                range_add(&yr, 0);      /* a rise is read from nothing */
        range_add(&yr, yr.hi + 0.04 * (yr.hi - yr.lo));        /* headroom: no curve along the frame */
        plot_panel_y_range(&p, yr, 5);
        plot_draw_frame(&s, &p);
        draw_x_axis(&s, &p, true, "time since the load started");
        plot_draw_y_axis(&s, &p, 1, false, rise ? "rise °C" : "temperature °C", AXIS);
        if (p.x0 < 0 && p.x1 > 0) {
                svg_line(&s, px(&p, 0), p.y, px(&p, 0), p.y + p.h, MUTED, 1, DASH_REF);
                svg_text(&s, px(&p, 0) + 4, p.y + p.h - 6, "start", FONT_SMALL, MUTED, "load start");
        }
        for (size_t i = 0; i < n; i++) {
                bool ob;
                double ref = rise ? curve_reference(&curves[i], &ob) : 0;
                if (isfinite(ref) || !rise)
                        draw_series(&s, &p, curves[i].t_s, curves[i].temp_c, curves[i].n, ref, 1, svg_palette(i), 1.6);
        }
        draw_compare_bars(&s, bars, nbars, &p);
        draw_compare_legend(&s, curves, n, rise, &p);
        draw_compare_table(&s, curves, n, rise, p.x, p.y + p.h + 56, p.w);
        return svg_end(&s, ret, ret_len);
}
