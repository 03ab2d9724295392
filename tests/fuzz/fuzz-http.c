/* fuzz-http.c — libFuzzer target: raw bytes from a client through libmicrohttpd into http.c
 * (framing checks, body cap, query arguments, headers, error messages), over a loopback socket. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http.h"
#include "text.h"
#include "token.h"

#define FUZZ_ROUNDS 200                 /* event-loop turns per input at most */
#define FUZZ_ANSWER_MAX (256 * 1024)    /* bytes of answer read back */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static sd_event *event;
static struct http_server *server;
static int port;

/* What the API handlers do with a request: look arguments up, check the
 * unknown ones and the token, and quote what the client sent in errors. */
static void fuzz_dispatch(void *userdata, struct http_request *r) {
        static const char *const known[] = { "from", "to", "sensors", "points", "runs", NULL };
        const char *unknown = http_unknown_arg(r, known), *points = http_arg(r, "points");
        const char *auth = http_header(r, "Authorization");

        /* the client's bytes back: not ours, so not JSON for the check below */
        if (token_check_authorization(auth, "s3cret") && r->body)
                http_reply(r, 200, "application/octet-stream", r->body, r->body_len);
        else if (unknown)
                http_reply_error(r, 400, "bad_parameter", "%s: unknown parameter in %s", unknown, r->url);
        else if (points)
                http_reply_error(r, 400, "bad_parameter", "points: \"%s\" is not a number", points);
        else
                http_reply_error(r, 404, "not_found", "no such resource: %s (%s, %zu bytes)", r->url,
                                 http_arg(r, "sensors") ? http_arg(r, "sensors") : "-", r->body_len);
}

static void fuzz_setup(void) {
        int fd;

        if (sd_event_new(&event) < 0)
                abort();
        fd = http_listen("127.0.0.1", 0);
        if (fd < 0 || (port = http_local_port(fd)) <= 0)
                abort();
        if (http_new(event, fd, fuzz_dispatch, NULL, &server) < 0)
                abort();
}

static int fuzz_connect(void) {
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t) port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

        if (fd < 0)
                abort();
        if (connect(fd, (struct sockaddr *) &a, sizeof a) < 0 && errno != EINPROGRESS)
                abort();
        return fd;
}

/* Our own error answers must be valid UTF-8 whatever the request held.
 * The first answer's headers say whether it is one of them: an echoed body
 * may hold {"error" and any bytes. */
static void fuzz_check_answer(const char *answer, size_t len) {
        const char *body = memmem(answer, len, "\r\n\r\n", 4);

        if (!body || !memmem(answer, (size_t) (body - answer), "application/json", 16) ||
            !memmem(body, len - (size_t) (body - answer), "{\"error\"", 8))
                return;
        body += 4;
        for (size_t i = 0, n, rest = len - (size_t) (body - answer); i < rest; i += n)
                if (!(n = text_utf8_char_len(body + i, rest - i)))
                        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static char answer[FUZZ_ANSWER_MAX];
        size_t sent = 0, got = 0;
        bool eof = false;
        int fd, idle = 0;

        if (!server)
                fuzz_setup();
        fd = fuzz_connect();
        /* Until the server closes, or after the input is sent, until five
         * turns pass with nothing to do: it waits for more (the request
         * deadline would close it, 10 s later). */
        for (int i = 0; i < FUZZ_ROUNDS && !eof && idle < 5; i++) {
                size_t before = got;

                if (sent < size) {
                        ssize_t n = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
                        if (n > 0)
                                sent += (size_t) n;
                        else if (n < 0 && errno != EAGAIN && errno != ENOTCONN)
                                sent = size;    /* the server closed: stop sending */
                        if (sent == size)
                                shutdown(fd, SHUT_WR);
                }
                int ran = sd_event_run(event, 1000);    /* µs: MHD has work as soon as bytes arrive */
                for (;;) {
                        ssize_t n = recv(fd, answer + got, sizeof answer - got, 0);
                        if (n > 0 && (got += (size_t) n) < sizeof answer)
                                continue;
                        eof = n == 0 || (n < 0 && errno != EAGAIN) || got == sizeof answer;
                        break;
                }
                idle = sent == size && ran == 0 && got == before ? idle + 1 : 0;
        }
        close(fd);
        /* let the server see the close, so connections do not pile up */
        for (int i = 0; i < 10 && sd_event_run(event, 0) > 0; i++)
                ;
        fuzz_check_answer(answer, got);
        return 0;
}
