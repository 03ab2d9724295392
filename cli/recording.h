/* recording.h — a recording read from a file: a CSV with a header (samples.csv, a run export, another tool's log) or a run's JSON export, as named columns of text cells. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct recording {
        const char *path;
        size_t cols, rows;
        char **names;                   /* cols column names */
        char **cells;                   /* rows x cols, "" for an empty or missing cell */
        size_t *line;                   /* rows: the file's line number of each row (1 = the header) */
        char *text;                     /* the file, cells point into it */
};

/* Reads path ("-" is stdin). CSV: comma, semicolon or tab separated (the
 * header decides), double quotes around a cell allowed, blank lines and
 * lines starting with '#' skipped. JSON: {"columns": [...], "rows": [[...]]}
 * as GET /api/v1/runs/{id}/samples sends it. On error prints one line
 * naming the file (and the line) and returns -1. */
int recording_read(const char *path, struct recording *ret);
void recording_free(struct recording *r);

/* The whole of path ("-" is stdin), NUL-terminated, at most max bytes
 * (errno EFBIG beyond). NULL with errno on failure. */
char *recording_read_all(const char *path, size_t max, size_t *ret_len);

/* Index of the column called name (ASCII case ignored), -1 when absent. */
long recording_column(const struct recording *r, const char *name);
/* The first of the names that exists, -1 for none. names ends with NULL. */
long recording_column_any(const struct recording *r, const char *const *names);
const char *recording_cell(const struct recording *r, size_t row, long col);

/* Seconds since the Unix epoch from ISO 8601 "2024-05-01T12:00:03.250Z"
 * (also a space for the T, an offset +02:00 / +0200, or no zone: UTC).
 * False when text is not such a time. */
bool recording_parse_iso8601(const char *text, double *ret);
