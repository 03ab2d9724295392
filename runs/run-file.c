/* run-file.c — a finished run as one self-describing file: exported by one daemon, imported by another.
 *
 * The file is the run's own two files in one JSON object: "run" is run.json
 * as GET /api/v1/runs/{id} shows it, and "samples_csv" is samples.csv
 * verbatim. An import is checked as hostile input (the same parsers that
 * read the daemon's own files after a crash), gets a new id, and its
 * metrics are computed again here from its samples: two boards' runs
 * compared on one daemon are analysed by the same code. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic-file.h"
#include "build-config.h"
#include "run.h"
#include "samples-csv.h"
#include "text.h"
#include "util.h"

#define RUN_FILE_FORMAT "heatcurve-run"
#define RUN_FILE_VERSION 1

struct run_file_export {
        char *head;                     /* the document up to the opening quote of samples_csv */
        size_t head_len, head_sent;
        FILE *csv;
        int64_t left;                   /* bytes of samples.csv still to send: its whole lines */
        char pending[8];                /* an escape that did not fit the last buffer */
        size_t pending_len, pending_sent;
        bool tail_sent;
};

/* The document is made as it is sent: the run's own part is small, and
 * samples.csv goes from the file into the answer a buffer at a time,
 * escaped as a JSON string, so an export never holds the run in memory. */
int run_file_export_open(const struct run *r, const char *dir, struct run_file_export **ret, char *err,
                         size_t errlen) {
        struct run_file_export *x;
        char path[PATH_MAX];
        struct stat st;
        int64_t whole;
        FILE *f;
        int fd, e;

        if (r->state == RUN_RUNNING)
                return util_errorf(err, errlen, -EBUSY, "run %u is running; export it when it has ended", r->id);
        snprintf(path, sizeof path, "%s/samples.csv", dir);
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                e = fd < 0 || !S_ISREG(st.st_mode) ? (fd < 0 ? -errno : -EINVAL) : -errno;
                if (fd >= 0)
                        close(fd);
                return util_errorf(err, errlen, e, "run %u: cannot read its samples: %s", r->id,
                                   e == -EINVAL ? "not a regular file" : strerror(-e));
        }
        f = fdopen(fd, "re");
        if (!f) {
                close(fd);
                return util_errorf(err, errlen, -ENOMEM, "out of memory");
        }
        /* what a crash left half written is not part of the run */
        whole = samples_complete_length(f);
        if (whole < 0 || fseek(f, 0, SEEK_SET) < 0) {
                fclose(f);
                return util_errorf(err, errlen, -EIO, "run %u: cannot read its samples", r->id);
        }

        json_object *o = json_object_new_object();
        json_object_object_add(o, "format", json_object_new_string(RUN_FILE_FORMAT));
        json_object_object_add(o, "format_version", json_object_new_int(RUN_FILE_VERSION));
        json_object_object_add(o, "exported_ms", json_object_new_int64(util_now_ms()));
        json_object_object_add(o, "exported_by", json_object_new_string("heatcurved " HEATCURVE_VERSION));
        json_object_object_add(o, "run", run_to_json(r, false));
        size_t len;
        const char *text = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);
        x = calloc(1, sizeof *x);
        if (x)
                x->head = malloc(len + 16);
        if (!x || !x->head) {
                free(x);
                json_object_put(o);
                fclose(f);
                return util_errorf(err, errlen, -ENOMEM, "out of memory");
        }
        /* "{...}" without its closing brace, then the last member opened */
        memcpy(x->head, text, len - 1);
        memcpy(x->head + len - 1, ",\"samples_csv\":\"", 16);
        x->head_len = len - 1 + 16;
        json_object_put(o);
        x->csv = f;
        x->left = whole;
        *ret = x;
        return 0;
}

