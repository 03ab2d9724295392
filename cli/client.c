/* client.c — heatcurvectl's HTTP side: one libcurl handle, JSON in and out, one-line errors. */
#include "client.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "text.h"
#include "token.h"

#define REPLY_MAX (256u * 1024u * 1024u)       /* bytes kept in memory; exports stream instead */
#define TOKENS_FILE_LINE_MAX 4096              /* bytes of one line of the tokens file */

int cli_fail(const char *format, ...) {
        char message[8192], shown[6 * CLIENT_MESSAGE_MAX + 4];
        va_list ap;
        int n;

        va_start(ap, format);
        n = vsnprintf(message, sizeof message, format, ap);
        va_end(ap);
        if (n < 0)
                n = 0;
        if ((size_t) n >= sizeof message)
                n = sizeof message - 1;
        /* one line, whatever a server put in its message */
        fprintf(stderr, "heatcurvectl: %s\n",
                text_escape_terminal(message, (size_t) n, CLIENT_MESSAGE_MAX, shown, sizeof shown));
        return -1;
}

int client_set_url(struct client *c, const char *url) {
        size_t len = strlen(url);

        while (len > 0 && url[len - 1] == '/')
                len--;
        if (len == 0)
                return cli_fail("the URL is empty");
        if (len >= sizeof c->url)
                return cli_fail("the URL is longer than %zu bytes", sizeof c->url - 1);
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
                return cli_fail("--token: the token %s", problem);
        snprintf(c->token, sizeof c->token, "%s", token);
        return 0;
}

int client_read_token_file(struct client *c, const char *path) {
        char buf[TOKEN_BUF_SIZE];
        int r = token_read_file(path, buf, sizeof buf);

        if (r < 0)
                return cli_fail("--token-file %s: %s", path, token_strerror(r));
        snprintf(c->token, sizeof c->token, "%s", buf);
        return 0;
}

/* "scheme://host:port/path" of url: lower-case scheme and host, the
 * default port filled in, no trailing slash. -1 for anything else. */
static int url_normalize(const char *url, char *buf, size_t size) {
        const char *p = strstr(url, "://"), *auth, *host_end, *port = NULL, *path;
        char scheme[8], host[256];
        unsigned long port_n;
        size_t len;

        if (!p || (size_t) (p - url) >= sizeof scheme)
                return -1;
        for (size_t i = 0; url + i < p; i++)
                scheme[i] = (char) tolower((unsigned char) url[i]);
        scheme[p - url] = '\0';
        if (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)
                return -1;
        auth = p + 3;
        path = auth + strcspn(auth, "/?#");
        if (memchr(auth, '@', (size_t) (path - auth)))
                return -1;              /* user info: never guess whose token it is */
        if (*auth == '[') {
                host_end = memchr(auth, ']', (size_t) (path - auth));
                if (!host_end)
                        return -1;
                host_end++;
        } else
                host_end = auth + strcspn(auth, ":/?#");
        if (host_end < path) {
                if (*host_end != ':')
                        return -1;
                port = host_end + 1;
        }
        len = (size_t) (host_end - auth);
        if (len == 0 || len >= sizeof host)
                return -1;
        for (size_t i = 0; i < len; i++)
                host[i] = (char) tolower((unsigned char) auth[i]);
        host[len] = '\0';
        port_n = strcmp(scheme, "https") == 0 ? 443 : 80;
        if (port && port < path) {
                char *end;
                port_n = strtoul(port, &end, 10);
                if (end != path || port_n == 0 || port_n > 65535)
                        return -1;
        }
        len = strlen(path);
        while (len > 0 && path[len - 1] == '/')
                len--;
        if ((size_t) snprintf(buf, size, "%s://%s:%lu%.*s", scheme, host, port_n, (int) len, path) >= size)
                return -1;
        return 0;
}

bool client_same_base(const char *a, const char *b) {
        char na[2048], nb[2048];

        return url_normalize(a, na, sizeof na) == 0 && url_normalize(b, nb, sizeof nb) == 0 && strcmp(na, nb) == 0;
}

static int tokens_file_path(char *buf, size_t size) {
        const char *env = getenv("HEATCURVE_TOKENS_FILE"), *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
        int n;

        if (env && *env)
                n = snprintf(buf, size, "%s", env);
        else if (xdg && *xdg)
                n = snprintf(buf, size, "%s/heatcurve/tokens", xdg);
        else if (home && *home)
                n = snprintf(buf, size, "%s/.config/heatcurve/tokens", home);
        else
                return -1;
        return n > 0 && (size_t) n < size ? 0 : -1;
}

