/* action-webhook.c — the webhook action: each transition POSTed to a rule's URL by curl, with a timeout and a bounded retry queue. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>

#include "alert-action.h"
#include "build-config.h"
#include "json-util.h"
#include "log.h"
#include "util.h"

#define WEBHOOK_QUEUE_MAX 32            /* posts waiting or running; the oldest waiting one goes past that */
#define WEBHOOK_RUNNING_MAX 4           /* curls at once, never two for one URL */
#define WEBHOOK_ATTEMPTS 3
#define WEBHOOK_MAX_TIME_S 10           /* s, curl --max-time: the whole request */
#define WEBHOOK_CONNECT_TIMEOUT_S 5     /* s, curl --connect-timeout */
#define WEBHOOK_KILL_US 15000000ull     /* us: a curl still running after this is killed */
#define WEBHOOK_REQUEST_MAX 4096        /* bytes of curl's config: fits a pipe's buffer at its smallest */

extern char **environ;

/* us to wait before attempt 2, 3 */
static const uint64_t webhook_backoff_us[WEBHOOK_ATTEMPTS - 1] = { 2000000, 10000000 };

/* One transition for one URL, from the queue until it is delivered or given up. */
struct webhook_post {
        struct webhook_post *next;      /* the queue, oldest first */
        struct webhook_runner *runner;
        char rule[ALERT_NAME_MAX];
        char url[ALERT_WEBHOOK_MAX];    /* posts to one URL go one at a time, in order */
        char origin[ALERT_WEBHOOK_MAX]; /* scheme://host[:port]: what the log shows of the URL */
        char *request;                  /* curl's config: URL, headers and body, given on its stdin */
        size_t request_len;
        unsigned attempts;              /* made so far */
        uint64_t not_before_us;         /* CLOCK_MONOTONIC: the next attempt waits until then */
        pid_t pid;                      /* curl, while it runs; 0 otherwise */
        int out_fd;                     /* curl's stdout: the HTTP status; -1 when closed */
        bool finished;                  /* delivered or given up; freed outside the child's callback */
        sd_event_source *child, *timer;
};

/* Beside the rules: the queue, shared by every rule (a post outlives a reload). */
struct webhook_runner {
        sd_event *event;                /* NULL: nothing is posted */
        struct webhook_post *queue;
        sd_event_source *retry;         /* fires when the next waiting post may go */
        char curl[256];                 /* its path, "" until found */
        bool curl_missing_logged;
        struct board_info board;        /* its hostname and model, for the bodies */
};

static void webhook_pump(struct webhook_runner *w);

/* ---- what is posted */

struct webhook_text {
        char *buf;
        size_t size, len;
        bool overflow;
};

static void text_putc(struct webhook_text *q, char c) {
        if (q->len + 1 < q->size)
                q->buf[q->len++] = c;
        else
                q->overflow = true;
}

static void text_puts(struct webhook_text *q, const char *s) {
        while (*s)
                text_putc(q, *s++);
}

/* key = "value": quoted as curl reads its config file (\\ \" \t \n \r \v). */
static void text_option(struct webhook_text *q, const char *key, const char *value) {
        static const char from[] = "\\\"\t\n\r\v", to[] = "\\\"tnrv";

        text_puts(q, key);
        text_puts(q, " = \"");
        for (const char *c = value; *c; c++) {
                const char *e = strchr(from, *c);
                if (e) {
                        text_putc(q, '\\');
                        text_putc(q, to[e - from]);
                } else
                        text_putc(q, *c);
        }
        text_puts(q, "\"\n");
}

/* Header text in ASCII: bytes outside printable ASCII become '?'. */
static void ascii_copy(const char *s, char *buf, size_t size) {
        size_t i = 0;

        for (; s[i] && i + 1 < size; i++)
                buf[i] = (unsigned char) s[i] >= ' ' && (unsigned char) s[i] < 0x7f ? s[i] : '?';
        buf[i] = '\0';
}

/* "Alert soc on pi4: warn" and "thermal_zone0 at 62.5 °C (level 60.0 °C), was ok". */
static void webhook_summary(const struct alert_transition *t, const char *hostname, char *head, size_t headlen,
                            char *detail, size_t detaillen) {
        char at[ALERT_SENSOR_MAX + 32], level[48] = "";

        snprintf(head, headlen, "Alert %s%s%s: %s", t->rule, hostname[0] ? " on " : "", hostname,
                 alert_state_to_string(t->state));
        if (t->sensor[0] && isfinite(t->value_c))
                snprintf(at, sizeof at, "%s at %.1f \u00b0C", t->sensor, t->value_c);
        else
                snprintf(at, sizeof at, "%s", t->sensor[0] ? t->sensor : "no sensor answers");
        if (isfinite(t->threshold_c))
                snprintf(level, sizeof level, " (level %.1f \u00b0C)", t->threshold_c);
        snprintf(detail, detaillen, "%s%s, was %s", at, level, alert_state_to_string(t->previous));
}

