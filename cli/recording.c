/* recording.c — read a recording (CSV with a header, or a run's JSON export) a row at a time, as text cells. */
#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "client.h"
#include "recording.h"

#define RECORDING_MAX_BYTES (512u << 20)       /* a week at 10 Hz is far below this */

/* The rest of f after the len bytes already in buf (cap bytes allocated,
 * NULL for none; taken), NUL-terminated, at most max bytes in all. */
static char *read_rest(FILE *f, char *buf, size_t len, size_t cap, size_t max, size_t *ret_len) {
        for (;;) {
                char *p = cap - len < 4096 || !buf ? realloc(buf, cap *= 2) : buf;
                if (!p || cap > max + 2) {
                        free(p ? p : buf);
                        buf = NULL;
                        errno = p ? EFBIG : ENOMEM;
                        break;
                }
                buf = p;
                size_t got = fread(buf + len, 1, cap - len - 1, f);
                len += got;
                if (got == 0) {
                        if (ferror(f)) {
                                free(buf);
                                buf = NULL;
                                errno = EIO;
                        }
                        break;
                }
        }
        if (buf) {
                buf[len] = '\0';
                *ret_len = len;
        }
        return buf;
}

char *recording_read_all(const char *path, size_t max, size_t *ret_len) {
        FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
        char *buf;

        if (!f)
                return NULL;
        buf = read_rest(f, NULL, 0, 1 << 16, max, ret_len);
        if (f != stdin)
                fclose(f);
        return buf;
}

/* Splits one line in place into at most max cells; a cell in double quotes
 * may hold the separator and "" for a quote. Returns the cell count. */
static size_t split_cells(char *line, char sep, char **cells, size_t max) {
        size_t n = 0;
        char *p = line;

        for (;;) {
                char *start = p, *out = p;
                if (*p == '"') {
                        for (p++; *p && !(*p == '"' && p[1] != '"'); p++) {
                                if (*p == '"')
                                        p++;
                                *out++ = *p;
                        }
                        if (*p == '"')
                                p++;
                        while (*p && *p != sep)
                                p++;
                } else {
                        while (*p && *p != sep)
                                p++;
                        out = p;
                }
                char end = *p;
                *out = '\0';
                while (*start == ' ')
                        start++;
                for (char *q = out; q > start && q[-1] == ' '; q--)
                        q[-1] = '\0';
                if (n < max)
                        cells[n] = start;
                n++;
                if (end != sep)
                        return n;
                p++;
        }
}

static bool line_skipped(const char *line) {
        while (*line == ' ' || *line == '\t')
                line++;
        return *line == '\0' || *line == '#';
}

/* The next line of the CSV into r->buf without its line end: 1, 0 at the
 * end, -1 on failure (printed). Lines set aside by recording_open() come
 * first. *cut: it has no '\n' (the last line of a file still being written). */
static int csv_line(struct recording *r, bool *cut) {
        ssize_t len;

        if (r->ahead_at < r->ahead_len) {
                char *start = r->ahead + r->ahead_at, *nl = memchr(start, '\n', r->ahead_len - r->ahead_at);
                size_t n = nl ? (size_t) (nl - start) : r->ahead_len - r->ahead_at;
                if (r->buf_size < n + 1) {
                        char *b = realloc(r->buf, n + 1);
                        if (!b)
                                return cli_fail("%s: out of memory", r->path);
                        r->buf = b;
                        r->buf_size = n + 1;
                }
                memcpy(r->buf, start, n);
                r->buf[n] = '\0';
                r->ahead_at += n + (nl != NULL);
                *cut = !nl;
        } else {
                errno = 0;
                len = getline(&r->buf, &r->buf_size, r->f);
                if (len <= 0)
                        return ferror(r->f) ? cli_fail("%s: %s", r->path, strerror(errno ? errno : EIO)) : 0;
                if (memchr(r->buf, '\0', (size_t) len))
                        return cli_fail(r->from_json ? "%s: samples_csv holds binary data" :
                                        "%s: binary data, not a CSV or JSON recording", r->path);
                *cut = r->buf[len - 1] != '\n';
                if (!*cut)
                        r->buf[len - 1] = '\0';
        }
        size_t n = strlen(r->buf);
        if (n > 0 && r->buf[n - 1] == '\r')
                r->buf[n - 1] = '\0';
        r->lineno++;
        return 1;
}

