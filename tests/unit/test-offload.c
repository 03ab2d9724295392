/* test-offload.c — unit tests for work on a thread completed on the loop: done, cancelled while running or once finished. */
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "offload.h"

struct job {
        int in;                         /* fd work() reads one byte from, -1 for none */
        int result;
        atomic_int done, freed;
};

static void job_work(void *userdata) {
        struct job *j = userdata;
        char b = 0;

        /* no cmocka assertion here: it must not jump off this thread */
        if (j->in >= 0 && read(j->in, &b, 1) != 1)
                b = -42;
        j->result = 42 + b;
}

static void job_done(void *userdata) {
        atomic_fetch_add(&((struct job *) userdata)->done, 1);
}

static void job_free(void *userdata) {
        atomic_fetch_add(&((struct job *) userdata)->freed, 1);
}

/* Runs the loop until *flag is set, for at most 10 s. */
static void loop_until(sd_event *e, atomic_int *flag) {
        for (int i = 0; i < 1000 && !atomic_load(flag); i++)
                assert_true(sd_event_run(e, 10000) >= 0);
}

static void wait_until(atomic_int *flag) {
        for (int i = 0; i < 1000 && !atomic_load(flag); i++)
                nanosleep(&(struct timespec) { 0, 10000000 }, NULL);
}

static void test_done_on_the_loop(void **state) {
        struct job j = { .in = -1 };
        struct offload *o;
        sd_event *e;

        assert_int_equal(sd_event_new(&e), 0);
        assert_int_equal(offload_start(e, job_work, job_done, job_free, &j, &o), 0);
        loop_until(e, &j.done);
        assert_int_equal(atomic_load(&j.done), 1);
        assert_int_equal(atomic_load(&j.freed), 0);
        assert_int_equal(j.result, 42);
        /* nothing more comes */
        assert_true(sd_event_run(e, 50000) >= 0);
        assert_int_equal(atomic_load(&j.done), 1);
        sd_event_unref(e);
}

/* Cancelled while work() waits: the loop goes on, and the thread frees the
 * job when work() returns; done() never runs. */
static void test_cancelled_while_running(void **state) {
        struct job j = {};
        struct offload *o;
        sd_event *e;
        int p[2];

        assert_int_equal(pipe(p), 0);
        j.in = p[0];
        assert_int_equal(sd_event_new(&e), 0);
        assert_int_equal(offload_start(e, job_work, job_done, job_free, &j, &o), 0);
        assert_true(sd_event_run(e, 20000) >= 0);
        offload_cancel(o);
        assert_int_equal(atomic_load(&j.freed), 0);
        assert_int_equal(write(p[1], "\1", 1), 1);
        wait_until(&j.freed);
        assert_int_equal(atomic_load(&j.freed), 1);
        assert_int_equal(j.result, 43);
        assert_true(sd_event_run(e, 50000) >= 0);
        assert_int_equal(atomic_load(&j.done), 0);
        close(p[0]);
        close(p[1]);
        sd_event_unref(e);
}

/* Cancelled after work() returned but before the loop took its completion:
 * freed at once, on the loop; done() never runs. */
static void test_cancelled_once_finished(void **state) {
        struct job j = { .in = -1 };
        struct pollfd pfd;
        struct offload *o;
        sd_event *e;

        assert_int_equal(sd_event_new(&e), 0);
        assert_int_equal(offload_start(e, job_work, job_done, job_free, &j, &o), 0);
        pfd = (struct pollfd) { .fd = sd_event_get_fd(e), .events = POLLIN };
        assert_int_equal(poll(&pfd, 1, 10000), 1);      /* the completion is signalled */
        offload_cancel(o);
        assert_int_equal(atomic_load(&j.freed), 1);
        assert_true(sd_event_run(e, 50000) >= 0);
        assert_int_equal(atomic_load(&j.done), 0);
        assert_int_equal(atomic_load(&j.freed), 1);
        sd_event_unref(e);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_done_on_the_loop),
                cmocka_unit_test(test_cancelled_while_running),
                cmocka_unit_test(test_cancelled_once_finished),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
