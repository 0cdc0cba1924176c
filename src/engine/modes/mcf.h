/* The merge control file (-merge_control_file): a merge's progress, in libFuzzer's layout, so
 * that a merge started again over the same files skips the inputs that killed the last one. */
#ifndef SIFT_MCF_H
#define SIFT_MCF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    int fd;       /* appended to by the merge children; -1 when no file was asked for */
    bool *failed; /* per input: started and never finished by an earlier merge */
    bool done;    /* an earlier merge of the same files ran them all */
} sift_mcf;

/* With PATH NULL, M records nothing. Otherwise, when PATH lists the N files of NAMES (the
 * first NOLD of the first folder), M takes in which of them an earlier merge started without
 * finishing, and whether it ran them all; when not (or when PATH is missing), PATH is rewritten
 * with that list. Says what it found in libFuzzer's MERGE-OUTER lines. Returns 0, or -1 with
 * one line printed. */
int sift_mcf_open(sift_mcf *m, const char *path, const char *const *names, size_t n, size_t nold);

/* Input I (SIZE bytes) is about to run; input I ran to its end. Safe in a child process. */
void sift_mcf_started(const sift_mcf *m, size_t i, size_t size);
void sift_mcf_done(const sift_mcf *m, size_t i);

void sift_mcf_close(sift_mcf *m);

#endif
