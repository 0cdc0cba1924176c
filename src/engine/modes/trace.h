/* -trace=FILE: runs one input with value recording on and writes the function-boundary records
 * it produced, as text or JSON lines, so that a crash can be explained without a debugger. */
#ifndef SIFT_TRACE_H
#define SIFT_TRACE_H

#include "engine/core/fuzzer.h"
#include "rt/ring.h"
#include "rt/rt.h"

typedef enum { SIFT_TRACE_TEXT = 0, SIFT_TRACE_JSON = 1 } sift_trace_format;

typedef struct sift_trace sift_trace;

/* The format that -trace_format=FORMAT asks for (NULL: JSON lines when PATH ends in .jsonl,
 * text otherwise). Returns -1 for a FORMAT that is neither "text" nor "json". */
int sift_trace_format_of(const char *path, const char *format, sift_trace_format *out);

/* A writer of records in FORMAT to FD, naming them from RT's tables. NULL when out of memory. */
sift_trace *sift_trace_new(int fd, sift_trace_format format, const sift_rt_state *rt);

/* Writes one record (a sift_ring_fn: CTX is the trace). Text lines gather the values of one
 * call, so a line is complete only when the next record arrives or the trace finishes. */
void sift_trace_record(void *ctx, const sift_ring_record *rec);

/* Completes the output: the last line, a count of dropped records if any, and the flush. */
void sift_trace_finish(sift_trace *t);

void sift_trace_free(sift_trace *t);

/* The -trace mode of the driver: F's options name the trace file and one input file. Returns
 * the process exit code, after one line on stderr for a usage error. */
int sift_trace_run(sift_fuzzer *f) SIFT_FRAME(sift_trace_run);

#endif
