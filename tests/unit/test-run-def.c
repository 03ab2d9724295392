/* test-run-def.c — unit tests for run_parse(): every field of a run definition, every limit, the messages;
 * and the duplicate-key check every definition passes before it. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "json-util.h"
#include "run.h"

/* Two temperature sensors are enough for "sensor". */
static struct temp_sensor temps[2] = {
        { .id = "thermal_zone0", .ok = true, .temp_mc = 40000 },
        { .id = "hwmon:cpu_thermal/temp1", .ok = true, .temp_mc = 41000 },
};
static struct sensors board = { .temps = temps, .n_temps = 2 };

static int parse(const char *text, struct run **ret, char *err, size_t errlen) {
        json_object *def = json_tokener_parse(text);
        int r;

        assert_non_null(def);
        err[0] = '\0';
        r = run_parse(def, &board, ret, err, errlen);
        json_object_put(def);
        return r;
}

struct bad_case {
        const char *json;
        const char *message;            /* the whole error message */
};

#define PH(x) "{\"phases\": [" x "]}"
#define IDLE "{\"kind\": \"idle\", \"duration\": \"1m\"}"

static const struct bad_case bad_cases[] = {
        /* the body */
        { "[]", "body: must be a JSON object" },
        { "{\"phases\": [" IDLE "], \"colour\": 1}", "colour: unknown field" },
        { "{}", "phases: an array of 1 to 16 phases is required" },
        { "{\"phases\": {}}", "phases: an array of 1 to 16 phases is required" },
        { "{\"phases\": []}", "phases: an array of 1 to 16 phases is required" },
        { "{\"phases\": [" IDLE "," IDLE "," IDLE "," IDLE "," IDLE "," IDLE "," IDLE "," IDLE ","
          IDLE "," IDLE "," IDLE "," IDLE "," IDLE "," IDLE "," IDLE "," IDLE "," IDLE "]}",
          "phases: an array of 1 to 16 phases is required" },
        { "{\"label\": 5, \"phases\": [" IDLE "]}", "label: must be a string" },
        { "{\"notes\": [], \"phases\": [" IDLE "]}", "notes: must be a string" },
        { "{\"sensor\": 1, \"phases\": [" IDLE "]}", "sensor: must be a string" },
        { "{\"sensor\": \"thermal_zone9\", \"phases\": [" IDLE "]}", "sensor: unknown temperature sensor \"thermal_zone9\"" },
        { "{\"ambient_c\": \"20\", \"phases\": [" IDLE "]}", "ambient_c: must be a number" },
        { "{\"ambient_c\": -40.5, \"phases\": [" IDLE "]}", "ambient_c: -40.5 is outside -40..60" },
        { "{\"ambient_c\": 60.1, \"phases\": [" IDLE "]}", "ambient_c: 60.1 is outside -40..60" },
        { "{\"safety_limit_c\": 19.9, \"phases\": [" IDLE "]}", "safety_limit_c: 19.9 is outside 20..150" },
        { "{\"safety_limit_c\": 151, \"phases\": [" IDLE "]}", "safety_limit_c: 151 is outside 20..150" },
        /* a phase */
        { PH("1"), "phases[0]: must be an object" },
        { PH("{\"duration\": \"1m\"}"), "phases[0].kind: must be idle, stress or cooldown" },
        { PH("{\"kind\": \"rest\", \"duration\": \"1m\"}"), "phases[0].kind: must be idle, stress or cooldown" },
        { PH(IDLE ", {\"kind\": \"idle\", \"duration\": \"1m\", \"speed\": 2}"), "phases[1].speed: unknown field" },
        { PH("{\"kind\": \"idle\"}"), "phases[0].duration: a phase needs a duration or an until condition" },
        { PH("{\"kind\": \"idle\", \"duration\": \"1m\", \"until\": \"stable\"}"),
          "phases[0].until: give either duration or until, not both" },
        { PH("{\"kind\": \"idle\", \"duration\": \"soon\"}"),
          "phases[0].duration: \"soon\" is not a duration (e.g. 30s, 5m, 1h30m)" },
        { PH("{\"kind\": \"idle\", \"duration\": \"0s\"}"),
          "phases[0].duration: \"0s\" is not a duration (e.g. 30s, 5m, 1h30m)" },
        { PH("{\"kind\": \"idle\", \"duration\": 60}"), "phases[0].duration: must be a string" },
        { PH("{\"kind\": \"idle\", \"duration\": \"1m\", \"max\": \"2m\"}"),
          "phases[0].duration: min, max and window go with until, not duration" },
        { PH("{\"kind\": \"idle\", \"until\": \"plateau\"}"),
          "phases[0].until: \"plateau\" is not valid for idle (stable)" },
        { PH("{\"kind\": \"idle\", \"until\": \"duration\"}"),
          "phases[0].until: \"duration\" is not valid for idle (stable)" },
        { PH("{\"kind\": \"stress\", \"until\": \"baseline\"}"),
          "phases[0].until: \"baseline\" is not valid for stress (stable or plateau)" },
        { PH("{\"kind\": \"cooldown\", \"until\": \"plateau\"}"),
          "phases[0].until: \"plateau\" is not valid for cooldown (stable or baseline)" },
        { PH("{\"kind\": \"idle\", \"until\": \"stable\", \"min\": \"10m\", \"max\": \"5m\"}"),
          "phases[0].min: longer than max" },
        { PH("{\"kind\": \"idle\", \"until\": \"stable\", \"window\": \"x\"}"),
          "phases[0].window: \"x\" is not a duration (e.g. 30s, 5m, 1h30m)" },
        { PH("{\"kind\": \"stress\", \"until\": \"plateau\", \"tolerance\": \"1\"}"),
          "phases[0].tolerance: must be a number" },
        { PH("{\"kind\": \"stress\", \"until\": \"plateau\", \"tolerance\": 0}"),
          "phases[0].tolerance: 0 is outside 0.05..20" },
        { PH("{\"kind\": \"stress\", \"until\": \"stable\", \"tolerance\": 1}"),
          "phases[0].tolerance: goes with until: plateau" },
        { PH("{\"kind\": \"stress\", \"duration\": \"1m\", \"tolerance\": 1}"),
          "phases[0].tolerance: goes with until: plateau" },
        /* a load */
        { PH("{\"kind\": \"idle\", \"duration\": \"1m\", \"load\": {}}"), "phases[0].load: only a stress phase runs a load" },
        { PH("{\"kind\": \"stress\", \"duration\": \"1m\", \"load\": 1}"), "phases[0].load: must be an object" },
        { PH("{\"kind\": \"stress\", \"duration\": \"1m\", \"load\": {\"turbo\": true}}"),
          "phases[0].load.turbo: unknown field" },
        { PH("{\"kind\": \"stress\", \"duration\": \"1m\", \"load\": {\"type\": \"gpu\"}}"),
          "phases[0].load.type: \"gpu\" is not one of cpu, memory, io, command" },
        { PH("{\"kind\": \"stress\", \"duration\": \"1m\", \"load\": {\"workers\": 257}}"),
          "phases[0].load.workers: 257 is outside 0..256" },
        { PH("{\"kind\": \"stress\", \"duration\": \"1m\", \"load\": {\"workers\": -1}}"),
          "phases[0].load.workers: -1 is outside 0..256" },
        { PH("{\"kind\": \"stress\", \"duration\": \"1m\", \"load\": {\"workers\": 0.5}}"),
          "phases[0].load.workers: 0.5 is not a whole number" },
        { PH("{\"kind\": \"stress\", \"duration\": \"1m\", \"load\": {\"duty\": 1.9}}"),
          "phases[0].load.duty: 1.9 is not a whole number" },
        { "{\"label\": \"a\\u0000b\", \"phases\": [" IDLE "]}", "label: must not contain a NUL character" },
        { "{\"label\": \"caf\xe9\", \"phases\": [" IDLE "]}", "label: is not valid UTF-8" },
        { "{\"notes\": \"\xed\xa0\x80\", \"phases\": [" IDLE "]}", "notes: is not valid UTF-8" },
        { PH("{\"kind\": \"stress\", \"duration\": \"1m\", \"load\": {\"type\": \"command\", \"argv\": [\"sh\", \"-c\\u0000rm\"]}}"),
          "phases[0].load.argv[1]: must not contain a NUL character" },
        { PH("{\"kind\": \"stress\", \"duration\": \"1m\", \"load\": {\"duty\": 0}}"),
          "phases[0].load.duty: 0 is outside 1..100" },
        { PH("{\"kind\": \"stress\", \"duration\": \"1m\", \"load\": {\"duty\": 101}}"),
          "phases[0].load.duty: 101 is outside 1..100" },
        { PH("{\"kind\": \"stress\", \"duration\": \"1m\", \"load\": {\"method\": \"prime\"}}"),
          "phases[0].load.method: \"prime\" is not one of sqrt, fma, matrix" },
        { PH("{\"kind\": \"stress\", \"duration\": \"1m\", \"load\": {\"type\": \"memory\", \"size\": \"lots\"}}"),
          "phases[0].load.size: \"lots\" is not a size (e.g. 64M, 1G)" },
        { PH("{\"kind\": \"stress\", \"duration\": \"1m\", \"load\": {\"type\": \"memory\", \"size\": \"2G\", \"workers\": 1}}"),
          "phases[0].load.memory: must be between 1 and 1024 MiB per worker" },
        { PH("{\"kind\": \"stress\", \"duration\": \"1m\", \"load\": {\"type\": \"command\"}}"),
          "phases[0].load.argv: a command load needs an array of strings" },
        { PH("{\"kind\": \"stress\", \"duration\": \"1m\", \"load\": {\"type\": \"command\", \"argv\": []}}"),
          "phases[0].load.argv: 1 to 64 strings" },
        { PH("{\"kind\": \"stress\", \"duration\": \"1m\", \"load\": {\"type\": \"command\", \"argv\": [\"stress\", 4]}}"),
          "phases[0].load.argv[1]: must be a string" },
        { PH("{\"kind\": \"stress\", \"duration\": \"1m\", \"load\": {\"type\": \"command\", \"argv\": [\"sh\"], \"workers\": 2}}"),
          "phases[0].load.workers: a command load runs one command" },
        { PH("{\"kind\": \"stress\", \"duration\": \"1m\", \"load\": {\"type\": \"command\", \"argv\": [\"sh\"], \"duty\": 50}}"),
          "phases[0].load.duty: a command load runs at 100 %" },
        { PH("{\"kind\": \"stress\", \"duration\": \"1m\", \"load\": {\"type\": \"command\", \"argv\": [\"no-such-program-here\"]}}"),
          "phases[0].load.argv[0]: \"no-such-program-here\" is not found in PATH" },
        { PH("{\"kind\": \"stress\", \"duration\": \"1m\", \"load\": {\"type\": \"command\", \"argv\": [\"/nonexistent/x\"]}}"),
          "phases[0].load.argv[0]: \"/nonexistent/x\" is not an executable file" },
        { PH("{\"kind\": \"stress\", \"duration\": \"1m\", \"load\": {\"type\": \"command\", \"argv\": [\"/tmp\"]}}"),
          "phases[0].load.argv[0]: \"/tmp\" is not an executable file" },
        { PH("{\"kind\": \"stress\", \"duration\": \"1m\", \"load\": {\"type\": \"command\", \"argv\": [\"\"]}}"),
          "phases[0].load.argv[0]: must name a program" },
};