static void iso_time(int64_t ms, char *buf, size_t size) {
        time_t s = (time_t) (ms / 1000);
        struct tm tm;

        if (ms < 0 || !gmtime_r(&s, &tm)) {
                snprintf(buf, size, "%s", "");
                return;
        }
        snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                 tm.tm_hour, tm.tm_min, tm.tm_sec, (int) (ms % 1000));
}

/* The json format: the transition as GET /api/v1/alerts shows it, and where and when. */
static json_object *webhook_json(const struct alert_transition *t, const struct board_info *b, const char *text) {
        json_object *o = json_object_new_object();
        char when[40];

        iso_time(t->time_ms, when, sizeof when);
        json_object_object_add(o, "rule", json_object_new_string(t->rule));
        json_object_object_add(o, "sensor", json_new_string_or_null(t->sensor));
        json_object_object_add(o, "state", json_object_new_string(alert_state_to_string(t->state)));
        json_object_object_add(o, "previous", json_object_new_string(alert_state_to_string(t->previous)));
        json_object_object_add(o, "value_c", json_new_number(t->value_c, 3));
        json_object_object_add(o, "threshold_c", json_new_number(t->threshold_c, 3));
        json_object_object_add(o, "time_ms", json_object_new_int64(t->time_ms));
        json_object_object_add(o, "time", json_object_new_string(when));
        json_object_object_add(o, "hostname", b->hostname[0] ? json_new_text(b->hostname) : NULL);
        json_object_object_add(o, "board", b->model[0] ? json_new_text(b->model) : NULL);
        json_object_object_add(o, "text", json_new_text(text));
        return o;
}

/* ntfy's priorities (1 min .. 5 max) and tags (emoji short codes). */
static void ntfy_headers(struct webhook_text *q, const struct alert_transition *t, const char *head) {
        const char *priority = "3", *tag = "information_source";
        char title[160], line[200];

        switch (t->state) {
        case ALERT_OK:
                tag = "white_check_mark";
                break;
        case ALERT_WARN:
                priority = "4", tag = "warning";
                break;
        case ALERT_CRIT:
                priority = "5", tag = "rotating_light";
                break;
        case ALERT_LOST:
                priority = "4", tag = "grey_question";
                break;
        default:
                break;
        }
        ascii_copy(head, title, sizeof title);
        snprintf(line, sizeof line, "Title: %s", title);
        text_option(q, "header", line);
        snprintf(line, sizeof line, "Priority: %s", priority);
        text_option(q, "header", line);
        snprintf(line, sizeof line, "Tags: %s,heatcurve", tag);
        text_option(q, "header", line);
        text_option(q, "header", "Content-Type: text/plain; charset=utf-8");
}

