/* Artifacts and atomic files: what a fuzzer writes must survive a kill at any moment. */
#ifndef SIFT_ARTIFACT_H
#define SIFT_ARTIFACT_H

#include <stddef.h>
#include <stdint.h>

/* Reports from crash handlers: text gathered in a fixed buffer and written with write(2) to
 * the report descriptor, so no allocation and no stdio. Long text is flushed in pieces. */
typedef struct {
    char buf[1024];
    size_t len;
} sift_out;

void sift_out_str(sift_out *o, const char *s);
void sift_out_u64(sift_out *o, uint64_t v);
void sift_out_flush(sift_out *o);

/* Where reports go: stderr unless moved (a driver that closes stderr for -close_fd_mask
 * passes a duplicate of it here). */
void sift_report_set_fd(int fd);
int sift_report_fd(void);

/* Prints DATA as libFuzzer does before an artifact line when it is at most 256 bytes: a hex
 * array line ("0x46,0x55,") and an escaped ASCII line. Async-signal-safe. */
void sift_print_unit(const uint8_t *data, size_t size);

/* Pins the working folder of the start: the relative paths that sift_write_atomic and
 * sift_artifact_write take are resolved against it from then on, so that a target calling
 * chdir() moves no artifact and no saved input. Returns 0, or -1 with errno set. */
int sift_artifact_pin_cwd(void);

/* The pinned folder's descriptor for openat(), AT_FDCWD when none was pinned. */
int sift_artifact_cwd(void);

/* Hex SHA-1 of DATA into OUT (41 bytes with the NUL). Async-signal-safe. */
void sift_sha1_hex(const uint8_t *data, size_t size, char out[41]);

/* Writes DATA to PATH atomically: a temporary file in the same folder, fsync, rename. Returns
 * 0, or -1 with errno set. Async-signal-safe (no allocation, no stdio). */
int sift_write_atomic(const char *path, const uint8_t *data, size_t size);

/* Writes the artifact of KIND ("crash", "timeout", "oom", "leak", "slow-unit", "minimized-from")
 * for DATA as libFuzzer names it: EXACT_PATH when not NULL, else PREFIX (may be NULL: "./")
 * followed by KIND-<sha1>. Prints "artifact_prefix='PREFIX'; Test unit written to PATH" and,
 * for inputs of at most 1 KiB, a "Base64: ..." line to stderr. Async-signal-safe: usable from
 * crash handlers. PATH_OUT (may be NULL) receives the path written (PATH_MAX bytes). */
int sift_artifact_write(const char *prefix, const char *exact_path, const char *kind,
                        const uint8_t *data, size_t size, char *path_out, size_t path_cap);

#endif
