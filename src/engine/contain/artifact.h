/* Artifacts: what a fuzzer writes about a fault must survive a kill at any moment. */
#ifndef SIFT_ARTIFACT_H
#define SIFT_ARTIFACT_H

#include "engine/contain/history.h"

#include <stddef.h>
#include <stdint.h>

/* Writes the artifact of KIND ("crash", "timeout", "oom", "leak", "slow-unit", "minimized-from")
 * for DATA as libFuzzer names it: EXACT_PATH when not NULL, else PREFIX (may be NULL: "./")
 * followed by KIND-<sha1>. Prints "artifact_prefix='PREFIX'; Test unit written to PATH" and,
 * for inputs of at most 1 KiB, a "Base64: ..." line to stderr. Async-signal-safe: usable from
 * crash handlers. PATH_OUT (may be NULL) receives the path written (PATH_MAX bytes). */
int sift_artifact_write(const char *prefix, const char *exact_path, const char *kind,
                        const uint8_t *data, size_t size, char *path_out, size_t path_cap);

/* Writes the inputs H holds (the last one DATA, the artifact's input) to the folder named as
 * the artifact with "history-" in place of its kind (EXACT_PATH ".history" when set), through
 * sift_history_write. Async-signal-safe. Returns 0, or -1 with errno set. */
int sift_artifact_write_history(const char *prefix, const char *exact_path, const uint8_t *data,
                                size_t size, const sift_history *h, const char *argv0);

#endif
