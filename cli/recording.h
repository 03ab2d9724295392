/* recording.h — a recording read from a file: a CSV with a header (samples.csv, a run export, another tool's log) or a run's JSON export, as named columns of text cells. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <json-c/json.h>

struct recording {
        const char *path;
        size_t cols;
        char **names;                   /* cols column names */
        char **cells;                   /* the current row's cols cells, "" for an empty or missing one */
        size_t line;                    /* the current row's line number in the file (1 = the header) */
        /* how it is read */
        FILE *f;                        /* a CSV, or a run file's samples_csv */
        bool own_f, from_json;
        char *buf;                      /* getline()'s: the current line, cells point into it */
        size_t buf_size, lineno;
        char *ahead;                    /* lines read before the file's kind was known, read again first */
        size_t ahead_len, ahead_at;
        char *header;                   /* the header line, names point into it */
        char sep;
        char *text;                     /* a JSON file while it is parsed */
        json_object *doc, *rows_json;   /* a JSON file: {"columns": [...], "rows": [...]} */
        size_t next_row;
};

/* Opens path ("-" is stdin) and reads its header. CSV: comma, semicolon or
 * tab separated (the header decides), double quotes around a cell allowed,
 * blank lines and lines starting with '#' skipped; read a line at a time,
 * whatever its length. JSON: {"columns": [...], "rows": [[...]]} as GET
 * /api/v1/runs/{id}/samples sends it, or a run file (export --format run),
 * read whole (at most 512 MiB). On error prints one line naming the file
 * (and the line) and returns -1. */
int recording_open(const char *path, struct recording *ret);
/* The next row into cells and line: 1, 0 at the end, -1 on error (printed). */
int recording_next(struct recording *r);
void recording_free(struct recording *r);

/* The whole of path ("-" is stdin), NUL-terminated, at most max bytes
 * (errno EFBIG beyond). NULL with errno on failure. */
char *recording_read_all(const char *path, size_t max, size_t *ret_len);

/* Index of the column called name (ASCII case ignored), -1 when absent. */
long recording_column(const struct recording *r, const char *name);
/* The first of the names that exists, -1 for none. names ends with NULL. */
long recording_column_any(const struct recording *r, const char *const *names);
/* A cell of the current row; "" for col -1. */
const char *recording_cell(const struct recording *r, long col);

/* Seconds since the Unix epoch from ISO 8601 "2024-05-01T12:00:03.250Z"
 * (also a space for the T, an offset +02:00 / +0200, or no zone: UTC).
 * False when text is not such a time. */
bool recording_parse_iso8601(const char *text, double *ret);
