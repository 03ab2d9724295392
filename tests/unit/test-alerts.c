/* test-alerts.c — unit tests for alert rules: thresholds, hysteresis, for, lost, the default rule, reloads. */
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

#include "alerts.h"
#include "config.h"
#include "fan.h"

#define T0 1700000000000LL              /* Unix ms of the first sample */

static struct temp_sensor temps[3];
static struct sensors board;
static uint64_t ticks;

/* thermal_zone0 with a passive trip at 70 and a critical one at 90; an
 * hwmon chip with only a crit limit at 100; a zone with no trips at all. */
static void board_reset(void) {
        memset(temps, 0, sizeof temps);
        snprintf(temps[0].id, sizeof temps[0].id, "thermal_zone0");
        temps[0].n_trips = 2;
        temps[0].trips[0] = (struct trip_point) { 0, "passive", true, 70000, false, 0 };
        temps[0].trips[1] = (struct trip_point) { 1, "critical", true, 90000, false, 0 };
        snprintf(temps[1].id, sizeof temps[1].id, "hwmon:nvme/temp1");
        temps[1].source = TEMP_SOURCE_HWMON;
        temps[1].has_crit = true;
        temps[1].crit_mc = 100000;
        snprintf(temps[2].id, sizeof temps[2].id, "thermal_zone1");
        for (size_t i = 0; i < 3; i++) {
                temps[i].ok = true;
                temps[i].temp_mc = 40000;
        }
        board = (struct sensors) { .temps = temps, .n_temps = 3 };
        ticks = 0;
}

static void set_temp(size_t i, double c) {
        temps[i].ok = true;
        temps[i].temp_mc = (int32_t) lround(c * 1000.0);
}

/* One sample at second s. */
static void sample(struct alerts *a, int64_t s) {
        struct snapshot snap = { &board, T0 + s * 1000, 5000 + s * 1000, ++ticks, -1 };

        alerts_on_sample(a, &snap);
}

static struct alerts *alerts_from(const char *const *lines) {
        struct alerts_host host = { NULL, NULL, NULL, NULL };
        struct alert_config ac = {};
        struct alerts *a = NULL;
        char err[256];

        for (size_t i = 0; lines[i]; i += 3) {
                int r = alert_config_set(&ac, lines[i], lines[i + 1], lines[i + 2], err, sizeof err);
                if (r < 0)
                        fail_msg("[%s] %s = %s: %s", lines[i], lines[i + 1], lines[i + 2], err);
        }
        assert_int_equal(alert_config_validate(&ac, &(unsigned) { 0 }, err, sizeof err), 0);
        assert_int_equal(alerts_new(&host, &ac, &a, err, sizeof err), 0);
        alerts_on_sensors(a, &board);
        return a;
}

static enum alert_state state_of(const struct alerts *a, size_t i) {
        struct alert_status st;

        alerts_status(a, i, &st);
        return st.state;
}

/* 0.5 C of noise around a level neither fires early nor flaps. */
static void test_hysteresis_and_for_with_noise(void **state) {
        static const char *const cfg[] = {
                "alert soc", "sensor", "thermal_zone0", "alert soc", "warn", "70",
                "alert soc", "hysteresis", "2", "alert soc", "for", "3s", NULL,
        };
        struct alerts *a;
        int64_t s = 0;

        board_reset();
        a = alerts_from(cfg);
        /* around 70: never above it for 3 s in a row (ending below it) */
        for (int i = 0; i < 60; i++) {
                set_temp(0, i % 2 ? 69.75 : 70.25);
                sample(a, s++);
        }
        assert_int_equal(state_of(a, 0), ALERT_OK);
        assert_int_equal(alerts_log_count(a), 0);
        /* 71 +- 0.5: fires once, 3 s after it began */
        int64_t began = s;
        for (int i = 0; i < 20; i++) {
                set_temp(0, 71.0 + (i % 2 ? 0.5 : -0.5));
                sample(a, s++);
                if (s - 1 - began < 3)
                        assert_int_equal(state_of(a, 0), ALERT_OK);
        }
        assert_int_equal(state_of(a, 0), ALERT_WARN);
        assert_int_equal(alerts_log_count(a), 1);
        assert_int_equal(alerts_log_at(a, 0)->time_ms, T0 + (began + 3) * 1000);
        assert_true(alerts_log_at(a, 0)->threshold_c == 70.0);
        assert_string_equal(alerts_log_at(a, 0)->sensor, "thermal_zone0");
        /* down to 69 +- 0.5: within the hysteresis, still warn, no flapping */
        for (int i = 0; i < 60; i++) {
                set_temp(0, 69.0 + (i % 2 ? 0.5 : -0.5));
                sample(a, s++);
        }
        assert_int_equal(state_of(a, 0), ALERT_WARN);
        assert_int_equal(alerts_log_count(a), 1);
        /* below 68: clears at once */
        set_temp(0, 67.9);
        sample(a, s++);
        assert_int_equal(state_of(a, 0), ALERT_OK);
        assert_int_equal(alerts_log_count(a), 2);
        assert_int_equal(alerts_log_at(a, 1)->previous, ALERT_WARN);
        alerts_free(a);
}