static void test_bad_definitions(void **state) {
        char err[600];
        struct run *r = NULL;

        for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
                int ret = parse(bad_cases[i].json, &r, err, sizeof err);
                if (ret != -EINVAL || strcmp(err, bad_cases[i].message) != 0)
                        fail_msg("case %zu %s:\n  got %d \"%s\"\n  want \"%s\"", i, bad_cases[i].json, ret, err,
                                 bad_cases[i].message);
        }
}

/* "start_at": Unix ms, or ISO 8601 in UTC or with an offset, to the ms. */
static void test_start_at(void **state) {
        static const struct {
                const char *json;
                int64_t ms;
        } good[] = {
                { "1764921600000", INT64_C(1764921600000) },
                { "\"2025-12-05T08:00:00Z\"", INT64_C(1764921600000) },
                { "\"2025-12-05T08:00:00.250Z\"", INT64_C(1764921600250) },
                { "\"2025-12-05T09:00:00+01:00\"", INT64_C(1764921600000) },
                { "\"2025-12-05 07:30:00-00:30\"", INT64_C(1764921600000) },
                { "\"2000-02-29T00:00:00Z\"", INT64_C(951782400000) },
                { "\"2038-01-19T03:14:08Z\"", INT64_C(2147483648000) },  /* past 32-bit time_t */
        };
        static const char *const bad[] = { "0", "-5", "true", "\"now\"", "\"2025-12-05T08:00:00\"",
                                           "\"2025-13-05T08:00:00Z\"", "\"2025-12-05T08:00:00Zx\"",
                                           "\"2025-12-05T08:00:00+1\"" };
        char json[256], err[600];
        struct run *r = NULL;

        for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
                snprintf(json, sizeof json, "{\"start_at\": %s, \"phases\": [{\"kind\": \"idle\", "
                         "\"duration\": \"1s\"}]}",
                         good[i].json);
                assert_int_equal(parse(json, &r, err, sizeof err), 0);
                if (r->start_at_ms != good[i].ms)
                        fail_msg("%s: %lld, want %lld", good[i].json, (long long) r->start_at_ms,
                                 (long long) good[i].ms);
                run_free(r);
        }
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                snprintf(json, sizeof json, "{\"start_at\": %s, \"phases\": [{\"kind\": \"idle\", "
                         "\"duration\": \"1s\"}]}",
                         bad[i]);
                assert_int_equal(parse(json, &r, err, sizeof err), -EINVAL);
                if (strncmp(err, "start_at: ", 10) != 0)
                        fail_msg("%s: \"%s\"", bad[i], err);
        }
}

