/* fuzz-token.c — libFuzzer target: token_parse(), token_check_authorization() and the text escapers. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "text.h"
#include "token.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every byte of s is part of a valid UTF-8 sequence. */
static void check_utf8(const char *s) {
        size_t len = strlen(s);

        for (size_t i = 0, n; i < len; i += n)
                if (!(n = text_utf8_char_len(s + i, len - i)))
                        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char token[TOKEN_BUF_SIZE], header[1024], clean[3 * 1024], shown[6 * 64 + 4];
        const char *text = (const char *) data;
        size_t len = size < sizeof header - 1 ? size : sizeof header - 1;

        if (token_parse(text, size, token, sizeof token) == 0) {
                /* a parsed token is accepted in the header the client builds, in any scheme case */
                char auth[TOKEN_BUF_SIZE + 16];
                snprintf(auth, sizeof auth, "bEaReR   %s", token);
                if (!token_check_authorization(auth, token) || strlen(token) > TOKEN_MAX)
                        abort();
        }
        memcpy(header, text, len);
        header[len] = '\0';
        if (token_check_authorization(header, "s3cret")) {
                /* only one shape of header may match */
                const char *p = header + 6;
                if (strncasecmp(header, "bearer ", 7) != 0)
                        abort();
                p += strspn(p, " ");
                if (strncmp(p, "s3cret", 6) != 0 || p[6 + strspn(p + 6, " \t")] != '\0')
                        abort();
        }
        check_utf8(text_utf8_sanitize(header, clean, sizeof clean));
        check_utf8(text_utf8_sanitize(header, clean, 7));
        text_escape_terminal(text, size, 64, shown, sizeof shown);
        for (const char *p = shown; *p; p++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        abort();
        check_utf8(shown);
        return 0;
}
