/* svg.c — a small SVG 1.1 writer: escaped text, fixed number formatting, nice axis ticks, a colour-blind-safe palette. */
#include "svg.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static const char *const palette[SVG_PALETTE_SIZE] = {
        "#0072B2",      /* blue */
        "#D55E00",      /* vermillion */
        "#009E73",      /* bluish green */
        "#CC79A7",      /* reddish purple */
        "#E69F00",      /* orange */
        "#56B4E9",      /* sky blue */
        "#F0E442",      /* yellow: last, it is faint on white */
};

const char *svg_palette(size_t i) {
        return palette[i % SVG_PALETTE_SIZE];
}

/* Light colour as the plots write it, and its dark counterpart: same length. */
static const char *const dark_colours[][2] = {
        { "#ffffff", "#17181b" },       /* background, legend box */
        { "#333333", "#d9d9d9" },       /* axes, titles */
        { "#666666", "#a3a7ad" },       /* muted text */
        { "#e4e4e4", "#33363c" },       /* grid */
        { "#f7f7f7", "#202226" },       /* metrics box */
        { "#cccccc", "#4a4d54" },       /* box frame */
        { "#b2182b", "#ff6b6b" },       /* trips, safety limit */
};

void svg_theme_dark(char *doc, size_t len) {
        const size_t width = 7;         /* "#rrggbb" */

        for (size_t i = 0; i + 2 + width <= len; i++) {
                if (doc[i] != '=' || doc[i + 1] != '"' || doc[i + 2] != '#')
                        continue;
                for (size_t k = 0; k < ELEMENTSOF(dark_colours); k++)
                        if (memcmp(doc + i + 2, dark_colours[k][0], width) == 0) {
                                memcpy(doc + i + 2, dark_colours[k][1], width);
                                break;
                        }
                i += 2 + width - 1;
        }
}

int svg_begin(struct svg *s, unsigned width, unsigned height, const char *title) {
        *s = (struct svg) {};
        s->f = open_memstream(&s->buf, &s->len);
        if (!s->f)
                return -ENOMEM;
        svg_raw(s, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%u\" height=\"%u\" "
                "viewBox=\"0 0 %u %u\" font-family=\"DejaVu Sans, Verdana, sans-serif\">\n<title>",
                width, height, width, height);
        svg_escaped(s, title);
        svg_raw(s, "</title>\n");
        svg_rect(s, 0, 0, width, height, "#ffffff", 1);
        return s->failed ? -ENOMEM : 0;
}

int svg_end(struct svg *s, char **ret, size_t *ret_len) {
        svg_raw(s, "</svg>\n");
        if (fclose(s->f) != 0)
                s->failed = true;
        s->f = NULL;
        if (s->failed) {
                free(s->buf);
                s->buf = NULL;
                return -ENOMEM;
        }
        *ret = s->buf;
        *ret_len = s->len;
        s->buf = NULL;
        return 0;
}

void svg_abort(struct svg *s) {
        if (s->f)
                fclose(s->f);
        free(s->buf);
        *s = (struct svg) {};
}

void svg_raw(struct svg *s, const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        if (vfprintf(s->f, format, ap) < 0)
                s->failed = true;
        va_end(ap);
}

/* Length of the valid UTF-8 sequence at p (1..4), 0 when invalid. */
static size_t utf8_valid(const unsigned char *p) {
        size_t n = p[0] < 0x80 ? 1 : p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ? 3 :
                   p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;

        for (size_t i = 1; i < n; i++)
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
        if ((n == 3 && p[0] == 0xe0 && p[1] < 0xa0) || (n == 3 && p[0] == 0xed && p[1] >= 0xa0) ||
            (n == 4 && p[0] == 0xf0 && p[1] < 0x90) || (n == 4 && p[0] == 0xf4 && p[1] >= 0x90))
                return 0;       /* overlong, surrogate, beyond U+10FFFF */
        return n;
}

void svg_escaped(struct svg *s, const char *text) {
        const unsigned char *p = (const unsigned char *) (text ? text : "");

        while (*p) {
                size_t n = utf8_valid(p);

                if (n == 0 || (*p < 0x20 && *p != '\t' && *p != '\n')) {
                        fputc('?', s->f);       /* XML 1.0 has no place for it */
                        p += n ? n : 1;
                        continue;
                }
                switch (*p) {
                case '&': fputs("&amp;", s->f); break;
                case '<': fputs("&lt;", s->f); break;
                case '>': fputs("&gt;", s->f); break;
                case '"': fputs("&quot;", s->f); break;
                case '\'': fputs("&#39;", s->f); break;
                default: fwrite(p, 1, n, s->f);
                }
                p += n;
        }
        if (ferror(s->f))
                s->failed = true;
}

