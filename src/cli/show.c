/* sift show: reads everything first, so that a bad folder gives one line and no half summary;
 * then writes the plot, then prints the summary. */
#define _GNU_SOURCE
#include "cli/show.h"
#include "cli/outread.h"
#include "cli/svg.h"
#include "engine/base/humanize.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_LISTED 10 /* crash and hang paths printed; the rest are counted */

void sift_show_usage(FILE *out)
{
    fputs("Usage: sift show [-o FILE] [--no-plot] DIR\n"
          "\n"
          "Reads DIR, the output folder of a campaign (./harness -workers=N -out=DIR, or an AFL++\n"
          "output folder), and prints its run time, executions, exec/s, coverage, corpus and\n"
          "favored entries, crashes and hangs with their paths, and the time of the last find.\n"
          "Writes edge coverage (and corpus size) over time from DIR/plot_data as an SVG plot.\n"
          "\n"
          "Options:\n"
          "  -o FILE, --output=FILE  write the plot to FILE instead of DIR/coverage.svg\n"
          "                          (-o -: to stdout; the summary then goes to stderr)\n"
          "  --no-plot               print the summary only\n"
          "  -h, --help              print this help\n"
          "\n"
          "Exit status: 0; 1 when DIR cannot be read as an output folder (one line on stderr\n"
          "names the path and the problem); 2 for a usage error.\n",
          out);
}

static const char *date(uint64_t unix_s, char buf[32])
{
    time_t t = (time_t)unix_s;
    struct tm tm;
    if (!localtime_r(&t, &tm) || !strftime(buf, 32, "%Y-%m-%d %H:%M:%S", &tm))
        snprintf(buf, 32, "%llu", (unsigned long long)unix_s);
    return buf;
}

/* Writes the plot to PATH through a temporary and a rename ("-": stdout). */
static int write_plot(const char *path, const sift_svg_plot *p, char *err, size_t errlen)
{
    if (!strcmp(path, "-")) {
        if (sift_svg_write(stdout, p) == 0) return 0;
        snprintf(err, errlen, "cannot write the plot to stdout: %s", strerror(errno));
        return -1;
    }
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= sizeof tmp) {
        snprintf(err, errlen, "%s: the path is too long", path);
        return -1;
    }
    FILE *f = fopen(tmp, "w");
    int rc = f ? sift_svg_write(f, p) : -1;
    int e = errno;
    if (f && fclose(f) != 0 && rc == 0) {
        rc = -1;
        e = errno;
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        rc = -1;
        e = errno;
    }
    if (rc != 0) {
        if (f) unlink(tmp);
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(e));
    }
    return rc;
}

static void list(FILE *out, const char *what, char **paths, size_t n, uint64_t said)
{
    char a[32];
    fprintf(out, "%-11s %s", what, sift_human_count(n, a));
    if (said != n) fprintf(out, " (fuzzer_stats counts %s)", sift_human_count(said, a));
    fputc('\n', out);
    char shown[4096];
    for (size_t i = 0; i < n && i < MAX_LISTED; i++)
        fprintf(out, "%-11s %s\n", "", sift_human_name(paths[i], shown, sizeof shown));
    if (n > MAX_LISTED) fprintf(out, "%-11s ... and %zu more\n", "", n - MAX_LISTED);
}

static void summary(FILE *out, const char *dir, const sift_out_stats *st, const sift_out_plot *pl,
                    char **crashes, size_t ncrashes, char **hangs, size_t nhangs,
                    const char *plot_path)
{
    char a[32], b[32], c[32];
    uint64_t now = (uint64_t)time(NULL);
    fprintf(out, "%s\n", dir);
    bool banner = st->banner[0] && strcmp(st->banner, st->version) != 0;
    fprintf(out, "%-11s %s%s%s, pid %llu\n", "fuzzer", st->version[0] ? st->version : "unknown",
            banner ? ", banner " : "", banner ? st->banner : "",
            (unsigned long long)st->fuzzer_pid);
    fprintf(out, "%-11s %s, last update %s (%s ago)\n", "started", date(st->start_time, a),
            date(st->last_update, b),
            sift_human_span(now > st->last_update ? now - st->last_update : 0, c));
    fprintf(out, "%-11s %s", "run time", sift_human_clock(st->run_time, a));
    if (pl->sessions > 1)
        fprintf(out, " (the last of %u runs; %s in all)", pl->sessions,
                sift_human_clock((uint64_t)pl->points[pl->n - 1].time, b));
    fputc('\n', out);
    fprintf(out, "%-11s %s\n", "execs", sift_human_count(st->execs_done, a));
    fprintf(out, "%-11s %s (average over the run)\n", "exec/s",
            sift_human_count((uint64_t)(st->execs_per_sec + 0.5), a));
    if (st->has_edges)
        fprintf(out, "%-11s %s edges of %s (%.2f%%)\n", "coverage",
                sift_human_count(st->edges_found, a), sift_human_count(st->total_edges, b),
                st->total_edges ? 100.0 * (double)st->edges_found / (double)st->total_edges : 0);
    else
        fprintf(out, "%-11s %.2f%% of the map\n", "coverage", st->bitmap_cvg);
    fprintf(out, "%-11s %s entries, %s favored\n", "corpus", sift_human_count(st->corpus_count, a),
            sift_human_count(st->corpus_favored, b));
    list(out, "crashes", crashes, ncrashes, st->saved_crashes);
    list(out, "hangs", hangs, nhangs, st->saved_hangs);
    if (!st->last_find || st->last_find < st->start_time)
        fprintf(out, "%-11s none in this run\n", "last find");
    else
        fprintf(out, "%-11s %s into the run, %s before the last update\n", "last find",
                sift_human_clock(st->last_find - st->start_time, a),
                sift_human_span(
                    st->last_update > st->last_find ? st->last_update - st->last_find : 0, b));
    if (plot_path)
        fprintf(out, "%-11s %s (%zu points over %s)\n", "plot", plot_path, pl->n,
                sift_human_clock((uint64_t)pl->points[pl->n - 1].time, a));
}

