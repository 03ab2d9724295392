/* fuzz-import.c — libFuzzer target: a body of POST /api/v1/runs/import as runs_import() takes it (split,
 * parsed, checked, written), and what was accepted read back from disk as after a restart. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json-util.h"
#include "run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char state_dir[64];

/* Each accepted run is deleted once read back: at the end only the folders are left. */
static void state_dir_remove(void) {
        char runs[96];

        snprintf(runs, sizeof runs, "%s/runs", state_dir);
        (void) rmdir(runs);
        (void) rmdir(state_dir);
}

/* A scratch state directory, in memory where there is one. */
static void state_dir_make(void) {
        snprintf(state_dir, sizeof state_dir, "%s/fuzz-import-XXXXXX",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
        if (!mkdtemp(state_dir))
                abort();
        atexit(state_dir_remove);
}

/* The body as json-c takes it in runs_parse_body(): one value, nothing after, no duplicate key. */
static json_object *body_parse(const char *text, size_t len) {
        struct json_tokener *tok = json_tokener_new();
        json_object *doc = tok && len <= INT_MAX ? json_tokener_parse_ex(tok, text, (int) len) : NULL;
        char where[256];
        size_t end;

        if (!doc || json_tokener_get_error(tok) != json_tokener_success) {
                json_tokener_free(tok);
                json_object_put(doc);
                return NULL;
        }
        end = json_tokener_get_parse_end(tok);
        json_tokener_free(tok);
        end += strspn(text + end, " \t\r\n");
        if (end != len || json_find_duplicate_key(text, len, where, sizeof where) != 0) {
                json_object_put(doc);
                return NULL;
        }
        return doc;
}

/* What the import wrote reads back after a restart as the run it answered. */
static void check_read_back(const struct run *r) {
        struct run **list = NULL;
        size_t n = 0;
        unsigned max_id = 0;
        char warn[1024], err[600];
        json_object *a, *b;

        if (run_store_load_all(state_dir, &list, &n, &max_id, warn, sizeof warn) < 0 || n != 1)
                abort();
        a = run_to_json(r, false);
        b = run_to_json(list[0], false);
        if (strcmp(json_object_to_json_string(a), json_object_to_json_string(b)) != 0) {
                fprintf(stderr, "answered:  %s\nread back: %s\n", json_object_to_json_string(a),
                        json_object_to_json_string(b));
                abort();
        }
        json_object_put(a);
        json_object_put(b);
        run_free(list[0]);
        free(list);
        if (run_store_delete(state_dir, r->id, err, sizeof err) < 0)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *text, *rest = NULL, err[600] = "";
        const char *csv = NULL;
        size_t csv_len = 0, rest_len = 0;
        json_object *doc;
        struct run *r = NULL;
        int e;

        if (size > 1024 * 1024)
                return 0;
        if (!state_dir[0])
                state_dir_make();
        /* the body as the HTTP layer hands it over: NUL-terminated, changed in place */
        text = malloc(size + 1);
        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        e = run_file_split(text, size, &rest, &rest_len, &csv, &csv_len);
        doc = e < 0 ? NULL : rest ? body_parse(rest, rest_len) : body_parse(text, size);
        free(rest);
        if (doc) {
                e = run_file_import(doc, e > 0 ? csv : NULL, csv_len, state_dir, 1, &r, err, sizeof err);
                if (e >= 0) {
                        check_read_back(r);
                        run_free(r);
                } else if (!err[0])
                        abort();        /* every refusal says why */
                json_object_put(doc);
        }
        free(text);
        return 0;
}
