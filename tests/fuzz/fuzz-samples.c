/* fuzz-samples.c — libFuzzer target: what recovery reads after a crash and heatcurvectl plot reads off any daemon: samples.csv rows and run.json documents. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot-data.h"
#include "run.h"
#include "samples-csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct rows {
        size_t fixed, n;
};

static int row(void *userdata, char *line, bool header) {
        struct samples_row r;
        struct rows *rows = userdata;

        if (header)
                rows->fixed = samples_header_fixed(line);
        else if (samples_parse_row(line, rows->fixed, &r) >= 0)
                rows->n++;
        return 0;
}

/* The samples as the API streams them: always one valid JSON document,
 * whatever the file holds. Takes f. */
static void samples_json_check(FILE *f) {
        struct samples_json *j;
        char buf[97], *doc = NULL;      /* an odd size: pieces end anywhere */
        size_t len = 0;
        ssize_t n;

        if (samples_json_new(f, &j) < 0) {
                fclose(f);
                return;
        }
        while ((n = samples_json_read(j, buf, sizeof buf)) > 0) {
                char *p = realloc(doc, len + (size_t) n + 1);
                if (!p)
                        abort();
                doc = p;
                memcpy(doc + len, buf, (size_t) n);
                len += (size_t) n;
        }
        samples_json_free(j);
        if (n < 0 || !doc)
                abort();
        struct json_tokener *tok = json_tokener_new();
        json_object *o = json_tokener_parse_ex(tok, doc, (int) len);
        if (!o || json_tokener_get_error(tok) != json_tokener_success || json_tokener_get_parse_end(tok) != len)
                abort();
        json_object_put(o);
        json_tokener_free(tok);
        free(doc);
}

/* The samples as heatcurvectl plot keeps them (a small limit, so that it
 * thins): never more than the limit; once finished, time moving forward,
 * and drawn. */
static void samples_plot_check(FILE *f) {
        struct plot_data d = { .safety_limit_c = NAN };
        char *svg = NULL;
        size_t len;

        plot_data_read_file(&d, f, 16);
        if (d.n > 16)
                abort();
        plot_data_finish(&d);
        for (size_t i = 1; i < d.n; i++)
                if (!(d.t_s[i] > d.t_s[i - 1]))
                        abort();
        if (plot_run_svg(&d.run, 320, 240, &svg, &len) >= 0 && (!svg || !len))
                abort();
        free(svg);
        plot_data_free(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        FILE *f = fmemopen((void *) data, size, "r");
        struct rows rows = { 0, 0 };
        int64_t complete;
        json_object *doc;
        struct run *r = NULL;
        char err[600];

        if (f) {
                /* a torn or NUL-filled tail ends the file; never a read outside it */
                samples_read(f, row, &rows);
                complete = samples_complete_length(f);
                if (complete < 0 || (uint64_t) complete > size)
                        abort();
                rewind(f);
                samples_plot_check(f);
                rewind(f);
                samples_json_check(f);
        }
        struct json_tokener *tok = json_tokener_new();  /* the input as a damaged run.json */
        doc = tok ? json_tokener_parse_ex(tok, (const char *) data, (int) size) : NULL;
        json_tokener_free(tok);
        if (doc && run_from_json(doc, &r, err, sizeof err) >= 0) {
                json_object_put(run_to_json(r, false));
                run_free(r);
        }
        json_object_put(doc);
        return 0;
}