/* The body and its headers in the rule's format. */
static void webhook_body(struct webhook_text *q, const struct alert_rule_config *cfg, const struct alert_transition *t,
                         const struct board_info *b) {
        char head[ALERT_NAME_MAX + 96], detail[ALERT_SENSOR_MAX + 96], text[sizeof head + sizeof detail + 2];
        json_object *o = NULL;

        webhook_summary(t, b->hostname, head, sizeof head, detail, sizeof detail);
        snprintf(text, sizeof text, "%s, %s", head, detail);
        switch (cfg->webhook_format) {
        case ALERT_WEBHOOK_NTFY:
                ntfy_headers(q, t, head);
                text_option(q, "data-binary", detail);
                return;
        case ALERT_WEBHOOK_SLACK:
                o = json_object_new_object();
                json_object_object_add(o, "text", json_new_text(text));
                break;
        default:
                o = webhook_json(t, b, text);
                break;
        }
        text_option(q, "header", "Content-Type: application/json");
        text_option(q, "data-binary", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(o);
}

int alert_webhook_request(const struct alert_rule_config *cfg, const struct alert_transition *t,
                          const struct board_info *board, char *buf, size_t size) {
        struct webhook_text q = { buf, size, 0, false };
        char n[16];

        text_option(&q, "url", cfg->webhook);
        webhook_body(&q, cfg, t, board);
        text_option(&q, "user-agent", "heatcurved/" HEATCURVE_VERSION);
        snprintf(n, sizeof n, "%d", WEBHOOK_MAX_TIME_S);
        text_option(&q, "max-time", n);
        snprintf(n, sizeof n, "%d", WEBHOOK_CONNECT_TIMEOUT_S);
        text_option(&q, "connect-timeout", n);
        /* no redirects, no other protocol; the answer's body is not wanted, its status is */
        text_option(&q, "proto", "=http,https");
        text_option(&q, "output", "/dev/null");
        text_option(&q, "write-out", "%{http_code}");
        text_puts(&q, "fail\nsilent\n");
        if (size)
                buf[q.len] = '\0';
        return q.overflow ? -E2BIG : (int) q.len;
}

/* ---- delivering */

static bool webhook_find_curl(struct webhook_runner *w) {
        const char *path = getenv("PATH");
        char *dirs, *save = NULL;

        if (w->curl[0])
                return true;
        dirs = strdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
        for (char *d = dirs ? strtok_r(dirs, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save)) {
                snprintf(w->curl, sizeof w->curl, "%s/curl", d);
                if (d[0] == '/' && access(w->curl, X_OK) == 0)
                        break;
                w->curl[0] = '\0';
        }
        free(dirs);
        if (!w->curl[0] && !w->curl_missing_logged) {
                log_error("Alert webhooks are posted with curl, which is not installed (or not in PATH): "
                          "they are not sent until it is");
                w->curl_missing_logged = true;
        }
        return w->curl[0] != '\0';
}

static void webhook_log(int priority, const struct webhook_post *p, const char *format, ...)
        __attribute__((format(printf, 3, 4)));

static void webhook_log(int priority, const struct webhook_post *p, const char *format, ...) {
        char field[ALERT_NAME_MAX + 8], text[512];
        const char *fields[] = { field, NULL };
        va_list ap;

        va_start(ap, format);
        vsnprintf(text, sizeof text, format, ap);
        va_end(ap);
        snprintf(field, sizeof field, "ALERT=%s", p->rule);
        log_fields(priority, fields, "Alert %s: webhook %s %s", p->rule, p->origin, text);
}

/* curl with its config on stdin (so the URL is in no argv), its status on out_fd. */
static int webhook_spawn(struct webhook_runner *w, struct webhook_post *p) {
        char *argv[] = { "curl", "-q", "--config", "-", NULL };
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t attr;
        int in[2] = { -1, -1 }, out[2] = { -1, -1 }, r;
        sigset_t none, all;

        if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0) {
                r = -errno;
                goto finish;
        }
        /* our ends only; written whole before curl starts: it fits the pipe, so this never blocks */
        if (fcntl(in[1], F_SETFL, O_NONBLOCK) < 0 || fcntl(out[0], F_SETFL, O_NONBLOCK) < 0 ||
            write(in[1], p->request, p->request_len) != (ssize_t) p->request_len) {
                r = -EIO;
                goto finish;
        }
        close(in[1]);
        in[1] = -1;
        sigemptyset(&none);
        sigfillset(&all);
        posix_spawnattr_init(&attr);
        posix_spawn_file_actions_init(&fa);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
        posix_spawnattr_setsigmask(&attr, &none);
        posix_spawnattr_setsigdefault(&attr, &all);
        posix_spawnattr_setpgroup(&attr, 0);
        posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
        posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
        /* curl's messages may quote the host; the log says what failed from its exit status */
        posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
        r = -posix_spawn(&p->pid, w->curl, &fa, &attr, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&attr);
        if (r == 0) {
                p->out_fd = out[0];
                out[0] = -1;
        } else
                p->pid = 0;
finish:
        for (size_t i = 0; i < 2; i++) {
                if (in[i] >= 0)
                        close(in[i]);
                if (out[i] >= 0)
                        close(out[i]);
        }
        return r;
}

/* What curl's exit status means, for the log. */
static const char *curl_reason(int status) {
        switch (status) {
        case 6: return "cannot resolve the host";
        case 7: return "cannot connect";
        case 22: return "the receiver answered with an error";
        case 28: return "timed out";
        case 35: return "TLS handshake failed";
        case 52: return "empty answer";
        case 56: return "connection broken";
        case 60: return "certificate not trusted";
        default: return "failed";
        }
}

static void webhook_post_free(struct webhook_post *p) {
        if (p->pid > 0) {
                kill(p->pid, SIGKILL);
                sd_event_source_disable_unref(p->child);
                p->child = NULL;
                waitpid(p->pid, NULL, 0);
        }
        sd_event_source_disable_unref(p->child);
        sd_event_source_disable_unref(p->timer);
        if (p->out_fd >= 0)
                close(p->out_fd);
        free(p->request);
        free(p);
}

