/* The operand search of input-to-state mutation (rt/memfind.h) against the same search
 * anchored on the needle's first byte, as it was before the anchor was chosen by sampling, on
 * real inputs: for each file, 4,000 four-byte needles (small integers and 16-bit values in
 * both byte orders, four-byte words of the file, random words), searched REPS times by each
 * search in turn. Prints per file its size, the median time of each search and their ratio.
 * Usage: memfind [-r REPS] FILE...   (bench/memfind runs it; bench/README.md) */
#include "rt/memfind.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { NEEDLES = 4000, WIDTH = 4, MAX_REPS = 99 };

/* The search as it was: candidates from the needle's first byte. */
static const uint8_t *first_byte_find(const uint8_t *hay, size_t hay_len, const uint8_t *needle,
                                      size_t needle_len)
{
    return sift_memfind_by(hay, hay_len, needle, needle_len, 0);
}

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static void store(uint8_t *p, uint32_t v, int big)
{
    for (int i = 0; i < WIDTH; i++)
        p[i] = (uint8_t)(v >> 8 * (big ? WIDTH - 1 - i : i));
}

static void make_needles(uint8_t needles[][WIDTH], const uint8_t *d, size_t size)
{
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < NEEDLES; i++) {
        uint32_t v;
        switch (i % 4) {
        case 0: /* small integers */
            v = (uint32_t)(next(&s) % 256);
            break;
        case 1: /* 16-bit values */
            v = (uint32_t)(next(&s) % 65536);
            break;
        case 2: /* words of the file */
            if (size >= WIDTH) {
                memcpy(needles[i], d + next(&s) % (size - WIDTH + 1), WIDTH);
                continue;
            }
            v = (uint32_t)next(&s);
            break;
        default:
            v = (uint32_t)next(&s);
        }
        store(needles[i], v, i / 4 % 2);
    }
}

typedef const uint8_t *(*search_fn)(const uint8_t *, size_t, const uint8_t *, size_t);

static double seconds(search_fn find, const uint8_t *d, size_t size, uint8_t needles[][WIDTH],
                      size_t *found)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    *found = 0;
    for (int i = 0; i < NEEDLES; i++)
        *found += find(d, size, needles[i], WIDTH) != NULL;
    clock_gettime(CLOCK_MONOTONIC, &b);
    return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static uint8_t *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    uint8_t *d = malloc(cap);
    for (size_t got; d && (got = fread(d + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            uint8_t *grown = realloc(d, cap *= 2);
            if (!grown) free(d);
            d = grown;
        }
    }
    fclose(f);
    *size = n;
    return d;
}

int main(int argc, char **argv)
{
    int reps = 5, first = 1;
    if (argc > 2 && strcmp(argv[1], "-r") == 0) {
        reps = atoi(argv[2]);
        first = 3;
    }
    if (reps < 1 || reps > MAX_REPS || first >= argc) {
        fprintf(stderr, "usage: memfind [-r REPS (1-%d)] FILE...\n", MAX_REPS);
        return 2;
    }
    static uint8_t needles[NEEDLES][WIDTH];
    printf("%-40s %9s %10s %10s %7s %7s\n", "file", "bytes", "sampled s", "first s", "ratio",
           "found");
    for (int a = first; a < argc; a++) {
        size_t size, found_sampled = 0, found_first = 0;
        uint8_t *d = slurp(argv[a], &size);
        if (!d) {
            fprintf(stderr, "memfind: cannot read %s\n", argv[a]);
            return 1;
        }
        make_needles(needles, d, size);
        double sampled[MAX_REPS], first_byte[MAX_REPS];
        for (int r = 0; r < reps; r++) {
            sampled[r] = seconds(sift_memfind, d, size, needles, &found_sampled);
            first_byte[r] = seconds(first_byte_find, d, size, needles, &found_first);
        }
        if (found_sampled != found_first) {
            fprintf(stderr, "memfind: the searches disagree on %s\n", argv[a]);
            return 1;
        }
        qsort(sampled, (size_t)reps, sizeof(double), by_value);
        qsort(first_byte, (size_t)reps, sizeof(double), by_value);
        const char *name = strrchr(argv[a], '/');
        printf("%-40.40s %9zu %10.4f %10.4f %7.2f %7zu\n", name ? name + 1 : argv[a], size,
               sampled[reps / 2], first_byte[reps / 2], first_byte[reps / 2] / sampled[reps / 2],
               found_sampled);
        free(d);
    }
    return 0;
}
