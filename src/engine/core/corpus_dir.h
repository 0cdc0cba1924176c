/* The corpus folder of one fuzzing process: what it writes there and when. A new input is
 * written at once; an input kept because it is smaller than entries it replaces (REDUCE) is
 * written, and the files of the entries it replaced removed, at the next flush, a second later.
 * A campaign reduces the same few entries many times a second, and every file made and removed
 * costs the file system an inode (on ext4 without a journal, a scan of every inode freed in the
 * last minutes): most replacements are replaced again before the flush and never touch disk.
 * What a kill before the flush loses is the smaller inputs only: the files they replace, which
 * reach the same features, are still there. */
#ifndef SIFT_CORPUS_DIR_H
#define SIFT_CORPUS_DIR_H

#include "engine/core/corpus.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *path;     /* the folder; NULL when inputs are kept nowhere */
    sift_entry **pending; /* replacements to write and replaced entries to remove at the flush */
    size_t npending, cap;
    uint64_t due_ns; /* when the pending ones are flushed */
} sift_corpus_dir;

/* Writes E into the folder now (whole or not at all). A write that fails ends the process with
 * exit code 1 and one line naming the file: a campaign must not go on finding what it loses. */
void sift_corpus_dir_save(const sift_corpus_dir *d, const sift_entry *e);

/* E was kept in place of the entries GONE (those of them evicted lose their files), at NOW:
 * written, and those files removed, at the first flush a second or more later. */
void sift_corpus_dir_replace(sift_corpus_dir *d, sift_entry *e, sift_entry *const *gone,
                             size_t ngone, uint64_t now_ns);

/* Flushes the pending replacements when they are due at NOW (always, with NOW UINT64_MAX):
 * first writes those still in the corpus, then removes the files of entries evicted. */
void sift_corpus_dir_tick(sift_corpus_dir *d, uint64_t now_ns);

void sift_corpus_dir_free(sift_corpus_dir *d);

#endif
