/* analysis-corpus.c — coverage and width of the plateau interval on generated multi-exponential curves, when until: plateau stops, and the check's cost per phase length. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis.h"
#include "analysis-corpus.h"

#define PROTOCOL_S      5400            /* a fixed 90-minute stress phase at 1 Hz */
#define MAX_N           54000

static double t_buf[MAX_N], y_buf[MAX_N];

static int compare_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

static double median(double *v, size_t n) {
        if (n == 0)
                return NAN;
        qsort(v, n, sizeof(double), compare_double);
        return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

/* Coverage of one class (n_exp, quantum) at every cut. */
struct cell {
        size_t fits, covered, finite, covered_tight, tight;
        size_t old_covered, old_tight, old_covered_tight;       /* analysis_fit_auto's own interval */
        double *width;
};

static void coverage_class(unsigned n_exp, size_t qi, unsigned curves, struct cell cells[CORPUS_CUTS]) {
        for (unsigned seed = 0; seed < curves; seed++) {
                struct corpus_curve c;
                corpus_curve_make(&c, n_exp, corpus_quanta[qi], seed);
                size_t n = (size_t) (3 * corpus_slow_tau(&c)) + 1;
                corpus_samples(&c, t_buf, y_buf, n);
                for (size_t k = 0; k < CORPUS_CUTS; k++) {
                        struct analysis_fit f;
                        size_t m = (size_t) (corpus_cuts[k] * corpus_slow_tau(&c)) + 1;
                        struct cell *e = &cells[k];
                        if (m < 30)
                                m = 30;
                        if (analysis_fit_plateau(t_buf, y_buf, m, &f) < 0)
                                f.ci95_c = INFINITY, f.t_inf_c = NAN;
                        double err = fabs(f.t_inf_c - corpus_plateau(&c));
                        bool cov = !(err > f.ci95_c);
                        e->fits++;
                        e->covered += cov;
                        if (isfinite(f.ci95_c))
                                e->width[e->finite++] = f.ci95_c;
                        if (f.ci95_c <= ANALYSIS_PLATEAU_CI95_C) {
                                e->tight++;
                                e->covered_tight += cov;
                        }
                        if (analysis_fit_auto(t_buf, y_buf, m, &f) < 0)
                                f.ci95_c = INFINITY, f.t_inf_c = NAN;
                        cov = !(fabs(f.t_inf_c - corpus_plateau(&c)) > f.ci95_c);
                        e->old_covered += cov;
                        if (f.ci95_c <= ANALYSIS_PLATEAU_CI95_C) {
                                e->old_tight++;
                                e->old_covered_tight += cov;
                        }
                }
        }
}

/* Calls the stop rule every `every` s of a 90-min phase; the time it fires
 * (PROTOCOL_S when it does not) and the prediction error then. */
static double stop_time(const struct corpus_curve *c, unsigned every, double *ret_err) {
        struct analysis_plateau p;

        corpus_samples(c, t_buf, y_buf, PROTOCOL_S + 1);
        *ret_err = NAN;
        for (size_t m = 60; m <= PROTOCOL_S + 1; m += every)
                if (analysis_check_plateau(t_buf, y_buf, m, &p) >= 0 && p.reached) {
                        *ret_err = p.plateau_c - corpus_plateau(c);
                        return t_buf[m - 1];
                }
        return PROTOCOL_S;
}

static void print_coverage(unsigned curves) {
        size_t all = 0, all_cov = 0, tight = 0, tight_cov = 0, old_cov = 0, old_tight = 0, old_tight_cov = 0;
        double worst = 1;

        printf("\n### Interval coverage, %u curves per class, cut at fractions of the slow time constant\n\n", curves);
        printf("Each cell: coverage %% (median half-width of the finite intervals °C; %% finite).\n\n");
        printf("| exps | step °C |");
        for (size_t k = 0; k < CORPUS_CUTS; k++)
                printf(" %.2g τ |", corpus_cuts[k]);
        printf(" all | before (fit_auto) |\n|---|---|");
        for (size_t k = 0; k <= CORPUS_CUTS + 1; k++)
                printf("---|");
        printf("\n");
        for (unsigned n_exp = 2; n_exp <= 3; n_exp++)
                for (size_t qi = 0; qi < CORPUS_QUANTA; qi++) {
                        struct cell cells[CORPUS_CUTS] = {};
                        size_t fits = 0, cov = 0, ocov = 0;
                        for (size_t k = 0; k < CORPUS_CUTS; k++)
                                cells[k].width = calloc(curves, sizeof(double));
                        coverage_class(n_exp, qi, curves, cells);
                        printf("| %u | %g |", n_exp, corpus_quanta[qi]);
                        for (size_t k = 0; k < CORPUS_CUTS; k++) {
                                struct cell *e = &cells[k];
                                double c = 100.0 * (double) e->covered / (double) e->fits;
                                worst = fmin(worst, c / 100);
                                printf(" %.0f (%.2g; %.0f) |", c, median(e->width, e->finite),
                                       100.0 * (double) e->finite / (double) e->fits);
                                fits += e->fits;
                                cov += e->covered;
                                tight += e->tight;
                                tight_cov += e->covered_tight;
                                ocov += e->old_covered;
                                old_tight += e->old_tight;
                                old_tight_cov += e->old_covered_tight;
                                free(e->width);
                        }
                        printf(" %.1f | %.1f |\n", 100.0 * (double) cov / (double) fits,
                               100.0 * (double) ocov / (double) fits);
                        old_cov += ocov;
                        all += fits;
                        all_cov += cov;
                }
        printf("\nOverall coverage %.1f %% of %zu intervals; lowest cell %.0f %%; "
               "intervals claiming ±%.1f °C or less: %zu, of which %.1f %% covered.\n",
               100.0 * (double) all_cov / (double) all, all, 100 * worst, ANALYSIS_PLATEAU_CI95_C, tight,
               tight ? 100.0 * (double) tight_cov / (double) tight : NAN);
        printf("Before (analysis_fit_auto's interval on the same cuts): %.1f %% overall; intervals claiming "
               "±%.1f °C or less: %zu, of which %.1f %% covered.\n", 100.0 * (double) old_cov / (double) all,
               ANALYSIS_PLATEAU_CI95_C, old_tight, old_tight ? 100.0 * (double) old_tight_cov / (double) old_tight : NAN);
}

static void print_stops(unsigned curves, unsigned every) {
        printf("\n### When until: plateau stops (checked every %u s, slope window 5 min, 90-min protocol)\n\n", every);
        printf("| exps | step °C | stopped | stop / 90 min (median) | stop / t99 (median) | |error| at stop p50 / max °C | within 0.5 °C |\n");
        printf("|---|---|---|---|---|---|---|\n");
        for (unsigned n_exp = 2; n_exp <= 3; n_exp++)
                for (size_t qi = 0; qi < CORPUS_QUANTA; qi++) {
                        double *fp = calloc(curves, sizeof(double)), *f99 = calloc(curves, sizeof(double));
                        double *err = calloc(curves, sizeof(double)), emax = 0;
                        size_t stopped = 0, within = 0;
                        for (unsigned seed = 0; seed < curves; seed++) {
                                struct corpus_curve c;
                                double e;
                                corpus_curve_make(&c, n_exp, corpus_quanta[qi], 10000 + seed);
                                double t = stop_time(&c, every, &e);
                                fp[seed] = t / PROTOCOL_S;
                                f99[seed] = t / corpus_t99(&c);
                                if (!isnan(e)) {
                                        err[stopped++] = fabs(e);
                                        within += fabs(e) <= 0.5;
                                        emax = fmax(emax, fabs(e));
                                }
                        }
                        printf("| %u | %g | %zu/%u | %.2f | %.2f | %.2f / %.2f | %zu/%zu |\n", n_exp, corpus_quanta[qi],
                               stopped, curves, median(fp, curves), median(f99, curves), median(err, stopped), emax,
                               within, stopped);
                        free(fp);
                        free(f99);
                        free(err);
                }
}

/* The check's cost against the phase length, next to a full-resolution fit. */
static void print_cost(void) {
        static const size_t lengths[] = { 600, 5400, 20000, 54000 };
        struct corpus_curve c;

        corpus_curve_make(&c, 2, 1.0, 1);
        c.tau[0] = 20, c.tau[1] = 900, c.share[0] = 0.3, c.share[1] = 0.7;
        printf("\n### Cost of one plateau check (best of 5) against the phase length\n\n");
        printf("| samples | check (analysis_check_plateau) ms | full-resolution analysis_fit_auto ms |\n|---|---|---|\n");
        for (size_t k = 0; k < sizeof(lengths) / sizeof(lengths[0]); k++) {
                size_t n = lengths[k];
                double best = INFINITY, best_full = INFINITY;
                uint64_t s = 5;
                for (size_t i = 0; i < n; i++) {        /* up to 10 Hz beyond 5,400 samples: 90 min at most */
                        t_buf[i] = n > 5400 ? (double) i * 5400.0 / (double) n : (double) i;
                        y_buf[i] = round(corpus_truth_at(&c, t_buf[i]) + c.noise * corpus_gauss(&s));
                }
                for (int r = 0; r < 5; r++) {
                        struct analysis_plateau p;
                        struct analysis_fit f;
                        double t0 = now_ms();
                        analysis_check_plateau(t_buf, y_buf, n, &p);
                        best = fmin(best, now_ms() - t0);
                        t0 = now_ms();
                        analysis_fit_auto(t_buf, y_buf, n, &f);
                        best_full = fmin(best_full, now_ms() - t0);
                }
                printf("| %zu | %.3f | %.2f |\n", n, best, best_full);
        }
}

/* A recording in tests/data: elapsed_s, temp_c and phase columns; "-" is
 * standard input (the recordings are stored gzip-compressed: zcat FILE.gz |). */
static size_t recording_load(const char *path, double *t, double *y, char *phase, size_t max) {
        char line[512];
        int ct = -1, cy = -1, cp = -1;
        size_t n = 0;
        FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");

        if (!f)
                return 0;
        if (!fgets(line, sizeof line, f)) {
                if (f != stdin)
                        fclose(f);
                return 0;
        }
        line[strcspn(line, "\r\n")] = '\0';
        char *save = NULL;
        int k = 0;
        for (char *tok = strtok_r(line, ",", &save); tok; tok = strtok_r(NULL, ",", &save), k++) {
                if (strcmp(tok, "elapsed_s") == 0)
                        ct = k;
                else if (strcmp(tok, "temp_c") == 0)
                        cy = k;
                else if (strcmp(tok, "phase") == 0)
                        cp = k;
        }
        while (ct >= 0 && cy >= 0 && cp >= 0 && n < max && fgets(line, sizeof line, f)) {
                k = 0;
                save = NULL;
                for (char *tok = strtok_r(line, ",\r\n", &save); tok; tok = strtok_r(NULL, ",\r\n", &save), k++) {
                        if (k == ct)
                                t[n] = strtod(tok, NULL);
                        else if (k == cy)
                                y[n] = strtod(tok, NULL);
                        else if (k == cp)
                                phase[n] = tok[0];
                }
                n++;
        }
        if (f != stdin)
                fclose(f);
        return n;
}

/* Each warm-up of a real recording: the fits of the whole load, and the
 * plateau interval along it against the whole load's fit (the best
 * reference there is: the truth is not known). */
static void print_recording(const char *path) {
        static char phase[MAX_N];
        static const double cuts[] = { 20, 30, 45, 60, 90, 120, 150, 200, 250 };
        size_t n = recording_load(path, t_buf, y_buf, phase, MAX_N), covered = 0, fits = 0, tight = 0, tight_cov = 0;

        printf("\n### %s\n\n", strcmp(path, "-") == 0 ? "standard input" : path);
        printf("| load | whole load: auto fit | plateau interval at the end | along the load: plateau ± ci95 at 20, 30, 45, 60, 90, 120, 150, 200, 250 s |\n");
        printf("|---|---|---|---|\n");
        for (size_t a = 0, k = 1; a < n; k++) {
                while (a < n && phase[a] != 's')
                        a++;
                size_t b = a;
                while (b < n && phase[b] == 's')
                        b++;
                if (b - a < 30)
                        break;
                struct analysis_fit full, end;
                if (analysis_fit_auto(t_buf + a, y_buf + a, b - a, &full) < 0 ||
                    analysis_fit_plateau(t_buf + a, y_buf + a, b - a, &end) < 0)
                        break;
                printf("| %zu (%.0f-%.0f s) | %s %.2f °C, tau %.0f s%s | %.2f ± %.2f |", k, t_buf[a], t_buf[b - 1],
                       analysis_model_to_string(full.model), full.t_inf_c, full.tau_s,
                       full.model == ANALYSIS_MODEL_EXP2 ? " (+ fast)" : "", end.t_inf_c, end.ci95_c);
                for (size_t c = 0; c < sizeof(cuts) / sizeof(cuts[0]) && cuts[c] < t_buf[b - 1] - t_buf[a]; c++) {
                        struct analysis_fit f;
                        size_t m = 0;
                        while (a + m < b && t_buf[a + m] - t_buf[a] <= cuts[c])
                                m++;
                        if (analysis_fit_plateau(t_buf + a, y_buf + a, m, &f) < 0)
                                continue;
                        bool ok = !(fabs(f.t_inf_c - full.t_inf_c) > f.ci95_c);
                        fits++;
                        covered += ok;
                        tight += f.ci95_c <= ANALYSIS_PLATEAU_CI95_C;
                        tight_cov += ok && f.ci95_c <= ANALYSIS_PLATEAU_CI95_C;
                        printf(" %.1f±%.2g%s", f.t_inf_c, f.ci95_c, ok ? "" : "!");
                }
                printf(" |\n");
                a = b;
        }
        printf("\nCovering the whole load's plateau: %zu of %zu cuts (! marks a miss); claiming ±%.1f °C: %zu, "
               "of which %zu covering.\n", covered, fits, ANALYSIS_PLATEAU_CI95_C, tight, tight_cov);
}

int main(int argc, char **argv) {
        if (argc == 3 && strcmp(argv[1], "--recording") == 0) {
                print_recording(argv[2]);
                return 0;
        }
        unsigned curves = argc > 1 ? (unsigned) atoi(argv[1]) : 100;
        unsigned stops = argc > 2 ? (unsigned) atoi(argv[2]) : 40;
        unsigned every = argc > 3 ? (unsigned) atoi(argv[3]) : 10;

        if (curves == 0 || every == 0) {
                fprintf(stderr, "usage: analysis-corpus [CURVES_PER_CLASS [STOP_CURVES_PER_CLASS [EVERY_S]]]\n"
                                "       zcat FILE.csv.gz | analysis-corpus --recording -\n");
                return 2;
        }
        print_cost();
        print_coverage(curves);
        if (stops > 0)
                print_stops(stops, every);
        return 0;
}
