/* offload.c — one piece of work on a thread of its own, its completion back on the event loop. */
#include "offload.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* What runs here (reading and parsing a file, fitting and drawing a plot)
 * keeps its data on the heap: its deepest frames take a few kB. */
#define OFFLOAD_STACK (256 * 1024)

struct offload {
        pthread_mutex_t lock;
        bool finished;                  /* work() returned: the thread no longer touches this */
        bool cancelled;                 /* the loop gave it up: the thread frees it all */
        int efd;                        /* eventfd the thread signals the loop through */
        sd_event_source *source;
        offload_fn_t work, done, free_fn;
        void *userdata;
};

static void offload_destroy(struct offload *o) {
        pthread_mutex_destroy(&o->lock);
        close(o->efd);
        free(o);
}

static void *offload_main(void *arg) {
        struct offload *o = arg;
        bool cancelled;

        o->work(o->userdata);
        pthread_mutex_lock(&o->lock);
        cancelled = o->cancelled;
        if (!cancelled) {
                /* under the lock: once it is released, the loop may free o */
                (void) write(o->efd, &(uint64_t) { 1 }, sizeof(uint64_t));
                o->finished = true;
        }
        pthread_mutex_unlock(&o->lock);
        if (cancelled) {
                o->free_fn(o->userdata);
                offload_destroy(o);
        }
        return NULL;
}

static int offload_on_done(sd_event_source *es, int fd, uint32_t revents, void *userdata) {
        struct offload *o = userdata;
        offload_fn_t done = o->done;
        void *data = o->userdata;

        /* finished is set with the eventfd's write, under the lock */
        pthread_mutex_lock(&o->lock);
        pthread_mutex_unlock(&o->lock);
        sd_event_source_disable_unref(o->source);
        offload_destroy(o);
        done(data);
        return 0;
}

int offload_start(sd_event *event, offload_fn_t work, offload_fn_t done, offload_fn_t free_fn, void *userdata,
                  struct offload **ret) {
        struct offload *o = calloc(1, sizeof *o);
        pthread_attr_t attr;
        pthread_t thread;
        sigset_t all, old;
        int r;

        if (!o)
                return -ENOMEM;
        *o = (struct offload) { .work = work, .done = done, .free_fn = free_fn, .userdata = userdata };
        o->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (o->efd < 0) {
                r = -errno;
                free(o);
                return r;
        }
        r = sd_event_add_io(event, &o->source, o->efd, EPOLLIN, offload_on_done, o);
        if (r < 0) {
                close(o->efd);
                free(o);
                return r;
        }
        pthread_mutex_init(&o->lock, NULL);
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, OFFLOAD_STACK);
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        r = -pthread_create(&thread, &attr, offload_main, o);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        pthread_attr_destroy(&attr);
        if (r < 0) {
                sd_event_source_disable_unref(o->source);
                offload_destroy(o);
                return r;
        }
        *ret = o;
        return 0;
}

void offload_cancel(struct offload *o) {
        bool finished;

        if (!o)
                return;
        sd_event_source_disable_unref(o->source);
        o->source = NULL;
        pthread_mutex_lock(&o->lock);
        finished = o->finished;
        o->cancelled = true;
        pthread_mutex_unlock(&o->lock);
        if (finished) {
                o->free_fn(o->userdata);
                offload_destroy(o);
        }
}