/* Without hysteresis a value at the level, or around it, does not flap the
 * rule: it goes down once the lower reading held its dwell (5 s by default). */
static void test_dwell_without_hysteresis(void **state) {
        static const char *const cfg[] = {
                "alert soc", "sensor", "thermal_zone0", "alert soc", "warn", "60",
                "alert soc", "hysteresis", "0", NULL,
        };
        static const char *const flapping[] = {
                "alert soc", "sensor", "thermal_zone0", "alert soc", "warn", "60",
                "alert soc", "hysteresis", "0", "alert soc", "dwell", "0s", NULL,
        };
        struct alerts *a;
        int64_t s = 0;

        board_reset();
        a = alerts_from(cfg);
        set_temp(0, 60.0);
        for (int i = 0; i < 20; i++)
                sample(a, s++);
        assert_int_equal(alerts_log_count(a), 1);
        for (int i = 0; i < 60; i++) {
                set_temp(0, i % 2 ? 60.25 : 59.75);
                sample(a, s++);
        }
        assert_int_equal(state_of(a, 0), ALERT_WARN);
        assert_int_equal(alerts_log_count(a), 1);
        /* below it for good: ok once it held 5 s */
        set_temp(0, 59.0);
        int64_t below = s;
        while (state_of(a, 0) == ALERT_WARN && s < below + 20)
                sample(a, s++);
        assert_int_equal(s - 1 - below, 5);
        assert_int_equal(alerts_log_count(a), 2);
        alerts_free(a);

        /* dwell = 0s: each sample across the level is a transition, as asked */
        board_reset();
        a = alerts_from(flapping);
        for (int i = 0; i < 10; i++) {
                set_temp(0, i % 2 ? 59.75 : 60.25);
                sample(a, s++);
        }
        assert_int_equal(alerts_log_count(a), 10);
        alerts_free(a);
}

static void test_levels_up_and_down(void **state) {
        static const char *const cfg[] = {
                "alert soc", "sensor", "thermal_zone*", "alert soc", "warn", "60",
                "alert soc", "crit", "80", NULL,
        };
        struct alerts *a;

        board_reset();
        a = alerts_from(cfg);
        set_temp(2, 85);                /* straight to crit, on the second zone */
        sample(a, 0);
        assert_int_equal(state_of(a, 0), ALERT_CRIT);
        assert_string_equal(alerts_log_at(a, 0)->sensor, "thermal_zone1");
        set_temp(2, 77.5);              /* below crit - hysteresis: down to warn */
        sample(a, 1);
        assert_int_equal(state_of(a, 0), ALERT_WARN);
        assert_true(alerts_log_at(a, 1)->threshold_c == 80.0);  /* the level it left */
        set_temp(2, 40);
        sample(a, 2);
        assert_int_equal(state_of(a, 0), ALERT_OK);
        assert_int_equal(alerts_log_count(a), 3);
        alerts_free(a);
}

