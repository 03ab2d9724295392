/* config.c — daemon settings: defaults, INI file (libinih), one validator for file and flags. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <math.h>
#include <stdint.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "duration.h"
#include "util.h"

enum config_type {
        CONFIG_LISTEN,
        CONFIG_DURATION,
        CONFIG_NUMBER,
        CONFIG_COUNT,                   /* a whole number, into an unsigned */
        CONFIG_BOOL,
        CONFIG_PATH,
        CONFIG_NAME,
};

/* How a key is named in messages: "[daemon] interval" or "--interval". */
enum config_style {
        CONFIG_STYLE_FILE,
        CONFIG_STYLE_FLAG,
};

struct config_key {
        const char *section;
        const char *key;
        enum config_type type;
        size_t offset;                  /* into struct config */
        size_t size;                    /* strings: buffer size, bytes */
        double min, max;                /* numbers: allowed range */
        uint64_t min_ms, max_ms;        /* durations: allowed range, ms */
        bool zero_ok;                   /* 0 is allowed outside the range ("auto", "never") */
        bool auto_nan;                  /* numbers: "auto" is NaN, allowed outside the range */
        bool empty_ok;                  /* strings: "" is allowed */
        const char *zero_note;          /* how a rejected value explains the 0 (or "auto") */
};

/* A configuration file is a few KiB; anything much larger is not one. */
#define CONFIG_FILE_MAX (1024 * 1024)
#define MS_S UINT64_C(1000)
#define MS_M (60 * MS_S)
#define MS_H (60 * MS_M)
#define MS_D (24 * MS_H)

#define STR(s, k, f, empty) { s, k, CONFIG_PATH, offsetof(struct config, f), \
                              sizeof(((struct config *) 0)->f), .empty_ok = empty }

static const struct config_key config_keys[] = {
        { "daemon", "listen", CONFIG_LISTEN, 0 },
        { "daemon", "interval", CONFIG_DURATION, offsetof(struct config, interval_ms),
          .min_ms = 100, .max_ms = MS_H },
        { "daemon", "history", CONFIG_DURATION, offsetof(struct config, history_ms),
          .min_ms = MS_M, .max_ms = 30 * MS_D },
        { "daemon", "history_save", CONFIG_DURATION, offsetof(struct config, history_save_ms),
          .min_ms = 10 * MS_S, .max_ms = MS_D, .zero_ok = true,
          .zero_note = "or 0s to save only on shutdown" },
        STR("daemon", "state_dir", state_dir, false),
        STR("daemon", "sysfs_root", sysfs_root, false),
        STR("daemon", "procfs_root", procfs_root, false),
        { "daemon", "simulate", CONFIG_BOOL, offsetof(struct config, simulate) },
        STR("daemon", "token_file", token_file, true),
        { "daemon", "event_clients", CONFIG_COUNT, offsetof(struct config, event_clients),
          .min = 0, .max = 100 },
        { "simulate", "board", CONFIG_NAME, offsetof(struct config, sim.board),
          sizeof(((struct config *) 0)->sim.board) },
        { "simulate", "ambient", CONFIG_NUMBER, offsetof(struct config, sim.ambient_c),
          .min = -40, .max = 60 },
        { "simulate", "tau", CONFIG_DURATION, offsetof(struct config, sim.tau_ms),
          .min_ms = MS_S, .max_ms = MS_D },
        { "simulate", "rise", CONFIG_NUMBER, offsetof(struct config, sim.rise_c),
          .min = 0.1, .max = 150 },
        { "simulate", "quantize", CONFIG_BOOL, offsetof(struct config, sim.quantize) },
        { "simulate", "load_source", CONFIG_NAME, offsetof(struct config, sim.load_source),
          sizeof(((struct config *) 0)->sim.load_source) },
        { "simulate", "power_idle", CONFIG_NUMBER, offsetof(struct config, sim.power_idle_w),
          .min = 0, .max = 1000, .auto_nan = true, .zero_note = "or auto for the board's own reading" },
        { "simulate", "power_load", CONFIG_NUMBER, offsetof(struct config, sim.power_load_w),
          .min = 0, .max = 1000 },
        { "runs", "safety_limit", CONFIG_NUMBER, offsetof(struct config, safety_limit_c),
          .min = 20, .max = 150, .zero_ok = true,
          .zero_note = "or auto" },
        STR("runs", "stress_dir", stress_dir, true),
        { "runs", "ambient_sensor", CONFIG_PATH, offsetof(struct config, ambient_sensor),
          sizeof(((struct config *) 0)->ambient_sensor), .empty_ok = true },
        { "runs", "allow_root", CONFIG_BOOL, offsetof(struct config, allow_root) },
        { "runs", "keep", CONFIG_COUNT, offsetof(struct config, runs_keep), .min = 0, .max = 100000 },
        { "runs", "keep_for", CONFIG_DURATION, offsetof(struct config, runs_keep_ms),
          .min_ms = MS_H, .max_ms = 3650 * MS_D, .zero_ok = true, .zero_note = "or 0s to keep them for ever" },
};
#define N_KEYS (sizeof(config_keys) / sizeof(config_keys[0]))

