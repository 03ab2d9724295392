/* json-util.c — json-c helpers: exact decimal numbers, nulls for missing values, error bodies. */
#include "json-util.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

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
 * cost of a long history answer. Returns false when v is too large for it. */
static bool format_fixed(double v, int decimals, char *buf, size_t size) {
        static const double scale[] = { 1, 10, 100, 1e3, 1e4, 1e5, 1e6 };
        char digits[32];
        size_t n = 0, len = 0;
        bool neg;
        long long q;

        if (decimals < 0 || decimals > 6 || !(fabs(v) * scale[decimals] < 9e15))
                return false;
        q = llround(v * scale[decimals]);
        neg = q < 0;
        if (neg)
                q = -q;
        do {
                digits[n++] = (char) ('0' + q % 10);
                q /= 10;
        } while (q > 0 || n <= (size_t) decimals);
        if (neg)
                buf[len++] = '-';
        while (n > (size_t) decimals)
                buf[len++] = digits[--n];
        if (decimals > 0) {
                size_t keep = 1;        /* drop trailing zeros, keep one decimal */
                for (size_t i = 0; i < (size_t) decimals; i++)
                        if (digits[i] != '0') {
                                keep = (size_t) decimals - i;
                                break;
                        }
                buf[len++] = '.';
                for (size_t i = 0; i < keep; i++)
                        buf[len++] = digits[--n];
        }
        buf[len] = '\0';
        if (strcmp(buf, "-0") == 0 || strcmp(buf, "-0.0") == 0)
                memmove(buf, buf + 1, len);
        return len < size;
}

json_object *json_new_number(double v, int decimals) {
        char buf[48];

        if (!isfinite(v))
                return NULL;
        if (!format_fixed(v, decimals, buf, sizeof buf)) {
                int n = snprintf(buf, sizeof buf, "%.*f", decimals, v);
                if (n < 0 || (size_t) n >= sizeof buf)  /* beyond 1e40 or so: exponent form */
                        snprintf(buf, sizeof buf, "%.17g", v);
                else
                        while (decimals > 0 && n > 2 && buf[n - 1] == '0' && buf[n - 2] != '.')
                                buf[--n] = '\0';
        }
        return json_object_new_double_s(v, buf);
}

json_object *json_new_string_or_null(const char *s) {
        return s && *s ? json_object_new_string(s) : NULL;
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