ssize_t run_file_export_read(struct run_file_export *x, char *buf, size_t max) {
        size_t n = 0;
        int c;

        n += util_copy_part(buf, max, x->head, x->head_len, &x->head_sent);
        n += util_copy_part(buf + n, max - n, x->pending, x->pending_len, &x->pending_sent);
        while (n < max && x->left > 0 && (c = getc(x->csv)) != EOF) {
                char esc[8];
                size_t e = 0;

                x->left--;
                if (c == '"' || c == '\\')
                        e = (size_t) snprintf(esc, sizeof esc, "\\%c", c);
                else if (c == '\n')
                        e = (size_t) snprintf(esc, sizeof esc, "\\n");
                else if (c < 0x20 || c == 0x7f)
                        e = (size_t) snprintf(esc, sizeof esc, "\\u%04x", c);
                else
                        esc[e++] = (char) c;
                memcpy(x->pending, esc, e);
                x->pending_len = e;
                x->pending_sent = 0;
                n += util_copy_part(buf + n, max - n, x->pending, x->pending_len, &x->pending_sent);
        }
        if (x->left > 0 && ferror(x->csv))
                return -EIO;
        if (x->left > 0 && feof(x->csv))
                return -EIO;            /* shorter than it was a moment ago */
        if (n < max && x->left == 0 && x->pending_sent == x->pending_len && !x->tail_sent) {
                if (max - n < 2)
                        return (ssize_t) n;
                memcpy(buf + n, "\"}", 2);
                n += 2;
                x->tail_sent = true;
        }
        return (ssize_t) n;
}

void run_file_export_free(struct run_file_export *x) {
        if (!x)
                return;
        fclose(x->csv);
        free(x->head);
        free(x);
}

/* The run file's one large member, samples_csv, is taken out of the way of
 * json-c, which would hold it twice more (its tokener's buffer and the
 * string made of it) on top of the body: it is decoded in place in the
 * body, and json-c reads the rest of the document. Only the JSON that
 * export writes is split so; anything else (json-c's comments and single
 * quotes, raw control characters, escaped keys) json-c reads whole, with
 * its own errors. */
static const char *split_space(const char *p, const char *end) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
                p++;
        return p;
}

/* Just past the string that opens at p, its escapes checked; NULL when it is not one. */
static const char *split_string_end(const char *p, const char *end) {
        for (p++; p < end; p++) {
                if (*p == '"')
                        return p + 1;
                if ((unsigned char) *p < 0x20)
                        return NULL;
                if (*p != '\\')
                        continue;
                if (++p == end)
                        return NULL;
                if (*p == 'u') {
                        if (end - p < 5)
                                return NULL;
                        for (int i = 1; i <= 4; i++)
                                if (!isxdigit((unsigned char) p[i]))
                                        return NULL;
                        p += 4;
                } else if (!*p || !strchr("\"\\/bfnrt", *p))
                        return NULL;
        }
        return NULL;
}

/* Where the member value at p ends: at the ',' or '}' after it; NULL when unsure. */
static const char *split_value_end(const char *p, const char *end) {
        size_t depth = 0;

        while (p < end) {
                if (*p == '"') {
                        p = split_string_end(p, end);
                        if (!p)
                                return NULL;
                        continue;
                }
                if (*p == '/' || *p == '\'')
                        return NULL;
                if ((*p == ',' || *p == '}' || *p == ']') && depth == 0)
                        return *p == ']' ? NULL : p;
                if (*p == '{' || *p == '[')
                        depth++;
                else if (*p == '}' || *p == ']')
                        depth--;
                p++;
        }
        return NULL;
}

/* The text between the quotes of the one top-level "samples_csv" string: 1, or 0 when not sure. */
static int split_find(const char *text, size_t len, const char **start, const char **stop) {
        const char *p = split_space(text, text + len), *end = text + len, *key;
        int found = 0;

        if (p == end || *p != '{')
                return 0;
        for (p = split_space(p + 1, end); p < end && *p == '"'; p = split_space(p + 1, end)) {
                key = p + 1;
                p = split_string_end(p, end);
                if (!p || memchr(key, '\\', (size_t) (p - 1 - key)))
                        return 0;
                bool ours = p - 1 - key == 11 && memcmp(key, "samples_csv", 11) == 0;
                p = split_space(p, end);
                if (p == end || *p != ':')
                        return 0;
                p = split_space(p + 1, end);
                if (ours && (found || p == end || *p != '"'))
                        return 0;
                if (ours) {
                        *start = p + 1;
                        p = split_string_end(p, end);
                        *stop = p ? p - 1 : NULL;
                        found = 1;
                } else
                        p = split_value_end(p, end);
                if (!p || (p = split_space(p, end)) == end || (*p != ',' && *p != '}'))
                        return 0;
                if (*p == '}')
                        return split_space(p + 1, end) == end ? found : 0;
        }
        return 0;
}

