/* table.c — aligned text tables for people: columns as wide as their widest cell. */
#include "table.h"

#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "text.h"
#include "util.h"

#define FMT_TEXT_MAX 200                /* characters of one string from a server shown */
#define FMT_RING 16                     /* fmt_string() results usable at once (one printf) */

void table_init(struct table *t, size_t cols) {
        *t = (struct table) { .cols = cols };
}

void table_cell(struct table *t, const char *text) {
        char **p = realloc(t->cells, (t->n + 1) * sizeof *p);
        char shown[6 * FMT_TEXT_MAX + 4];

        if (!p)
                abort();        /* a command-line client: out of memory is not recoverable */
        t->cells = p;
        text = text ? text : "-";
        /* cells quote servers: no terminal escapes, no line breaks, no endless labels */
        t->cells[t->n] = strdup(text_escape_terminal(text, strlen(text), FMT_TEXT_MAX, shown, sizeof shown));
        if (!t->cells[t->n])
                abort();
        t->n++;
}

void table_header(struct table *t, const char *names) {
        for (const char *n = names; *n; n += strlen(n) + 1)
                table_cell(t, n);
}

void table_cellf(struct table *t, const char *format, ...) {
        char buf[256];
        va_list ap;

        va_start(ap, format);
        vsnprintf(buf, sizeof buf, format, ap);
        va_end(ap);
        table_cell(t, buf);
}

/* Display width: count UTF-8 lead bytes, so "°C" is two columns, not three. */
static size_t width(const char *s) {
        size_t w = 0;

        for (; *s; s++)
                w += ((unsigned char) *s & 0xc0) != 0x80;
        return w;
}

void table_print(const struct table *t, FILE *f) {
        size_t *w = calloc(t->cols, sizeof *w);

        if (!w)
                abort();
        for (size_t i = 0; i < t->n; i++)
                if (width(t->cells[i]) > w[i % t->cols])
                        w[i % t->cols] = width(t->cells[i]);
        for (size_t i = 0; i < t->n; i++) {
                size_t c = i % t->cols, pad = 0;
                bool last = c == t->cols - 1 || i == t->n - 1;
                /* padding only before a cell with text: no trailing spaces */
                for (size_t j = i + 1; !last && j < t->n && j % t->cols != 0; j++)
                        if (t->cells[j][0]) {
                                pad = w[c] - width(t->cells[i]) + 2;
                                break;
                        }
                fputs(t->cells[i], f);
                if (last)
                        fputc('\n', f);
                else if (pad)
                        fprintf(f, "%*s", (int) pad, "");
        }
        free(w);
}

void table_free(struct table *t) {
        for (size_t i = 0; i < t->n; i++)
                free(t->cells[i]);
        free(t->cells);
        t->cells = NULL;
        t->n = 0;
}

const char *fmt_number(char *buf, size_t size, json_object *o, double scale, int decimals) {
        if (!o || json_object_is_type(o, json_type_null))
                return "-";
        return util_fixed_text(json_object_get_double(o) * scale, decimals, buf, size);
}

static bool is_null(json_object *o) {
        return !o || json_object_is_type(o, json_type_null);
}

const char *fmt_plateau(char *buf, size_t size, json_object *plateau, json_object *low, json_object *high,
                        double rise_c) {
        return fmt_plateau_unit(buf, size, plateau, low, high, rise_c, " °C");
}

const char *fmt_plateau_unit(char *buf, size_t size, json_object *plateau, json_object *low, json_object *high,
                             double rise_c, const char *unit) {
        char a[32], b[32], c[32];

        if (is_null(plateau))
                return "-";
        if (is_null(low) || is_null(high)) {
                snprintf(buf, size, "%s%s", fmt_number(a, sizeof a, plateau, 1, 1), unit);
                return buf;
        }
        double lo = json_object_get_double(low), hi = json_object_get_double(high);
        if (!(hi - lo <= fabs(rise_c) || isnan(rise_c)))
                return "not known yet";
        snprintf(buf, size, "%s%s (%s–%s)", fmt_number(a, sizeof a, plateau, 1, 1), unit,
                 fmt_number(b, sizeof b, low, 1, 1), fmt_number(c, sizeof c, high, 1, 1));
        return buf;
}

const char *fmt_rate(char *buf, size_t size, json_object *o) {
        static const char prefixes[] = " kMGTP";
        double v;
        size_t p = 0;

        if (!o || json_object_is_type(o, json_type_null))
                return "-";
        v = json_object_get_double(o);
        while (fabs(v) >= 999.95 && p < sizeof prefixes - 2) {
                v /= 1000.0;
                p++;
        }
        util_fixed_text(v, p == 0 ? 0 : 1, buf, size);
        if (p > 0 && strlen(buf) + 1 < size)
                strncat(buf, &prefixes[p], 1);
        return buf;
}

const char *fmt_string(json_object *o, const char *key) {
        static char ring[FMT_RING][6 * FMT_TEXT_MAX + 4];
        static unsigned next;
        json_object *v;
        char *buf;

        if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
                return "-";
        buf = ring[next++ % FMT_RING];
        if (json_object_is_type(v, json_type_string))
                return text_escape_terminal(json_object_get_string(v), (size_t) json_object_get_string_len(v),
                                            FMT_TEXT_MAX, buf, sizeof ring[0]);
        const char *text = json_object_get_string(v);
        return text_escape_terminal(text, strlen(text), FMT_TEXT_MAX, buf, sizeof ring[0]);
}

enum fmt_style { FMT_MINUTE, FMT_SECOND, FMT_CLOCK };

static const char *fmt_local(char *buf, size_t size, json_object *ms, enum fmt_style style) {
        struct tm tm;
        time_t t;

        if (!ms || json_object_is_type(ms, json_type_null))
                return "-";
        t = (time_t) (json_object_get_int64(ms) / 1000);
        if (!localtime_r(&t, &tm) ||
            !(style == FMT_MINUTE ? strftime(buf, size, "%Y-%m-%d %H:%M", &tm) :
              style == FMT_SECOND ? strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm) :
              strftime(buf, size, "%H:%M:%S", &tm)))
                return "-";
        return buf;
}

const char *fmt_time(char *buf, size_t size, json_object *ms) {
        return fmt_local(buf, size, ms, FMT_MINUTE);
}

const char *fmt_time_s(char *buf, size_t size, json_object *ms) {
        return fmt_local(buf, size, ms, FMT_SECOND);
}

const char *fmt_clock(char *buf, size_t size, json_object *ms) {
        return fmt_local(buf, size, ms, FMT_CLOCK);
}

const char *fmt_seconds(char *buf, size_t size, double s) {
        long long v = isfinite(s) && s > 0 ? llround(s) : 0;

        if (v >= 3600)
                snprintf(buf, size, "%lldh%02lldm", v / 3600, v % 3600 / 60);
        else if (v >= 60)
                snprintf(buf, size, "%lldm%02llds", v / 60, v % 60);
        else
                snprintf(buf, size, "%llds", v);
        return buf;
}