static void test_argv_limit(void **state) {
        char json[2048], err[600];
        struct run *r = NULL;
        size_t len;

        /* 64 strings are fine, 65 are not */
        for (int n = 64; n <= 65; n++) {
                len = (size_t) snprintf(json, sizeof json, "{\"phases\": [{\"kind\": \"stress\", \"duration\": \"1m\", "
                                        "\"load\": {\"type\": \"command\", \"argv\": [\"true\"");
                for (int i = 1; i < n; i++)
                        len += (size_t) snprintf(json + len, sizeof json - len, ", \"a\"");
                snprintf(json + len, sizeof json - len, "]}}]}");
                int ret = parse(json, &r, err, sizeof err);
                if (n == 64) {
                        assert_int_equal(ret, 0);
                        assert_non_null(r->phases[0].command);
                        assert_null(r->phases[0].command[64]);
                        assert_ptr_equal(r->phases[0].stress.argv, r->phases[0].command);
                        run_free(r);
                } else {
                        assert_int_equal(ret, -EINVAL);
                        assert_string_equal(err, "phases[0].load.argv: 1 to 64 strings");
                }
        }
}

static void test_label_and_notes_limits(void **state) {
        char json[6000], label[600], notes[4200], err[600];
        struct run *r = NULL;

        memset(label, 'x', 127);
        label[127] = '\0';
        snprintf(json, sizeof json, "{\"label\": \"%s\", \"phases\": [" IDLE "]}", label);
        assert_int_equal(parse(json, &r, err, sizeof err), 0);
        assert_string_equal(r->label, label);
        run_free(r);
        strcat(label, "x");
        snprintf(json, sizeof json, "{\"label\": \"%s\", \"phases\": [" IDLE "]}", label);
        assert_int_equal(parse(json, &r, err, sizeof err), -EINVAL);
        assert_string_equal(err, "label: longer than 127 characters");

        /* characters, not bytes: 127 two-byte characters fit, 128 do not */
        label[0] = '\0';
        for (int i = 0; i < 127; i++)
                strcat(label, "\xc3\xa9");
        snprintf(json, sizeof json, "{\"label\": \"%s\", \"phases\": [" IDLE "]}", label);
        assert_int_equal(parse(json, &r, err, sizeof err), 0);
        assert_string_equal(r->label, label);
        run_free(r);
        strcat(label, "\xc3\xa9");
        snprintf(json, sizeof json, "{\"label\": \"%s\", \"phases\": [" IDLE "]}", label);
        assert_int_equal(parse(json, &r, err, sizeof err), -EINVAL);
        assert_string_equal(err, "label: longer than 127 characters");

        memset(notes, 'n', 4096);
        notes[4096] = '\0';
        snprintf(json, sizeof json, "{\"notes\": \"%s\", \"phases\": [" IDLE "]}", notes);
        assert_int_equal(parse(json, &r, err, sizeof err), 0);
        assert_int_equal(strlen(r->notes), 4096);
        run_free(r);
        strcat(notes, "n");
        snprintf(json, sizeof json, "{\"notes\": \"%s\", \"phases\": [" IDLE "]}", notes);
        assert_int_equal(parse(json, &r, err, sizeof err), -EINVAL);
        assert_string_equal(err, "notes: longer than 4096 characters");
}