/* trip:TYPE+-N is resolved on each sensor's own trips; a sensor without one cannot reach that level. */
static void test_trip_relative(void **state) {
        static const char *const cfg[] = {
                "alert t", "sensor", "*", "alert t", "warn", "trip:passive-5",
                "alert t", "crit", "trip:critical-10", NULL,
        };
        struct alerts *a;
        struct alert_status st;

        board_reset();
        a = alerts_from(cfg);
        set_temp(0, 66);                /* above 70 - 5 */
        sample(a, 0);
        alerts_status(a, 0, &st);
        assert_int_equal(st.state, ALERT_WARN);
        assert_true(st.warn_c == 65.0 && st.crit_c == 80.0);
        set_temp(0, 40);
        set_temp(1, 91);                /* hwmon: crit limit 100 - 10; no passive trip */
        sample(a, 1);
        assert_int_equal(state_of(a, 0), ALERT_CRIT);
        assert_string_equal(alerts_log_at(a, 1)->sensor, "hwmon:nvme/temp1");
        set_temp(1, 40);
        set_temp(2, 150);               /* no trips: neither level exists there */
        sample(a, 2);
        assert_int_equal(state_of(a, 0), ALERT_OK);
        alerts_free(a);
}

static void test_default_rule(void **state) {
        static const char *const none[] = { NULL };
        struct alerts *a;
        struct alert_status st;

        board_reset();
        a = alerts_from(none);
        assert_int_equal(alerts_count(a), 1);
        set_temp(0, 70);                /* the passive trip */
        sample(a, 0);
        alerts_status(a, 0, &st);
        assert_string_equal(st.name, "default");
        assert_int_equal(st.state, ALERT_WARN);
        assert_true(st.warn_c == 70.0 && st.crit_c == 85.0);     /* critical 90 - 5 */
        set_temp(0, 40);
        set_temp(2, 76);                /* no trips: 75 / 85 */
        sample(a, 1);
        alerts_status(a, 0, &st);
        assert_int_equal(st.state, ALERT_WARN);
        assert_string_equal(st.value_sensor, "thermal_zone0");  /* what triggered it */
        set_temp(2, 86);
        sample(a, 2);
        assert_int_equal(state_of(a, 0), ALERT_CRIT);
        alerts_free(a);
}

static void test_lost(void **state) {
        static const char *const cfg[] = {
                "alert a", "sensor", "thermal_zone0", "alert a", "warn", "60", "alert a", "lost", "yes",
                "alert b", "sensor", "thermal_zone0", "alert b", "warn", "60", NULL,
        };
        struct alerts *a;

        board_reset();
        a = alerts_from(cfg);
        set_temp(0, 65);
        sample(a, 0);
        assert_int_equal(state_of(a, 0), ALERT_WARN);
        assert_int_equal(state_of(a, 1), ALERT_WARN);
        temps[0].ok = false;
        sample(a, 1);
        assert_int_equal(state_of(a, 0), ALERT_LOST);
        assert_int_equal(state_of(a, 1), ALERT_WARN);   /* lost = no: the state stays */
        assert_true(isnan(alerts_log_at(a, 2)->value_c));
        set_temp(0, 40);
        sample(a, 2);
        assert_int_equal(state_of(a, 0), ALERT_OK);
        assert_int_equal(state_of(a, 1), ALERT_OK);
        alerts_free(a);
}

static void test_hottest(void **state) {
        static const char *const cfg[] = { "alert h", "sensor", "hottest", "alert h", "warn", "50", NULL };
        struct alerts *a;

        board_reset();
        a = alerts_from(cfg);
        set_temp(1, 55);
        sample(a, 0);
        assert_int_equal(state_of(a, 0), ALERT_WARN);
        assert_string_equal(alerts_log_at(a, 0)->sensor, "hwmon:nvme/temp1");
        alerts_free(a);
}

/* A re-probe brings new sensors: the rules follow their ids and their trips,
 * whether the new set is announced (on_sensors) or only sampled. */
static void test_new_sensors_after_reprobe(void **state) {
        static const char *const cfg[] = {
                "alert z", "sensor", "thermal_zone1", "alert z", "warn", "trip:passive", NULL,
        };
        struct temp_sensor again[2];
        struct sensors reprobed;
        struct alerts *a;

        board_reset();
        a = alerts_from(cfg);
        set_temp(2, 150);               /* thermal_zone1 has no passive trip yet */
        sample(a, 0);
        assert_int_equal(state_of(a, 0), ALERT_OK);

        /* the same zone, at another index and now with a passive trip at 50 */
        memset(again, 0, sizeof again);
        snprintf(again[0].id, sizeof again[0].id, "thermal_zone1");
        again[0].n_trips = 1;
        again[0].trips[0] = (struct trip_point) { 0, "passive", true, 50000, false, 0 };
        again[0].ok = true;
        again[0].temp_mc = 55000;
        snprintf(again[1].id, sizeof again[1].id, "thermal_zone0");
        again[1].ok = true;
        again[1].temp_mc = 40000;
        reprobed = (struct sensors) { .temps = again, .n_temps = 2 };
        alerts_on_sensors(a, &reprobed);
        struct snapshot snap = { &reprobed, T0 + 1000, 6000, ++ticks, -1 };
        alerts_on_sample(a, &snap);
        assert_int_equal(state_of(a, 0), ALERT_WARN);
        assert_string_equal(alerts_log_at(a, 0)->sensor, "thermal_zone1");

        /* back to the first set, sampled without on_sensors: its own trips again */
        set_temp(2, 55);
        sample(a, 2);
        assert_int_equal(state_of(a, 0), ALERT_OK);
        alerts_free(a);
}