/* The token of base in the tokens file at path ("" when no line names it). */
static int tokens_file_lookup(const char *path, const char *base, char *buf, size_t size) {
        char line[TOKENS_FILE_LINE_MAX];
        struct stat st;
        unsigned n = 0;
        FILE *f = fopen(path, "re");
        int r = 0;

        buf[0] = '\0';
        if (!f)
                return errno == ENOENT ? 0 : cli_fail("%s: %s", path, strerror(errno));
        if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode) || (st.st_mode & 077)) {
                fclose(f);
                return cli_fail("%s: holds tokens, so it must be a file only its owner can read (chmod 600 %s)",
                            path, path);
        }
        while (r == 0 && fgets(line, sizeof line, f) && n++ < 10000) {
                char *url = line + strspn(line, " \t"), *tok, *end;
                if (*url == '#' || *url == '\n' || *url == '\0')
                        continue;
                tok = url + strcspn(url, " \t\n");
                if (*tok == '\n' || *tok == '\0') {
                        r = cli_fail("%s:%u: expected \"URL TOKEN\"", path, n);
                        break;
                }
                *tok++ = '\0';
                tok += strspn(tok, " \t");
                end = tok + strcspn(tok, "\n");
                if (!client_same_base(url, base))
                        continue;
                if (token_parse(tok, (size_t) (end - tok), buf, size) < 0)
                        r = cli_fail("%s:%u: the token for %s is not one word of at most %d printable bytes",
                                 path, n, url, TOKEN_MAX);
                break;
        }
        fclose(f);
        if (r < 0)
                buf[0] = '\0';
        return r;
}

int client_token_for(const struct client *c, const char *base, char *buf, size_t size) {
        char path[4096];

        buf[0] = '\0';
        if (c->token[0] && (strcmp(base, c->url) == 0 || client_same_base(base, c->url))) {
                snprintf(buf, size, "%s", c->token);
                return 0;
        }
        if (tokens_file_path(path, sizeof path) < 0)
                return 0;
        return tokens_file_lookup(path, base, buf, size);
}

void reply_free(struct reply *r) {
        free(r->body);
        r->body = NULL;
        r->len = 0;
}

struct sink {
        struct reply *reply;
        FILE *out;                      /* stream 2xx bodies here */
        /* or hand their lines to line() as they come (client_get_lines()) */
        int (*line)(void *userdata, char *line, bool header);
        void *line_data;
        char *part;                     /* the line begun, not ended yet */
        size_t part_len, lines;
        bool ended;                     /* a line with a NUL byte ended the text */
        int line_error;
        long status;
        char head[32];                  /* the first bytes streamed to out, NUL-terminated */
        uint64_t out_bytes;             /* bytes streamed to out */
};

/* A line longer than this is not a samples.csv row: the transfer stops. */
#define LINE_MAX_BYTES (1024u * 1024u)

static size_t on_lines(struct sink *s, const char *data, size_t len) {
        size_t start = 0;
        char *p, *nl;

        if (s->ended)
                return len;
        if (s->part_len > LINE_MAX_BYTES) {
                s->line_error = -E2BIG;
                return 0;
        }
        if (!(p = realloc(s->part, s->part_len + len + 1))) {
                s->line_error = -ENOMEM;
                return 0;
        }
        s->part = p;
        memcpy(p + s->part_len, data, len);
        s->part_len += len;
        while ((nl = memchr(p + start, '\n', s->part_len - start))) {
                if (memchr(p + start, '\0', (size_t) (nl - p) - start)) {
                        s->ended = true;        /* as samples_read(): the text ends there */
                        return len;
                }
                *nl = '\0';
                if ((s->line_error = s->line(s->line_data, p + start, s->lines++ == 0)) < 0)
                        return 0;
                start = (size_t) (nl - p) + 1;
        }
        memmove(p, p + start, s->part_len - start);
        s->part_len -= start;
        return len;
}

static size_t on_data(char *data, size_t size, size_t n, void *userdata) {
        struct sink *s = userdata;
        struct reply *r = s->reply;
        size_t len = size * n;
        char *p;

        if (s->out && s->status >= 200 && s->status < 300) {
                size_t have = s->out_bytes < sizeof s->head - 1 ? (size_t) s->out_bytes : sizeof s->head - 1;
                size_t more = len < sizeof s->head - 1 - have ? len : sizeof s->head - 1 - have;

                memcpy(s->head + have, data, more);
                s->head[have + more] = '\0';
                s->out_bytes += len;
                return fwrite(data, 1, len, s->out);
        }
        if (s->line && s->status >= 200 && s->status < 300)
                return on_lines(s, data, len);
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
                ret = cli_fail("%s (HTTP %ld from %s %s)", json_object_get_string(msg), r->status, method, url);
        else
                ret = cli_fail("HTTP %ld from %s %s", r->status, method, url);
        json_object_put(doc);
        return ret;
}

static struct curl_slist *request_headers(const char *token, bool has_body) {
        struct curl_slist *h = NULL;
        char auth[sizeof ((struct client *) 0)->token + 32];

