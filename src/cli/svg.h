/* A line plot over time as an SVG file: a time axis, a left axis for the first series and an
 * optional right axis for a second, with ticks at round numbers, grid lines and a legend. */
#ifndef SIFT_CLI_SVG_H
#define SIFT_CLI_SVG_H

#include <stddef.h>
#include <stdio.h>

typedef struct {
    const double *y; /* N values, one per time */
    const char *label;
} sift_svg_series;

typedef struct {
    const char *title;
    const double *time; /* N times in seconds, not decreasing */
    size_t n;
    sift_svg_series left;  /* drawn as a solid line against the left axis */
    sift_svg_series right; /* dashed, against the right axis; y NULL for none */
} sift_svg_plot;

/* Writes P to OUT. Returns 0, or -1 when the stream failed (errno set). */
int sift_svg_write(FILE *out, const sift_svg_plot *p);

/* Round tick values for the range [0, MAX]: fills TICKS (at most CAP) and returns how many;
 * *STEP gets their distance and *TOP the last, at or above MAX. */
size_t sift_svg_ticks(double max, double *ticks, size_t cap, double *step, double *top);

#endif