/* A reload keeps the state of a rule whose settings did not change, and starts a changed one afresh. */
static void test_reload_keeps_unchanged(void **state) {
        static const char *const cfg[] = {
                "alert a", "sensor", "thermal_zone0", "alert a", "warn", "60",
                "alert b", "sensor", "thermal_zone0", "alert b", "warn", "61", NULL,
        };
        struct alert_config ac = {};
        struct alerts *a;
        char err[256];

        board_reset();
        a = alerts_from(cfg);
        set_temp(0, 65);
        sample(a, 0);
        assert_int_equal(state_of(a, 0), ALERT_WARN);
        assert_int_equal(state_of(a, 1), ALERT_WARN);
        assert_int_equal(alert_config_set(&ac, "alert a", "sensor", "thermal_zone0", err, sizeof err), 0);
        assert_int_equal(alert_config_set(&ac, "alert a", "warn", "60", err, sizeof err), 0);
        assert_int_equal(alert_config_set(&ac, "alert b", "sensor", "thermal_zone0", err, sizeof err), 0);
        assert_int_equal(alert_config_set(&ac, "alert b", "warn", "62", err, sizeof err), 0);
        assert_int_equal(alerts_configure(a, &ac, err, sizeof err), 0);
        assert_int_equal(state_of(a, 0), ALERT_WARN);
        assert_int_equal(state_of(a, 1), ALERT_OK);
        sample(a, 1);
        assert_int_equal(state_of(a, 1), ALERT_WARN);
        alerts_free(a);
}

/* The log is a bounded ring: the oldest transitions go. */
/* "for" is measured on the monotonic clock: a wall clock step (NTP after
 * boot on a board without an RTC) neither fires a level early nor holds it back. */
static void test_for_ignores_wall_clock_steps(void **state) {
        static const char *const cfg[] = {
                "alert soc", "sensor", "thermal_zone0", "alert soc", "warn", "60", "alert soc", "for", "10s", NULL,
        };
        struct alerts *a;

        board_reset();
        a = alerts_from(cfg);
        set_temp(0, 65);
        for (int i = 0; i < 5; i++) {
                /* the wall clock jumps an hour forward at the second sample */
                struct snapshot snap = { &board, T0 + i * 1000 + (i >= 1 ? 3600000 : 0), 5000 + i * 1000, ++ticks, -1 };
                alerts_on_sample(a, &snap);
        }
        assert_int_equal(state_of(a, 0), ALERT_OK);
        for (int i = 5; i <= 10; i++) {
                struct snapshot snap = { &board, T0 + 3600000 + i * 1000, 5000 + i * 1000, ++ticks, -1 };
                alerts_on_sample(a, &snap);
        }
        assert_int_equal(state_of(a, 0), ALERT_WARN);
        assert_int_equal(alerts_log_at(a, 0)->time_ms, T0 + 3600000 + 10000);  /* labelled with the wall clock */
        alerts_free(a);
}

static void test_log_bounded(void **state) {
        static const char *const cfg[] = { "alert a", "sensor", "thermal_zone0", "alert a", "warn", "60", NULL };
        struct alerts *a;

        board_reset();
        a = alerts_from(cfg);
        for (int i = 0; i < 2 * ALERTS_LOG_MAX + 3; i++) {
                set_temp(0, i % 2 ? 40 : 65);
                sample(a, i);
        }
        assert_int_equal(alerts_log_count(a), ALERTS_LOG_MAX);
        assert_int_equal(alerts_log_at(a, ALERTS_LOG_MAX - 1)->time_ms, T0 + (2 * ALERTS_LOG_MAX + 2) * 1000);
        assert_int_equal(alerts_log_at(a, 0)->time_ms, T0 + (ALERTS_LOG_MAX + 3) * 1000);
        alerts_free(a);
}

