/* offload.h — one piece of work on a thread of its own, its completion back on the event loop. */
#pragma once

#include <systemd/sd-event.h>

/*
 * For what would hold the loop up: reading a file that may be large, or on
 * a slow card. work() runs on a new thread and may touch only its userdata;
 * then done() runs on the loop and takes the userdata over. A caller that no
 * longer wants the result cancels: done() is not called, and free_fn()
 * frees the userdata, at once when work() has returned, else on the thread
 * when it does (work() is never interrupted: a read stuck on a dead file
 * system keeps its thread, not the loop). Every signal is blocked on the
 * thread.
 */
struct offload;
typedef void (*offload_fn_t)(void *userdata);

int offload_start(sd_event *event, offload_fn_t work, offload_fn_t done, offload_fn_t free_fn, void *userdata,
                  struct offload **ret);
void offload_cancel(struct offload *o);
