/* Input size limits shared by the single-process fuzzer and the supervisor, as libFuzzer sets
 * them when -max_len is not given. */
#ifndef SIFT_LIMITS_H
#define SIFT_LIMITS_H

#include <stddef.h>

/* The most of a seed that is read when -max_len is not given (libFuzzer's 1 MiB). */
#define SIFT_SEED_MAX_READ ((size_t)1 << 20)
/* The length limit of generated inputs when -max_len is not given and the seeds are smaller. */
#define SIFT_DEFAULT_MAX_LEN ((size_t)4096)

/* -max_len when MAX_LEN (the flag, 0 when not given) is 0: the largest seed read (LARGEST, at
 * most SIFT_SEED_MAX_READ), but never less than SIFT_DEFAULT_MAX_LEN. */
static inline size_t sift_max_len(long long max_len, size_t largest)
{
    if (max_len) return (size_t)max_len;
    if (largest > SIFT_SEED_MAX_READ) largest = SIFT_SEED_MAX_READ;
    return largest > SIFT_DEFAULT_MAX_LEN ? largest : SIFT_DEFAULT_MAX_LEN;
}

/* How much of a seed is read: -max_len when given, else SIFT_SEED_MAX_READ. */
static inline size_t sift_seed_read_max(long long max_len)
{
    return max_len ? (size_t)max_len : SIFT_SEED_MAX_READ;
}

#endif