/* On at 60, off at 50 but not before it ran 30 s; 0.5 C of noise at either
 * threshold switches nothing back and forth; no sensor: on, the safe side. */
static void test_fan_hysteresis_and_min_on(void **state) {
        struct fan_config cfg = { .name = "case", .sensor = "thermal_zone0", .on_c = 60, .off_c = 50,
                                  .min_on_ms = 30000, .gpio = "gpiochip0:1" };
        struct fan f;
        int64_t s = 0;

        board_reset();
        fan_init(&f, &cfg, T0);
        for (; s < 100; s++) {          /* a heat-up from 40 to 70 C with noise */
                set_temp(0, 40 + 0.3 * (double) s + (s % 2 ? 0.5 : -0.5));
                fan_eval(&f, &board, NULL, T0 + s * 1000, s * 1000);
        }
        assert_true(f.on);
        assert_int_equal(f.switches, 1);
        /* cools at once below off: still on until 30 s after it was switched on */
        int64_t on_at = f.on_since_mono_ms;
        set_temp(0, 45);
        for (; s * 1000 < on_at + 30000; s++) {
                fan_eval(&f, &board, NULL, T0 + s * 1000, s * 1000);
                assert_true(f.on);
        }
        fan_eval(&f, &board, NULL, T0 + s * 1000, s * 1000);
        assert_false(f.on);
        assert_int_equal(f.switches, 2);
        /* around 55 +- 0.5, between off and on: it stays off */
        for (int i = 0; i < 50; i++, s++) {
                set_temp(0, 55 + (i % 2 ? 0.5 : -0.5));
                fan_eval(&f, &board, NULL, T0 + s * 1000, s * 1000);
        }
        assert_false(f.on);
        assert_int_equal(f.switches, 2);
        temps[0].ok = false;
        assert_true(fan_eval(&f, &board, NULL, T0 + s * 1000, s * 1000));
        assert_true(f.on);
        assert_true(isnan(f.value_c));
}

/* A fan bound to the sensors once decides as one that matches its pattern
 * at every sample: the hottest answering match, never another sensor. */
static void test_fan_bound_as_matched(void **state) {
        struct fan_config cfg = { .name = "case", .sensor = "thermal_zone*", .on_c = 60, .off_c = 50,
                                  .gpio = "gpiochip0:1" };
        struct fan bound, matched;
        bool m[3];

        board_reset();
        fan_init(&bound, &cfg, T0);
        fan_init(&matched, &cfg, T0);
        fan_bind(&bound, &board, m);
        assert_true(m[0]);
        assert_false(m[1]);             /* hwmon:nvme/temp1 */
        assert_true(m[2]);
        for (int64_t s = 0; s < 200; s++) {
                set_temp(0, 45 + (double) (s % 37));
                set_temp(1, 95);        /* hottest of all, and never the fan's */
                set_temp(2, 40 + (double) ((s * 7) % 31));
                temps[2].ok = s % 11 != 0;
                assert_int_equal(fan_eval(&bound, &board, m, T0 + s * 1000, s * 1000),
                                 fan_eval(&matched, &board, NULL, T0 + s * 1000, s * 1000));
                assert_int_equal(bound.on, matched.on);
                assert_string_equal(bound.value_sensor, matched.value_sensor);
                assert_string_not_equal(bound.value_sensor, "hwmon:nvme/temp1");
        }
        assert_true(bound.switches > 2);
}

/* Through the alerts: the fans are bound again when the sensors change,
 * also when the set keeps its address and its size (a re-probe). */
