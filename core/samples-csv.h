/* samples-csv.h — the one declaration of a run's samples.csv: its columns, rows written whole, rows read back by name. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* The fixed leading columns, in file order. After them comes one "<id>_c"
 * column per temperature sensor, then one "<policy>_hz" per cpufreq policy,
 * as the header names them (in double quotes, a quote doubled, when the id
 * holds a comma or a quote: RFC 4180). An empty field is a value that was not known
 * (a failed sensor, no load running). Columns are only ever added at the end
 * of the fixed ones, so readers that go by name (or by the first positions)
 * keep working; files written before a column existed lack it. */
enum samples_column {
        SAMPLES_TIME_MS,                /* Unix ms of the tick (wall clock: a label) */
        SAMPLES_ELAPSED_S,              /* s since the run started */
        SAMPLES_PHASE,                  /* idle, stress or cooldown */
        SAMPLES_TEMP_C,                 /* C, the run sensor */
        SAMPLES_HOTTEST_C,              /* C, the hottest sensor */
        SAMPLES_FREQ_HZ,                /* Hz, the run policy's current frequency */
        SAMPLES_MAX_ALLOWED_HZ,         /* Hz, its scaling max at the run's start */
        SAMPLES_COOLING_ACTIVE,         /* 1 when a cooling device was above state 0 */
        SAMPLES_LOAD,                   /* measured CPU load, 0..1 */
        SAMPLES_WORK_RATE,              /* work_unit per second of the stress load */
        SAMPLES_WORK_UNIT,              /* "ops", "bytes", "ios", "none", or empty */
        /* s since the first load started (the start of the first stress
         * phase), for overlaying runs; empty in the rows written before it,
         * since a row is written once, when the load start is not yet known
         * (until: stable ends when it ends). For negative times in those
         * rows: the load started at elapsed_s - t_since_load_s of any row
         * that has a value. Files written before this column existed lack
         * it. */
        SAMPLES_T_SINCE_LOAD_S,
        /* Hz, the ARM clock as the Raspberry Pi firmware measures it: what
         * the CPU runs at when the firmware throttles while freq_hz still
         * shows what the kernel asked for. Empty on other boards. */
        SAMPLES_FIRMWARE_ARM_HZ,
        /* 1 when the firmware throttles or caps the ARM clock (its
         * get_throttled bits 1 and 2), 0 when not; empty on other boards. */
        SAMPLES_FIRMWARE_THROTTLED,
        /* W the board draws (its first hwmon power meter). Only in the
         * files of a board that has one (samples_header_power()). */
        SAMPLES_POWER_W,
        SAMPLES_FIXED_COLUMNS,
};

/* The fixed part of one row. Strings point into the parsed line. */
struct samples_row {
        int64_t time_ms;
        double elapsed_s;
        const char *phase;
        double temp_c, hottest_c;
        double freq_hz, max_allowed_hz;
        bool cooling_active;
        double load;
        double work_rate;
        const char *work_unit;
        double t_since_load_s;
        double firmware_arm_hz;
        int firmware_throttled;         /* 1, 0, or -1 when not known */
        bool has_power;                 /* the file has the power_w column */
        double power_w;                 /* W, NaN when not known */
};

/* Header name of a fixed column. */
const char *samples_column_name(enum samples_column c);

/* The header line, '\n' included, for these sensor and policy ids; caller
 * frees. NULL when out of memory. */
char *samples_header(const char *const *temp_ids, size_t n_temps, const char *const *policy_ids, size_t n_policies);
/* The same with the power_w column when power (a board with a power
 * meter): its rows are then written with has_power set. */
char *samples_header_power(const char *const *temp_ids, size_t n_temps, const char *const *policy_ids,
                           size_t n_policies, bool power);

/* One whole row, '\n' included, into buf: the fixed columns, then the
 * per-sensor values (NaN: empty). Returns its length, or -ENOBUFS when buf is
 * too small; samples_row_size() bytes always suffice. */
