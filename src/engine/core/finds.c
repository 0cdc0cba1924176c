/* Records of each input the corpus takes (finds.h). */
#include "engine/core/finds.h"
#include "engine/base/files.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* libFuzzer's features are 32 bits; sift's ids fold into as many, so that a tool that reads
 * libFuzzer's files reads these. */
static void write_features(const char *dir, const char *name, const sift_feature_id *ids, size_t n)
{
    uint32_t *folded = malloc(n ? n * sizeof(*folded) : 1);
    if (!folded) return;
    for (size_t i = 0; i < n; i++)
        folded[i] = (uint32_t)(ids[i] ^ (ids[i] >> 32));
    char path[4200];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) < sizeof path)
        (void)sift_write_whole(path, (const uint8_t *)folded, n * sizeof(*folded), false);
    free(folded);
}

/* A vertex for NAME and, for a mutant, the edge from BASE labelled with TRACE, in one write
 * of an append-only file, so that runs sharing the file interleave whole lines. */
static void write_edge(const char *path, const char *name, const char *base, const char *trace)
{
    char text[512];
    int len = base ? snprintf(text, sizeof text, "\"%s\"\n\"%s\" -> \"%s\" [label=\"%s\"];\n", name,
                              base, name, trace ? trace : "")
                   : snprintf(text, sizeof text, "\"%s\"\n", name);
    if (len < 0 || (size_t)len >= sizeof text) return;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return;
    ssize_t written = write(fd, text, (size_t)len);
    (void)written;
    close(fd);
}

void sift_finds_record(const sift_options *o, const char *name, const sift_feature_id *ids,
                       size_t n, const char *base, const char *trace)
{
    if (o->features_dir) write_features(o->features_dir, name, ids, n);
    if (o->mutation_graph_file) write_edge(o->mutation_graph_file, name, base, trace);
}