static const char *const config_sections[] = { "daemon", "simulate", "runs" };

static void copy_string(char *dst, size_t size, const char *src) {
        snprintf(dst, size, "%s", src);
}

void config_defaults(struct config *c) {
        *c = (struct config) {
                .listen_port = 8080,
                .interval_ms = MS_S,
                .history_ms = MS_D,
                .history_save_ms = 5 * MS_M,
                .simulate = false,
                .sim = {
                        .ambient_c = 25.0,
                        .tau_ms = 60 * MS_S,
                        .rise_c = 35.0,
                        .quantize = true,
                        .power_idle_w = NAN,
                        .power_load_w = 3.5,
                },
                .safety_limit_c = 0,
                .event_clients = 16,
        };
        copy_string(c->listen_host, sizeof c->listen_host, "127.0.0.1");
        copy_string(c->sim.load_source, sizeof c->sim.load_source, "host");
        copy_string(c->state_dir, sizeof c->state_dir, "/var/lib/heatcurve");
        copy_string(c->sysfs_root, sizeof c->sysfs_root, "/");
        copy_string(c->procfs_root, sizeof c->procfs_root, "/");
        copy_string(c->sim.board, sizeof c->sim.board, "odroid-c2-3.14");
}

static bool config_section_known(const char *section) {
        if (alert_config_section(section))
                return true;
        for (size_t i = 0; i < sizeof config_sections / sizeof config_sections[0]; i++)
                if (strcmp(config_sections[i], section) == 0)
                        return true;
        return false;
}

static const struct config_key *config_key_find(const char *section, const char *key) {
        for (size_t i = 0; i < N_KEYS; i++)
                if (strcmp(config_keys[i].section, section) == 0 && strcmp(config_keys[i].key, key) == 0)
                        return &config_keys[i];
        return NULL;
}

/* "[daemon] state_dir" or "--state-dir"; [simulate] keys become "--simulate-tau". */
static void config_key_name(const char *section, const char *key, enum config_style style,
                            char *buf, size_t size) {
        size_t n;

        if (style == CONFIG_STYLE_FILE) {
                snprintf(buf, size, "[%s] %s", section, key);
                return;
        }
        if (strcmp(section, "daemon") == 0 || strcmp(section, "runs") == 0)
                snprintf(buf, size, "--%s", key);
        else
                snprintf(buf, size, "--%s-%s", section, key);
        n = strlen(buf);
        for (size_t i = 2; i < n; i++)
                if (buf[i] == '_')
                        buf[i] = '-';
}

static int config_parse_port(const char *s, uint16_t *ret) {
        unsigned long v = 0;

        if (*s == '\0')
                return -EINVAL;
        for (; *s != '\0'; s++) {
                if (*s < '0' || *s > '9')
                        return -EINVAL;
                if (v <= 65535)
                        v = v * 10 + (unsigned long) (*s - '0');
        }
        if (v == 0 || v > 65535)
                return -ERANGE;
        *ret = (uint16_t) v;
        return 0;
}

