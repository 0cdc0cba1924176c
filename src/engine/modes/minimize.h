/* Crash minimisation (-minimize_crash=1) and cleansing (-cleanse_crash=1). */
#ifndef SIFT_MINIMIZE_H
#define SIFT_MINIMIZE_H

#include "engine/core/fuzzer.h"

/* Shrinks the crashing input given as the only input file, removing chunks and lowering
 * bytes (a length field, say), while it keeps crashing the same
 * way (same exit status and sanitizer SUMMARY line), each try in a child process, and writes
 * the result as a minimized-from- artifact (or to -exact_artifact_path). */
int sift_minimize_crash(sift_fuzzer *f) SIFT_FRAME(sift_minimize_crash);

/* -cleanse_crash=1: replaces every byte of the crashing input that the crash does not need
 * with ' ' or 0xff (same crash, as above), and writes the result as a cleansed-from- artifact
 * (or to -exact_artifact_path). */
int sift_cleanse_crash(sift_fuzzer *f);

#endif
