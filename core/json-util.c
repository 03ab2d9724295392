/* json-util.c — json-c helpers: exact decimal numbers, nulls for missing values, error bodies, duplicate keys. */
#include "json-util.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"
#include "util.h"

/* json-c prints doubles with %.17g (43.1 -> 43.100000000000001); we hand it
 * the text to print instead, so the API shows what the sensor said. */
json_object *json_new_millis(int64_t milli) {
        char buf[32];
        int64_t a = milli < 0 ? -milli : milli;
        int n = snprintf(buf, sizeof buf, "%s%lld.%03lld", milli < 0 ? "-" : "",
                         (long long) (a / 1000), (long long) (a % 1000));

        while (n > 0 && buf[n - 1] == '0' && buf[n - 2] != '.')
                buf[--n] = '\0';
        return json_object_new_double_s((double) milli / 1000.0, buf);
}

/* v rounded to `decimals` (0..6) as text, trailing zeros dropped but one
 * decimal kept ("43.0"). Integer arithmetic: snprintf("%f") was most of the
 * cost of a long history answer, and a history answer is 72,000 numbers.
 * Returns the length, 0 when v is too large for it or buf too small. */
static size_t format_fixed(double v, int decimals, char *buf, size_t size) {
        static const double scale[] = { 1, 10, 100, 1e3, 1e4, 1e5, 1e6 };
        long long x;

        if (decimals < 0 || decimals > 6 || size < UTIL_DECIMAL_MAX || !(fabs(v) * scale[decimals] < 9e15))
                return 0;
        x = llround(v * scale[decimals]);
        /* x is whole: what rounds to 0 has no sign, no "-0.0" */
        return util_decimal_text(x < 0 ? 0ULL - (unsigned long long) x : (unsigned long long) x, decimals, x < 0, 1,
                                 buf);
}

size_t json_number_text(double v, int decimals, char *buf, size_t size) {
        int n;

        if (!isfinite(v))
                return (size_t) snprintf(buf, size, "null");
        n = (int) format_fixed(v, decimals, buf, size);
        if (n > 0)
                return (size_t) n;
        n = snprintf(buf, size, "%.*f", decimals, v);
        if (n < 0 || (size_t) n >= size)        /* beyond 1e40 or so: exponent form */
                return (size_t) snprintf(buf, size, "%.17g", v);
        while (decimals > 0 && n > 2 && buf[n - 1] == '0' && buf[n - 2] != '.')
                buf[--n] = '\0';
        return (size_t) n;
}

json_object *json_new_number(double v, int decimals) {
        char buf[48];

        if (!isfinite(v))
                return NULL;
        json_number_text(v, decimals, buf, sizeof buf);
        return json_object_new_double_s(v, buf);
}

json_object *json_new_text(const char *s) {
        size_t len = strlen(s), i = 0, n;
        char *clean;
        json_object *o;

        while (i < len && (n = text_utf8_char_len(s + i, len - i)) > 0)
                i += n;
        if (i == len)           /* valid, as nearly always */
                return json_object_new_string(s);
        clean = malloc(3 * len + 1);    /* each bad byte becomes U+FFFD, 3 bytes */
        if (!clean)
                return NULL;
        o = json_object_new_string(text_utf8_sanitize(s, clean, 3 * len + 1));
        free(clean);
        return o;
}

json_object *json_new_string_or_null(const char *s) {
        return s && *s ? json_new_text(s) : NULL;
}

char *json_error_body(const char *code, const char *message) {
        json_object *root = json_object_new_object(), *err = json_object_new_object();
        char *out;

        json_object_object_add(err, "code", json_object_new_string(code));
        json_object_object_add(err, "message", json_object_new_string(message));
        json_object_object_add(root, "error", err);
        out = strdup(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN));
        json_object_put(root);
        return out;
}

/* One open object or array of the text being scanned. */
struct json_scan_level {
        json_object *keys;              /* an object's keys so far, as a set (json-c's own hash); NULL: an array */
        bool want_key;                  /* an object: the next string is a key */
        size_t index;                   /* an array: the element being read */
        size_t path_len;                /* bytes of the path that lead here */
};

struct json_scan {
        struct json_scan_level level[JSON_TOKENER_DEFAULT_DEPTH];
        size_t depth;
        json_tokener *tok;              /* decodes keys, so they compare as json-c stores them */
        char *path;
        size_t pathlen, path_used;      /* bytes: the buffer, and the path in it */
};

/* Writes sep and name at `at` of the path, cut to the buffer; path_used follows. */
static void json_scan_path(struct json_scan *s, size_t at, const char *sep, const char *name) {
        int n;

        if (s->pathlen == 0)
                return;
        if (at >= s->pathlen)
                at = s->pathlen - 1;
        n = snprintf(s->path + at, s->pathlen - at, "%s%s", sep, name);
        s->path_used = n < 0 ? at : at + (size_t) n >= s->pathlen ? s->pathlen - 1 : at + (size_t) n;
}

/* The string that starts at p (its quote, ' or "), up to its closing quote. */
static const char *json_scan_string_end(const char *p, const char *end) {
        char quote = *p++;

        for (; p < end && *p != quote; p++)
                if (*p == '\\')
                        p++;
        return p < end ? p : NULL;
}

