/* Reading corpora from disk: folder listings and bounded file reads that report, never crash. */
#ifndef SIFT_FSUTIL_H
#define SIFT_FSUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    char **paths;
    size_t count, cap;
} sift_pathlist;

/* Appends the regular files under DIR (recursively, links followed, loops, unreadable and
 * hidden entries skipped) to LIST. On error (DIR missing, not a folder, unreadable) writes one line
 * naming DIR and the problem into ERR and returns -1. */
int sift_fs_list(sift_pathlist *list, const char *dir, char *err, size_t errlen);

void sift_pathlist_free(sift_pathlist *list);

/* Reads at most MAX bytes of PATH into a fresh buffer (*DATA, free() it; never NULL on
 * success, even for an empty file). TRUNCATED (may be NULL) says whether the file was longer.
 * On error writes one line naming PATH into ERR and returns -1. */
int sift_fs_read(const char *path, size_t max, uint8_t **data, size_t *size, bool *truncated,
                 char *err, size_t errlen);

/* 1 for a folder, 0 for anything else that exists, -1 when PATH cannot be examined. */
int sift_fs_is_dir(const char *path);

#endif
