/* duration.h — parse and print durations written "250ms", "1s", "90m", "2h", "1h30m". */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Accepts one or more <number><unit> groups, units ms, s, m, h, d. A bare
 * number is an error (ambiguous). Returns 0, -EINVAL on bad syntax, -ERANGE
 * on overflow. Groups must go from larger to smaller units, each unit at most
 * once ("1h30m", not "30m1h"); no sign, no spaces, no fractions. Results
 * above INT64_MAX ms are -ERANGE, so the value also fits an int64_t. */
int duration_parse(const char *text, uint64_t *ret_ms);

/* Longest output of duration_format(), NUL included ("18446744073709551615ms"). */
#define DURATION_FORMAT_MAX 32

/* Shortest exact form: 1500 -> "1500ms", 90000 -> "90s", 5400000 -> "90m".
 * Returns buf, or NULL when size is too small. 0 -> "0s". Ties go to the
 * larger unit ("1d", not "24h"). duration_parse() reads back every output
 * of a value up to INT64_MAX. */
const char *duration_format(uint64_t ms, char *buf, size_t size);