static unsigned split_hex4(const char *p) {
        unsigned v = 0;

        for (int i = 0; i < 4; i++) {
                int c = tolower((unsigned char) p[i]);
                v = v * 16 + (unsigned) (isdigit(c) ? c - '0' : c - 'a' + 10);
        }
        return v;
}

/* One \uXXXX escape (two for a surrogate pair) at p as UTF-8 into out, as
 * json-c decodes it: a lone surrogate is U+FFFD. Returns the escape's length. */
static size_t split_unicode(const char *p, const char *end, char **out) {
        unsigned cp = split_hex4(p + 2), low;
        size_t used = 6;
        char *o = *out;

        if (cp >= 0xd800 && cp < 0xdc00 && end - p >= 12 && p[6] == '\\' && p[7] == 'u' &&
            (low = split_hex4(p + 8)) >= 0xdc00 && low < 0xe000) {
                cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
                used = 12;
        } else if (cp >= 0xd800 && cp < 0xe000)
                cp = 0xfffd;
        if (cp < 0x80) {
                *o++ = (char) cp;
        } else if (cp < 0x800) {
                *o++ = (char) (0xc0 | cp >> 6);
                *o++ = (char) (0x80 | (cp & 0x3f));
        } else if (cp < 0x10000) {
                *o++ = (char) (0xe0 | cp >> 12);
                *o++ = (char) (0x80 | (cp >> 6 & 0x3f));
                *o++ = (char) (0x80 | (cp & 0x3f));
        } else {
                *o++ = (char) (0xf0 | cp >> 18);
                *o++ = (char) (0x80 | (cp >> 12 & 0x3f));
                *o++ = (char) (0x80 | (cp >> 6 & 0x3f));
                *o++ = (char) (0x80 | (cp & 0x3f));
        }
        *out = o;
        return used;
}

/* The checked string text [s, end) decoded in place (never longer); its new length. */
static size_t split_decode(char *s, const char *end) {
        char *out = s;
        const char *p = s, *esc;

        while (p < end) {
                esc = memchr(p, '\\', (size_t) (end - p));
                if (!esc)
                        esc = end;
                memmove(out, p, (size_t) (esc - p));
                out += esc - p;
                p = esc;
                if (p == end)
                        break;
                if (p[1] == 'u') {
                        p += split_unicode(p, end, &out);
                        continue;
                }
                switch (p[1]) {
                case 'b': *out++ = '\b'; break;
                case 'f': *out++ = '\f'; break;
                case 'n': *out++ = '\n'; break;
                case 'r': *out++ = '\r'; break;
                case 't': *out++ = '\t'; break;
                default: *out++ = p[1]; break;
                }
                p += 2;
        }
        return (size_t) (out - s);
}

int run_file_split(char *text, size_t len, char **rest, size_t *rest_len, const char **csv, size_t *csv_len) {
        const char *start = NULL, *stop = NULL;
        size_t head, tail;
        char *r;

        if (!split_find(text, len, &start, &stop))
                return 0;
        head = (size_t) (start - text);
        tail = len - (size_t) (stop - text);
        r = malloc(head + tail + 1);
        if (!r)
                return -ENOMEM;
        memcpy(r, text, head);
        memcpy(r + head, stop, tail);
        r[head + tail] = '\0';
        *rest = r;
        *rest_len = head + tail;
        *csv = start;
        *csv_len = split_decode(text + head, stop);
        return 1;
}

struct import_reader {
        struct run_series s;
        char unit[16];
        size_t line;                    /* 1 for the header */
        size_t fixed;                   /* fixed columns the header names */
        char *err;
        size_t errlen;
};

