/* client.c — heatcurvectl's HTTP side: one libcurl handle, JSON in and out, one-line errors. */
#include "client.h"

#include <curl/curl.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define REPLY_MAX (256u * 1024u * 1024u)       /* bytes kept in memory; exports stream instead */

int fail(const char *format, ...) {
        va_list ap;

        fputs("heatcurvectl: ", stderr);
        va_start(ap, format);
        vfprintf(stderr, format, ap);
        va_end(ap);
        fputc('\n', stderr);
        return -1;
}

int client_set_url(struct client *c, const char *url) {
        size_t len = strlen(url);

        while (len > 0 && url[len - 1] == '/')
                len--;
        if (len == 0)
                return fail("the URL is empty");
        if (len >= sizeof c->url)
                return fail("the URL is longer than %zu bytes", sizeof c->url - 1);
        memcpy(c->url, url, len);
        c->url[len] = '\0';
        return 0;
}

/* Why token cannot be sent, or NULL. */
static const char *token_problem(const char *token, size_t size) {
        size_t len = strlen(token);

        if (len == 0)
                return "is empty";
        if (len >= size)
                return "is too long";
        /* it goes into a header line: no spaces, no control characters */
        for (size_t i = 0; i < len; i++)
                if ((unsigned char) token[i] <= ' ' || token[i] == 0x7f)
                        return "contains a space or a control character";
        return NULL;
}

int client_set_token(struct client *c, const char *token) {
        const char *problem = token_problem(token, sizeof c->token);

        if (problem)
                return fail("--token: the token %s", problem);
        snprintf(c->token, sizeof c->token, "%s", token);
        return 0;
}

int client_read_token_file(struct client *c, const char *path) {
        char buf[sizeof c->token + 2];
        const char *problem;
        FILE *f = fopen(path, "re");
        size_t n;
        int r;

        if (!f)
                return fail("--token-file %s: %s", path, strerror(errno));
        n = fread(buf, 1, sizeof buf - 1, f);
        r = ferror(f) ? errno : 0;
        fclose(f);
        if (r)
                return fail("--token-file %s: %s", path, strerror(r));
        buf[n] = '\0';
        buf[strcspn(buf, "\r\n")] = '\0';       /* the first line */
        problem = token_problem(buf, sizeof c->token);
        if (problem)
                return fail("--token-file %s: the token on its first line %s", path, problem);
        snprintf(c->token, sizeof c->token, "%s", buf);
        return 0;
}

void reply_free(struct reply *r) {
        free(r->body);
        r->body = NULL;
        r->len = 0;
}

struct sink {
        struct reply *reply;
        FILE *out;                      /* stream 2xx bodies here */
        long status;
};

static size_t on_data(char *data, size_t size, size_t n, void *userdata) {
        struct sink *s = userdata;
        struct reply *r = s->reply;
        size_t len = size * n;
        char *p;

        if (s->out && s->status >= 200 && s->status < 300)
                return fwrite(data, 1, len, s->out);
        if (r->len + len > REPLY_MAX || !(p = realloc(r->body, r->len + len + 1)))
                return 0;
        memcpy(p + r->len, data, len);
        r->len += len;
        p[r->len] = '\0';
        r->body = p;
        return len;
}

static size_t on_header(char *data, size_t size, size_t n, void *userdata) {
        struct sink *s = userdata;
        long code;

        /* the status line arrives first: decide where the body goes */
        if (sscanf(data, "HTTP/%*s %ld", &code) == 1)
                s->status = code;
        return size * n;
}

/* The server's {"error": {"message": ...}}, or the raw body. */
static int fail_reply(const char *method, const char *url, const struct reply *r) {
        json_object *doc = r->body ? json_tokener_parse(r->body) : NULL, *err, *msg;
        int ret;

        if (doc && json_object_object_get_ex(doc, "error", &err) &&
            json_object_object_get_ex(err, "message", &msg))
                ret = fail("%s (HTTP %ld from %s %s)", json_object_get_string(msg), r->status, method, url);
        else
                ret = fail("HTTP %ld from %s %s", r->status, method, url);
        json_object_put(doc);
        return ret;
}