/* After a failed attempt: again after a while, or given up. */
static void webhook_failed(struct webhook_post *p, const char *why, const char *status) {
        if (++p->attempts >= WEBHOOK_ATTEMPTS) {
                webhook_log(LOG_WARNING, p, "%s%s, given up after %u attempts: this transition is not delivered",
                            why, status, p->attempts);
                p->finished = true;
                return;
        }
        p->not_before_us = util_monotonic_us() + webhook_backoff_us[p->attempts - 1];
        webhook_log(LOG_NOTICE, p, "%s%s, trying again in %llu s", why, status,
                    (unsigned long long) (webhook_backoff_us[p->attempts - 1] / 1000000));
}

static int webhook_on_exit(sd_event_source *es, const siginfo_t *si, void *userdata) {
        struct webhook_post *p = userdata;
        char code[8] = "", status[24] = "";
        ssize_t n = read(p->out_fd, code, sizeof code - 1);

        code[n > 0 ? n : 0] = '\0';
        if (strspn(code, "0123456789") != strlen(code) || strcmp(code, "000") == 0)
                code[0] = '\0';
        if (code[0])
                snprintf(status, sizeof status, " (HTTP %s)", code);
        close(p->out_fd);
        p->out_fd = -1;
        p->pid = 0;
        p->timer = sd_event_source_disable_unref(p->timer);
        /* the child source is not freed here: sd-event reaps the child after this returns */
        if (si->si_code == CLD_EXITED && si->si_status == 0) {
                webhook_log(LOG_INFO, p, "delivered%s", status);
                p->finished = true;
        } else if (si->si_code == CLD_EXITED)
                webhook_failed(p, curl_reason(si->si_status), status);
        else
                webhook_failed(p, "curl killed", "");
        webhook_pump(p->runner);
        return 0;
}

static int webhook_on_timeout(sd_event_source *es, uint64_t usec, void *userdata) {
        struct webhook_post *p = userdata;

        if (p->pid > 0)
                kill(p->pid, SIGKILL);  /* its exit says the rest */
        return 0;
}

/* One attempt; false when it could not start (the post is then given up). */
static bool webhook_start(struct webhook_runner *w, struct webhook_post *p) {
        int r;

        if (!webhook_find_curl(w)) {
                p->finished = true;
                return false;
        }
        p->child = sd_event_source_disable_unref(p->child);
        r = webhook_spawn(w, p);
        if (r >= 0)
                r = sd_event_add_child(w->event, &p->child, p->pid, WEXITED, webhook_on_exit, p);
        if (r >= 0)
                r = sd_event_add_time_relative(w->event, &p->timer, CLOCK_MONOTONIC, WEBHOOK_KILL_US, 0,
                                               webhook_on_timeout, p);
        if (r < 0) {
                webhook_log(LOG_ERR, p, "cannot run curl: %s; this transition is not delivered", strerror(-r));
                if (p->pid > 0) {
                        kill(p->pid, SIGKILL);
                        p->child = sd_event_source_disable_unref(p->child);
                        waitpid(p->pid, NULL, 0);
                        p->pid = 0;
                }
                if (r == -ENOENT)
                        w->curl[0] = '\0';      /* gone since: looked for again next time */
                p->finished = true;
                return false;
        }
        return true;
}

static bool webhook_url_busy(const struct webhook_runner *w, const struct webhook_post *p) {
        for (const struct webhook_post *q = w->queue; q && q != p; q = q->next)
                if (!q->finished && strcmp(q->url, p->url) == 0)
                        return true;
        return false;
}

static int webhook_on_retry(sd_event_source *es, uint64_t usec, void *userdata) {
        webhook_pump(userdata);
        return 0;
}

/* Starts what may go now (oldest first; one at a time per URL, so a
 * receiver gets its transitions in order) and sets the timer for the rest. */
