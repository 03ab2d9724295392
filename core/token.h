/* token.h — the bearer token: read it from its file, check an Authorization header against it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Longest token, in bytes (the daemon keeps it in a 256-byte buffer). */
#define TOKEN_MAX 255
/* Size a buffer needs for any token, NUL included. */
#define TOKEN_BUF_SIZE (TOKEN_MAX + 1)

/* The token in data[0..len): trailing whitespace and newlines dropped; the
 * rest must be 1..TOKEN_MAX visible ASCII characters (0x21..0x7e: what can
 * follow "Bearer " in a header). Never truncates. Returns 0, -ENODATA when
 * empty, -EFBIG when longer than TOKEN_MAX, -EINVAL for any other byte
 * (space, control character, NUL, non-ASCII), -ENOBUFS when size is too
 * small for it. */
int token_parse(const char *data, size_t len, char *buf, size_t size);

/* token_parse() on the contents of path, a regular file (a FIFO or a
 * device is refused with -EINVAL, without blocking in open()). Besides
 * token_parse()'s errors: -errno from open/read. */
int token_read_file(const char *path, char *buf, size_t size);

/* One sentence for token_parse()/token_read_file()'s errors, for logs. */
const char *token_strerror(int err);

/* Whether header (the Authorization value, NULL when absent) is
 * "Bearer <token>": scheme case-insensitive (RFC 7235 2.1), one or more
 * spaces, then exactly token; trailing spaces and tabs ignored. Compares
 * in time that does not depend on where the two differ. An empty token
 * matches nothing. */
bool token_check_authorization(const char *header, const char *token);