static struct curl_slist *request_headers(const struct client *c, bool has_body) {
        struct curl_slist *h = NULL;
        char auth[sizeof c->token + 32];

        if (has_body)
                h = curl_slist_append(h, "Content-Type: application/json");
        if (c->token[0]) {
                snprintf(auth, sizeof auth, "Authorization: Bearer %s", c->token);
                h = curl_slist_append(h, auth);
        }
        return curl_slist_append(h, "Expect:");
}

static void client_setup(CURL *curl, const char *url, const char *method, struct curl_slist *headers,
                         struct sink *sink, char *errbuf) {
        curl_easy_setopt(curl, CURLOPT_URL, url);
        curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(curl, CURLOPT_WRITEDATA, sink);
        curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(curl, CURLOPT_HEADERDATA, sink);
        curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
#if LIBCURL_VERSION_NUM >= 0x075500
        curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
#else
        curl_easy_setopt(curl, CURLOPT_PROTOCOLS, (long) (CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
        curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 5L);
        /* no total timeout: an export of a long run may take minutes; a
         * stalled server is one that sends nothing for 30 s */
        curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, 30L);
        curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
}

/* What went wrong with a transfer that did not complete. */
static int fail_transfer(const char *method, const char *url, CURLcode code, const char *errbuf, FILE *out) {
        if (code == CURLE_WRITE_ERROR && out && ferror(out))
                return fail("%s %s: writing the answer: %s", method, url, strerror(errno));
        return fail("%s %s: %s", method, url, errbuf[0] ? errbuf : curl_easy_strerror(code));
}

int client_call(const char *base, const struct client *c, const char *method, const char *path,
                json_object *body, struct reply *ret, FILE *out) {
        char url[2048], errbuf[CURL_ERROR_SIZE] = "";
        struct reply local = {}, *r = ret ? ret : &local;
        struct sink sink = { .reply = r, .out = out };
        const char *text = body ? json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN) : NULL;
        struct curl_slist *headers;
        CURL *curl;
        CURLcode code;
        int e = 0;

        *r = (struct reply) {};
        if ((size_t) snprintf(url, sizeof url, "%s%s", base, path) >= sizeof url)
                return fail("the URL %s%s is too long", base, path);
        if (!(curl = curl_easy_init()))
                return fail("cannot initialise libcurl");
        headers = request_headers(c, text != NULL);
        client_setup(curl, url, method, headers, &sink, errbuf);
        if (text)
                curl_easy_setopt(curl, CURLOPT_POSTFIELDS, text);
        code = curl_easy_perform(curl);
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r->status);
        curl_easy_cleanup(curl);
        curl_slist_free_all(headers);
        if (code != CURLE_OK)
                e = fail_transfer(method, url, code, errbuf, out);
        else if (r->status < 200 || r->status >= 300)
                e = fail_reply(method, url, r);
        if (e < 0 || !ret)
                reply_free(r);
        return e;
}

json_object *client_parse_json(const char *text, size_t len) {
        json_tokener *tok;
        json_object *o;
        size_t end;

        if (!text || len > INT_MAX || !(tok = json_tokener_new()))
                return NULL;
        o = json_tokener_parse_ex(tok, text, (int) len);
        end = json_tokener_get_error(tok) == json_tokener_success ? json_tokener_get_parse_end(tok) : 0;
        json_tokener_free(tok);
        /* one document and nothing after it but white space */
        while (o && end < len && strchr(" \t\r\n", text[end]))
                end++;
        if (o && end != len) {
                json_object_put(o);
                o = NULL;
        }
        return o;
}

int client_get_json(const char *base, const struct client *c, const char *path, json_object **ret) {
        struct reply r;

        if (client_call(base, c, "GET", path, NULL, &r, NULL) < 0)
                return -1;
        *ret = client_parse_json(r.body, r.len);
        reply_free(&r);
        if (!*ret)
                return fail("GET %s%s: the answer is not JSON", base, path);
        return 0;
}
