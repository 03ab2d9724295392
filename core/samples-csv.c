/* samples-csv.c — the one declaration of a run's samples.csv: its columns, rows written whole, rows read back by name. */
#include "samples-csv.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

static const char *const column_names[SAMPLES_FIXED_COLUMNS] = {
        [SAMPLES_TIME_MS] = "time_ms",
        [SAMPLES_ELAPSED_S] = "elapsed_s",
        [SAMPLES_PHASE] = "phase",
        [SAMPLES_TEMP_C] = "temp_c",
        [SAMPLES_HOTTEST_C] = "hottest_c",
        [SAMPLES_FREQ_HZ] = "freq_hz",
        [SAMPLES_MAX_ALLOWED_HZ] = "max_allowed_hz",
        [SAMPLES_COOLING_ACTIVE] = "cooling_active",
        [SAMPLES_LOAD] = "load",
        [SAMPLES_WORK_RATE] = "work_rate_per_s",
        [SAMPLES_WORK_UNIT] = "work_unit",
        [SAMPLES_T_SINCE_LOAD_S] = "t_since_load_s",
        [SAMPLES_FIRMWARE_ARM_HZ] = "firmware_arm_hz",
        [SAMPLES_FIRMWARE_THROTTLED] = "firmware_throttled",
        [SAMPLES_POWER_W] = "power_w",
};

/* Longest field written for a number: sign, 20 digits, point, decimals. */
#define FIELD_MAX 40

const char *samples_column_name(enum samples_column c) {
        return c < SAMPLES_FIXED_COLUMNS ? column_names[c] : NULL;
}

/* ",<id><suffix>", in double quotes (a quote doubled) when id holds a
 * comma, a quote or a line break, as RFC 4180 has it: a chip name may. */
static void header_name(FILE *f, const char *id, const char *suffix) {
        if (!strpbrk(id, ",\"\r\n")) {
                fprintf(f, ",%s%s", id, suffix);
                return;
        }
        fputs(",\"", f);
        for (const char *p = id; *p; p++) {
                if (*p == '"')
                        fputc('"', f);
                fputc(*p, f);
        }
        fprintf(f, "%s\"", suffix);
}

char *samples_header(const char *const *temp_ids, size_t n_temps, const char *const *policy_ids, size_t n_policies) {
        return samples_header_power(temp_ids, n_temps, policy_ids, n_policies, false);
}

char *samples_header_power(const char *const *temp_ids, size_t n_temps, const char *const *policy_ids,
                           size_t n_policies, bool power) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        if (!f)
                return NULL;
        for (size_t c = 0; c < SAMPLES_POWER_W + (size_t) power; c++)
                fprintf(f, "%s%s", c ? "," : "", column_names[c]);
        for (size_t i = 0; i < n_temps; i++)
                header_name(f, temp_ids[i], "_c");
        for (size_t i = 0; i < n_policies; i++)
                header_name(f, policy_ids[i], "_hz");
        fputc('\n', f);
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

size_t samples_row_size(size_t n_temps, size_t n_policies) {
        /* the phase and unit are short words; every other field a number */
        return (SAMPLES_FIXED_COLUMNS + n_temps + n_policies) * (FIELD_MAX + 1) + 2;
}

struct row_buf {
        char *p;
        size_t left;
        bool full;
};

static void put(struct row_buf *b, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void put(struct row_buf *b, const char *format, ...) {
        va_list ap;
        int n;

        if (b->full)
                return;
        va_start(ap, format);
        n = vsnprintf(b->p, b->left, format, ap);
        va_end(ap);
        if (n < 0 || (size_t) n >= b->left) {
                b->full = true;
                return;
        }
        b->p += n;
        b->left -= (size_t) n;
}

/* Decimals a number keeps in the file, by what it measures. */
#define DECIMALS_S 3                    /* seconds */
#define DECIMALS_C 3                    /* degrees C */
#define DECIMALS_HZ 0
#define DECIMALS_LOAD 4                 /* 0..1 */
#define DECIMALS_RATE 1                 /* work units a second */
#define DECIMALS_W 3                    /* watts */

/* 10^0..10^22, each exact in a double. */
static const double powers_of_ten[] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };

/* |v| x 10^decimals rounded to the nearest integer *q, as printf rounds it,
 * where that is sure without printf: a run writes a row at every tick, and
 * printf's exact decimal conversion was most of its cost. The product is
 * rounded once, by at most 2^-53 of itself, so its nearest integer is
 * printf's unless it lies that close to a half (an exact half, printf
 * rounds to even): then, and beyond 2^52, false. */
static bool scaled_exact(double v, int decimals, uint64_t *q) {
        double x, frac;

        if (decimals < 0 || decimals > 4 || !((x = fabs(v) * powers_of_ten[decimals]) < 0x1p52) ||
            fabs((frac = x - floor(x)) - 0.5) <= x * 0x1p-50 + 0x1p-60)
                return false;
        *q = (uint64_t) floor(x) + (frac > 0.5);
        return true;
}

/* ",%.*f" of v; a NaN is an empty field. */
static void put_number(struct row_buf *b, double v, int decimals) {
        char text[UTIL_DECIMAL_MAX];
        uint64_t q;
        size_t len;

        if (!isfinite(v)) {
                put(b, ",");
                return;
        }
        if (b->full || !scaled_exact(v, decimals, &q)) {
                put(b, ",%.*f", decimals, v);
                return;
        }
        /* "-0.000" as printf writes it: the sign is v's */
        len = util_decimal_text(q, decimals, signbit(v), decimals, text);
        if (1 + len >= b->left) {
                b->full = true;
                return;
        }
        *b->p++ = ',';
        memcpy(b->p, text, len + 1);
        b->p += len;
        b->left -= 1 + len;
}

int samples_format_row(const struct samples_row *row, const double *temps_c, size_t n_temps,
                       const double *policies_hz, size_t n_policies, char *buf, size_t size) {
        struct row_buf b = { buf, size, false };

        put(&b, "%" PRId64, row->time_ms);
        put_number(&b, row->elapsed_s, DECIMALS_S);
        put(&b, ",%s", row->phase);
        put_number(&b, row->temp_c, DECIMALS_C);
        put_number(&b, row->hottest_c, DECIMALS_C);
        put_number(&b, row->freq_hz, DECIMALS_HZ);
        put_number(&b, row->max_allowed_hz, DECIMALS_HZ);
        put(&b, ",%d", row->cooling_active ? 1 : 0);
        put_number(&b, row->load, DECIMALS_LOAD);
        put_number(&b, row->work_rate, DECIMALS_RATE);
        put(&b, ",%s", row->work_unit ? row->work_unit : "");
        put_number(&b, row->t_since_load_s, DECIMALS_S);
        put_number(&b, row->firmware_arm_hz, DECIMALS_HZ);
        if (row->firmware_throttled >= 0)
                put(&b, ",%d", row->firmware_throttled > 0);
        else
                put(&b, ",");
        if (row->has_power)
                put_number(&b, row->power_w, DECIMALS_W);
        for (size_t i = 0; i < n_temps; i++)
                put_number(&b, temps_c[i], DECIMALS_C);
        for (size_t i = 0; i < n_policies; i++)
                put_number(&b, policies_hz[i], DECIMALS_HZ);
        put(&b, "\n");
        return b.full ? -ENOBUFS : (int) (size - b.left);
}

/* strtod() of a whole field, NaN for none. The plain decimals the daemon
 * writes ("-12.345") are read without strtod, which was most of the cost of
 * reading a run back: a mantissa of at most 2^53 over 10^0..10^22, both
 * exact, is one correctly rounded division, strtod's own result. */
static double field_number(const char *field) {
        const char *p = field + (*field == '-');
        unsigned long long m = 0;
        int digits = 0, decimals = -1;
        char *end;
        double v;

        if (!*field)
                return NAN;
        for (; *p >= '0' && *p <= '9' && digits < 19; p++, digits++)
                m = m * 10 + (unsigned) (*p - '0');
        if (*p == '.')
                for (p++, decimals = 0; *p >= '0' && *p <= '9' && digits < 19; p++, digits++, decimals++)
                        m = m * 10 + (unsigned) (*p - '0');
        if (*p == '\0' && digits > 0 && m <= (1ULL << 53) && decimals <= 22) {
                v = (double) m / powers_of_ten[decimals > 0 ? decimals : 0];
                return *field == '-' ? -v : v;
        }
        v = strtod(field, &end);
        return end == field ? NAN : v;
}