static void test_fan_follows_sensor_change(void **state) {
        static const char *const cfg[] = { "fan case", "sensor", "thermal_zone1", "fan case", "on", "60",
                                           "fan case", "off", "50", "fan case", "min_on", "1s",
                                           "fan case", "gpio", "gpiochip0:1", NULL };
        struct alerts *a;

        board_reset();
        a = alerts_from(cfg);
        set_temp(2, 70);                /* thermal_zone1, third on this board */
        sample(a, 0);
        assert_int_equal(alerts_fans_on(a), 1);
        /* thermal_zone1 is now first, and cool; the third is another zone, hot */
        snprintf(temps[0].id, sizeof temps[0].id, "thermal_zone1");
        snprintf(temps[2].id, sizeof temps[2].id, "thermal_zone0");
        set_temp(0, 30);
        set_temp(2, 80);
        alerts_on_sensors(a, &board);
        for (int64_t s = 1; s < 5; s++)
                sample(a, s);
        assert_int_equal(alerts_fans_on(a), 0);
        alerts_free(a);
}

/* The Pi's supply is an alert source of its own: the default rules gain
 * one where the board reports it, and a rule may watch it by name. */
static void test_undervoltage_source(void **state) {
        static const char *const none[] = { NULL };
        static const char *const cfg[] = { "alert psu", "sensor", "undervoltage", "alert psu", "for", "2s", NULL };
        struct alerts *a;
        struct alert_status st;

        board_reset();
        board.power = (struct power_info) { .present = true, .fd = -1, .ok = true, .source = "rpi_volt" };
        a = alerts_from(none);
        assert_int_equal(alerts_count(a), 2);
        alerts_status(a, 1, &st);
        assert_string_equal(st.name, "undervoltage");
        board.power.undervoltage = true;
        sample(a, 0);
        alerts_status(a, 1, &st);
        assert_int_equal(st.state, ALERT_WARN);
        assert_string_equal(alerts_log_at(a, 0)->sensor, "undervoltage");
        assert_true(isnan(alerts_log_at(a, 0)->value_c));
        board.power.undervoltage = false;
        sample(a, 1);
        alerts_status(a, 1, &st);
        assert_int_equal(st.state, ALERT_OK);
        alerts_free(a);

        /* a rule of one's own, with "for"; the firmware's bit 0 counts too */
        a = alerts_from(cfg);
        assert_int_equal(alerts_count(a), 1);
        board.firmware = (struct firmware_info) { .present = true, .fd = -1, .ok = true, .throttled = 1 };
        sample(a, 10);
        sample(a, 11);
        assert_int_equal(state_of(a, 0), ALERT_OK);
        sample(a, 12);
        assert_int_equal(state_of(a, 0), ALERT_WARN);
        alerts_free(a);
        board.power = (struct power_info) { .fd = -1 };
        board.firmware = (struct firmware_info) { .fd = -1 };
}

/* What the actions show of a rule: a line that cannot be had is named and
 * the rule works on without it (and is retried by a reload); no hook runs
 * without an event loop. */
static void test_actions_status(void **state) {
        static const char *const cfg[] = { "alert soc", "sensor", "thermal_zone0", "alert soc", "warn", "70",
                                           "alert soc", "gpio", "gpiochip99:3", "alert soc", "exec", "/bin/true",
                                           NULL };
        static const char *const none[] = { NULL };
        struct alert_config ac = {};
        struct alert_status st;
        struct alerts *a;
        char err[256];

        board_reset();
        a = alerts_from(cfg);
        alerts_status(a, 0, &st);
        assert_string_equal(st.gpio, "gpiochip99:3");
        assert_true(strncmp(st.gpio_error, "gpiochip99:3: ", 14) == 0);
        assert_false(st.gpio_driven);
        assert_false(st.hook_running);
        set_temp(0, 75);
        sample(a, 0);
        alerts_status(a, 0, &st);
        assert_int_equal(st.state, ALERT_WARN);
        assert_int_equal(alerts_log_count(a), 1);
        assert_false(st.hook_running);
        assert_true(strncmp(st.gpio_error, "gpiochip99:3: ", 14) == 0);
        for (size_t i = 0; cfg[i]; i += 3)
                assert_int_equal(alert_config_set(&ac, cfg[i], cfg[i + 1], cfg[i + 2], err, sizeof err), 0);
        assert_int_equal(alert_config_validate(&ac, &(unsigned) { 0 }, err, sizeof err), 0);
        assert_int_equal(alerts_configure(a, &ac, err, sizeof err), 0);
        alerts_status(a, 0, &st);
        assert_int_equal(st.state, ALERT_WARN);         /* kept */
        assert_true(strncmp(st.gpio_error, "gpiochip99:3: ", 14) == 0);
        alerts_free(a);

        a = alerts_from(none);
        alerts_status(a, 0, &st);
        assert_string_equal(st.gpio, "");
        assert_string_equal(st.gpio_error, "");
        assert_false(st.gpio_driven);
        assert_false(st.hook_running);
        alerts_free(a);
}