static void webhook_pump(struct webhook_runner *w) {
        uint64_t now = util_monotonic_us(), next = UINT64_MAX;
        unsigned running = 0;

        for (struct webhook_post *p = w->queue; p; p = p->next)
                running += p->pid > 0;
        for (struct webhook_post *p = w->queue; p; p = p->next) {
                if (p->finished || p->pid > 0 || webhook_url_busy(w, p))
                        continue;
                if (p->not_before_us > now) {
                        next = p->not_before_us < next ? p->not_before_us : next;
                        continue;
                }
                if (running < WEBHOOK_RUNNING_MAX && webhook_start(w, p))
                        running++;
        }
        if (next == UINT64_MAX)
                return;
        if (w->retry) {
                sd_event_source_set_time(w->retry, next);
                sd_event_source_set_enabled(w->retry, SD_EVENT_ONESHOT);
        } else
                sd_event_add_time(w->event, &w->retry, CLOCK_MONOTONIC, next, 0, webhook_on_retry, w);
}

/* Frees the posts that are done (never from within their child's callback). */
static void webhook_sweep(struct webhook_runner *w, size_t *ret_waiting) {
        size_t waiting = 0;

        for (struct webhook_post **pp = &w->queue; *pp; ) {
                struct webhook_post *p = *pp;
                if (!p->finished) {
                        waiting++;
                        pp = &p->next;
                        continue;
                }
                *pp = p->next;
                webhook_post_free(p);
        }
        if (ret_waiting)
                *ret_waiting = waiting;
}

/* Room for one more: the oldest post that is not running goes. */
static void webhook_make_room(struct webhook_runner *w) {
        size_t waiting;

        webhook_sweep(w, &waiting);
        if (waiting < WEBHOOK_QUEUE_MAX)
                return;
        for (struct webhook_post *p = w->queue; p; p = p->next)
                if (p->pid == 0) {
                        webhook_log(LOG_WARNING, p, "queue full (%d transitions waiting): the oldest is dropped",
                                    WEBHOOK_QUEUE_MAX);
                        p->finished = true;
                        webhook_sweep(w, NULL);
                        return;
                }
}

static void webhook_transition(void *self, void *rule, const struct alert_rule_config *cfg,
                               const struct alert_transition *t) {
        struct webhook_runner *w = self;
        char buf[WEBHOOK_REQUEST_MAX];
        struct webhook_post *p, **end;
        int n;

        if (!cfg->webhook[0] || !w->event)
                return;
        n = alert_webhook_request(cfg, t, &w->board, buf, sizeof buf);
        p = n >= 0 ? calloc(1, sizeof *p) : NULL;
        if (p)
                p->request = strdup(buf);
        if (!p || !p->request) {
                free(p);
                log_error("Alert %s: cannot make its webhook's request: %s", cfg->name, strerror(n < 0 ? -n : ENOMEM));
                return;
        }
        p->request_len = (size_t) n;
        p->runner = w;
        p->out_fd = -1;
        snprintf(p->rule, sizeof p->rule, "%s", cfg->name);
        snprintf(p->url, sizeof p->url, "%s", cfg->webhook);
        alert_webhook_origin(cfg->webhook, p->origin, sizeof p->origin);
        webhook_make_room(w);
        for (end = &w->queue; *end; end = &(*end)->next)
                ;
        *end = p;
        webhook_pump(w);
}

static int webhook_new(const struct alerts_host *host, void **ret) {
        struct webhook_runner *w = calloc(1, sizeof *w);

        if (!w)
                return -ENOMEM;
        w->event = host->event;
        *ret = w;
        return 0;
}

/* At the end: what was not delivered is dropped (not kept for the next start). */
static void webhook_runner_free(void *self) {
        struct webhook_runner *w = self;
        size_t waiting;

        if (!w)
                return;
        webhook_sweep(w, &waiting);
        if (waiting)
                log_warning("Alert webhooks: %zu transition%s not delivered, dropped at exit", waiting,
                            waiting == 1 ? "" : "s");
        while (w->queue) {
                struct webhook_post *p = w->queue;
                w->queue = p->next;
                webhook_post_free(p);
        }
        sd_event_source_disable_unref(w->retry);
        free(w);
}

static void webhook_sample(void *self) {
        webhook_sweep(self, NULL);
}

static void webhook_sensors(void *self, const struct sensors *s) {
        struct webhook_runner *w = self;

        w->board = s->board;
}

/* A rule with a webhook: curl is looked for now, so its absence is said at once. */
static void webhook_rule_open(void *self, void *rule, const struct alert_rule_config *cfg, enum alert_state state) {
        struct webhook_runner *w = self;

        if (cfg->webhook[0] && w->event)
                webhook_find_curl(w);
}

const struct alert_action alert_action_webhook = {
        .name = "webhook",
        .after_save = true,
        .new = webhook_new,
        .free = webhook_runner_free,
        .sample = webhook_sample,
        .sensors = webhook_sensors,
        .rule_open = webhook_rule_open,
        .transition = webhook_transition,
};