char *svg_num(double v, int decimals, char *buf, size_t size) {
        return util_fixed_text(v, decimals, buf, size);
}

#define N(v) svg_num((v), 1, (char[32]) {}, 32)

void svg_line(struct svg *s, double x1, double y1, double x2, double y2, const char *stroke,
              double width, const char *dash) {
        svg_raw(s, "<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"%s\" stroke-width=\"%s\"",
                N(x1), N(y1), N(x2), N(y2), stroke, N(width));
        if (dash)
                svg_raw(s, " stroke-dasharray=\"%s\"", dash);
        svg_raw(s, "/>\n");
}

void svg_rect(struct svg *s, double x, double y, double w, double h, const char *fill, double opacity) {
        svg_raw(s, "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"%s\"",
                N(x), N(y), N(w < 0 ? 0 : w), N(h < 0 ? 0 : h), fill);
        if (opacity < 1)
                svg_raw(s, " fill-opacity=\"%s\"", svg_num(opacity, 2, (char[32]) {}, 32));
        svg_raw(s, "/>\n");
}

void svg_text(struct svg *s, double x, double y, const char *anchor, unsigned size, const char *fill,
              const char *text) {
        svg_raw(s, "<text x=\"%s\" y=\"%s\" font-size=\"%u\" fill=\"%s\"", N(x), N(y), size, fill);
        if (strcmp(anchor, "start") != 0)
                svg_raw(s, " text-anchor=\"%s\"", anchor);
        svg_raw(s, ">");
        svg_escaped(s, text);
        svg_raw(s, "</text>\n");
}

void svg_textf(struct svg *s, double x, double y, const char *anchor, unsigned size, const char *fill,
               const char *format, ...) {
        char buf[512];
        va_list ap;

        va_start(ap, format);
        vsnprintf(buf, sizeof buf, format, ap);
        va_end(ap);
        svg_text(s, x, y, anchor, size, fill, buf);
}

void svg_path_begin(struct svg_path *p, struct svg *s) {
        *p = (struct svg_path) { .svg = s };
        svg_raw(s, "<path d=\"");
}

void svg_path_point(struct svg_path *p, double x, double y) {
        if (!isfinite(x) || !isfinite(y)) {
                p->pen_down = false;
                return;
        }
        svg_raw(p->svg, "%s%s %s", p->points ? (p->pen_down ? " L" : " M") : "M", N(x), N(y));
        p->pen_down = true;
        p->points++;
}

void svg_path_end(struct svg_path *p, const char *stroke, double width, const char *dash,
                  const char *fill, double fill_opacity) {
        struct svg *s = p->svg;

        if (p->points == 0)
                svg_raw(s, "M0 0");     /* an empty d is an error in SVG 1.1 */
        svg_raw(s, "\" fill=\"%s\"", fill ? fill : "none");
        if (fill && fill_opacity < 1)
                svg_raw(s, " fill-opacity=\"%s\"", svg_num(fill_opacity, 2, (char[32]) {}, 32));
        if (stroke)
                svg_raw(s, " stroke=\"%s\" stroke-width=\"%s\" stroke-linejoin=\"round\"", stroke, N(width));
        if (dash)
                svg_raw(s, " stroke-dasharray=\"%s\"", dash);
        svg_raw(s, "/>\n");
}

size_t svg_ticks(double lo, double hi, size_t target, double *step, double *first) {
        double span = hi - lo, raw, mag, norm;
        size_t n = 0;

        if (!isfinite(span) || span <= 0 || target < 1) {
                *step = 1;
                *first = isfinite(lo) ? floor(lo) : 0;
                return 1;
        }
        raw = span / (double) target;
        mag = pow(10, floor(log10(raw)));
        norm = raw / mag;
        *step = (norm < 1.5 ? 1 : norm < 3.5 ? 2 : norm < 7.5 ? 5 : 10) * mag;
        *first = ceil(lo / *step - 1e-9) * *step;
        for (double v = *first; v <= hi + *step * 1e-9 && n < 100; v += *step)
                n++;
        return n;
}

int svg_step_decimals(double step) {
        int d = 0;

        while (d < 6 && fabs(step * pow(10, d) - round(step * pow(10, d))) > 1e-6)
                d++;
        return d;
}