static json_object *json_at(json_object *root, const char *list, size_t i, const char *key) {
        json_object *l, *v = NULL;

        assert_true(json_object_object_get_ex(root, list, &l));
        assert_true(json_object_object_get_ex(json_object_array_get_idx(l, i), key, &v));
        return v;
}

/* A line that cannot be had: the rule in warn and the fan switched on say,
 * beside why, that their line is not driven; one without a line says null. */
static void test_undriven_lines_reported(void **state) {
        static const char *const cfg[] = { "alert soc", "sensor", "thermal_zone0", "alert soc", "warn", "70",
                                           "alert soc", "gpio", "gpiochip99:3",
                                           "alert bare", "sensor", "thermal_zone0", "alert bare", "warn", "70",
                                           "fan case", "sensor", "thermal_zone0", "fan case", "on", "60",
                                           "fan case", "off", "50", "fan case", "gpio", "gpiochip99:4", NULL };
        struct alert_status st;
        struct alerts *a;
        json_object *j;

        board_reset();
        a = alerts_from(cfg);
        set_temp(0, 75);
        sample(a, 0);
        alerts_status(a, 0, &st);
        assert_int_equal(st.state, ALERT_WARN);
        assert_false(st.gpio_driven);
        assert_int_equal(alerts_fans_on(a), 1);
        j = alerts_to_json(a);
        assert_int_equal(json_object_get_type(json_at(j, "rules", 0, "gpio_driven")), json_type_boolean);
        assert_false(json_object_get_boolean(json_at(j, "rules", 0, "gpio_driven")));
        assert_null(json_at(j, "rules", 1, "gpio_driven"));
        assert_true(json_object_get_boolean(json_at(j, "fans", 0, "on")));
        assert_int_equal(json_object_get_type(json_at(j, "fans", 0, "gpio_driven")), json_type_boolean);
        assert_false(json_object_get_boolean(json_at(j, "fans", 0, "gpio_driven")));
        assert_true(strncmp(json_object_get_string(json_at(j, "fans", 0, "gpio_error")), "gpiochip99:4: ", 14) == 0);
        json_object_put(j);
        alerts_free(a);
}

/* forecast = 5m: an exponential rise towards 85 C (tau 60 s) from 45 C, whole
 * degrees, is told before it reaches warn at 70 C, with an eta within 25 %
 * of the real crossing; the state does not flap while the curve is in the
 * forecast, goes on to warn, and back to ok when the load is gone. */
static void test_forecast(void **state) {
        static const char *const cfg[] = {
                "alert soc", "sensor", "thermal_zone0", "alert soc", "warn", "70",
                "alert soc", "crit", "90", "alert soc", "forecast", "5m", NULL,
        };
        struct alerts *a;
        struct alert_status st;
        int64_t s = 0, entered = -1, crossed = -1;
        double eta = NAN;

        board_reset();
        a = alerts_from(cfg);
        for (; s < 60; s++) {                   /* idle, flat */
                set_temp(0, 45.0 + (s % 3 == 0 ? 0.4 : 0));
                sample(a, s);
        }
        assert_int_equal(state_of(a, 0), ALERT_OK);
        for (int64_t k = 0; k < 300; k++, s++) {
                set_temp(0, round(85.0 - 40.0 * exp(-(double) k / 60.0)));
                sample(a, s);
                alerts_status(a, 0, &st);
                if (entered < 0 && st.state == ALERT_FORECAST) {
                        entered = k;
                        eta = st.eta_s;
                        assert_true(st.eta_level_c == 70.0);
                }
                if (crossed < 0 && st.state == ALERT_WARN)
                        crossed = k;
        }
        double truth = -60.0 * log(15.0 / 40.0);        /* 58.8 s after the load began */
        print_message("# forecast entered %lld s into the rise, eta %.0f s; warn at %lld s (true %.1f)\n",
                      (long long) entered, eta, (long long) crossed, truth);
        assert_true(entered >= 0 && entered < truth);
        assert_true(fabs((double) (crossed - entered) - eta) <= 0.25 * eta);
        /* ok -> forecast -> warn, nothing else */
        assert_int_equal(alerts_log_count(a), 2);
        assert_int_equal(alerts_log_at(a, 0)->state, ALERT_FORECAST);
        assert_true(alerts_log_at(a, 0)->eta_s == eta);
        assert_true(alerts_log_at(a, 0)->threshold_c == 70.0);
        assert_int_equal(alerts_log_at(a, 1)->state, ALERT_WARN);
        assert_true(isnan(alerts_log_at(a, 1)->eta_s));
        for (int64_t k = 0; k < 300; k++, s++) {        /* the load stops: it cools */
                set_temp(0, round(45.0 + 40.0 * exp(-(double) k / 60.0)));
                sample(a, s);
        }
        assert_int_equal(state_of(a, 0), ALERT_OK);
        assert_int_equal(alerts_log_count(a), 3);
        alerts_free(a);
}