static void test_defaults(void **state) {
        char err[600];
        struct run *r = NULL;

        assert_int_equal(parse("{\"phases\": [{\"kind\": \"idle\", \"until\": \"stable\"},"
                               " {\"kind\": \"stress\", \"until\": \"plateau\"},"
                               " {\"kind\": \"cooldown\", \"until\": \"baseline\"}]}", &r, err, sizeof err), 0);
        assert_int_equal(r->n_phases, 3);
        assert_string_equal(r->label, "");
        assert_string_equal(r->notes, "");
        assert_true(isnan(r->ambient_c));
        assert_true(isnan(r->safety_limit_c));
        assert_string_equal(r->sensor, "");     /* chosen at start: the hottest */
        /* until without max gets one, so no phase runs for ever; and a 5 min window */
        assert_int_equal(r->phases[0].max_ms, 30u * 60u * 1000u);
        assert_int_equal(r->phases[1].max_ms, 90u * 60u * 1000u);
        assert_true(r->phases[1].tolerance_c == 0);     /* ANALYSIS_PLATEAU_TOLERANCE_C */
        assert_int_equal(r->phases[2].max_ms, 30u * 60u * 1000u);
        for (size_t i = 0; i < 3; i++)
                assert_int_equal(r->phases[i].window_ms, 5u * 60u * 1000u);
        /* a stress phase without a load runs the cpu load, one worker per CPU */
        assert_false(r->phases[0].has_stress);
        assert_true(r->phases[1].has_stress);
        assert_int_equal(r->phases[1].stress.type, STRESS_CPU);
        assert_int_equal(r->phases[1].stress.workers, 0);
        assert_int_equal(r->phases[1].stress.duty_pct, 100);
        assert_false(r->phases[2].has_stress);
        run_free(r);
}

