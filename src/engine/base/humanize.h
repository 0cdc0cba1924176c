/* Numbers and times as people read them, for the live view and `sift show`. Each writes into
 * BUF (32 bytes) and returns it, so that several can appear in one printf. */
#ifndef SIFT_HUMANIZE_H
#define SIFT_HUMANIZE_H

#include <stddef.h>
#include <stdint.h>

/* V with thousands separators: 1234567 is "1,234,567". */
const char *sift_human_count(uint64_t v, char buf[32]);
/* V bytes as libFuzzer writes a corpus's size: bytes below 16 KiB ("4096b"), KiB below 16 MiB
 * ("512Kb"), else MiB ("20Mb"). */
const char *sift_human_size(uint64_t v, char buf[32]);
/* A run time of S seconds as H:MM:SS. */
const char *sift_human_clock(uint64_t s, char buf[32]);
/* A span of S seconds in its two largest units: 7s, 3m12s, 2h05m, 3d04h. */
const char *sift_human_span(uint64_t s, char buf[32]);

/* The file name S as it may go to a terminal or a log: each byte outside printable ASCII, and
 * '\\', written as \\xNN, so that a name from a folder others write into (a peer's queue,
 * crashes/) can neither forge a line nor send escape sequences. Cut to fit CAP, with "..." at
 * the end when cut. Returns BUF. */
const char *sift_human_name(const char *s, char *buf, size_t cap);

#endif
