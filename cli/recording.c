/* recording.c — read a recording (CSV with a header, or a run's JSON export) into named columns of text cells. */
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

char *recording_read_all(const char *path, size_t max, size_t *ret_len) {
        FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
        size_t cap = 1 << 16, len = 0;
        char *buf = NULL;

        if (!f)
                return NULL;
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
        if (f != stdin)
                fclose(f);
        if (buf) {
                buf[len] = '\0';
                *ret_len = len;
        }
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

static int add_row(struct recording *r, size_t *cap, char **cells, size_t n, size_t lineno) {
        if (r->rows == *cap) {
                size_t c = *cap ? *cap * 2 : 1024;
                char **p = realloc(r->cells, c * r->cols * sizeof(char *));
                size_t *l = p ? realloc(r->line, c * sizeof(size_t)) : NULL;
                if (p)
                        r->cells = p;
                if (!l)
                        return -ENOMEM;
                r->line = l;
                *cap = c;
        }
        for (size_t k = 0; k < r->cols; k++)
                r->cells[r->rows * r->cols + k] = k < n ? cells[k] : "";
        r->line[r->rows++] = lineno;
        return 0;
}

static int parse_csv(struct recording *r, size_t len) {
        char *p = r->text, *end = r->text + len, **cells = NULL, sep = ',';
        size_t lineno = 0, cap = 0;
        int ret = 0;

        while (p < end && ret == 0) {
                char *nl = memchr(p, '\n', (size_t) (end - p)), *line = p;
                bool cut = !nl;         /* the last line of a file still being written */
                p = nl ? nl + 1 : end;
                if (nl)
                        *nl = '\0';
                if (nl > line && nl[-1] == '\r')
                        nl[-1] = '\0';
                lineno++;
                if (line_skipped(line))
                        continue;
                if (!r->names) {
                        sep = strchr(line, ',') ? ',' : strchr(line, ';') ? ';' : '\t';
                        r->names = calloc(strlen(line) + 2, sizeof(char *));    /* more than the cells */
                        if (!r->names)
                                return cli_fail("%s: out of memory", r->path);
                        r->cols = split_cells(line, sep, r->names, strlen(line) + 2);
                        cells = calloc(r->cols, sizeof(char *));
                        if (!cells)
                                return cli_fail("%s: out of memory", r->path);
                        continue;
                }
                size_t n = split_cells(line, sep, cells, r->cols);
                if (n > r->cols)
                        ret = cli_fail("%s:%zu: %zu cells, the header has %zu", r->path, lineno, n, r->cols);
                else if (cut && n < r->cols)
                        break;          /* cut short, as the daemon's own reader treats it */
                else if (add_row(r, &cap, cells, n, lineno) < 0)
                        ret = cli_fail("%s: out of memory", r->path);
        }
        free(cells);
        if (ret == 0 && !r->names)
                ret = cli_fail("%s: empty file, no header line", r->path);
        return ret;
}

/* JSON cells become text: numbers as json-c prints them, null as "". */
static const char *json_cell(json_object *v) {
        if (!v || json_object_is_type(v, json_type_null))
                return "";
        return json_object_get_string(v);
}

static int parse_json(struct recording *r) {
        json_object *doc = client_parse_json(r->text, strlen(r->text)), *cols, *rows, *csv;
        size_t size = 0, cap = 0;
        int ret = 0;

        /* a run file (export --format run): its samples.csv as it is */
        if (doc && json_object_object_get_ex(doc, "samples_csv", &csv) && json_object_is_type(csv, json_type_string)) {
                size_t len = (size_t) json_object_get_string_len(csv);
                char *text = malloc(len + 1);
                if (!text) {
                        json_object_put(doc);
                        return cli_fail("%s: out of memory", r->path);
                }
                memcpy(text, json_object_get_string(csv), len + 1);
                json_object_put(doc);
                free(r->text);
                r->text = text;
                if (memchr(text, '\0', len))
                        return cli_fail("%s: samples_csv holds binary data", r->path);
                return parse_csv(r, len);
        }

        if (!doc || !json_object_object_get_ex(doc, "columns", &cols) || !json_object_object_get_ex(doc, "rows", &rows) ||
            !json_object_is_type(cols, json_type_array) || !json_object_is_type(rows, json_type_array)) {
                json_object_put(doc);
                return cli_fail("%s: not a run export: JSON without \"columns\" and \"rows\" arrays", r->path);
        }
        r->cols = json_object_array_length(cols);
        for (size_t i = 0; i < r->cols; i++)
                size += strlen(json_cell(json_object_array_get_idx(cols, i))) + 1;
        for (size_t i = 0; i < json_object_array_length(rows); i++)
                for (size_t k = 0; k < json_object_array_length(json_object_array_get_idx(rows, i)); k++)
                        size += strlen(json_cell(json_object_array_get_idx(json_object_array_get_idx(rows, i), k))) + 1;
        char *buf = malloc(size + 1), *w = buf, **tmp = calloc(r->cols + 1, sizeof(char *));
        r->names = calloc(r->cols + 1, sizeof(char *));
        if (!buf || !tmp || !r->names) {
                free(buf);
                free(tmp);
                json_object_put(doc);
                return cli_fail("%s: out of memory", r->path);
        }
        for (size_t i = 0; i < r->cols; i++) {
                r->names[i] = strcpy(w, json_cell(json_object_array_get_idx(cols, i)));
                w += strlen(w) + 1;
        }
        for (size_t i = 0; ret == 0 && i < json_object_array_length(rows); i++) {
                json_object *row = json_object_array_get_idx(rows, i);
                size_t n = json_object_array_length(row);
                if (n > r->cols) {
                        ret = cli_fail("%s: row %zu has %zu cells, there are %zu columns", r->path, i + 1, n, r->cols);
                        break;
                }
                for (size_t k = 0; k < n; k++) {
                        tmp[k] = strcpy(w, json_cell(json_object_array_get_idx(row, k)));
                        w += strlen(w) + 1;
                }
                if (add_row(r, &cap, tmp, n, i + 2) < 0)
                        ret = cli_fail("%s: out of memory", r->path);
        }
        free(tmp);
        free(r->text);
        r->text = buf;
        json_object_put(doc);
        return ret;
}

int recording_read(const char *path, struct recording *ret) {
        size_t len = 0;
        const char *p;

        *ret = (struct recording) { .path = path };
        ret->text = recording_read_all(path, RECORDING_MAX_BYTES, &len);
        if (!ret->text)
                return cli_fail("%s: %s", path, strerror(errno));
        if (memchr(ret->text, '\0', len))
                return cli_fail("%s: binary data, not a CSV or JSON recording", path);
        for (p = ret->text; isspace((unsigned char) *p); p++)
                ;
        return *p == '{' ? parse_json(ret) : parse_csv(ret, len);
}

void recording_free(struct recording *r) {
        free(r->names);
        free(r->cells);
        free(r->line);
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

const char *recording_cell(const struct recording *r, size_t row, long col) {
        return col < 0 ? "" : r->cells[row * r->cols + (size_t) col];
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