int samples_format_row(const struct samples_row *row, const double *temps_c, size_t n_temps,
                       const double *policies_hz, size_t n_policies, char *buf, size_t size);
size_t samples_row_size(size_t n_temps, size_t n_policies);

/* The numbers of row as samples_parse_row() reads them from the line
 * samples_format_row() writes: rounded to the file's decimals, the doubles
 * of that text, NaN for a NaN. Lets a series kept in memory stand for its
 * file, bit for bit, without the text. */
void samples_row_as_read(struct samples_row *row);

/* How many of the fixed columns a header line names, in order: files
 * written before a column existed name fewer. */
size_t samples_header_fixed(const char *header);

/* The next field of a line (header or row) cut up in place, *rest moved
 * past its comma (NULL after the last field). A field in double quotes may
 * hold commas, and "" for a quote (RFC 4180; the header quotes an id that
 * needs it): it comes back without them. */
char *samples_field_next(char **rest);

/* The fixed columns of one data line (its '\n' already removed) of a file
 * whose header names fixed of them (samples_header_fixed()); the line is
 * cut up in place. Columns the file lacks read as unknown. -EINVAL when it
 * has fewer fields than up to work_unit, which every file has (taken as
 * there whatever the header says). */
int samples_parse_row(char *line, size_t fixed, struct samples_row *ret);

/* Calls row() for the header (header true) and then for every complete data
 * line of f, with the '\n' removed. A line cut short (no '\n': the daemon
 * died while writing it) or holding a NUL byte (a tail of zeros after a power
 * loss) ends the file there. Stops early when row() returns < 0 and returns
 * that; otherwise 0, or -errno on a read error. */
int samples_read(FILE *f, int (*row)(void *userdata, char *line, bool header), void *userdata);

/* At most limit samples of a series kept as it grows, evenly spread: one
 * in every stride given. When the series is full, every other sample kept
 * is dropped (the first, third ... stay) and the stride doubles (1, 2, 4
 * ...). What is kept of n samples is every samples_limit_stride()-th. A
 * zeroed one, or limit 0, keeps every sample. */
struct samples_limit {
        size_t limit, stride, given;
};
#define SAMPLES_HALVE 1u        /* first drop every other sample kept: n becomes (n + 1) / 2 */
#define SAMPLES_TAKE 2u         /* then keep this one */
void samples_limit_init(struct samples_limit *l, size_t limit);
/* What to do with the next sample, the series holding n kept so far. */
unsigned samples_limit_next(struct samples_limit *l, size_t n);
/* The stride a limit leaves after n samples: the smallest power of two
 * that fits them in it (1 for no limit). */
size_t samples_limit_stride(size_t limit, size_t n);
/* SAMPLES_HALVE on one column of n elements of size bytes: every other
 * one, from the first, moved to the front. Returns the (n + 1) / 2 kept. */
size_t samples_halve(void *column, size_t size, size_t n);

/* Bytes of f that hold the header and complete rows, as samples_read()
 * takes them (it stops where this ends), or -errno. Reads from the start. */
int64_t samples_complete_length(FILE *f);

/* The same length for a file of size bytes that was whole when it was
 * written (every row but the last checked at start, or appended since):
 * only its tail is read, back to the last newline whose row holds no NUL.
 * Leaves out a row being written and a power cut's NUL tail. -errno on a
 * read error. */
int64_t samples_complete_tail(int fd, int64_t size);

/* The whole file as {"columns": [...], "rows": [[...], ...]}: numbers as
 * numbers, the phase and unit as strings, empty fields as null; the rows
 * samples_read() takes. Made a piece at a time as it is read, so an answer
 * costs a line of memory whatever the length of the run. samples_json_new()
 * takes f (closed by samples_json_free()); samples_json_read() fills buf
 * with the next bytes of the document: 0 at its end, -errno on failure. */
struct samples_json;
int samples_json_new(FILE *f, struct samples_json **ret);
ssize_t samples_json_read(struct samples_json *j, char *buf, size_t max);
void samples_json_free(struct samples_json *j);
