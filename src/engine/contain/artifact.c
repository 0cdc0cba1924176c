/* Artifacts: the input that crashed, hung or leaked, written before the process exits and named
 * as libFuzzer names it. Everything here may run inside a signal handler or a sanitizer's death
 * callback, on a broken heap: only async-signal-safe calls (files.c, report.c). */
#include "engine/contain/artifact.h"
#include "engine/base/files.h"
#include "engine/contain/report.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>

/* The header's promise for the Base64 line. */
#define BASE64_MAX 1024

int sift_artifact_write(const char *prefix, const char *exact_path, const char *kind,
                        const uint8_t *data, size_t size, char *path_out, size_t path_cap)
{
    if (!prefix) prefix = "./";
    char path[PATH_MAX];
    size_t len = 0;
    bool fits;
    if (exact_path) {
        fits = sift_file_append(path, &len, sizeof(path), exact_path);
    } else {
        char sha[41];
        sift_sha1_hex(data, size, sha);
        fits = sift_file_append(path, &len, sizeof(path), prefix) &&
               sift_file_append(path, &len, sizeof(path), kind) &&
               sift_file_append(path, &len, sizeof(path), "-") &&
               sift_file_append(path, &len, sizeof(path), sha);
    }
    if (path_out && path_cap) {
        size_t n = fits && len < path_cap ? len : 0;
        memcpy(path_out, path, n);
        path_out[n] = '\0';
    }

    sift_report o;
    o.len = 0;
    int rc = 0;
    if (!fits) {
        sift_report_str(&o, "ERROR: cannot write artifact ");
        sift_report_str(&o, exact_path ? exact_path : prefix);
        sift_report_str(&o, exact_path ? "" : kind);
        sift_report_str(&o, ": path too long\n");
        errno = ENAMETOOLONG;
        rc = -1;
    } else if (sift_write_atomic(path, data, size) < 0) {
        int err = errno;
        sift_report_str(&o, "ERROR: cannot write artifact ");
        sift_report_str(&o, path);
        sift_report_str(&o, ": ");
        sift_report_errno(&o, err);
        sift_report_str(&o, "\n");
        errno = err;
        rc = -1;
    } else {
        sift_report_str(&o, "artifact_prefix='");
        sift_report_str(&o, prefix);
        sift_report_str(&o, "'; Test unit written to ");
        sift_report_str(&o, path);
        sift_report_str(&o, "\n");
    }
    /* Printed even when the file could not be written: the input is then still recoverable. */
    if (size <= BASE64_MAX) {
        sift_report_str(&o, "Base64: ");
        sift_report_base64(&o, data, size);
        sift_report_str(&o, "\n");
    }
    sift_report_flush(&o);
    return rc;
}

int sift_artifact_write_history(const char *prefix, const char *exact_path, const uint8_t *data,
                                size_t size, const sift_history *h, const char *argv0)
{
    char path[PATH_MAX];
    size_t len = 0;
    bool fits;
    path[0] = '\0';
    if (exact_path) {
        fits = sift_file_append(path, &len, sizeof(path), exact_path) &&
               sift_file_append(path, &len, sizeof(path), ".history");
    } else {
        char sha[41];
        sift_sha1_hex(data, size, sha);
        fits = sift_file_append(path, &len, sizeof(path), prefix ? prefix : "./") &&
               sift_file_append(path, &len, sizeof(path), "history-") &&
               sift_file_append(path, &len, sizeof(path), sha);
    }
    if (!fits) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return sift_history_write(h, path, argv0);
}