/* v as put_number() writes it and field_number() reads it back. */
static double number_as_read(double v, int decimals) {
        char text[FIELD_MAX + 320];     /* %f of the largest double: 309 digits */
        uint64_t q;

        if (!isfinite(v))
                return NAN;
        if (scaled_exact(v, decimals, &q)) {
                /* the text is q's digits with a point: field_number() divides */
                double x = (double) q / powers_of_ten[decimals];

                return signbit(v) ? -x : x;
        }
        snprintf(text, sizeof text, "%.*f", decimals, v);
        return field_number(text);
}

void samples_row_as_read(struct samples_row *row) {
        row->elapsed_s = number_as_read(row->elapsed_s, DECIMALS_S);
        row->temp_c = number_as_read(row->temp_c, DECIMALS_C);
        row->hottest_c = number_as_read(row->hottest_c, DECIMALS_C);
        row->freq_hz = number_as_read(row->freq_hz, DECIMALS_HZ);
        row->max_allowed_hz = number_as_read(row->max_allowed_hz, DECIMALS_HZ);
        row->load = number_as_read(row->load, DECIMALS_LOAD);
        row->work_rate = number_as_read(row->work_rate, DECIMALS_RATE);
        row->t_since_load_s = number_as_read(row->t_since_load_s, DECIMALS_S);
        row->firmware_arm_hz = number_as_read(row->firmware_arm_hz, DECIMALS_HZ);
        row->power_w = row->has_power ? number_as_read(row->power_w, DECIMALS_W) : NAN;
}

size_t samples_header_fixed(const char *header) {
        size_t c = 0;

        for (const char *p = header; c < SAMPLES_FIXED_COLUMNS; c++) {
                size_t len = strlen(column_names[c]);
                if (strncmp(p, column_names[c], len) != 0 || (p[len] != ',' && p[len] != '\0'))
                        break;
                p += len + (p[len] == ',');
        }
        return c;
}

/* A field in double quotes, its quotes taken off and "" made one, in
 * place; what follows the closing quote up to the comma is dropped. */
static char *field_quoted(char **rest) {
        char *field = *rest + 1, *in = field, *out = field, *comma;

        while (*in) {
                if (*in == '"' && *++in != '"')
                        break;          /* the closing quote */
                *out++ = *in++;
        }
        comma = strchr(in, ',');
        *out = '\0';                    /* at or before in: comma stays */
        if (comma)
                *comma++ = '\0';
        *rest = comma;
        return field;
}

/* strsep(rest, ","), which went through strcspn() for its one
 * delimiter: the split was a fifth of reading a run back. An empty field
 * (a failed sensor) is a field too, as with strsep. */
char *samples_field_next(char **rest) {
        char *field = *rest, *comma;

        if (*field == '"')
                return field_quoted(rest);
        comma = strchr(field, ',');
        if (comma)
                *comma++ = '\0';
        *rest = comma;
        return field;
}

/* strtoll(field, NULL, 10), the digits of a time in ms without it, which
 * took a tenth of reading a run back. */
static long long field_integer(const char *field) {
        long long v = 0;
        const char *p = field;

        for (; *p >= '0' && *p <= '9' && p - field < 18; p++)
                v = v * 10 + (*p - '0');
        return *p == '\0' && p > field ? v : strtoll(field, NULL, 10);
}

int samples_parse_row(char *line, size_t fixed, struct samples_row *ret) {
        const char *f[SAMPLES_FIXED_COLUMNS];
        char *rest = line;
        size_t n = 0;

        /* those up to work_unit, which every file has, even under a damaged header */
        if (fixed < SAMPLES_WORK_UNIT + 1)
                fixed = SAMPLES_WORK_UNIT + 1;
        while (rest && n < fixed && n < ELEMENTSOF(f))
                f[n++] = samples_field_next(&rest);
        if (n < SAMPLES_WORK_UNIT + 1)
                return -EINVAL;
        while (n < ELEMENTSOF(f))
                f[n++] = "";            /* a column this file does not have */
        double throttled = field_number(f[SAMPLES_FIRMWARE_THROTTLED]);
        *ret = (struct samples_row) {
                .time_ms = field_integer(f[SAMPLES_TIME_MS]),
                .elapsed_s = field_number(f[SAMPLES_ELAPSED_S]),
                .phase = f[SAMPLES_PHASE],
                .temp_c = field_number(f[SAMPLES_TEMP_C]),
                .hottest_c = field_number(f[SAMPLES_HOTTEST_C]),
                .freq_hz = field_number(f[SAMPLES_FREQ_HZ]),
                .max_allowed_hz = field_number(f[SAMPLES_MAX_ALLOWED_HZ]),
                .cooling_active = field_number(f[SAMPLES_COOLING_ACTIVE]) > 0,
                .load = field_number(f[SAMPLES_LOAD]),
                .work_rate = field_number(f[SAMPLES_WORK_RATE]),
                .work_unit = f[SAMPLES_WORK_UNIT],
                .t_since_load_s = field_number(f[SAMPLES_T_SINCE_LOAD_S]),
                .firmware_arm_hz = field_number(f[SAMPLES_FIRMWARE_ARM_HZ]),
                .firmware_throttled = isnan(throttled) ? -1 : throttled > 0,
                .has_power = fixed > SAMPLES_POWER_W,
                .power_w = field_number(f[SAMPLES_POWER_W]),
        };
        return 0;
}

