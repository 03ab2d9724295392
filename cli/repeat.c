/* repeat.c — heatcurvectl run --repeat --wait: a series followed run by run, asking for each remount. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"

#define SERIES_POLL_MS 500              /* between two looks at a waiting series */

static void series_sleep(void) {
        struct timespec ts = { 0, SERIES_POLL_MS * 1000000L };

        if (!cli_interrupted)
                nanosleep(&ts, NULL);
}

/* Asks for the remount on stderr, reads the Enter on stdin, then tells the
 * daemon to go on. */
static int series_remount(const struct client *c, json_object *run) {
        unsigned id = (unsigned) json_object_get_int64(json_get(run, "id"));
        long long next = (long long) json_object_get_int64(json_get(run, "repeat_index")) + 1;
        char line[256], path[64];

        fprintf(stderr, "Run %u done. Remount the case, then press Enter to start run %lld of %lld: ", id, next,
                (long long) json_object_get_int64(json_get(run, "repeat_count")));
        fflush(stderr);
        if (!fgets(line, sizeof line, stdin))
                return cli_fail("no answer on stdin; \"heatcurvectl continue %u\" goes on, \"heatcurvectl stop "
                                "%u\" ends the series", id, id), 1;
        snprintf(path, sizeof path, "/api/v1/runs/%u/continue", id);
        return client_call(c->url, c, "POST", path, NULL, NULL, NULL) < 0 ? 1 : 0;
}

/* The id of the run after id in its series, once it started; 0 when the
 * series ended there; -1 after an error. */
static long long series_next(const struct client *c, unsigned id) {
        bool said = false;
        char path[64];

        snprintf(path, sizeof path, "/api/v1/runs/%u", id);
        while (!cli_interrupted) {
                json_object *run, *next, *waiting;
                long long ret = -2;

                if (client_get_json(c->url, c, path, &run) < 0)
                        return -1;
                next = json_get(run, "repeat_next");
                waiting = json_get(run, "repeat_waiting");
                if (!json_is_null(next))
                        ret = (long long) json_object_get_int64(next);
                else if (json_is_null(waiting))
                        ret = 0;
                else if (strcmp(json_object_get_string(waiting), "remount") == 0)
                        ret = series_remount(c, run) ? -1 : -2;
                else if (!said && !c->json) {
                        printf("run %u done; the next starts when the board is back at its idle baseline\n", id);
                        fflush(stdout);
                        said = true;
                }
                json_object_put(run);
                if (ret != -2)
                        return ret;
                series_sleep();
        }
        return -1;
}

int watch_series(const struct client *c, unsigned id, unsigned flags, unsigned *ids, size_t *n, size_t max) {
        for (;;) {
                int r = watch_run(c, id, 0, flags);
                long long next;

                if (ids && *n < max)
                        ids[(*n)++] = id;
                if (r != 0)
                        return r;
                next = series_next(c, id);
                if (next < 0)
                        return cli_interrupted ? (cli_fail("interrupted; the series of run %u goes on", id),
                                                  EXIT_INTERRUPTED) : 1;
                if (next == 0)
                        return 0;
                if (!c->json)
                        printf("run %lld started\n", next);
                id = (unsigned) next;
        }
}
