/* text.h — untrusted text made safe to show: valid UTF-8 for JSON, escaped control characters for a terminal. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Length of the valid UTF-8 sequence at s[0..len) (1..4), or 0 when s does
 * not start with one (stray continuation byte, overlong form, surrogate,
 * above U+10FFFF, or cut short). */
size_t text_utf8_char_len(const char *s, size_t len);

/* Copies s into buf (size bytes, NUL included) with every invalid UTF-8
 * byte replaced by U+FFFD, so JSON built from it is valid. Cuts at a
 * character boundary when buf is too small. Returns buf. */
char *text_utf8_sanitize(const char *s, char *buf, size_t size);

/* Copies s (len bytes; may hold NULs) into buf for a terminal: control
 * characters (C0 and DEL as \n, \r, \t, \e or \xNN; C1 as \u0080..\u009f)
 * and invalid UTF-8 bytes (\xNN) are escaped; valid UTF-8 is kept. At most
 * max_chars characters of s are shown; a cut text ends with "...". Never
 * cuts an escape or a character in two. buf needs 6 * max_chars + 4 bytes
 * at most; it is cut at a boundary when smaller. Returns buf. */
char *text_escape_terminal(const char *s, size_t len, size_t max_chars, char *buf, size_t size);