typedef struct {
    const char *arg; /* the folder as given */
    char *dir;       /* without trailing slashes */
    const char *output;
    bool no_plot;
} show_args;

/* Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, show_args *a)
{
    bool options = true;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (options && (!strcmp(arg, "-h") || !strcmp(arg, "--help"))) {
            sift_show_usage(stdout);
            return 0;
        }
        if (options && !strcmp(arg, "--")) {
            options = false;
        } else if (options && (!strcmp(arg, "-o") || !strcmp(arg, "--output"))) {
            if (i + 1 == argc) {
                fprintf(stderr, "sift show: %s needs a file name (see sift show --help)\n", arg);
                return 2;
            }
            a->output = argv[++i];
        } else if (options && !strncmp(arg, "--output=", 9)) {
            a->output = arg + 9;
        } else if (options && !strcmp(arg, "--no-plot")) {
            a->no_plot = true;
        } else if (options && arg[0] == '-' && arg[1]) {
            fprintf(stderr, "sift show: unknown option %s (see sift show --help)\n", arg);
            return 2;
        } else if (a->arg) {
            fprintf(stderr, "sift show: one folder at a time (%s and %s given)\n", a->arg, arg);
            return 2;
        } else {
            a->arg = arg;
        }
    }
    if (!a->arg) {
        fprintf(stderr, "sift show: which folder? (sift show [-o FILE] DIR)\n");
        return 2;
    }

    if (a->output && !*a->output) {
        fprintf(stderr, "sift show: -o needs a file name\n");
        return 2;
    }
    return -1;
}

int sift_show_main(int argc, char **argv)
{
    show_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) return rc;
    /* "out/" names its files out/..., not out//... */
    size_t len = strlen(a.arg);
    while (len > 1 && a.arg[len - 1] == '/')
        len--;
    if (!(a.dir = strndup(a.arg, len))) {
        fprintf(stderr, "sift show: out of memory\n");
        return 1;
    }
    char err[8192], *plot_path = NULL;
    sift_out_stats st;
    sift_out_plot pl = {0};
    char **crashes = NULL, **hangs = NULL;
    size_t ncrashes = 0, nhangs = 0;
    double *t = NULL, *cov = NULL, *corpus = NULL;
    rc = 1;
    if (sift_out_check_dir(a.dir, err, sizeof err) != 0 ||
        sift_out_read_stats(a.dir, &st, err, sizeof err) != 0 ||
        sift_out_read_plot(a.dir, &pl, err, sizeof err) != 0 ||
        sift_out_list(a.dir, "crashes", &crashes, &ncrashes, err, sizeof err) != 0 ||
        sift_out_list(a.dir, "hangs", &hangs, &nhangs, err, sizeof err) != 0)
        goto out;
    if (!a.no_plot) {
        if (a.output)
            plot_path = strdup(a.output);
        else if (asprintf(&plot_path, "%s/coverage.svg", a.dir) < 0)
            plot_path = NULL;
        t = malloc(pl.n * sizeof(*t));
        cov = malloc(pl.n * sizeof(*cov));
        corpus = malloc(pl.n * sizeof(*corpus));
        if (!plot_path || !t || !cov || !corpus) {
            snprintf(err, sizeof err, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < pl.n; i++) {
            t[i] = pl.points[i].time;
            cov[i] = pl.points[i].cov;
            corpus[i] = pl.points[i].corpus;
        }
        /* "." or ".." would say nothing: the folder's own name then. */
        char title[4200], *real = realpath(a.dir, NULL);
        const char *base = strrchr(a.dir, '/') ? strrchr(a.dir, '/') + 1 : a.dir;
        bool dots = !strcmp(base, ".") || !strcmp(base, "..") || !*base;
        snprintf(title, sizeof title, "%s over time: %s",
                 pl.cov_is_percent ? "Map coverage" : "Edge coverage", dots && real ? real : a.dir);
        free(real);
        sift_svg_plot p = {
            .title = title,
            .time = t,
            .n = pl.n,
            .left = {cov, pl.cov_is_percent ? "map coverage (%)" : "edges found"},
            .right = {corpus, "corpus entries"},
        };
        if (write_plot(plot_path, &p, err, sizeof err) != 0) goto out;
    }
    summary(plot_path && !strcmp(plot_path, "-") ? stderr : stdout, a.dir, &st, &pl, crashes,
            ncrashes, hangs, nhangs, plot_path && strcmp(plot_path, "-") != 0 ? plot_path : NULL);
    rc = 0;
out:
    if (rc) fprintf(stderr, "sift show: %s\n", err);
    free(plot_path);
    free(t);
    free(cov);
    free(corpus);
    sift_out_plot_free(&pl);
    sift_out_list_free(crashes, ncrashes);
    sift_out_list_free(hangs, nhangs);
    free(a.dir);
    return rc;
}