/* A key of the innermost object, quotes included: 1 when it was there before. */
static int json_scan_key(struct json_scan *s, const char *start, const char *last) {
        struct json_scan_level *l = &s->level[s->depth - 1];
        json_object *k;
        const char *key;
        int r;

        json_tokener_reset(s->tok);
        k = json_tokener_parse_ex(s->tok, start, (int) (last - start + 1));
        if (!k || !json_object_is_type(k, json_type_string)) {
                json_object_put(k);
                return -EINVAL;
        }
        /* as json-c stores keys: a C string, cut at a \u0000 */
        key = json_object_get_string(k);
        json_scan_path(s, l->path_len, l->path_len ? "." : "", key);
        if (json_object_object_get_ex(l->keys, key, NULL))
                r = 1;
        else
                r = json_object_object_add(l->keys, key, NULL) < 0 ? -ENOMEM : 0;
        json_object_put(k);
        l->want_key = false;
        return r;
}

static int json_scan_open(struct json_scan *s, bool object) {
        struct json_scan_level *parent = s->depth ? &s->level[s->depth - 1] : NULL, *l;

        if (s->depth == ELEMENTSOF(s->level))
                return -E2BIG;
        if (!parent)
                s->path_used = 0;
        else if (!parent->keys) {
                char index[24];

                snprintf(index, sizeof index, "[%zu]", parent->index);
                json_scan_path(s, parent->path_len, "", index);
        }
        /* in an object, the path already ends with the key this is the value of */
        l = &s->level[s->depth++];
        *l = (struct json_scan_level) { .want_key = object, .path_len = s->path_used };
        if (object && !(l->keys = json_object_new_object()))
                return -ENOMEM;
        return 0;
}

static void json_scan_close(struct json_scan *s) {
        if (s->depth > 0)
                json_object_put(s->level[--s->depth].keys);
}

/* Comments are blanks to json-c (outside strict mode), and end where
 * json-c ends them: it takes the byte after a '*' with it, so two stars and
 * a slash do not end one (json-c 0.16). After the value json-c stops where
 * it can tell the value is whole, which may be inside a comment: one cut
 * short by the end of the text ends there. */
static const char *json_scan_comment_end(const char *p, const char *end) {
        if (p + 1 < end && p[1] == '*') {
                for (p += 2; p < end; p++)
                        if (*p == '*' && ++p < end && *p == '/')
                                return p;
                return end - 1;
        }
        if (p + 1 < end && p[1] == '/') {
                while (p < end && *p != '\n')
                        p++;
                return p < end ? p : end - 1;
        }
        return p;       /* a '/' at the very end */
}

/* One character (or one string or comment) of the text; p moves to its last byte. */
static int json_scan_step(struct json_scan *s, const char **p, const char *end) {
        struct json_scan_level *l = s->depth ? &s->level[s->depth - 1] : NULL;
        const char *start = *p;

        switch (**p) {
        case '"':
        case '\'':
                *p = json_scan_string_end(start, end);
                if (!*p)
                        return -EINVAL;
                return l && l->keys && l->want_key ? json_scan_key(s, start, *p) : 0;
        case '/':
                *p = json_scan_comment_end(start, end);
                return 0;
        case '{':
        case '[':
                return json_scan_open(s, **p == '{');
        case '}':
        case ']':
                json_scan_close(s);
                return 0;
        case ',':
                if (l && l->keys)
                        l->want_key = true;
                else if (l)
                        l->index++;
                return 0;
        default:
                return 0;       /* blanks, ':', numbers, true, false, null, NaN */
        }
}

int json_find_duplicate_key(const char *text, size_t len, char *path, size_t pathlen) {
        struct json_scan s = { .path = path, .pathlen = pathlen };
        const char *end = text + len;
        int r = 0;

        if (pathlen)
                path[0] = '\0';
        if (len > INT_MAX)
                return -EINVAL;
        s.tok = json_tokener_new();
        if (!s.tok)
                return -ENOMEM;
        for (const char *p = text; p < end; p++) {
                r = json_scan_step(&s, &p, end);
                if (r != 0)
                        break;
        }
        while (s.depth > 0)
                json_scan_close(&s);
        json_tokener_free(s.tok);
        return r;
}

void json_writer_raw(struct json_writer *w, const char *text, size_t len) {
        if (w->error)
                return;
        if (len > w->cap - w->len) {
                size_t cap = w->cap ? w->cap : 4096;
                char *b;

                while (cap - w->len < len) {
                        if (cap > SIZE_MAX / 2) {
                                w->error = -ENOMEM;
                                return;
                        }
                        cap *= 2;
                }
                b = realloc(w->buf, cap);
                if (!b) {
                        w->error = -ENOMEM;
                        return;
                }
                w->buf = b;
                w->cap = cap;
        }
        memcpy(w->buf + w->len, text, len);
        w->len += len;
}

void json_writer_string(struct json_writer *w, const char *s) {
        json_object *o = json_object_new_string(s);
        size_t len;
        const char *text = o ? json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len) : NULL;

        if (text)
                json_writer_raw(w, text, len);
        else if (!w->error)
                w->error = -ENOMEM;
        json_object_put(o);
}

void json_writer_number(struct json_writer *w, double v, int decimals) {
        char buf[48];
        size_t n;

        if (!w->error && w->cap - w->len >= sizeof buf && isfinite(v) &&
            (n = format_fixed(v, decimals, w->buf + w->len, w->cap - w->len)) > 0) {
                w->len += n;    /* in place: the common case of a long answer */
                return;
        }
        json_writer_raw(w, buf, json_number_text(v, decimals, buf, sizeof buf));
}

void json_writer_int(struct json_writer *w, int64_t v) {
        char buf[24];

        json_writer_raw(w, buf, (size_t) snprintf(buf, sizeof buf, "%" PRId64, v));
}