int samples_read(FILE *f, int (*row)(void *userdata, char *line, bool header), void *userdata) {
        char *line = NULL;
        size_t size = 0;
        ssize_t len;
        int r = 0;

        for (bool header = true; r >= 0 && (len = getline(&line, &size, f)) > 0; header = false) {
                if (line[len - 1] != '\n' || memchr(line, '\0', (size_t) len))
                        break;
                line[len - 1] = '\0';
                r = row(userdata, line, header);
        }
        if (r >= 0 && ferror(f))
                r = -EIO;
        free(line);
        return r;
}

void samples_limit_init(struct samples_limit *l, size_t limit) {
        *l = (struct samples_limit) { .limit = limit == 1 ? 2 : limit, .stride = 1 };
}

unsigned samples_limit_next(struct samples_limit *l, size_t n) {
        size_t k = l->given++;
        unsigned what = 0;

        if (!l->limit)
                return SAMPLES_TAKE;
        if (k % l->stride)
                return 0;
        if (n >= l->limit) {
                what = SAMPLES_HALVE;
                l->stride *= 2;
        }
        return k % l->stride ? what : what | SAMPLES_TAKE;
}

size_t samples_limit_stride(size_t limit, size_t n) {
        size_t stride = 1;

        while (limit && (n + stride - 1) / stride > limit)
                stride *= 2;
        return stride;
}

size_t samples_halve(void *column, size_t size, size_t n) {
        char *c = column;
        size_t kept = (n + 1) / 2;

        for (size_t i = 1; i < kept; i++)
                memcpy(c + i * size, c + 2 * i * size, size);
        return kept;
}

int64_t samples_complete_length(FILE *f) {
        char *line = NULL;
        size_t size = 0;
        ssize_t len;
        int64_t total = 0;

        rewind(f);
        while ((len = getline(&line, &size, f)) > 0 && line[len - 1] == '\n' && !memchr(line, '\0', (size_t) len))
                total += len;
        free(line);
        return ferror(f) ? -EIO : total;
}

int64_t samples_complete_tail(int fd, int64_t size) {
        char buf[4096];
        int64_t pos = size, complete = -1;      /* just past the last newline looked at */
        bool nul = false;                       /* a NUL in the row that ends there */

        while (pos > 0) {
                size_t n = pos < (int64_t) sizeof buf ? (size_t) pos : sizeof buf;
                ssize_t got = pread(fd, buf, n, (off_t) (pos - (int64_t) n));

                if (got != (ssize_t) n)
                        return got < 0 ? -errno : -EIO;
                pos -= (int64_t) n;
                for (size_t i = n; i-- > 0;) {
                        if (buf[i] == '\n') {
                                if (complete >= 0 && !nul)
                                        return complete;
                                complete = pos + (int64_t) i + 1;
                                nul = false;
                        } else if (buf[i] == '\0')
                                nul = true;
                }
        }
        return complete >= 0 && !nul ? complete : 0;
}

/* Whether f is a number as JSON writes them (strtod takes more: "inf",
 * "0x1p3", "+5", ".5"), so that it can go out as it is. */
