/* The plot as SVG 1.1, written by hand: a few elements, every coordinate finite. */
#include "cli/svg.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#define WIDTH       800.0
#define HEIGHT      450.0
#define TOP         50.0
#define BOTTOM      60.0 /* room for the tick labels and the time axis' label */
#define SIDE        75.0 /* room for a vertical axis' labels and name */
#define EDGE        30.0 /* the right margin without a right axis */
#define MAX_POINTS  2000 /* longer series are thinned: more would not show at this width */
#define MAX_TICKS   16
#define LEFT_COLOR  "#1f77b4"
#define RIGHT_COLOR "#d62728"

size_t sift_svg_ticks(double max, double *ticks, size_t cap, double *step, double *top)
{
    if (!(max > 0) || !isfinite(max)) max = 1.0;
    double raw = max / 5, mag = pow(10, floor(log10(raw))), norm = raw / mag;
    *step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
    /* A hair of slack, so that a maximum on a tick does not get one more tick over it. */
    double count = ceil(max / *step - 1e-9);
    *top = count * *step;
    size_t n = 0;
    for (; n < cap && (double)n <= count; n++)
        ticks[n] = (double)n * *step;
    return n;
}

/* A tick value as a label: 0, 250, 12k, 1.5M, 0.2. */
static void label(double v, double step, char *buf, size_t cap)
{
    if (step < 1) {
        int decimals = (int)ceil(-log10(step) - 1e-9);
        snprintf(buf, cap, "%.*f", decimals > 6 ? 6 : decimals, v);
    } else if (v >= 1e9 && step >= 1e8) {
        snprintf(buf, cap, "%gG", v / 1e9);
    } else if (v >= 1e6 && step >= 1e5) {
        snprintf(buf, cap, "%gM", v / 1e6);
    } else if (v >= 1e4 && step >= 1e3) {
        snprintf(buf, cap, "%gk", v / 1e3);
    } else {
        snprintf(buf, cap, "%.0f", v);
    }
}

/* TEXT with XML's special characters escaped and control characters left out. */
static void text(FILE *out, const char *s)
{
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '&')
            fputs("&amp;", out);
        else if (c == '<')
            fputs("&lt;", out);
        else if (c == '>')
            fputs("&gt;", out);
        else if (c == '"')
            fputs("&quot;", out);
        else if (c >= 0x20 && c != 0x7f)
            fputc(c, out);
    }
}

typedef struct {
    double x0, x1, y0, y1; /* the plot area: x0 left, y0 top */
    double tmax, tscale;   /* the time axis' top in its unit, and seconds per unit */
} frame;

static double px(const frame *f, double seconds)
{
    return f->x0 + seconds / f->tscale / f->tmax * (f->x1 - f->x0);
}

static double py(const frame *f, double v, double top)
{
    return f->y1 - v / top * (f->y1 - f->y0);
}

static double series_max(const double *y, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(y[i]) && y[i] > m) m = y[i];
    return m;
}

static void polyline(FILE *out, const frame *f, const sift_svg_plot *p, const double *y, double top,
                     const char *cls, const char *color, const char *dash)
{
    fprintf(out,
            "<polyline class=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s%s%s "
            "stroke-linejoin=\"round\" points=\"",
            cls, color, dash ? " stroke-dasharray=\"" : "", dash ? dash : "", dash ? "\"" : "");
    size_t stride = p->n > MAX_POINTS ? (p->n + MAX_POINTS - 1) / MAX_POINTS : 1;
    for (size_t i = 0; i < p->n; i += stride) {
        /* The last point always, so that the line ends where the campaign is. */
        if (i + stride >= p->n) i = p->n - 1;
        double v = isfinite(y[i]) && y[i] > 0 ? y[i] : 0;
        double t = isfinite(p->time[i]) && p->time[i] > 0 ? p->time[i] : 0;
        fprintf(out, "%s%.1f,%.1f", i ? " " : "", px(f, t), py(f, v, top));
    }
    fputs("\"/>\n", out);
    if (p->n == 1) /* one point draws no line: a dot then */
        fprintf(out, "<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", cls,
                px(f, 0), py(f, isfinite(y[0]) && y[0] > 0 ? y[0] : 0, top), color);
}

/* A vertical axis at X with ticks for [0, MAX] on side DIR (-1 left, 1 right); returns its top.
 * The left one draws the grid. */