/* until: plateau takes a tolerance, default ANALYSIS_PLATEAU_TOLERANCE_C. */
static void test_plateau_tolerance(void **state) {
        char err[600];
        struct run *r = NULL;

        assert_int_equal(parse("{\"phases\": [{\"kind\": \"stress\", \"until\": \"plateau\", \"max\": \"20m\","
                               " \"tolerance\": 0.25}]}", &r, err, sizeof err), 0);
        assert_int_equal(r->phases[0].until, UNTIL_PLATEAU);
        assert_true(r->phases[0].tolerance_c == 0.25);
        assert_int_equal(r->phases[0].max_ms, 20u * 60u * 1000u);
        run_free(r);
}

static void test_every_field(void **state) {
        char err[600];
        struct run *r = NULL;

        assert_int_equal(parse("{\"label\": \"case A\", \"notes\": \"fan off\", \"ambient_c\": 22.5,"
                               " \"safety_limit_c\": 80, \"sensor\": \"hwmon:cpu_thermal/temp1\", \"phases\": ["
                               " {\"kind\": \"idle\", \"until\": \"stable\", \"min\": \"1m\", \"max\": \"10m\", \"window\": \"2m\"},"
                               " {\"kind\": \"stress\", \"duration\": \"1h30m\", \"load\": {\"type\": \"cpu\", \"workers\": 2,"
                               "   \"duty\": 50, \"method\": \"fma\"}},"
                               " {\"kind\": \"stress\", \"duration\": \"1m\", \"load\": {\"type\": \"memory\", \"size\": \"16M\", \"workers\": 1}},"
                               " {\"kind\": \"stress\", \"duration\": \"1m\", \"load\": {\"type\": \"io\", \"size\": \"8M\"}},"
                               " {\"kind\": \"stress\", \"duration\": \"1m\", \"load\": {\"type\": \"command\", \"argv\": [\"sh\", \"--cpu\", \"4\"]}},"
                               " {\"kind\": \"cooldown\", \"until\": \"baseline\", \"max\": \"20m\"}]}", &r, err, sizeof err), 0);
        assert_string_equal(r->label, "case A");
        assert_string_equal(r->notes, "fan off");
        assert_true(r->ambient_c == 22.5);
        assert_true(r->safety_limit_c == 80.0);
        assert_string_equal(r->sensor, "hwmon:cpu_thermal/temp1");
        assert_int_equal(r->n_phases, 6);
        assert_int_equal(r->phases[0].until, UNTIL_STABLE);
        assert_int_equal(r->phases[0].min_ms, 60000);
        assert_int_equal(r->phases[0].max_ms, 600000);
        assert_int_equal(r->phases[0].window_ms, 120000);
        assert_int_equal(r->phases[1].until, UNTIL_DURATION);
        assert_int_equal(r->phases[1].duration_ms, 5400000);
        assert_int_equal(r->phases[1].stress.workers, 2);
        assert_int_equal(r->phases[1].stress.duty_pct, 50);
        assert_int_equal(r->phases[1].stress.method, CPU_METHOD_FMA);
        assert_int_equal(r->phases[2].stress.type, STRESS_MEMORY);
        assert_int_equal(r->phases[2].stress.memory_bytes, 16u << 20);
        assert_int_equal(r->phases[3].stress.type, STRESS_IO);
        assert_int_equal(r->phases[3].stress.io_file_bytes, 8u << 20);
        assert_null(r->phases[3].stress.io_dir);        /* its directory is known at start */
        assert_int_equal(r->phases[4].stress.type, STRESS_COMMAND);
        assert_string_equal(r->phases[4].command[0], "sh");
        assert_string_equal(r->phases[4].command[2], "4");
        assert_null(r->phases[4].command[3]);
        assert_int_equal(r->phases[5].until, UNTIL_BASELINE);
        assert_int_equal(r->phases[5].max_ms, 1200000);
        run_free(r);
}

