/* client.c — heatcurvectl's HTTP side: one libcurl handle, JSON in and out, one-line errors. */
#include "client.h"

#include <curl/curl.h>
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
        char auth[300];

        if (has_body)
                h = curl_slist_append(h, "Content-Type: application/json");
        if (c->token[0]) {
                snprintf(auth, sizeof auth, "Authorization: Bearer %s", c->token);
                h = curl_slist_append(h, auth);
        }
        return curl_slist_append(h, "Expect:");
}

int client_call(const char *base, const struct client *c, const char *method, const char *path,
                json_object *body, struct reply *ret, FILE *out) {
        char url[2048], errbuf[CURL_ERROR_SIZE] = "";
        struct reply local = {}, *r = ret ? ret : &local;
        struct sink sink = { .reply = r, .out = out };
        const char *text = body ? json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN) : NULL;
        struct curl_slist *headers = request_headers(c, text != NULL);
        CURL *curl = curl_easy_init();
        CURLcode code;

        *r = (struct reply) {};
        snprintf(url, sizeof url, "%s%s", base, path);
        if (!curl)
                return fail("cannot initialise libcurl");
        curl_easy_setopt(curl, CURLOPT_URL, url);
        curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
        curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(curl, CURLOPT_HEADERDATA, &sink);
        curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
        curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 5L);
        curl_easy_setopt(curl, CURLOPT_TIMEOUT, 60L);
        curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
        if (text)
                curl_easy_setopt(curl, CURLOPT_POSTFIELDS, text);
        code = curl_easy_perform(curl);
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r->status);
        curl_easy_cleanup(curl);
        curl_slist_free_all(headers);
        if (code != CURLE_OK) {
                reply_free(r);
                return fail("%s %s: %s", method, url, errbuf[0] ? errbuf : curl_easy_strerror(code));
        }
        if (r->status < 200 || r->status >= 300) {
                int e = fail_reply(method, url, r);
                reply_free(r);
                return e;
        }
        if (!ret)
                reply_free(&local);
        return 0;
}

int client_get_json(const char *base, const struct client *c, const char *path, json_object **ret) {
        struct reply r;

        if (client_call(base, c, "GET", path, NULL, &r, NULL) < 0)
                return -1;
        *ret = r.body ? json_tokener_parse(r.body) : NULL;
        reply_free(&r);
        if (!*ret)
                return fail("GET %s%s: the answer is not JSON", base, path);
        return 0;
}