int config_parse_listen(const char *text, char *host, size_t hostlen, uint16_t *port) {
        char addr[INET6_ADDRSTRLEN];
        unsigned char bin[sizeof(struct in6_addr)];
        const char *a, *colon;
        size_t alen;
        uint16_t p;
        int family, r;

        if (!text || !host || !port)
                return -EINVAL;
        if (text[0] == '[') {
                const char *end = strchr(text, ']');

                if (!end || end[1] != ':')
                        return -EINVAL;
                a = text + 1;
                colon = end + 1;
                family = AF_INET6;
        } else {
                colon = strchr(text, ':');
                if (!colon || strchr(colon + 1, ':'))
                        return -EINVAL;         /* IPv6 needs brackets */
                a = text;
                family = AF_INET;
        }
        alen = (size_t) ((family == AF_INET6 ? colon - 1 : colon) - a);
        if (alen >= sizeof addr)
                return -EINVAL;
        memcpy(addr, a, alen);
        addr[alen] = '\0';
        /* "localhost" is the one name taken: the README's examples use it, and
         * resolving it would make start-up depend on /etc/hosts. It means
         * 127.0.0.1, which the unit's IPAddressAllow=localhost covers. */
        if (family == AF_INET && strcmp(addr, "localhost") == 0) {
                memcpy(addr, "127.0.0.1", sizeof "127.0.0.1");
                alen = strlen(addr);
        }
        /* ":PORT" leaves host "": every address, IPv4 and IPv6 (http_listen()).
         * inet_pton() takes no other names. */
        if ((alen > 0 || family == AF_INET6) && inet_pton(family, addr, bin) != 1)
                return -EINVAL;
        r = config_parse_port(colon + 1, &p);
        if (r < 0)
                return r;
        if (alen >= hostlen)
                return -ENOBUFS;

        memcpy(host, addr, alen + 1);
        *port = p;
        return 0;
}

static int config_parse_bool(const char *v, bool *ret) {
        static const char *const yes[] = { "yes", "true", "1", "on" };
        static const char *const no[] = { "no", "false", "0", "off" };

        for (size_t i = 0; i < 4; i++) {
                if (strcasecmp(v, yes[i]) == 0) {
                        *ret = true;
                        return 0;
                }
                if (strcasecmp(v, no[i]) == 0) {
                        *ret = false;
                        return 0;
                }
        }
        return -EINVAL;
}

/* Plain decimal only: strtod() alone would also take "0x1p3", "inf" and "nan". */
static int config_parse_number(const char *v, double *ret) {
        char *end;
        double x;

        if (*v == '\0' || strspn(v, "0123456789+-.eE") != strlen(v))
                return -EINVAL;
        errno = 0;
        x = strtod(v, &end);
        if (end == v || *end != '\0')
                return -EINVAL;
        if (errno == ERANGE || !isfinite(x))
                return -ERANGE;
        *ret = x;
        return 0;
}

static bool config_name_valid(const char *s) {
        if (s[0] == '.' || s[0] == '\0')
                return false;
        return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == strlen(s);
}

static int config_check_duration(const struct config_key *k, const char *name, const char *shown,
                                 uint64_t ms, char *err, size_t errlen) {
        char lo[DURATION_FORMAT_MAX], hi[DURATION_FORMAT_MAX];

        if ((ms >= k->min_ms && ms <= k->max_ms) || (k->zero_ok && ms == 0))
                return 0;
        duration_format(k->min_ms, lo, sizeof lo);
        duration_format(k->max_ms, hi, sizeof hi);
        return util_errorf(err, errlen, -ERANGE, "%s: \"%s\" is out of range (%s..%s%s%s)", name, shown,
                            lo, hi, k->zero_note ? ", " : "", k->zero_note ? k->zero_note : "");
}

static int config_check_number(const struct config_key *k, const char *name, const char *shown,
                               double x, char *err, size_t errlen) {
        if ((x >= k->min && x <= k->max) || (k->zero_ok && x == 0) || (k->auto_nan && isnan(x)))
                return 0;
        return util_errorf(err, errlen, -ERANGE, "%s: \"%s\" is out of range (%g..%g%s%s)", name, shown,
                            k->min, k->max, k->zero_note ? ", " : "", k->zero_note ? k->zero_note : "");
}

static int config_check_string(const struct config_key *k, const char *name, const char *s,
                               char *err, size_t errlen) {
        size_t n = strnlen(s, k->size);

        if (n == 0 && !k->empty_ok)
                return util_errorf(err, errlen, -EINVAL, "%s: must not be empty", name);
        if (n >= k->size)
                return util_errorf(err, errlen, -ENAMETOOLONG, "%s: is too long (at most %zu bytes)",
                                    name, k->size - 1);
        if (k->type == CONFIG_NAME && !config_name_valid(s))
                return util_errorf(err, errlen, -EINVAL,
                                    "%s: \"%s\" is not a board name (letters, digits, '.', '-', '_')", name, s);
        return 0;
}

