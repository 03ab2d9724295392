/* text.c — untrusted text made safe to show: valid UTF-8 for JSON, escaped control characters for a terminal. */
#include "text.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define TEXT_REPLACEMENT "\xef\xbf\xbd"     /* U+FFFD */

size_t text_utf8_char_len(const char *s, size_t len) {
        const unsigned char *p = (const unsigned char *) s;
        size_t n;
        uint32_t cp;

        if (len == 0)
                return 0;
        if (p[0] < 0x80)
                return 1;
        if (p[0] >= 0xc2 && p[0] <= 0xdf) {
                n = 2;
                cp = p[0] & 0x1f;
        } else if (p[0] >= 0xe0 && p[0] <= 0xef) {
                n = 3;
                cp = p[0] & 0x0f;
        } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
                n = 4;
                cp = p[0] & 0x07;
        } else
                return 0;
        if (len < n)
                return 0;
        for (size_t i = 1; i < n; i++) {
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (p[i] & 0x3f);
        }
        if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
            (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        return n;
}

char *text_utf8_sanitize(const char *s, char *buf, size_t size) {
        size_t len = strlen(s), out = 0;

        if (size == 0)
                return buf;
        for (size_t i = 0; i < len; ) {
                size_t n = text_utf8_char_len(s + i, len - i);
                const char *piece = n ? s + i : TEXT_REPLACEMENT;
                size_t piece_len = n ? n : sizeof TEXT_REPLACEMENT - 1;

                if (out + piece_len >= size)
                        break;
                memcpy(buf + out, piece, piece_len);
                out += piece_len;
                i += n ? n : 1;
        }
        buf[out] = '\0';
        return buf;
}

/* The escape for one byte that is not shown as is, in esc (at least 5 bytes). */
static void text_escape_byte(unsigned char c, char *esc) {
        switch (c) {
        case '\n':
                strcpy(esc, "\\n");
                break;
        case '\r':
                strcpy(esc, "\\r");
                break;
        case '\t':
                strcpy(esc, "\\t");
                break;
        case 0x1b:
                strcpy(esc, "\\e");
                break;
        default:
                snprintf(esc, 5, "\\x%02x", c);
        }
}

char *text_escape_terminal(const char *s, size_t len, size_t max_chars, char *buf, size_t size) {
        size_t out = 0, chars = 0, i = 0;

        if (size == 0)
                return buf;
        for (; i < len && chars < max_chars; chars++) {
                size_t n = text_utf8_char_len(s + i, len - i);
                char esc[8];
                const char *piece = s + i;
                size_t piece_len = n;

                /* C0 controls and DEL are one byte; C1 controls are U+0080..U+009F (0xc2 0x80..0x9f). */
                if (n == 0 || (n == 1 && ((unsigned char) s[i] < 0x20 || s[i] == 0x7f))) {
                        text_escape_byte((unsigned char) s[i], esc);
                        piece = esc;
                        piece_len = strlen(esc);
                        n = 1;
                } else if (n == 2 && (unsigned char) s[i] == 0xc2 && (unsigned char) s[i + 1] < 0xa0) {
                        snprintf(esc, sizeof esc, "\\u%04x", (unsigned char) s[i + 1]);
                        piece = esc;
                        piece_len = strlen(esc);
                }
                if (out + piece_len + 4 > size) /* room for "..." and the NUL */
                        break;
                memcpy(buf + out, piece, piece_len);
                out += piece_len;
                i += n;
        }
        if (i < len && out + 4 <= size) {
                memcpy(buf + out, "...", 3);
                out += 3;
        }
        buf[out] = '\0';
        return buf;
}
