/* Files written whole or not at all, and the SHA-1 names of inputs. Everything here is
 * async-signal-safe (no allocation, no stdio), so crash handlers may write artifacts with it. */
#ifndef SIFT_FILES_H
#define SIFT_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Pins the working folder of the start: the relative paths that the writers here take are
 * resolved against it from then on, so that a target calling chdir() moves no artifact and no
 * saved input. Returns 0, or -1 with errno set. */
int sift_file_pin_cwd(void);

/* The pinned folder's descriptor for openat(), AT_FDCWD when none was pinned. */
int sift_file_cwd(void);

/* Hex SHA-1 of DATA into OUT (41 bytes with the NUL). */
void sift_sha1_hex(const uint8_t *data, size_t size, char out[41]);

/* Creates a new hidden temporary next to PATH (".NAME.tmp.PID.N": folder readers skip it and
 * resume removes it), its name into TMP (CAP bytes), relative to the pinned folder. Returns its
 * descriptor open for writing, or -1 with errno set. */
int sift_file_temp(const char *path, char *tmp, size_t cap);

/* sift_file_temp for a folder: creates it (empty, mode 0777 less the umask) and returns 0, or
 * -1 with errno set. */
int sift_file_temp_dir(const char *path, char *tmp, size_t cap);

/* Appends S to DST (holding *LEN bytes, NUL-terminated) within CAP bytes; false, and DST as it
 * was, when it does not fit. */
bool sift_file_append(char *dst, size_t *len, size_t cap, const char *s);
/* Appends V in decimal, zero-padded to WIDTH digits, as sift_file_append. */
bool sift_file_append_u64(char *dst, size_t *len, size_t cap, uint64_t v, unsigned width);

/* Writes all of DATA to FD. Returns 0, or -1 with errno set (ENOSPC when a write took
 * nothing without an error). */
int sift_file_write_all(int fd, const uint8_t *data, size_t size);

/* Writes DATA to PATH through a temporary and a rename, so that a process killed at any moment
 * leaves the whole file or none; with SYNC the data is on disk before the rename, so that a
 * machine crash leaves it too. Returns 0, or -1 with errno set and no temporary left. */
int sift_write_whole(const char *path, const uint8_t *data, size_t size, bool sync);

/* sift_write_whole, synced: for what is reported as saved (artifacts, stats). */
int sift_write_atomic(const char *path, const uint8_t *data, size_t size);

#endif