static int config_set_listen(struct config *c, const char *name, const char *value,
                             char *err, size_t errlen) {
        int r;

        r = config_parse_listen(value, c->listen_host, sizeof c->listen_host, &c->listen_port);
        if (r == -ERANGE)
                return util_errorf(err, errlen, r, "%s: \"%s\": port must be 1..65535", name, value);
        if (r < 0)
                return util_errorf(err, errlen, -EINVAL,
                                    "%s: \"%s\" is not ADDR:PORT (numeric IPv4, [IPv6], localhost, or :PORT for all addresses)",
                                    name, value);
        return 0;
}

static int config_set_value(struct config *c, const struct config_key *k, const char *name,
                            const char *value, char *err, size_t errlen) {
        char *field = (char *) c + k->offset;
        uint64_t ms;
        double x;
        int r;

        switch (k->type) {
        case CONFIG_LISTEN:
                return config_set_listen(c, name, value, err, errlen);
        case CONFIG_DURATION:
                r = duration_parse(value, &ms);
                if (r == -ERANGE)
                        return util_errorf(err, errlen, r, "%s: \"%s\" is too large", name, value);
                if (r < 0)
                        return util_errorf(err, errlen, -EINVAL,
                                            "%s: \"%s\" is not a duration (e.g. 250ms, 1s, 90m, 2h)", name, value);
                r = config_check_duration(k, name, value, ms, err, errlen);
                if (r >= 0)
                        memcpy(field, &ms, sizeof ms);
                return r;
        case CONFIG_NUMBER:
                if (k->zero_ok && strcasecmp(value, "auto") == 0)
                        x = 0;
                else if (k->auto_nan && strcasecmp(value, "auto") == 0)
                        x = NAN;
                else if (config_parse_number(value, &x) < 0)
                        return util_errorf(err, errlen, -EINVAL, "%s: \"%s\" is not a number", name, value);
                r = config_check_number(k, name, value, x, err, errlen);
                if (r >= 0)
                        memcpy(field, &x, sizeof x);
                return r;
        case CONFIG_COUNT:
                if (config_parse_number(value, &x) < 0 || x != floor(x))
                        return util_errorf(err, errlen, -EINVAL, "%s: \"%s\" is not a whole number", name, value);
                r = config_check_number(k, name, value, x, err, errlen);
                if (r >= 0) {
                        /* only now: a double outside unsigned's range does not convert */
                        unsigned n = (unsigned) x;
                        memcpy(field, &n, sizeof n);
                }
                return r;
        case CONFIG_BOOL:
                if (config_parse_bool(value, (bool *) field) < 0)
                        return util_errorf(err, errlen, -EINVAL,
                                            "%s: \"%s\" is not a boolean (yes/no, true/false, on/off, 1/0)",
                                            name, value);
                return 0;
        case CONFIG_PATH:
        case CONFIG_NAME:
                r = config_check_string(k, name, value, err, errlen);
                if (r >= 0)
                        copy_string(field, k->size, value);
                return r;
        }
        return -EINVAL;
}

static int config_set_styled(struct config *c, const char *section, const char *key, const char *value,
                             enum config_style style, char *err, size_t errlen) {
        const struct config_key *k;
        char name[128];

        if (!c || !section || !key)
                return -EINVAL;
        if (!config_section_known(section))
                return util_errorf(err, errlen, -EINVAL, "unknown section [%s]", section);
        if (alert_config_section(section))
                return alert_config_set(&c->alerts, section, key, value ? value : "", err, errlen);
        k = config_key_find(section, key);
        config_key_name(section, key, style, name, sizeof name);
        if (!k && style == CONFIG_STYLE_FILE)
                return util_errorf(err, errlen, -EINVAL, "unknown key \"%s\" in [%s]", key, section);
        if (!k)
                return util_errorf(err, errlen, -EINVAL, "unknown option %s", name);
        return config_set_value(c, k, name, value ? value : "", err, errlen);
}

int config_set(struct config *c, const char *section, const char *key, const char *value,
               char *err, size_t errlen) {
        enum config_style style = c && c->path[0] != '\0' ? CONFIG_STYLE_FILE : CONFIG_STYLE_FLAG;

        return config_set_styled(c, section, key, value, style, err, errlen);
}

