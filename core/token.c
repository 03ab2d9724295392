/* token.c — the bearer token: read it from its file, check an Authorization header against it. */
#include "token.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* A token file is a few dozen bytes; read a little more than a token with
 * room for trailing newlines, and refuse rather than truncate beyond. */
#define TOKEN_FILE_READ_MAX 4096

static bool token_is_space(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

int token_parse(const char *data, size_t len, char *buf, size_t size) {
        while (len > 0 && token_is_space(data[len - 1]))
                len--;
        if (len == 0)
                return -ENODATA;
        if (len > TOKEN_MAX)
                return -EFBIG;
        for (size_t i = 0; i < len; i++)
                if ((unsigned char) data[i] < 0x21 || (unsigned char) data[i] > 0x7e)
                        return -EINVAL;
        if (len >= size)
                return -ENOBUFS;
        memcpy(buf, data, len);
        buf[len] = '\0';
        return 0;
}

int token_read_file(const char *path, char *buf, size_t size) {
        char data[TOKEN_FILE_READ_MAX + 1];
        size_t len = 0;
        struct stat st;

        if (size > 0)
                buf[0] = '\0';
        /* O_NONBLOCK: a FIFO at the path must not block the caller in open(). */
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        while (len < sizeof data) {
                ssize_t n = read(fd, data + len, sizeof data - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        if (len > TOKEN_FILE_READ_MAX)
                return -EFBIG;
        return token_parse(data, len, buf, size);
}

const char *token_strerror(int err) {
        switch (err) {
        case 0:
                return "no error";
        case -ENODATA:
                return "the token file is empty";
        case -EFBIG:
                return "the token is longer than 255 bytes";
        case -EINVAL:
                return "the token file is not a regular file, or the token holds a space, control character or non-ASCII byte";
        case -ENOBUFS:
                return "the token does not fit the buffer";
        default:
                return strerror(-err);
        }
}

/* Equal iff same length and bytes; the time depends on the lengths only. */
static bool token_equal(const char *given, size_t given_len, const char *token, size_t token_len) {
        unsigned char diff = given_len != token_len;

        for (size_t i = 0; i < token_len; i++)
                diff |= (unsigned char) (i < given_len ? given[i] : 0) ^ (unsigned char) token[i];
        return diff == 0;
}

bool token_check_authorization(const char *header, const char *token) {
        size_t token_len, len;
        const char *p;

        if (!header || !token || !token[0])
                return false;
        if (strncasecmp(header, "Bearer", 6) != 0 || header[6] != ' ')
                return false;
        p = header + 6;
        while (*p == ' ')
                p++;
        len = strlen(p);
        while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
                len--;
        token_len = strlen(token);
        return token_equal(p, len, token, token_len);
}
