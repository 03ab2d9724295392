/* test-run.c — unit tests for the run engine driven by synthetic ticks: phases are timed on the monotonic clock. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "run.h"

#define WALL0 1700000000000LL           /* Unix ms at the start */
#define MONO0 123456789LL               /* CLOCK_MONOTONIC ms at the start */

static struct temp_sensor temps[1];
static struct sensors board = { .temps = temps, .n_temps = 1 };
static int ended;

static void on_ended(struct run_host *host, struct run *r) {
        ended++;
}

static struct run *start_run(const char *json, struct run_host *host, char *dir) {
        struct run_settings set = { dir, "", 0 };
        json_object *def = json_tokener_parse(json);
        struct run *r = NULL;
        char err[600];

        snprintf(temps[0].id, sizeof temps[0].id, "thermal_zone0");
        temps[0].ok = true;
        temps[0].temp_mc = 40000;
        assert_non_null(def);
        assert_int_equal(run_parse(def, &board, &r, err, sizeof err), 0);
        json_object_put(def);
        *host = (struct run_host) { NULL, &board, on_ended };
        ended = 0;
        assert_int_equal(run_start(r, host, &set, 1, err, sizeof err), 0);
        return r;
}

static void remove_tree(const char *dir) {
        char cmd[600];

        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        assert_int_equal(system(cmd), 0);
}

/* A board without an RTC steps its clock by NTP after boot: 120 s back, then
 * an hour forward. A 60 s phase still lasts 60 s, and the series' time too. */
static void test_wall_clock_steps_do_not_time_phases(void **state) {
        char dir[] = "/tmp/test-run-XXXXXX";
        struct run_host host;
        struct run *r;
        int64_t wall_offset = 0;

        assert_non_null(mkdtemp(dir));
        r = start_run("{\"phases\": [{\"kind\": \"idle\", \"duration\": \"60s\"}]}", &host, dir);
        /* the engine started on the real clocks: tick from its own monotonic start */
        int64_t mono0 = r->created_mono_ms, wall0 = r->created_ms;
        for (int s = 1; s <= 59; s++) {
                if (s == 5)
                        wall_offset -= 120000;
                if (s == 20)
                        wall_offset += 3600000;
                run_tick(r, wall0 + s * 1000 + wall_offset, mono0 + s * 1000);
                if (r->state != RUN_RUNNING)
                        fail_msg("the phase ended after %d s", s);
        }
        run_tick(r, wall0 + 60000 + wall_offset, mono0 + 60000);
        assert_int_equal(r->state, RUN_FINISHED);
        assert_int_equal(ended, 1);
        assert_string_equal(r->phases[0].end_reason, "duration");
        assert_int_equal(r->clock_steps, 2);
        /* the labels follow the wall clock as it was */
        assert_int_equal(r->ended_ms, wall0 + 60000 + wall_offset);
        run_free(r);
        remove_tree(dir);
}

/* Samples keep a steady time axis through the steps. */
static void test_series_time_is_monotonic(void **state) {
        char dir[] = "/tmp/test-run-XXXXXX";
        struct run_host host;
        struct run *r;

        assert_non_null(mkdtemp(dir));
        r = start_run("{\"phases\": [{\"kind\": \"idle\", \"duration\": \"1h\"}]}", &host, dir);
        int64_t mono0 = r->created_mono_ms, wall0 = r->created_ms;
        for (int s = 1; s <= 10; s++)
                run_tick(r, wall0 + s * 1000 - (s >= 4 ? 300000 : 0), mono0 + s * 1000);
        assert_int_equal(r->series.n, 10);
        for (size_t i = 0; i < r->series.n; i++)
                assert_true(fabs(r->series.t_s[i] - (double) (i + 1)) < 1e-9);
        assert_int_equal(r->n_samples, 10);
        run_free(r);
        remove_tree(dir);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_wall_clock_steps_do_not_time_phases),
                cmocka_unit_test(test_series_time_is_monotonic),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