/* run.json written by run_to_json() reads back into the same document. Frees r. */
static void assert_round_trip(struct run *r) {
        char err[600];
        struct run *back = NULL;
        json_object *doc = run_to_json(r, false), *again;

        assert_int_equal(run_from_json(doc, &back, err, sizeof err), 0);
        again = run_to_json(back, false);
        assert_string_equal(json_object_to_json_string(again), json_object_to_json_string(doc));
        json_object_put(doc);
        json_object_put(again);
        run_free(back);
        run_free(r);
}

/* Every field of a run goes to run.json and comes back. */
static void test_json_round_trip(void **state) {
        char err[600];
        struct run *r = NULL;

        assert_int_equal(parse("{\"label\": \"rt\", \"ambient_c\": 21, \"phases\": ["
                               " {\"kind\": \"idle\", \"until\": \"stable\"},"
                               " {\"kind\": \"stress\", \"duration\": \"5m\", \"load\": {\"type\": \"command\", \"argv\": [\"/bin/sh\", \"b\"]}},"
                               " {\"kind\": \"stress\", \"duration\": \"5m\", \"load\": {\"type\": \"memory\", \"size\": \"8M\"}},"
                               " {\"kind\": \"cooldown\", \"duration\": \"1m\"}]}", &r, err, sizeof err), 0);
        r->id = 7;
        r->state = RUN_ABORTED;
        r->created_ms = 1700000000000;
        r->ended_ms = 1700000100000;
        r->phases[0].started_ms = 1700000000001;
        r->phases[0].ended_ms = 1700000060000;
        snprintf(r->phases[0].end_reason, sizeof r->phases[0].end_reason, "stable");
        r->phases[1].started_ms = 1700000060000;
        r->phases[1].ended_ms = 1700000100000;
        snprintf(r->phases[1].end_reason, sizeof r->phases[1].end_reason, "aborted");
        snprintf(r->abort_reason, sizeof r->abort_reason, "stopped on request");
        r->safety_limit_c = 85;
        snprintf(r->sensor, sizeof r->sensor, "thermal_zone0");
        snprintf(r->board.model, sizeof r->board.model, "Raspberry Pi 4 Model B Rev 1.4");
        r->board.cpus = 4;
        r->metrics.baseline_c = 40.25;
        r->metrics.plateau_c = 61.5;
        r->metrics.fit_model = ANALYSIS_MODEL_EXP2;
        snprintf(r->work_unit, sizeof r->work_unit, "ops");
        r->recording_ok = true;
        r->n_samples = 100;

        assert_round_trip(r);
}

static double metric_in_text(const char *text, const char *name) {
        json_object *doc = json_tokener_parse(text), *metrics, *v;
        double ret;

        assert_non_null(doc);
        assert_true(json_object_object_get_ex(doc, "metrics", &metrics));
        assert_true(json_object_object_get_ex(metrics, name, &v));
        ret = json_object_get_double(v);
        json_object_put(doc);
        return ret;
}

/* Metrics far outside any board's range (a run.json edited by hand) are
 * written back as numbers, not cut off mid-text. */
static void test_json_huge_metrics(void **state) {
        char err[600];
        struct run *r = NULL;
        json_object *doc;

        assert_int_equal(parse("{\"phases\": [{\"kind\": \"idle\", \"duration\": \"1m\"}]}",
                               &r, err, sizeof err), 0);
        r->id = 3;
        r->state = RUN_FINISHED;
        r->created_ms = 1700000000000;
        r->metrics.baseline_c = 1e300;
        r->metrics.plateau_c = -1.5e200;
        doc = run_to_json(r, false);    /* the text, not the object */
        assert_true(metric_in_text(json_object_to_json_string(doc), "baseline_c") == 1e300);
        assert_true(metric_in_text(json_object_to_json_string(doc), "plateau_c") == -1.5e200);
        json_object_put(doc);
        assert_round_trip(r);
}

