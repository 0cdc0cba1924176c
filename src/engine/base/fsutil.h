/* Reading corpora from disk: folder listings and bounded file reads that report, never crash. */
#ifndef SIFT_FSUTIL_H
#define SIFT_FSUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    char **paths;
    size_t count, cap;
    size_t skipped;       /* entries left out, besides hidden ones */
    char first_skip[512]; /* "PATH: why" for the first of them */
} sift_pathlist;

/* Appends the regular files under DIR (recursively, links followed) to LIST. Hidden entries
 * are left out silently; so are, counted in LIST->skipped, dangling links, loops of links,
 * FIFOs, sockets and devices (never opened, so nothing blocks), unreadable subfolders and
 * folders reached again through a link. On error (DIR missing, not a folder, unreadable)
 * writes one line naming DIR and the problem into ERR and returns -1. */
int sift_fs_list(sift_pathlist *list, const char *dir, char *err, size_t errlen);

/* Like sift_fs_list for a folder of sift's own (-out's queue), which nobody else should write
 * into: only the regular files right in DIR, links never followed (counted as skipped), and
 * DIR itself must be a real folder. */
int sift_fs_list_own(sift_pathlist *list, const char *dir, char *err, size_t errlen);

/* Appends a copy of PATH to LIST; -1 when out of memory. */
int sift_pathlist_add(sift_pathlist *list, const char *path);

void sift_pathlist_free(sift_pathlist *list);

/* Reads at most MAX bytes of PATH into a fresh buffer (*DATA, free() it; never NULL on
 * success, even for an empty file). TRUNCATED (may be NULL) says whether the file was longer.
 * On error writes one line naming PATH into ERR and returns -1. */
int sift_fs_read(const char *path, size_t max, uint8_t **data, size_t *size, bool *truncated,
                 char *err, size_t errlen);

/* Reads the one input file of a mode that runs exactly one (MODE, e.g. "-trace", names it in
 * the message) whole into *DATA (malloc'd). Prints one line and returns -1 when the N INPUTS
 * are not one readable file. */
int sift_fs_read_one(const char *mode, char *const *inputs, size_t n, uint8_t **data, size_t *size);

/* 0 when this process may create files in the folder DIR. Otherwise writes "DIR: problem"
 * (strerror, or "not a folder") into ERR and returns -1 with errno set. Checked with the
 * effective ids, so that root passes where permission bits would stop others, and a
 * read-only mount stops everyone (EROFS). */
int sift_fs_check_writable(const char *dir, char *err, size_t errlen);

/* The folder that a file named PATH, or files named with the prefix PATH, go into: PATH up to
 * its last slash ("a/b" and "a/" give "a/", "/x" gives "/"), or "." without a slash. Returns
 * OUT, or NULL when it does not fit in CAP. */
char *sift_fs_folder_of(const char *path, char *out, size_t cap);

/* Takes the lock of the folder DIR for this process: a hidden file DIR/.lock with a POSIX
 * record lock on it (fcntl), which the kernel releases when the process ends, by kill -9 too,
 * and which no child inherits: a worker, or a process the target forks and leaves behind,
 * never holds it. The file holds the pid of its owner; a .lock that is not a regular file with
 * one link is refused, never written through. Returns the lock's descriptor: keep it open, and
 * open the file no other way, since closing any descriptor of it drops the lock. On failure -1,
 * with "DIR: in use by another campaign (pid N)" (the kernel's word for N), or "DIR/.lock:
 * problem", in ERR. */
int sift_fs_lock(const char *dir, char *err, size_t errlen);

/* 1 for a folder, 0 for anything else that exists, -1 when PATH cannot be examined. */
int sift_fs_is_dir(const char *path);

/* Creates the folder PATH and any missing folder above it (mkdir -p). On error writes
 * "cannot create the folder PATH: REASON" into ERR and returns -1. */
int sift_fs_mkdirs(const char *path, char *err, size_t errlen);

/* Waits until FD has something to read (or its writer closed it): 1; or until TIMEOUT_MS
 * milliseconds passed (0 when negative: no limit): 0. A signal does not cut the wait short,
 * since the engine's periodic alarm would otherwise turn every wait into a blocking read. */
int sift_fs_wait_readable(int fd, long long timeout_ms);

#endif