/* The header: the first line that is not blank or a comment. */
static int csv_header(struct recording *r) {
        bool cut;
        int e;

        while ((e = csv_line(r, &cut)) > 0 && line_skipped(r->buf))
                ;
        if (e < 0)
                return e;
        if (e == 0)
                return cli_fail("%s: empty file, no header line", r->path);
        r->header = strdup(r->buf);
        if (!r->header)
                return cli_fail("%s: out of memory", r->path);
        r->sep = strchr(r->header, ',') ? ',' : strchr(r->header, ';') ? ';' : '\t';
        r->names = calloc(strlen(r->header) + 2, sizeof(char *));      /* more than the cells */
        if (!r->names)
                return cli_fail("%s: out of memory", r->path);
        r->cols = split_cells(r->header, r->sep, r->names, strlen(r->header) + 2);
        r->cells = calloc(r->cols + 1, sizeof(char *));
        return r->cells ? 0 : cli_fail("%s: out of memory", r->path);
}

static int csv_next(struct recording *r) {
        bool cut;
        int e;

        while ((e = csv_line(r, &cut)) > 0) {
                if (line_skipped(r->buf))
                        continue;
                size_t n = split_cells(r->buf, r->sep, r->cells, r->cols);
                if (n > r->cols)
                        return cli_fail("%s:%zu: %zu cells, the header has %zu", r->path, r->lineno, n, r->cols);
                if (cut && n < r->cols)
                        return 0;       /* cut short, as the daemon's own reader treats it */
                for (size_t k = n; k < r->cols; k++)
                        r->cells[k] = "";
                r->line = r->lineno;
                return 1;
        }
        return e;
}

/* JSON cells become text: numbers as json-c prints them, null as "". */
static const char *json_cell(json_object *v) {
        if (!v || json_object_is_type(v, json_type_null))
                return "";
        return json_object_get_string(v);
}

static int json_open(struct recording *r, size_t len) {
        json_object *cols, *csv;

        r->doc = client_parse_json(r->text, len);
        /* a run file (export --format run): its samples.csv as it is */
        if (r->doc && json_object_object_get_ex(r->doc, "samples_csv", &csv) &&
            json_object_is_type(csv, json_type_string)) {
                size_t n = (size_t) json_object_get_string_len(csv);
                free(r->text);
                r->text = NULL;
                if (memchr(json_object_get_string(csv), '\0', n))
                        return cli_fail("%s: samples_csv holds binary data", r->path);
                r->f = fmemopen((void *) json_object_get_string(csv), n ? n : 1, "r");
                if (!r->f)
                        return cli_fail("%s: out of memory", r->path);
                if (n == 0)
                        (void) getc(r->f);      /* fmemopen() takes no empty buffer */
                r->own_f = true;
                r->from_json = true;
                return csv_header(r);
        }
        if (!r->doc || !json_object_object_get_ex(r->doc, "columns", &cols) ||
            !json_object_object_get_ex(r->doc, "rows", &r->rows_json) || !json_object_is_type(cols, json_type_array) ||
            !json_object_is_type(r->rows_json, json_type_array))
                return cli_fail("%s: not a run export: JSON without \"columns\" and \"rows\" arrays", r->path);
        r->cols = json_object_array_length(cols);
        r->names = calloc(r->cols + 1, sizeof(char *));
        r->cells = calloc(r->cols + 1, sizeof(char *));
        if (!r->names || !r->cells)
                return cli_fail("%s: out of memory", r->path);
        for (size_t i = 0; i < r->cols; i++)
                r->names[i] = (char *) json_cell(json_object_array_get_idx(cols, i));
        return 0;
}

static int json_next(struct recording *r) {
        size_t i = r->next_row;

        if (i >= json_object_array_length(r->rows_json))
                return 0;
        json_object *row = json_object_array_get_idx(r->rows_json, i);
        size_t n = json_object_array_length(row);
        if (n > r->cols)
                return cli_fail("%s: row %zu has %zu cells, there are %zu columns", r->path, i + 1, n, r->cols);
        for (size_t k = 0; k < r->cols; k++)
                r->cells[k] = (char *) (k < n ? json_cell(json_object_array_get_idx(row, k)) : "");
        r->line = i + 2;
        r->next_row++;
        return 1;
}