/* The fixed columns this daemon reads back, by name and in order. */
static int import_header(char *line, char *err, size_t errlen) {
        char *save = NULL, *name = strtok_r(line, ",", &save);

        for (int c = 0; c <= SAMPLES_WORK_UNIT; c++, name = strtok_r(NULL, ",", &save))
                if (!name || strcmp(name, samples_column_name((enum samples_column) c)) != 0)
                        return util_errorf(err, errlen, -EINVAL,
                                           "samples_csv: the header's column %d is \"%s\", not \"%s\"", c + 1,
                                           name ? name : "", samples_column_name((enum samples_column) c));
        return 0;
}

static int import_row(void *userdata, char *line, bool header) {
        struct import_reader *rd = userdata;
        struct samples_row row;
        enum analysis_phase phase;
        int kind;

        rd->line++;
        if (header) {
                rd->fixed = samples_header_fixed(line);
                return import_header(line, rd->err, rd->errlen);
        }
        if (samples_parse_row(line, rd->fixed, &row) < 0)
                return util_errorf(rd->err, rd->errlen, -EINVAL, "samples_csv: line %zu has too few fields", rd->line);
        kind = run_phase_kind_from_string(row.phase);
        if (kind < 0)
                return util_errorf(rd->err, rd->errlen, -EINVAL, "samples_csv: line %zu: unknown phase", rd->line);
        phase = (enum analysis_phase) kind;
        if (!isfinite(row.elapsed_s) || row.elapsed_s < 0 || (rd->s.lim.given && row.elapsed_s < rd->s.last_t_s))
                return util_errorf(rd->err, rd->errlen, -EINVAL,
                                   "samples_csv: line %zu: elapsed_s is not a time after the line before", rd->line);
        return run_series_append_row(&rd->s, &row, phase, rd->unit, sizeof rd->unit);
}

/* Every line of csv complete and read back; the series into rd. */
static int import_samples(const char *csv, size_t len, struct import_reader *rd) {
        FILE *f;
        int e;

        if (memchr(csv, '\0', len))
                return util_errorf(rd->err, rd->errlen, -EINVAL, "samples_csv: holds a NUL byte");
        if (len == 0 || csv[len - 1] != '\n')
                return util_errorf(rd->err, rd->errlen, -EINVAL, "samples_csv: does not end with a whole line");
        f = fmemopen((void *) csv, len, "r");
        if (!f)
                return -ENOMEM;
        e = samples_read(f, import_row, rd);
        fclose(f);
        if (e < 0)
                return e == -ENOMEM ? util_errorf(rd->err, rd->errlen, e, "out of memory") : e;
        if (rd->s.n < 2)
                return util_errorf(rd->err, rd->errlen, -EINVAL, "samples_csv: fewer than two samples");
        return 0;
}

/* The document's framing: format, version, run, samples. */
static int import_check(json_object *doc, json_object **run, const char **csv, size_t *len, char *err,
                        size_t errlen) {
        json_object *format, *version, *samples;

        if (!json_object_is_type(doc, json_type_object))
                return util_errorf(err, errlen, -EINVAL, "body: not a JSON object");
        if (!json_object_object_get_ex(doc, "format", &format) ||
            !json_object_is_type(format, json_type_string) ||
            strcmp(json_object_get_string(format), RUN_FILE_FORMAT) != 0)
                return util_errorf(err, errlen, -EINVAL, "format: not \"%s\" (a file of heatcurvectl export "
                                   "--format run)", RUN_FILE_FORMAT);
        if (!json_object_object_get_ex(doc, "format_version", &version) ||
            !json_object_is_type(version, json_type_int))
                return util_errorf(err, errlen, -EINVAL, "format_version: missing or not a number");
        if (json_object_get_int64(version) != RUN_FILE_VERSION)
                return util_errorf(err, errlen, -EINVAL, "format_version: %lld, this daemon reads %d",
                                   (long long) json_object_get_int64(version), RUN_FILE_VERSION);
        if (!json_object_object_get_ex(doc, "run", run) || !json_object_is_type(*run, json_type_object))
                return util_errorf(err, errlen, -EINVAL, "run: missing or not an object");
        if (!json_object_object_get_ex(doc, "samples_csv", &samples) ||
            !json_object_is_type(samples, json_type_string))
                return util_errorf(err, errlen, -EINVAL, "samples_csv: missing or not a string");
        *csv = json_object_get_string(samples);
        *len = (size_t) json_object_get_string_len(samples);
        return 0;
}