static bool json_number_text(const char *f) {
        const char *p = f;

        if (*p == '-')
                p++;
        if (*p == '0')
                p++;
        else if (*p >= '1' && *p <= '9')
                p += strspn(p, "0123456789");
        else
                return false;
        if (*p == '.') {
                p++;
                if (!(*p >= '0' && *p <= '9'))
                        return false;
                p += strspn(p, "0123456789");
        }
        if (*p == 'e' || *p == 'E') {
                p++;
                if (*p == '+' || *p == '-')
                        p++;
                if (!(*p >= '0' && *p <= '9'))
                        return false;
                p += strspn(p, "0123456789");
        }
        return *p == '\0';
}

struct samples_json {
        FILE *f;
        char *line;                     /* getline's buffer */
        size_t line_size;
        char *out;                      /* the current piece of the document */
        size_t out_len, out_cap, out_sent;
        size_t rows;                    /* rows written */
        bool started, ended;
};

static int out_add(struct samples_json *j, const char *text, size_t len) {
        if (j->out_len + len > j->out_cap) {
                size_t cap = (j->out_len + len) * 2;
                char *p = realloc(j->out, cap);
                if (!p)
                        return -ENOMEM;
                j->out = p;
                j->out_cap = cap;
        }
        memcpy(j->out + j->out_len, text, len);
        j->out_len += len;
        return 0;
}

/* One field: a number as written, a string (the phase, the unit), or null when empty. */
static int out_field(struct samples_json *j, const char *f) {
        char esc[8];
        int r = 0;

        if (!*f)
                return out_add(j, "null", 4);
        if (json_number_text(f))
                return out_add(j, f, strlen(f));
        r = out_add(j, "\"", 1);
        for (const char *p = f; r >= 0 && *p; p++) {
                unsigned char c = (unsigned char) *p;
                if (c == '"' || c == '\\')
                        r = out_add(j, (const char[]) { '\\', (char) c }, 2);
                else if (c < 0x20 || c == 0x7f)
                        r = out_add(j, esc, (size_t) snprintf(esc, sizeof esc, "\\u%04x", c));
                else
                        r = out_add(j, p, 1);
        }
        return r < 0 ? r : out_add(j, "\"", 1);
}

/* One line of the file as a JSON array. */
static int out_line(struct samples_json *j, char *line) {
        int r = out_add(j, "[", 1);

        for (char *rest = line, *f; r >= 0 && rest; ) {
                f = samples_field_next(&rest);
                r = out_field(j, f);
                if (r >= 0 && rest)
                        r = out_add(j, ",", 1);
        }
        return r < 0 ? r : out_add(j, "]", 1);
}

/* The next piece into j->out: the start with the header, a row, or the end. */
static int samples_json_next(struct samples_json *j) {
        ssize_t len;
        bool whole;
        int r;

        j->out_len = j->out_sent = 0;
        if (j->ended)
                return 0;
        len = getline(&j->line, &j->line_size, j->f);
        /* as samples_read(): a torn or NUL-filled line ends the file */
        whole = len > 0 && j->line[len - 1] == '\n' && !memchr(j->line, '\0', (size_t) len);
        if (whole)
                j->line[len - 1] = '\0';
        if (!j->started) {
                j->started = true;
                r = out_add(j, "{\"columns\":", 11);
                if (r >= 0)
                        r = whole ? out_line(j, j->line) : out_add(j, "[]", 2);
                if (r >= 0)
                        r = out_add(j, ",\"rows\":[", 9);
                if (r < 0 || whole)
                        return r;
        } else if (whole) {
                r = j->rows++ ? out_add(j, ",", 1) : 0;
                return r < 0 ? r : out_line(j, j->line);
        }
        if (ferror(j->f))
                return -EIO;
        j->ended = true;
        return out_add(j, "]}", 2);
}

int samples_json_new(FILE *f, struct samples_json **ret) {
        struct samples_json *j = calloc(1, sizeof *j);

        if (!j)
                return -ENOMEM;
        j->f = f;
        *ret = j;
        return 0;
}

ssize_t samples_json_read(struct samples_json *j, char *buf, size_t max) {
        size_t n = 0;

        while (n < max) {
                if (j->out_sent == j->out_len) {
                        int r = samples_json_next(j);
                        if (r < 0)
                                return r;
                        if (j->out_len == 0)
                                break;          /* the end */
                }
                n += util_copy_part(buf + n, max - n, j->out, j->out_len, &j->out_sent);
        }
        return (ssize_t) n;
}

void samples_json_free(struct samples_json *j) {
        if (!j)
                return;
        fclose(j->f);
        free(j->line);
        free(j->out);
        free(j);
}
