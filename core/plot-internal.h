/* plot-internal.h — what the plots share: sizes, colours, a panel and its scales, the frame and axes. */
#pragma once

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#include "plot.h"
#include "svg.h"

#define FONT 12                         /* px, labels */
#define FONT_SMALL 11                   /* px, ticks */
#define FONT_TITLE 15                   /* px */
#define AXIS "#333333"
#define GRID "#e4e4e4"
#define MUTED "#666666"
#define LEVEL_COLOUR "#b2182b"          /* trips and the safety limit */
#define FIT_POINTS 240                  /* points of a fitted curve */
#define DASH_REF "6 4"                  /* baseline, ambient */
#define DASH_FIT "3 2"

static inline const char *str(const char *s) {
        return s ? s : "";
}

/* A plot area in px and the data range it shows. */
struct panel {
        double x, y, w, h;              /* px */
        double x0, x1, y0, y1;          /* data */
};

static inline double px(const struct panel *p, double t) {
        return p->x + (t - p->x0) / (p->x1 - p->x0) * p->w;
}

static inline double py(const struct panel *p, double v) {
        return p->y + p->h - (v - p->y0) / (p->y1 - p->y0) * p->h;
}

static inline bool in_y(const struct panel *p, double v) {
        return isfinite(v) && v >= p->y0 && v <= p->y1;
}

struct range {
        double lo, hi;
};

#define RANGE_EMPTY ((struct range) { INFINITY, -INFINITY })

static inline void range_add(struct range *r, double v) {
        if (!isfinite(v))
                return;
        r->lo = fmin(r->lo, v);
        r->hi = fmax(r->hi, v);
}

void plot_range_add_array(struct range *r, const double *v, size_t n, double offset, double scale);
void plot_panel_y_range(struct panel *p, struct range r, double min_span);
void plot_panel_x_range(struct panel *p, double lo, double hi);
void plot_draw_frame(struct svg *s, const struct panel *p);
void plot_draw_y_axis(struct svg *s, const struct panel *p, double scale_div, bool right, const char *title,
                        const char *colour);
int plot_check_size(unsigned width, unsigned height);
void plot_draw_levels(struct svg *s, const struct panel *p, const struct plot_level *levels, size_t n);
void plot_draw_legend_line(struct svg *s, double x, double y, const char *colour, const char *dash,
                             const char *text);
