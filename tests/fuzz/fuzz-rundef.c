/* fuzz-rundef.c — libFuzzer target: run_parse() on any body, and a parsed definition through run.json and back;
 * the duplicate-key check on every body json-c takes. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json-util.h"
#include "run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct temp_sensor temps[2] = {
        { .id = "thermal_zone0", .ok = true, .temp_mc = 40000 },
        { .id = "hwmon:cpu_thermal/temp1", .ok = true, .temp_mc = 41000 },
};
static struct sensors board = { .temps = temps, .n_temps = 2 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct json_tokener *tok = json_tokener_new();
        json_object *def = tok ? json_tokener_parse_ex(tok, (const char *) data, (int) size) : NULL;
        size_t end = def ? json_tokener_get_parse_end(tok) : 0;
        struct run *r = NULL, *back = NULL;
        char err[600];
        int dup;

        json_tokener_free(tok);
        if (!def)
                return 0;
        /* what json-c took, the duplicate check follows to its end */
        dup = json_find_duplicate_key((const char *) data, end, err, sizeof err);
        if (dup != 0 && dup != 1 && dup != -ENOMEM)
                abort();
        if (run_parse(def, &board, &r, err, sizeof err) >= 0) {
                /* what was accepted is written and read back to the same document */
                json_object *doc = run_to_json(r, false), *again;
                r->id = 1;
                json_object_put(doc);
                doc = run_to_json(r, false);
                if (run_from_json(doc, &back, err, sizeof err) < 0)
                        abort();
                again = run_to_json(back, false);
                if (strcmp(json_object_to_json_string(doc), json_object_to_json_string(again)) != 0)
                        abort();
                json_object_put(again);
                json_object_put(doc);
                run_free(back);
                run_free(r);
        } else if (!err[0])
                abort();                /* every refusal says why */
        json_object_put(def);
        return 0;
}