/* Creates dir (never one that exists) with samples.csv and run.json; on
 * failure nothing of it stays. */
static int import_write(struct run *r, const char *dir, const char *csv, size_t len, char *err, size_t errlen) {
        char path[PATH_MAX], *slash;
        int e;

        snprintf(path, sizeof path, "%s", dir);
        slash = strrchr(path, '/');
        if (slash)
                *slash = '\0';
        e = util_mkdir_p(path, 0755);
        if (e >= 0 && mkdir(dir, 0755) < 0)
                e = -errno;
        if (e < 0)
                return util_errorf(err, errlen, e, "cannot create %s: %s", dir, strerror(-e));
        snprintf(path, sizeof path, "%s/samples.csv", dir);
        e = atomic_file_replace(path, csv, len, 0644);
        if (e >= 0)
                e = run_store_write(r, dir);
        if (e < 0) {
                util_errorf(err, errlen, e, "cannot write run %u: %s", r->id, strerror(-e));
                (void) unlink(path);
                (void) rmdir(dir);
        }
        return e;
}

int run_file_import(json_object *doc, const char *csv, size_t len, const char *state_dir, unsigned id,
                    struct run **ret, char *err, size_t errlen) {
        struct import_reader rd = { .err = err, .errlen = errlen };
        char dir[PATH_MAX], inner[256];
        json_object *jrun = NULL;
        const char *in_doc = NULL;
        struct run *r;
        size_t in_doc_len = 0;
        int e;

        e = import_check(doc, &jrun, &in_doc, &in_doc_len, err, errlen);
        if (e < 0)
                return e;
        /* the caps of a run started here: what is kept must read back after a restart */
        const char *label, *notes;
        e = run_check_texts(jrun, "run.", &label, &notes, err, errlen);
        if (e < 0)
                return e;
        e = run_from_json(jrun, &r, inner, sizeof inner);
        if (e < 0)
                return e == -EINVAL ? util_errorf(err, errlen, e, "run.%s", inner) : e;
        if (r->state == RUN_RUNNING) {
                run_free(r);
                return util_errorf(err, errlen, -EINVAL, "run.state: \"running\": only an ended run can be imported");
        }
        if (!csv) {
                csv = in_doc;
                len = in_doc_len;
        }
        /* as many samples as a live run keeps, however many rows: every 2nd, 4th ... past the cap */
        run_series_limit(&rd.s, RUN_SERIES_MAX);
        e = import_samples(csv, len, &rd);
        if (e < 0)
                goto out;

        /* a new id here; where it came from is kept with it */
        r->imported_id = r->id;
        r->imported_ms = util_now_ms();
        r->id = id;
        /* its series' ids are the other daemon's: here it is a run of its own, grouped by its label */
        r->repeat_of = r->repeat_index = 0;
        r->repeat_count = 1;
        r->remount = false;
        /* kept as it is shown: valid UTF-8 that fits, so run.json reads back to the same */
        text_utf8_sanitize(rd.unit, r->work_unit, sizeof r->work_unit);
        /* the other daemon's earlier runs are not this one's */
        run_prior_clear(r);
        run_series_metrics_horizon(&rd.s, r->ambient_c, run_plateau_horizon_s(r), &r->metrics);
        run_quality_phases(r, &rd.s);
        r->n_samples = rd.s.lim.given;  /* the rows, not those kept in memory */
        r->recording_ok = true;
        r->recording_error[0] = '\0';
        e = run_store_dir(state_dir, id, dir, sizeof dir);
        if (e < 0)
                util_errorf(err, errlen, e, "the state directory's path is too long");
        else
                e = import_write(r, dir, csv, len, err, errlen);
out:
        run_series_free(&rd.s);
        if (e < 0) {
                run_free(r);
                return e;
        }
        *ret = r;
        return 0;
}
