/* reader.c — the slow-sensor thread: temperatures whose reads take longer than a threshold are read here, off the tick. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sensors-internal.h"
#include "sysfs-util.h"

/*
 * One thread per sensors object, started when the first slow sensor is
 * found. The tick never waits for it: it takes whatever results the thread
 * published since the previous tick and asks for a new round; a chip slower
 * than the interval simply delivers every other tick (its last_good_ms
 * says when). The thread owns the fds of its sensors and a copy of their
 * unit state; the tick owns struct temp_sensor. All signals are blocked in
 * the thread: they belong to the main loop.
 */

struct reader_slot {
        bool active;                    /* read by the thread */
        int fd;                         /* the sensor's kept fd (owned by the temp_sensor) */
        bool quirk, fixed;              /* unit state, the thread's copy */
        bool have;                      /* a result waits for the tick */
        int r;                          /* 0 or -errno of the last read */
        int32_t mc;                     /* millidegrees C */
        uint32_t read_us;               /* microseconds the read took */
        int64_t asked_ms;               /* tick time (Unix ms) of the round it answers */
};

struct sensors_reader {
        pthread_t thread;
        pthread_mutex_t lock;
        pthread_cond_t wake;
        bool quit, asked;
        int64_t asked_ms;               /* Unix ms of the tick that asked for the current round */
        bool check_unlinked;            /* fixture tree: fstat after each read */
        size_t n;                       /* slots: one per temperature of the sensors object */
        struct reader_slot slots[];
};

static uint64_t reader_now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* One read outside the lock; the slot's unit state is only touched here. */
static void reader_read_one(struct sensors_reader *rd, size_t i, int fd, bool *quirk, bool *fixed,
                            int *ret_r, int32_t *ret_mc, uint32_t *ret_us) {
        uint64_t start = reader_now_ns(), us;
        char buf[32];
        ssize_t n;

        n = sysfs_pread(fd, buf, sizeof(buf));
        if (n >= 0 && rd->check_unlinked && sysfs_check_linked(fd) < 0)
                n = -ENOENT;
        us = (reader_now_ns() - start) / 1000;
        *ret_us = us > UINT32_MAX ? UINT32_MAX : (uint32_t) us;
        *ret_r = n < 0 ? (int) n : sensors_parse_temp_sticky(buf, ret_mc, quirk, fixed);
        (void) i;
}

static void *reader_main(void *arg) {
        struct sensors_reader *rd = arg;

        pthread_mutex_lock(&rd->lock);
        for (;;) {
                int64_t asked_ms;

                while (!rd->asked && !rd->quit)
                        pthread_cond_wait(&rd->wake, &rd->lock);
                if (rd->quit)
                        break;
                rd->asked = false;
                asked_ms = rd->asked_ms;
                for (size_t i = 0; i < rd->n && !rd->quit; i++) {
                        struct reader_slot *sl = &rd->slots[i];
                        bool quirk = sl->quirk, fixed = sl->fixed;
                        uint32_t us;
                        int32_t mc = 0;
                        int fd = sl->fd, r;

                        if (!sl->active)
                                continue;
                        pthread_mutex_unlock(&rd->lock);
                        reader_read_one(rd, i, fd, &quirk, &fixed, &r, &mc, &us);
                        pthread_mutex_lock(&rd->lock);
                        sl->quirk = quirk;
                        sl->fixed = fixed;
                        sl->r = r;
                        sl->mc = mc;
                        sl->read_us = us;
                        sl->asked_ms = asked_ms;
                        sl->have = true;
                }
        }
        pthread_mutex_unlock(&rd->lock);
        return NULL;
}

static int reader_start(struct sensors *s) {
        struct sensors_reader *rd;
        sigset_t all, old;
        int r;

        rd = calloc(1, sizeof(*rd) + s->n_temps * sizeof(rd->slots[0]));
        if (!rd)
                return -ENOMEM;
        rd->n = s->n_temps;
        rd->check_unlinked = s->check_unlinked;
        pthread_mutex_init(&rd->lock, NULL);
        pthread_cond_init(&rd->wake, NULL);
        /* The thread starts with every signal blocked, whatever the caller's mask. */
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        r = pthread_create(&rd->thread, NULL, reader_main, rd);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (r != 0) {
                pthread_cond_destroy(&rd->wake);
                pthread_mutex_destroy(&rd->lock);
                free(rd);
                return -r;
        }
        s->reader = rd;
        return 0;
}

int reader_add(struct sensors *s, struct temp_sensor *t) {
        struct sensors_reader *rd;
        size_t i = (size_t) (t - s->temps);
        int r;

        if (!s->reader && (r = reader_start(s)) < 0)
                return r;
        rd = s->reader;
        pthread_mutex_lock(&rd->lock);
        rd->slots[i] = (struct reader_slot) {
                .active = true, .fd = t->fd, .quirk = t->unit_quirk, .fixed = t->unit_fixed,
        };
        pthread_mutex_unlock(&rd->lock);
        t->slow = true;
        return 0;
}

int reader_tick(struct sensors *s, int64_t now_ms) {
        struct sensors_reader *rd = s->reader;
        int failed = 0;

        if (!rd)
                return 0;
        pthread_mutex_lock(&rd->lock);
        for (size_t i = 0; i < rd->n; i++) {
                struct reader_slot *sl = &rd->slots[i];
                struct temp_sensor *t = &s->temps[i];

                if (!sl->active)
                        continue;
                if (sl->have) {
                        sl->have = false;
                        t->unit_quirk = sl->quirk;
                        t->unit_fixed = sl->fixed;
                        t->read_us = sl->read_us;
                        if (t->read_us > t->read_us_max)
                                t->read_us_max = t->read_us;
                        t->ok = sl->r == 0;
                        t->error = -sl->r;
                        if (sl->r == 0) {
                                t->temp_mc = sl->mc;
                                t->last_good_ms = sl->asked_ms;
                        }
                        sensors_note_error(s, sl->r);
                }
                failed += !t->ok;
        }
        /* Asked during a round, the thread starts the next one right after it. */
        rd->asked = true;
        rd->asked_ms = now_ms;
        pthread_cond_signal(&rd->wake);
        pthread_mutex_unlock(&rd->lock);
        return failed;
}

void reader_stop(struct sensors *s) {
        struct sensors_reader *rd = s->reader;

        if (!rd)
                return;
        pthread_mutex_lock(&rd->lock);
        rd->quit = true;
        pthread_cond_signal(&rd->wake);
        pthread_mutex_unlock(&rd->lock);
        pthread_join(rd->thread, NULL);         /* waits for a read under way, at most one chip's latency */
        pthread_cond_destroy(&rd->wake);
        pthread_mutex_destroy(&rd->lock);
        free(rd);
        s->reader = NULL;
}