int config_set_flag(struct config *c, const char *section, const char *key, const char *value,
                    char *err, size_t errlen) {
        return config_set_styled(c, section, key, value, CONFIG_STYLE_FLAG, err, errlen);
}

struct config_parser {
        FILE *f;
        struct config *c;
        unsigned line;                  /* line the reader handed out last, 1-based */
        unsigned error_line;            /* 0 while no error */
        int error;                      /* -errno of the first error */
        char message[384];              /* first error, without "FILE:LINE: " */
        char **seen;                    /* "section\nkey" of every key set so far */
        unsigned *seen_line;
        size_t n_seen;
};

static void config_parser_fail(struct config_parser *p, int r, const char *message) {
        if (p->error_line != 0)
                return;
        p->error_line = p->line;
        p->error = r;
        copy_string(p->message, sizeof p->message, message);
}

/* Checks a "[section]" header when it is read, so an empty unknown section is
 * caught too. Returns false to stop. */
static bool config_parser_check_header(struct config_parser *p, const char *line) {
        char section[128], message[256];
        const char *end = strchr(line, ']');
        size_t n;

        if (!end)
                return true;            /* inih reports the syntax error */
        n = (size_t) (end - line - 1);
        snprintf(section, sizeof section, "%.*s", (int) n, line + 1);
        if (n < sizeof section && alert_config_section(section)) {
                /* a rule starts at its header, so a name used twice is caught there */
                int r = alert_config_begin(&p->c->alerts, section, p->line, message, sizeof message);
                if (r < 0)
                        config_parser_fail(p, r, message);
                return r >= 0;
        }
        if (n < sizeof section && config_section_known(section))
                return true;
        snprintf(message, sizeof message, "unknown section [%s]", section);
        config_parser_fail(p, -EINVAL, message);
        return false;
}

/* fgets() for inih that counts lines, refuses over-long lines, and strips
 * leading blanks: inih would take an indented line as the continuation of the
 * previous value, and "  interval = 1s" under "listen = ..." must not become
 * part of listen. */
static char *config_reader(char *str, int num, void *stream) {
        struct config_parser *p = stream;
        size_t len, skip;
        int ch;

        /* no NUL in the buffer but the one fgets() ends the line with */
        memset(str, '\n', (size_t) num);
        if (p->error_line != 0 || !fgets(str, num, p->f))
                return NULL;
        p->line++;
        len = strlen(str);
        if ((char *) memrchr(str, '\0', (size_t) num) != str + len) {
                config_parser_fail(p, -EINVAL, "a NUL character in the line");
                return NULL;
        }
        if (len == (size_t) num - 1 && str[len - 1] != '\n') {
                ch = getc(p->f);
                if (ch != EOF) {
                        char message[64];

                        snprintf(message, sizeof message, "line too long (at most %d characters)", num - 3);
                        config_parser_fail(p, -EINVAL, message);
                        return NULL;
                }
        }
        skip = 0;
        if (p->line == 1 && len >= 3 && memcmp(str, "\xEF\xBB\xBF", 3) == 0)
                skip = 3;               /* UTF-8 byte order mark */
        while (str[skip] == ' ' || str[skip] == '\t')
                skip++;
        memmove(str, str + skip, len - skip + 1);
        if (str[0] == '[')
                return config_parser_check_header(p, str) ? str : NULL;
        /* inih would also take "key: value", and "listen 127.0.0.1:8080" as key
         * "listen 127.0.0.1"; only "key = value" is documented. */
        if (!strchr("#;\r\n", str[0]) && str[strcspn(str, "=:")] != '=') {
                config_parser_fail(p, -EINVAL, "syntax error (expected \"key = value\" or \"[section]\")");
                return NULL;
        }
        return str;
}

/* Whether name was set in section before (a second value would silently
 * win); remembers it otherwise. -ENOMEM when it cannot. */
static int config_parser_seen(struct config_parser *p, const char *section, const char *name, unsigned *first) {
        char *key, **seen;
        unsigned *lines;

        if (asprintf(&key, "%s\n%s", section, name) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < p->n_seen; i++)
                if (strcmp(p->seen[i], key) == 0) {
                        *first = p->seen_line[i];
                        free(key);
                        return 1;
                }
        seen = realloc(p->seen, (p->n_seen + 1) * sizeof *seen);
        if (seen)
                p->seen = seen;
        lines = seen ? realloc(p->seen_line, (p->n_seen + 1) * sizeof *lines) : NULL;
        if (!lines) {
                free(key);
                return -ENOMEM;
        }
        p->seen_line = lines;
        p->seen[p->n_seen] = key;
        p->seen_line[p->n_seen++] = p->line;
        return 0;
}

