/* The seed corpus as a campaign reads it before it starts: every readable file of the corpus
 * folders, each cut to what an input may hold, smallest first, with libFuzzer's INFO lines. */
#ifndef SIFT_SEEDS_H
#define SIFT_SEEDS_H

#include "engine/base/fsutil.h"
#include "engine/base/options.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint8_t *data;
    size_t size;
} sift_seed;

typedef struct {
    sift_seed *list; /* by size, smallest first */
    size_t count;
    size_t max_len; /* what inputs may hold: -max_len, or the largest seed's size */
} sift_seeds;

/* Reads the seeds of O's corpus folders into OUT and prints what libFuzzer prints of them; a
 * file that cannot be read is skipped with a line that names it. 0, or -1 after one line that
 * says why (a folder that cannot be listed, no memory). */
int sift_seeds_read(const sift_options *o, sift_seeds *out);

/* Appends the files that -seed_inputs=SPEC names to PATHS: "a,b", or "@LIST" for a file that
 * holds that list, as libFuzzer reads it. 0, or -1 after one line naming the list file that
 * cannot be read or an empty list (a named seed that cannot be read is skipped later, with
 * a line, as a corpus file is). */
int sift_seeds_add_inputs(const char *spec, sift_pathlist *paths);
void sift_seeds_free(sift_seeds *s);

#endif