static void test_json_refused(void **state) {
        static const char *const docs[] = {
                "[]",
                "{\"state\": \"finished\", \"phases\": [{\"kind\": \"idle\"}]}",
                "{\"id\": 0, \"state\": \"finished\", \"phases\": [{\"kind\": \"idle\"}]}",
                "{\"id\": 1, \"state\": \"done\", \"phases\": [{\"kind\": \"idle\"}]}",
                "{\"id\": 1, \"state\": \"finished\", \"phases\": []}",
                "{\"id\": 1, \"state\": \"finished\", \"phases\": [{\"kind\": \"nap\"}]}",
                "{\"id\": 1, \"state\": \"finished\", \"phases\": [{\"kind\": \"stress\", \"load\": {\"type\": \"gpu\"}}]}",
        };
        char err[600];
        struct run *r = NULL;

        for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
                json_object *doc = json_tokener_parse(docs[i]);
                assert_non_null(doc);
                err[0] = '\0';
                assert_int_equal(run_from_json(doc, &r, err, sizeof err), -EINVAL);
                assert_true(err[0] != '\0');
                json_object_put(doc);
        }
}

/* Text read back into fixed fields is cut between characters and made valid UTF-8. */
static void test_json_text_cut_between_characters(void **state) {
        char doc_text[2048], label[700] = "", err[600];
        struct run *r = NULL;

        for (int i = 0; i < 300; i++)
                strcat(label, "\xc3\xa9");                     /* 600 bytes of "é" */
        snprintf(doc_text, sizeof doc_text, "{\"id\": 1, \"state\": \"finished\", \"label\": \"%s\", "
                 "\"phases\": [{\"kind\": \"idle\"}]}", label);
        json_object *doc = json_tokener_parse(doc_text);
        assert_non_null(doc);
        assert_int_equal(run_from_json(doc, &r, err, sizeof err), 0);
        assert_int_equal(strlen(r->label), 510);                /* 255 whole characters */
        assert_int_equal(memcmp(r->label, label, 510), 0);
        run_free(r);
        json_object_put(doc);
}

struct duplicate_case {
        const char *json;
        const char *path;               /* where the first duplicate is; NULL for none */
};

static const struct duplicate_case duplicate_cases[] = {
        /* at each level of a run definition */
        { "{\"label\": \"a\", \"phases\": [" IDLE "], \"label\": \"b\"}", "label" },
        { PH("{\"kind\": \"idle\", \"duration\": \"1m\", \"kind\": \"stress\"}"), "phases[0].kind" },
        { PH(IDLE ", {\"kind\": \"stress\", \"duration\": \"1m\", \"load\": {\"type\": \"cpu\", "
             "\"workers\": 1, \"workers\": 2}}"), "phases[1].load.workers" },
        { PH("{\"kind\": \"stress\", \"duration\": \"1m\", \"load\": {\"type\": \"command\", "
             "\"argv\": [\"true\"], \"argv\": [\"false\"]}}"), "phases[0].load.argv" },
        { "{\"phases\": [" IDLE "], \"phases\": []}", "phases" },
        /* spelt differently, the same key to json-c */
        { "{\"label\": \"a\", \"\\u006cabel\": \"b\"}", "label" },
        { "{'label': \"a\", \"label\": \"b\"}", "label" },
        { "{\"a\\\"b\": 1, \"a\\u0022b\": 2}", "a\"b" },
        /* the first one, in containers nested in objects and arrays */
        { "{\"x\": 1, \"y\": {\"z\": 1, \"z\": 2}, \"x\": 2}", "y.z" },
        { "[{\"x\": [[{\"y\": 1, \"y\": 2}]]}]", "[0].x[0][0].y" },
        { "{\"a\": 1, \"b\": 2, \"a\": 3,}", "a" },
        { "{\"a\": 1, \"a\": 2} /* a comment cut short", "a" },
        /* none */
        { PH(IDLE "," IDLE), NULL },
        { "{\"a\": {\"k\": 1}, \"b\": {\"k\": 1}, \"k\": [{\"k\": 1}, {\"k\": 2}]}", NULL },
        { "{\"a\": \"a\", \"b\": [\"a\", \"a\"], \"c\": \"b\"}", NULL },
        { "{\"a\": \"}, \\\"a\\\": {\", \"b\": '\\\"a\": 1'}", NULL },
        { "{\"a\": 1 /* \"a\": 2, */, // \"a\": 3,\n \"b\": 2}", NULL },
        { "{\"Label\": 1, \"label\": 2, \"label \": 3}", NULL },
        { "{\"a\": 1} /* \"a\": 2", NULL },
        { "{\"a\": 1 /* **/ \"a\": 2 */}", NULL },      /* json-c: the comment goes on past the first star pair */
        { "{\"a\": 1} // \"a\": 2", NULL },
        { "{}", NULL },
        { "[]", NULL },
        { "\"label\"", NULL },
        { "{\"a\": {}, \"b\": [], \"c\": [{}, []]}", NULL },
};