static int config_handler(void *user, const char *section, const char *name, const char *value) {
        struct config_parser *p = user;
        char message[384];
        unsigned first;
        int r;

        if (section[0] == '\0') {
                snprintf(message, sizeof message, "key \"%s\" outside any section (put [daemon] above it)", name);
                config_parser_fail(p, -EINVAL, message);
                return 0;
        }
        r = config_parser_seen(p, section, name, &first);
        if (r != 0) {
                if (r > 0)
                        snprintf(message, sizeof message, "[%s] %s: set twice (first on line %u)", section, name, first);
                config_parser_fail(p, r > 0 ? -EINVAL : r, r > 0 ? message : "out of memory");
                return 0;
        }
        r = config_set_styled(p->c, section, name, value, CONFIG_STYLE_FILE, message, sizeof message);
        if (r < 0) {
                config_parser_fail(p, r, message);
                return 0;
        }
        return 1;
}

static int config_parse_file(struct config *c, FILE *f, const char *path, char *err, size_t errlen) {
        struct config_parser p = { .f = f, .c = c };
        int r;

        r = ini_parse_stream(config_reader, &p, config_handler, &p);
        for (size_t i = 0; i < p.n_seen; i++)
                free(p.seen[i]);
        free(p.seen);
        free(p.seen_line);
        if (p.error_line != 0 && (r <= 0 || (unsigned) r >= p.error_line))
                return util_errorf(err, errlen, p.error, "%s:%u: %s", path, p.error_line, p.message);
        if (r > 0)
                return util_errorf(err, errlen, -EINVAL,
                                    "%s:%d: syntax error (expected \"key = value\" or \"[section]\")", path, r);
        if (r == -2)
                return util_errorf(err, errlen, -ENOMEM, "%s: out of memory", path);
        if (ferror(f))
                return util_errorf(err, errlen, -EIO, "%s: read error", path);
        return 0;
}

/* The file at path, if it is a regular file of at most CONFIG_FILE_MAX
 * bytes. Opened without blocking: a FIFO (or a device) in its place must
 * not hang the event loop of a reload, nor /dev/zero spin it. */
static FILE *config_open(const char *path, struct stat *st, char *err, size_t errlen, int *ret) {
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        FILE *f;

        *ret = fd < 0 || fstat(fd, st) < 0 ? -errno : S_ISDIR(st->st_mode) ? -EISDIR :
               !S_ISREG(st->st_mode) ? -EINVAL : st->st_size > CONFIG_FILE_MAX ? -EFBIG : 0;
        if (*ret == -EINVAL)
                util_errorf(err, errlen, *ret, "%s: not a regular file", path);
        else if (*ret == -EFBIG)
                util_errorf(err, errlen, *ret, "%s: %jd bytes, more than a configuration file holds (%d)",
                            path, (intmax_t) st->st_size, CONFIG_FILE_MAX);
        else if (*ret < 0)
                util_errorf(err, errlen, *ret, "%s: %s", path, strerror(-*ret));
        if (*ret < 0) {
                if (fd >= 0)
                        close(fd);
                return NULL;
        }
        f = fdopen(fd, "re");
        if (!f) {
                *ret = util_errorf(err, errlen, -errno, "%s: %s", path, strerror(errno));
                close(fd);
        }
        return f;
}

int config_load(struct config *c, const char *path, char *err, size_t errlen) {
        struct config *copy;
        struct stat st;
        FILE *f;
        int r;

        if (!c || !path)
                return -EINVAL;
        if (strlen(path) >= sizeof c->path)
                return util_errorf(err, errlen, -ENAMETOOLONG, "%s: path too long", path);
        f = config_open(path, &st, err, errlen, &r);
        if (!f)
                return r;
        copy = malloc(sizeof *copy);
        if (!copy) {
                fclose(f);
                return util_errorf(err, errlen, -ENOMEM, "%s: out of memory", path);
        }
        *copy = *c;
        copy_string(copy->path, sizeof copy->path, path);
        r = config_parse_file(copy, f, path, err, errlen);
        fclose(f);
        if (r >= 0)
                *c = *copy;
        free(copy);
        return r;
}