        if (has_body)
                h = curl_slist_append(h, "Content-Type: application/json");
        if (token[0]) {
                snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
                h = curl_slist_append(h, auth);
        }
        return curl_slist_append(h, "Expect:");
}

static void client_setup(CURL *curl, const char *url, const char *method, struct curl_slist *headers,
                         struct sink *sink, char *errbuf, uint64_t timeout_ms) {
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
        /* A whole request, however slowly the server trickles its answer
         * (the low-speed limit alone let 2 bytes/s run for ever). */
        curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long) timeout_ms);
        curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, 30L);
        curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
}

/* What went wrong with a transfer that did not complete. */
static int fail_transfer(const char *method, const char *url, CURLcode code, const char *errbuf,
                         const struct sink *sink, uint64_t timeout_ms) {
        if (code == CURLE_OPERATION_TIMEDOUT)
                return cli_fail("%s %s: %s (a request may take %.3g s, see --timeout)", method, url,
                            errbuf[0] ? errbuf : curl_easy_strerror(code), (double) timeout_ms / 1000.0);
        if (code == CURLE_WRITE_ERROR && sink->out && ferror(sink->out))
                return cli_fail("%s %s: writing the answer: %s", method, url, strerror(errno));
        if (code == CURLE_WRITE_ERROR && sink->line_error == -E2BIG)
                return cli_fail("%s %s: a line of the answer is longer than %u bytes", method, url, LINE_MAX_BYTES);
        if (code == CURLE_WRITE_ERROR && sink->line_error < 0)
                return cli_fail("%s %s: reading the answer: %s", method, url, strerror(-sink->line_error));
        return cli_fail("%s %s: %s", method, url, errbuf[0] ? errbuf : curl_easy_strerror(code));
}

/* client_call() with the sink's out or line set (or neither). */
static int client_transfer(const char *base, const struct client *c, const char *method, const char *path,
                           json_object *body, struct reply *ret, struct sink *sink) {
        char url[2048], errbuf[CURL_ERROR_SIZE] = "";
        struct reply local = {}, *r = ret ? ret : &local;
        const char *text = body ? json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN) : NULL;
        bool streamed = sink->out || sink->line;
        uint64_t timeout_ms = c->timeout_ms ? c->timeout_ms : streamed ? CLIENT_EXPORT_TIMEOUT_MS : CLIENT_TIMEOUT_MS;
        char token[sizeof c->token];
        struct curl_slist *headers;
        CURL *curl;
        CURLcode code;
        int e = 0;

        *r = (struct reply) {};
        sink->reply = r;
        if ((size_t) snprintf(url, sizeof url, "%s%s", base, path) >= sizeof url)
                return cli_fail("the URL %s%s is too long", base, path);
        if (client_token_for(c, base, token, sizeof token) < 0)
                return -1;
        if (!(curl = curl_easy_init()))
                return cli_fail("cannot initialise libcurl");
        headers = request_headers(token, text != NULL);
        client_setup(curl, url, method, headers, sink, errbuf, timeout_ms);
        if (text)
                curl_easy_setopt(curl, CURLOPT_POSTFIELDS, text);
        code = curl_easy_perform(curl);
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r->status);
        curl_easy_cleanup(curl);
        curl_slist_free_all(headers);
        if (code != CURLE_OK)
                e = fail_transfer(method, url, code, errbuf, sink, timeout_ms);
        else if (r->status < 200 || r->status >= 300)
                e = fail_reply(method, url, r);
        if (e < 0 || !ret)
                reply_free(r);
        return e;
}

int client_call(const char *base, const struct client *c, const char *method, const char *path,
                json_object *body, struct reply *ret, FILE *out) {
        struct sink sink = { .out = out };

        return client_transfer(base, c, method, path, body, ret, &sink);
}

int client_export(const char *base, const struct client *c, const char *path, FILE *out, const char *starts) {
        struct sink sink = { .out = out };
        const char *head = sink.head;

        if (client_transfer(base, c, "GET", path, NULL, NULL, &sink) < 0)
                return -1;
        if (sink.out_bytes == 0)
                return cli_fail("GET %s%s: the answer is empty", base, path);
        head += strspn(head, " \t\r\n");
        if (strncmp(head, starts, strlen(starts)) != 0)
                return cli_fail("GET %s%s: the answer does not start with \"%s\": not what a daemon exports",
                                base, path, starts);
        return 0;
}

int client_get_lines(const char *base, const struct client *c, const char *path,
                     int (*line)(void *userdata, char *line, bool header), void *userdata) {
        struct sink sink = { .line = line, .line_data = userdata };
        int e = client_transfer(base, c, "GET", path, NULL, NULL, &sink);

        free(sink.part);
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
                return cli_fail("GET %s%s: the answer is not JSON", base, path);
        return 0;
}