/* json-c would keep the last of two equal keys: each is found, named by
 * the path the run definition's errors use. */
static void test_duplicate_keys(void **state) {
        char path[256];

        for (size_t i = 0; i < sizeof duplicate_cases / sizeof duplicate_cases[0]; i++) {
                const struct duplicate_case *c = &duplicate_cases[i];
                json_object *parsed = json_tokener_parse(c->json);
                int r;

                if (!parsed)
                        fail_msg("case %zu is not JSON json-c takes: %s", i, c->json);
                json_object_put(parsed);
                strcpy(path, "unset");
                r = json_find_duplicate_key(c->json, strlen(c->json), path, sizeof path);
                if (r != (c->path ? 1 : 0) || (c->path && strcmp(path, c->path) != 0))
                        fail_msg("case %zu %s: got %d \"%s\", want %s", i, c->json, r, path,
                                 c->path ? c->path : "none");
        }
}

/* A path longer than the buffer is cut, the answer stays; nesting as deep
 * as json-c takes is followed; a wide object is no problem. */
static void test_duplicate_keys_limits(void **state) {
        const char *dup = PH(IDLE ", {\"kind\": \"stress\", \"duration\": \"1m\", \"load\": "
                             "{\"type\": \"cpu\", \"workers\": 1, \"workers\": 2}}");
        char path[256], cut[8], deep[256] = "", want[256] = "", *wide;
        json_object *parsed;
        size_t n = 0;

        assert_int_equal(json_find_duplicate_key(dup, strlen(dup), cut, sizeof cut), 1);
        assert_string_equal(cut, "phases[");

        /* 30 arrays and an object: json-c's default depth, 32, refuses one more */
        for (int i = 0; i < 30; i++) {
                strcat(deep, "[");
                strcat(want, "[0]");
        }
        strcat(deep, "{\"a\": 1, \"a\": 2}");
        for (int i = 0; i < 30; i++)
                strcat(deep, "]");
        strcat(want, ".a");
        parsed = json_tokener_parse(deep);
        assert_non_null(parsed);
        json_object_put(parsed);
        assert_int_equal(json_find_duplicate_key(deep, strlen(deep), path, sizeof path), 1);
        assert_string_equal(path, want);

        wide = malloc(20000 * 24);
        assert_non_null(wide);
        n = (size_t) sprintf(wide, "{");
        for (int i = 0; i < 20000; i++)
                n += (size_t) sprintf(wide + n, "%s\"k%d\": %d", i ? ", " : "", i, i);
        strcpy(wide + n, "}");
        assert_int_equal(json_find_duplicate_key(wide, n + 1, path, sizeof path), 0);
        strcpy(wide + n, ", \"k19999\": 0}");
        assert_int_equal(json_find_duplicate_key(wide, strlen(wide), path, sizeof path), 1);
        assert_string_equal(path, "k19999");
        free(wide);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_bad_definitions),
                cmocka_unit_test(test_argv_limit),
                cmocka_unit_test(test_label_and_notes_limits),
                cmocka_unit_test(test_defaults),
                cmocka_unit_test(test_start_at),
                cmocka_unit_test(test_every_field),
                cmocka_unit_test(test_plateau_tolerance),
                cmocka_unit_test(test_json_round_trip),
                cmocka_unit_test(test_json_huge_metrics),
                cmocka_unit_test(test_json_refused),
                cmocka_unit_test(test_json_text_cut_between_characters),
                cmocka_unit_test(test_duplicate_keys),
                cmocka_unit_test(test_duplicate_keys_limits),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