int recording_open(const char *path, struct recording *ret) {
        ssize_t len;
        char *p;

        *ret = (struct recording) { .path = path };
        ret->f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
        ret->own_f = ret->f != stdin;
        if (!ret->f)
                return cli_fail("%s: %s", path, strerror(errno));
        /* blank lines are set aside until the first other one says CSV or JSON */
        while ((len = getline(&ret->buf, &ret->buf_size, ret->f)) > 0) {
                if (memchr(ret->buf, '\0', (size_t) len))
                        return cli_fail("%s: binary data, not a CSV or JSON recording", path);
                for (p = ret->buf; isspace((unsigned char) *p); p++)
                        ;
                if (*p || ret->buf[len - 1] != '\n')
                        break;
                p = realloc(ret->ahead, ret->ahead_len + (size_t) len);
                if (!p)
                        return cli_fail("%s: out of memory", path);
                memcpy(p + ret->ahead_len, ret->buf, (size_t) len);
                ret->ahead = p;
                ret->ahead_len += (size_t) len;
        }
        if (ferror(ret->f))
                return cli_fail("%s: %s", path, strerror(EIO));
        if (len > 0 && *p == '{') {
                size_t all = 0;
                char *text = strdup(ret->buf);
                ret->text = text ? read_rest(ret->f, text, (size_t) len, (size_t) len + 1, RECORDING_MAX_BYTES, &all)
                                 : NULL;
                if (!ret->text)
                        return cli_fail("%s: %s", path, strerror(text ? errno : ENOMEM));
                if (memchr(ret->text, '\0', all))
                        return cli_fail("%s: binary data, not a CSV or JSON recording", path);
                if (ret->own_f)
                        fclose(ret->f);
                ret->f = NULL;
                ret->own_f = false;
                return json_open(ret, all);
        }
        if (len > 0) {          /* the line read is the next one */
                p = realloc(ret->ahead, ret->ahead_len + (size_t) len + 1);
                if (!p)
                        return cli_fail("%s: out of memory", path);
                memcpy(p + ret->ahead_len, ret->buf, (size_t) len);
                ret->ahead = p;
                ret->ahead_len += (size_t) len;
        }
        return csv_header(ret);
}

int recording_next(struct recording *r) {
        return r->rows_json ? json_next(r) : csv_next(r);
}

void recording_free(struct recording *r) {
        if (r->f && r->own_f)
                fclose(r->f);
        json_object_put(r->doc);
        free(r->names);
        free(r->cells);
        free(r->header);
        free(r->buf);
        free(r->ahead);
        free(r->text);
        *r = (struct recording) {};
}

long recording_column(const struct recording *r, const char *name) {
        for (size_t k = 0; k < r->cols; k++)
                if (strcasecmp(r->names[k], name) == 0)
                        return (long) k;
        return -1;
}

long recording_column_any(const struct recording *r, const char *const *names) {
        for (; *names; names++) {
                long k = recording_column(r, *names);
                if (k >= 0)
                        return k;
        }
        return -1;
}

const char *recording_cell(const struct recording *r, long col) {
        return col < 0 ? "" : r->cells[col];
}

/* Reads exactly n digits. */
static bool digits(const char **p, int n, int *ret) {
        int v = 0;

        for (int i = 0; i < n; i++, (*p)++) {
                if (!isdigit((unsigned char) **p))
                        return false;
                v = v * 10 + (**p - '0');
        }
        *ret = v;
        return true;
}

static bool parse_zone(const char *p, double *ret_offset) {
        int hh, mm = 0;
        double sign;

        *ret_offset = 0;
        if (*p == '\0' || ((*p == 'Z' || *p == 'z') && p[1] == '\0'))
                return true;
        if (*p != '+' && *p != '-')
                return false;
        sign = *p++ == '-' ? -1 : 1;
        if (!digits(&p, 2, &hh))
                return false;
        if (*p == ':')
                p++;
        if (*p && !digits(&p, 2, &mm))
                return false;
        *ret_offset = sign * (hh * 3600.0 + mm * 60.0);
        return *p == '\0' && hh < 24 && mm < 60;
}

bool recording_parse_iso8601(const char *text, double *ret) {
        struct tm tm = {};
        const char *p = text;
        int y, mo, d, h, mi, s;
        double frac = 0, off;

        if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' || !digits(&p, 2, &d) ||
            (*p != 'T' && *p != 't' && *p != ' '))
                return false;
        p++;
        if (!digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi) || *p++ != ':' || !digits(&p, 2, &s))
                return false;
        if (*p == '.' || *p == ',') {
                double scale = 0.1;
                for (p++; isdigit((unsigned char) *p); p++, scale /= 10)
                        frac += (*p - '0') * scale;
        }
        if (!parse_zone(p, &off) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
                return false;
        tm.tm_year = y - 1900;
        tm.tm_mon = mo - 1;
        tm.tm_mday = d;
        tm.tm_hour = h;
        tm.tm_min = mi;
        tm.tm_sec = s;
        *ret = (double) timegm(&tm) + frac - off;
        return true;
}