/* A rise that settles below warn never enters forecast; the state is
 * left once the forecast no longer reaches warn less the hysteresis. */
static void test_forecast_settles_below(void **state) {
        static const char *const cfg[] = {
                "alert soc", "sensor", "thermal_zone0", "alert soc", "warn", "70",
                "alert soc", "forecast", "10m", NULL,
        };
        struct alerts *a;
        int64_t s = 0;

        board_reset();
        a = alerts_from(cfg);
        for (int64_t k = 0; k < 400; k++, s++) {
                set_temp(0, round(64.0 - 20.0 * exp(-(double) k / 40.0)));
                sample(a, s);
        }
        assert_int_equal(alerts_log_count(a), 0);
        alerts_free(a);
}

/* The load stops before warn: the forecast no longer crosses, and the rule
 * goes back to ok once, without flapping on the way. */
static void test_forecast_left_when_the_load_stops(void **state) {
        static const char *const cfg[] = {
                "alert soc", "sensor", "thermal_zone0", "alert soc", "warn", "70",
                "alert soc", "forecast", "5m", NULL,
        };
        struct alerts *a;
        int64_t s = 0;
        double at_stop;

        board_reset();
        a = alerts_from(cfg);
        for (int64_t k = 0; k < 45; k++, s++) {
                set_temp(0, round(2 * (85.0 - 40.0 * exp(-(double) k / 60.0))) / 2);
                sample(a, s);
        }
        assert_int_equal(state_of(a, 0), ALERT_FORECAST);
        at_stop = temps[0].temp_mc / 1000.0;
        for (int64_t k = 0; k < 240; k++, s++) {
                set_temp(0, round(2 * (45.0 + (at_stop - 45.0) * exp(-(double) k / 60.0))) / 2);
                sample(a, s);
        }
        assert_int_equal(state_of(a, 0), ALERT_OK);
        assert_int_equal(alerts_log_count(a), 2);
        assert_int_equal(alerts_log_at(a, 1)->previous, ALERT_FORECAST);
        assert_int_equal(alerts_log_at(a, 1)->state, ALERT_OK);
        assert_true(alerts_log_at(a, 1)->time_ms - alerts_log_at(a, 0)->time_ms < 120000);
        alerts_free(a);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_hysteresis_and_for_with_noise),
                cmocka_unit_test(test_dwell_without_hysteresis),
                cmocka_unit_test(test_levels_up_and_down),
                cmocka_unit_test(test_trip_relative),
                cmocka_unit_test(test_default_rule),
                cmocka_unit_test(test_lost),
                cmocka_unit_test(test_hottest),
                cmocka_unit_test(test_new_sensors_after_reprobe),
                cmocka_unit_test(test_reload_keeps_unchanged),
                cmocka_unit_test(test_for_ignores_wall_clock_steps),
                cmocka_unit_test(test_log_bounded),
                cmocka_unit_test(test_fan_hysteresis_and_min_on),
                cmocka_unit_test(test_fan_bound_as_matched),
                cmocka_unit_test(test_fan_follows_sensor_change),
                cmocka_unit_test(test_undervoltage_source),
                cmocka_unit_test(test_actions_status),
                cmocka_unit_test(test_undriven_lines_reported),
                cmocka_unit_test(test_forecast),
                cmocka_unit_test(test_forecast_settles_below),
                cmocka_unit_test(test_forecast_left_when_the_load_stops),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
