/* samples-csv.c — the one declaration of a run's samples.csv: its columns, rows written whole, rows read back by name. */
#include "samples-csv.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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
};

/* Longest field written for a number: sign, 20 digits, point, decimals. */
#define FIELD_MAX 40

const char *samples_column_name(enum samples_column c) {
        return c < SAMPLES_FIXED_COLUMNS ? column_names[c] : NULL;
}

char *samples_header(const char *const *temp_ids, size_t n_temps, const char *const *policy_ids, size_t n_policies) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        if (!f)
                return NULL;
        for (size_t c = 0; c < SAMPLES_FIXED_COLUMNS; c++)
                fprintf(f, "%s%s", c ? "," : "", column_names[c]);
        for (size_t i = 0; i < n_temps; i++)
                fprintf(f, ",%s_c", temp_ids[i]);
        for (size_t i = 0; i < n_policies; i++)
                fprintf(f, ",%s_hz", policy_ids[i]);
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

static void put_number(struct row_buf *b, double v, int decimals) {
        if (isfinite(v))
                put(b, ",%.*f", decimals, v);
        else
                put(b, ",");
}

int samples_format_row(const struct samples_row *row, const double *temps_c, size_t n_temps,
                       const double *policies_hz, size_t n_policies, char *buf, size_t size) {
        struct row_buf b = { buf, size, false };

        put(&b, "%" PRId64 ",%.3f,%s", row->time_ms, row->elapsed_s, row->phase);
        put_number(&b, row->temp_c, 3);
        put_number(&b, row->hottest_c, 3);
        put_number(&b, row->freq_hz, 0);
        put_number(&b, row->max_allowed_hz, 0);
        put(&b, ",%d", row->cooling_active ? 1 : 0);
        put_number(&b, row->load, 4);
        put_number(&b, row->work_rate, 1);
        put(&b, ",%s", row->work_unit ? row->work_unit : "");
        put_number(&b, row->t_since_load_s, 3);
        for (size_t i = 0; i < n_temps; i++)
                put_number(&b, temps_c[i], 3);
        for (size_t i = 0; i < n_policies; i++)
                put_number(&b, policies_hz[i], 0);
        put(&b, "\n");
        return b.full ? -ENOBUFS : (int) (size - b.left);
}

static double field_number(const char *field) {
        char *end;
        double v;

        if (!*field)
                return NAN;
        v = strtod(field, &end);
        return end == field ? NAN : v;
}

int samples_parse_row(char *line, struct samples_row *ret) {
        char *f[SAMPLES_WORK_UNIT + 1], *rest = line;
        size_t n = 0;

        /* strsep, not strtok: an empty field (a failed sensor) is a column too */
        while (rest && n < ELEMENTSOF(f))
                f[n++] = strsep(&rest, ",");
        if (n < ELEMENTSOF(f))
                return -EINVAL;
        *ret = (struct samples_row) {
                .time_ms = strtoll(f[SAMPLES_TIME_MS], NULL, 10),
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
                .t_since_load_s = NAN,
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

/* One field as JSON: a number, a string (the phase, the unit), or null when empty. */
static json_object *field_json(const char *f) {
        char *end;
        double v;

        if (!*f)
                return NULL;
        v = strtod(f, &end);
        if (*end == '\0')
                return strchr(f, '.') ? json_object_new_double_s(v, f) : json_object_new_int64(strtoll(f, NULL, 10));
        return json_object_new_string(f);
}

static json_object *line_json(char *line) {
        json_object *a = json_object_new_array();

        for (char *rest = line; rest; )
                json_object_array_add(a, field_json(strsep(&rest, ",")));
        return a;
}

struct to_json {
        json_object *columns, *rows;
};

static int to_json_row(void *userdata, char *line, bool header) {
        struct to_json *t = userdata;

        if (header)
                t->columns = line_json(line);
        else
                json_object_array_add(t->rows, line_json(line));
        return 0;
}

json_object *samples_to_json(FILE *f) {
        json_object *root = json_object_new_object();
        struct to_json t = { NULL, json_object_new_array() };

        samples_read(f, to_json_row, &t);
        json_object_object_add(root, "columns", t.columns ? t.columns : json_object_new_array());
        json_object_object_add(root, "rows", t.rows);
        return root;
}