static double vaxis(FILE *out, const frame *f, double x, int dir, double max, const char *name,
                    const char *color)
{
    double ticks[MAX_TICKS], step, top;
    size_t n = sift_svg_ticks(max, ticks, MAX_TICKS, &step, &top);
    fprintf(out, "<g class=\"axis-%s\">\n", dir < 0 ? "left" : "right");
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", x,
            f->y0, x, f->y1);
    for (size_t i = 0; i < n; i++) {
        double y = py(f, ticks[i], top);
        char buf[32];
        label(ticks[i], step, buf, sizeof buf);
        if (dir < 0 && i)
            fprintf(out,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e0e0e0\"/>\n",
                    f->x0, y, f->x1, y);
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n",
                x, y, x + 5 * dir, y);
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%s</text>\n", x + 8 * dir,
                y + 4, dir < 0 ? "end" : "start", buf);
    }
    double lx = x + (SIDE - 15) * dir, ly = (f->y0 + f->y1) / 2;
    fprintf(out,
            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"%s\" "
            "transform=\"rotate(-90 %.1f %.1f)\">",
            lx, ly, color, lx, ly);
    text(out, name);
    fputs("</text>\n</g>\n", out);
    return top;
}

/* The time axis, in the largest unit that keeps it readable. */
static void time_axis(FILE *out, frame *f, double seconds)
{
    static const struct {
        double limit, scale;
        const char *name;
    } units[] = {{120, 1, "seconds"},
                 {7200, 60, "minutes"},
                 {172800, 3600, "hours"},
                 {INFINITY, 86400, "days"}};
    size_t u = 0;
    while (seconds > units[u].limit)
        u++;
    f->tscale = units[u].scale;
    double ticks[MAX_TICKS], step;
    size_t n = sift_svg_ticks(seconds / f->tscale, ticks, MAX_TICKS, &step, &f->tmax);
    fputs("<g class=\"axis-time\">\n", out);
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n",
            f->x0, f->y1, f->x1, f->y1);
    for (size_t i = 0; i < n; i++) {
        double x = px(f, ticks[i] * f->tscale);
        char buf[32];
        label(ticks[i], step, buf, sizeof buf);
        if (i)
            fprintf(out,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e0e0e0\"/>\n",
                    x, f->y0, x, f->y1);
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n",
                x, f->y1, x, f->y1 + 5);
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", x,
                f->y1 + 20, buf);
    }
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time (%s)</text>\n",
            (f->x0 + f->x1) / 2, f->y1 + 42, units[u].name);
    fputs("</g>\n", out);
}

static void legend_entry(FILE *out, const frame *f, int row, const char *name, const char *color,
                         const char *dash)
{
    double x = f->x0 + 12, y = f->y0 + 16 + 18 * row;
    fprintf(out,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
            "stroke-width=\"2\"%s%s%s/>\n",
            x, y - 4, x + 24, y - 4, color, dash ? " stroke-dasharray=\"" : "", dash ? dash : "",
            dash ? "\"" : "");
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">", x + 30, y);
    text(out, name);
    fputs("</text>\n", out);
}

int sift_svg_write(FILE *out, const sift_svg_plot *p)
{
    bool right = p->right.y != NULL;
    frame f = {.x0 = SIDE, .x1 = WIDTH - (right ? SIDE : EDGE), .y0 = TOP, .y1 = HEIGHT - BOTTOM};
    double seconds = p->n ? p->time[p->n - 1] : 0;
    fprintf(out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" "
            "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" "
            "font-size=\"12\">\n"
            "<rect width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n"
            "<text x=\"%.1f\" y=\"28\" text-anchor=\"middle\" font-size=\"15\">",
            WIDTH, HEIGHT, WIDTH, HEIGHT, WIDTH, HEIGHT, WIDTH / 2);
    text(out, p->title);
    fputs("</text>\n", out);
    time_axis(out, &f, isfinite(seconds) && seconds > 0 ? seconds : 0);
    double ltop = vaxis(out, &f, f.x0, -1, series_max(p->left.y, p->n), p->left.label, LEFT_COLOR);
    double rtop =
        right ? vaxis(out, &f, f.x1, 1, series_max(p->right.y, p->n), p->right.label, RIGHT_COLOR)
              : 1;
    if (right) polyline(out, &f, p, p->right.y, rtop, "right", RIGHT_COLOR, "6 4");
    polyline(out, &f, p, p->left.y, ltop, "left", LEFT_COLOR, NULL);
    legend_entry(out, &f, 0, p->left.label, LEFT_COLOR, NULL);
    if (right) legend_entry(out, &f, 1, p->right.label, RIGHT_COLOR, "6 4");
    fputs("</svg>\n", out);
    return fflush(out) == 0 && !ferror(out) ? 0 : -1;
}