/* Re-checks one stored value, for fields filled in directly rather than by config_set(). */
static int config_check_key(const struct config *c, const struct config_key *k, const char *name,
                            char *err, size_t errlen) {
        const char *field = (const char *) c + k->offset;
        char shown[64];
        uint64_t ms;
        double x;

        switch (k->type) {
        case CONFIG_LISTEN:
                if (c->listen_port == 0)
                        return util_errorf(err, errlen, -ERANGE, "%s: port must be 1..65535", name);
                return 0;
        case CONFIG_DURATION:
                memcpy(&ms, field, sizeof ms);
                if (!duration_format(ms, shown, sizeof shown))
                        return -EINVAL;
                return config_check_duration(k, name, shown, ms, err, errlen);
        case CONFIG_NUMBER:
                memcpy(&x, field, sizeof x);
                snprintf(shown, sizeof shown, "%g", x);
                return config_check_number(k, name, shown, x, err, errlen);
        case CONFIG_COUNT: {
                unsigned n;
                memcpy(&n, field, sizeof n);
                snprintf(shown, sizeof shown, "%u", n);
                return config_check_number(k, name, shown, n, err, errlen);
        }
        case CONFIG_BOOL:
                return 0;
        case CONFIG_PATH:
        case CONFIG_NAME:
                return config_check_string(k, name, field, err, errlen);
        }
        return -EINVAL;
}

int config_validate(const struct config *c, char *err, size_t errlen) {
        enum config_style style = c->path[0] != '\0' ? CONFIG_STYLE_FILE : CONFIG_STYLE_FLAG;
        char msg[384], name[128], other[128], a[DURATION_FORMAT_MAX], b[DURATION_FORMAT_MAX];
        const char *prefix = c->path[0] != '\0' ? c->path : "";
        const char *sep = c->path[0] != '\0' ? ": " : "";
        int r;

        for (size_t i = 0; i < N_KEYS; i++) {
                config_key_name(config_keys[i].section, config_keys[i].key, style, name, sizeof name);
                r = config_check_key(c, &config_keys[i], name, msg, sizeof msg);
                if (r < 0)
                        return util_errorf(err, errlen, r, "%s%s%s", prefix, sep, msg);
        }

        config_key_name("daemon", "history", style, name, sizeof name);
        config_key_name("daemon", "interval", style, other, sizeof other);
        duration_format(c->history_ms, a, sizeof a);
        duration_format(c->interval_ms, b, sizeof b);
        if (c->history_ms < c->interval_ms)
                return util_errorf(err, errlen, -EINVAL, "%s%s%s (%s) must not be shorter than %s (%s)",
                                    prefix, sep, name, a, other, b);
        if (c->history_ms / c->interval_ms > CONFIG_HISTORY_MAX_SAMPLES)
                return util_errorf(err, errlen, -E2BIG,
                                    "%s%s%s (%s) at %s (%s) is more than %d samples",
                                    prefix, sep, name, a, other, b, CONFIG_HISTORY_MAX_SAMPLES);
        config_key_name("simulate", "load_source", style, name, sizeof name);
        if (strcmp(c->sim.load_source, "host") != 0 && strcmp(c->sim.load_source, "own") != 0)
                return util_errorf(err, errlen, -EINVAL, "%s%s%s: \"%s\" is not host or own", prefix, sep, name,
                                   c->sim.load_source);
        unsigned line = 0;
        r = alert_config_validate(&c->alerts, &line, msg, sizeof msg);
        if (r < 0 && line)
                return util_errorf(err, errlen, r, "%s:%u: %s", c->path, line, msg);
        if (r < 0)
                return util_errorf(err, errlen, r, "%s%s%s", prefix, sep, msg);
        return 0;
}

size_t config_history_samples(const struct config *c) {
        if (c->interval_ms == 0)
                return 0;
        return (size_t) (c->history_ms / c->interval_ms);
}

int config_read(struct config *ret, const char *path, bool must_exist, char *err, size_t errlen) {
        struct config c;
        int r;

        config_defaults(&c);
        if (path) {
                r = config_load(&c, path, err, errlen);
                if (r == -ENOENT && !must_exist)
                        r = 0;
                if (r < 0)
                        return r;
        }
        *ret = c;
        return 0;
}
