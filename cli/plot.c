/* plot.c — heatcurvectl plot: a run, or runs compared across daemons, drawn locally as SVG by the daemon's own plot code. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "plot-data.h"
#include "plot.h"

#define OPT_RISE 0x100
#define OPT_OUTPUT 0x101

struct plot_args {
        bool rise;
        const char *output;             /* NULL: stdout */
};

static int plot_on_option(int o, const char *arg, void *userdata) {
        struct plot_args *a = userdata;

        if (o == OPT_RISE)
                a->rise = true;
        else
                a->output = arg;
        return 0;
}

/* A run reference: "3" on --url, or "http://host:port/3". base gets the
 * daemon, origin "host:port" for a URL ("" for --url). */
static int run_ref_parse(const struct client *c, const char *arg, char *base, size_t size, char *origin,
                         size_t origin_size, unsigned *id) {
        const char *slash = strrchr(arg, '/'), *scheme = strstr(arg, "://");

        origin[0] = '\0';
        if (!scheme) {
                if (!parse_id(arg, id))
                        return usage("plot: \"%s\" is neither a run id nor URL/ID", arg);
                snprintf(base, size, "%s", c->url);
                return 0;
        }
        if (!parse_id(slash + 1, id) || slash <= scheme + 2)
                return usage("plot: \"%s\" does not end in /ID (e.g. http://odroid2:8080/3)", arg);
        if ((size_t) (slash - arg) >= size)
                return usage("plot: the URL \"%s\" is too long", arg);
        memcpy(base, arg, (size_t) (slash - arg));
        base[slash - arg] = '\0';
        snprintf(origin, origin_size, "%s", scheme + 3);
        origin[strcspn(origin, "/")] = '\0';
        return 0;
}

/* The run document, its samples and the sensors of its daemon, as the
 * daemon draws them: samples.csv read as it comes, at most limit samples
 * kept, as the daemon keeps them for a plot of as many runs. */
static int plot_fetch(const struct client *c, const char *arg, size_t limit, struct plot_data *d, char *origin,
                      size_t origin_size) {
        json_object *run = NULL, *sensors = NULL;
        char base[sizeof c->url], path[96], err[256];
        struct plot_data_reader rd;
        unsigned id;
        int r;

        if ((r = run_ref_parse(c, arg, base, sizeof base, origin, origin_size, &id)) != 0)
                return r;
        snprintf(path, sizeof path, "/api/v1/runs/%u", id);
        r = client_get_json(base, c, path, &run);
        if (r == 0)
                r = client_get_json(base, c, "/api/v1/sensors", &sensors);
        if (r == 0 && plot_data_from_doc(d, run, err, sizeof err) < 0)
                r = cli_fail("%s/api/v1/runs/%u: %s", base, id, err);
        else if (r == 0) {
                snprintf(path, sizeof path, "/api/v1/runs/%u/samples?format=csv", id);
                plot_data_reader_init(&rd, d, limit);
                r = client_get_lines(base, c, path, plot_data_read_row, &rd);
                if (r == 0 && rd.fixed == 0)
                        r = cli_fail("%s%s: the answer is not a samples.csv (its first line is no header of one)",
                                     base, path);
        }
        if (r == 0) {
                plot_data_levels_from_sensors(d, sensors);
                plot_data_finish(d);
        }
        json_object_put(run);
        json_object_put(sensors);
        return r < 0 ? 1 : r;
}

static int plot_write(const char *output, const char *svg, size_t len) {
        FILE *f = output ? fopen(output, "we") : stdout;

        if (!f)
                return cli_fail("cannot create %s: %s", output, strerror(errno)), 1;
        if (fwrite(svg, 1, len, f) != len || (output ? fclose(f) : fflush(f)) != 0)
                return cli_fail("writing %s: %s", output ? output : "the plot", strerror(errno)), 1;
        return 0;
}

/* -o FILE is taken out before the common parser, which knows long options only. */
static int plot_take_short_output(int argc, char **argv, char **out, struct plot_args *a) {
        int n = 0;

        for (int i = 0; i < argc; i++) {
                if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
                        a->output = argv[++i];
                else if (strncmp(argv[i], "-o", 2) == 0 && argv[i][2])
                        a->output = argv[i] + 2;
                else if (strcmp(argv[i], "--") == 0)
                        while (i < argc)
                                out[n++] = argv[i++];
                else
                        out[n++] = argv[i];
        }
        out[n] = NULL;
        return n;
}

int cmd_plot(struct client *c, int argc, char **argv) {
        static const struct option opts[] = {
                { "rise", no_argument, NULL, OPT_RISE }, { "output", required_argument, NULL, OPT_OUTPUT }, {},
        };
        struct plot_data d[PLOT_COMPARE_MAX] = {};
        struct plot_curve curves[PLOT_COMPARE_MAX];
        char origin[PLOT_COMPARE_MAX][128], *svg = NULL, **args = calloc((size_t) argc + 1, sizeof *args);
        struct plot_args a = {};
        size_t n = 0, len = 0;
        int first, r = 0, e, nargs;

        if (!args)
                return cli_fail("out of memory"), 1;
        nargs = plot_take_short_output(argc, argv, args, &a);
        first = cli_parse(c, nargs, args, opts, plot_on_option, &a, false, &r);
        if (first >= 0 && first >= nargs)
                r = usage("plot needs a run id (or several, or URL/ID, to compare)");
        else if (first >= 0 && nargs - first > PLOT_COMPARE_MAX)
                r = usage("plot: at most %d runs in one plot", PLOT_COMPARE_MAX);
        for (int i = first; first >= 0 && r == 0 && i < nargs; i++, n++)
                r = plot_fetch(c, args[i], PLOT_SAMPLES_MAX / (size_t) (nargs - first), &d[n], origin[n],
                               sizeof origin[n]);
        if (first >= 0 && r == 0) {
                if (n == 1 && !a.rise) {
                        e = plot_run_svg(&d[0].run, PLOT_WIDTH_DEFAULT, PLOT_HEIGHT_DEFAULT, &svg, &len);
                } else {
                        for (size_t i = 0; i < n; i++)
                                plot_data_curve(&d[i], origin[i][0] ? origin[i] : NULL, &curves[i]);
                        e = plot_compare_svg(curves, n, a.rise, PLOT_WIDTH_DEFAULT, PLOT_HEIGHT_DEFAULT, &svg, &len);
                }
                r = e < 0 ? (cli_fail("cannot draw the plot: %s", strerror(-e)), 1) : plot_write(a.output, svg, len);
        }
        for (size_t i = 0; i < PLOT_COMPARE_MAX; i++)
                plot_data_free(&d[i]);
        free(svg);
        free(args);
        return r;
}
