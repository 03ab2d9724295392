/* svg.h — a small SVG 1.1 writer: escaped text, fixed number formatting, nice axis ticks, a colour-blind-safe palette. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Output is deterministic: coordinates are written with one decimal through
 * svg_num() ("-0.0" never appears), text is escaped and invalid UTF-8 or
 * control bytes are replaced by '?', so the same calls give the same bytes
 * on every architecture and locale ('.' as the decimal point is written by
 * hand, not by printf's locale).
 */

struct svg {
        FILE *f;                        /* open_memstream over buf */
        char *buf;
        size_t len;                     /* bytes, valid after svg_end() */
        bool failed;                    /* out of memory at some point */
};

/* Palette: Okabe & Ito, "Color Universal Design" (2008), black left out
 * (used for axes), in an order that keeps neighbours distinguishable. */
#define SVG_PALETTE_SIZE 7
const char *svg_palette(size_t i);

/* The dark theme: recolours a finished document in place, the same length,
 * by swapping each light neutral (background, text, grid, axes, boxes) and
 * the trip colour for its dark counterpart; the palette's curve colours stay
 * as they are (they keep their contrast on a dark ground). Only attribute
 * values are touched: text is escaped, so ="# never occurs in it. */
void svg_theme_dark(char *doc, size_t len);

/* Starts a document of width x height px with a <title>. -ENOMEM. */
int svg_begin(struct svg *s, unsigned width, unsigned height, const char *title);
/* Closes it; *ret (caller frees) and *ret_len get the text. -ENOMEM. */
int svg_end(struct svg *s, char **ret, size_t *ret_len);
/* Frees a document not ended (error paths). Accepts a zeroed struct. */
void svg_abort(struct svg *s);

/* Raw markup, no escaping: only for constant strings and svg_num() output. */
void svg_raw(struct svg *s, const char *format, ...) __attribute__((format(printf, 2, 3)));
/* Text content or an attribute value, XML-escaped. */
void svg_escaped(struct svg *s, const char *text);

/* v with `decimals` decimals (0..6) into buf, '.' as decimal point, no "-0";
 * "NaN" is never produced: non-finite values give "0". Returns buf. */
char *svg_num(double v, int decimals, char *buf, size_t size);

void svg_line(struct svg *s, double x1, double y1, double x2, double y2, const char *stroke,
              double width, const char *dash);
void svg_rect(struct svg *s, double x, double y, double w, double h, const char *fill, double opacity);
/* anchor: "start", "middle" or "end"; size in px; text is escaped. */
void svg_text(struct svg *s, double x, double y, const char *anchor, unsigned size, const char *fill,
              const char *text);
void svg_textf(struct svg *s, double x, double y, const char *anchor, unsigned size, const char *fill,
               const char *format, ...) __attribute__((format(printf, 7, 8)));

/* A path built point by point; a NaN y lifts the pen (a gap). */
struct svg_path {
        struct svg *svg;
        bool pen_down;
        size_t points;
};
void svg_path_begin(struct svg_path *p, struct svg *s);
void svg_path_point(struct svg_path *p, double x, double y);
void svg_path_end(struct svg_path *p, const char *stroke, double width, const char *dash,
                  const char *fill, double fill_opacity);

/* Nice tick steps (1, 2, 5 x 10^k) for [lo, hi] with about `target` ticks:
 * *step and *first (the first multiple of step >= lo). Returns the count. */
size_t svg_ticks(double lo, double hi, size_t target, double *step, double *first);
/* Decimals needed to print multiples of step (0 for 5, 1 for 0.5 ...). */
int svg_step_decimals(double step);
