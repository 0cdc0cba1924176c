/* sift_options_parse on any command line: the input, split at NUL bytes, is argv[1..]. It must
 * accept or refuse with a message, and what it accepts must be within the table's bounds. */
#include "engine/base/options.h"
#include "sift/covmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ARGS 72

static int in(const char *p, const char *buf, size_t size)
{
    return p >= buf && p <= buf + size;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy of its exact size with a NUL after it: argv strings are NUL-terminated, and a read
     * past the last one is an overflow the sanitizer sees. */
    char *buf = malloc(size + 1);
    if (!buf) return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *argv[MAX_ARGS + 2] = {"fuzz"};
    int argc = 1;
    for (char *p = buf; argc <= MAX_ARGS && p <= buf + size; p += strlen(p) + 1)
        argv[argc++] = p;

    sift_options o;
    sift_options_defaults(&o);
    char err[128];
    memset(err, 0x55, sizeof err);
    int rc = sift_options_parse(&o, argc, argv, err, sizeof err);
    if (rc != 0 && rc != -1) __builtin_trap();
    if (rc == -1 && (!memchr(err, '\0', sizeof err) || !err[0])) __builtin_trap();
    if (rc == 0) {
        if (o.ninputs >= (size_t)argc || o.inputs < argv + 1 || o.inputs + o.ninputs > argv + argc)
            __builtin_trap();
        /* Only -ignore_remaining_args=1 leaves arguments after the inputs. */
        if (!o.ignore_remaining_args && o.inputs != argv + argc - o.ninputs) __builtin_trap();
        for (size_t i = 0; i < o.ninputs; i++)
            if (!in(o.inputs[i], buf, size) || o.inputs[i][0] == '-') __builtin_trap();
        /* Ignored flags are flags, and sit right before the inputs. */
        if (o.ignored + o.nignored != o.inputs) __builtin_trap();
        for (size_t i = 0; i < o.nignored; i++)
            if (!in(o.ignored[i], buf, size) || o.ignored[i][0] != '-') __builtin_trap();
        const char *strings[] = {o.dict, o.artifact_prefix, o.exact_artifact_path, o.stats_file,
                                 o.merge_control_file};
        for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
            if (strings[i] && !in(strings[i], buf, size)) __builtin_trap();
        if (!o.features || (o.features & ~SIFT_DOMAINS_ALL)) __builtin_trap();
        if (o.runs < -1 || o.close_fd_mask < 0 || o.close_fd_mask > 3 || o.error_exitcode > 255 ||
            o.timeout_exitcode > 255 || o.timeout < 0 || o.timeout > INT32_MAX ||
            o.max_total_time > INT32_MAX || o.rss_limit_mb > INT32_MAX || o.fork > 1024)
            __builtin_trap();
    }

    /* The same line with a short message buffer, and with none. */
    char small[8];
    sift_options_defaults(&o);
    if (sift_options_parse(&o, argc, argv, small, sizeof small) != rc) __builtin_trap();
    if (rc == -1 && !memchr(small, '\0', sizeof small)) __builtin_trap();
    sift_options_defaults(&o);
    if (sift_options_parse(&o, argc, argv, NULL, 0) != rc) __builtin_trap();
    free(buf);
    return 0;
}
