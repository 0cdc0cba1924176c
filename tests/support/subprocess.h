/* Running programs from tests (sift-cc, clang, what they build) and scratch folders. */
#ifndef SIFT_TEST_SUBPROCESS_H
#define SIFT_TEST_SUBPROCESS_H

#include <stddef.h>

/* What a test builds and loads must use the sanitizers the test itself was built with. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIFT_TEST_SAN "-fsanitize=address,undefined"
#endif
#endif
#ifndef SIFT_TEST_SAN
#define SIFT_TEST_SAN ""
#endif

#define SIFT_TEST_OUT_CAP 65536 /* a status line per find adds up: keep every line of a run */

typedef struct {
    int status; /* exit code, 128 + signal number, or -1 when it could not be started */
    char out[SIFT_TEST_OUT_CAP], err[SIFT_TEST_OUT_CAP]; /* NUL-terminated, cut at the size */
} sift_test_proc;

/* Runs ARGV (NULL-terminated; empty strings are left out, so that optional arguments such as
 * SIFT_TEST_SAN can be written inline) with the "NAME=value" strings of ENV (NULL-terminated,
 * or NULL) added to the environment, and waits for it. */
void sift_test_run(sift_test_proc *p, const char *const *argv, const char *const *env);

/* Runs the shell command line made from FMT in folder DIR, like sift_test_run; returns the
 * status. */
int sift_test_sh(sift_test_proc *p, const char *dir, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* What sift_test_sh_jailed changes in the child before its shell starts. */
typedef struct {
    unsigned uid, gid;        /* when uid is not 0: the ids to run as (root drops to them) */
    unsigned long long fsize; /* when not 0: RLIMIT_FSIZE in bytes, SIGXFSZ ignored, so that a
                                 write past it fails with EFBIG as on a full disk */
} sift_test_jail;

/* The unprivileged user and group that root's tests run as: 65534, "nobody". */
#define SIFT_TEST_NOBODY 65534u

/* Like sift_test_sh, in the jail J. The output comes back through pipes, which the size limit
 * does not cut; the shell's own writes to files are limited like its children's. */
int sift_test_sh_jailed(sift_test_proc *p, const sift_test_jail *j, const char *dir,
                        const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Runs FN(CTX) in a child process in the jail J and waits for it; returns what FN returned
 * (as the child's exit code), 128 + a signal's number, 126 when the child could not enter the
 * jail, or -1 when it could not be started. */
int sift_test_fork_jailed(const sift_test_jail *j, int (*fn)(void *ctx), void *ctx);

/* The jail in which permission bits bind: none for a user, SIFT_TEST_NOBODY for root. Returns
 * 0, or -1 with WHY set when root cannot become nobody or nobody cannot reach DIR (which must
 * be open to others, folders above it included). */
int sift_test_unprivileged(sift_test_jail *j, const char *dir, const char **why);

/* Fails the test unless P's stderr holds LINE and no other line starting "sift: ": user errors
 * get one line. WHAT names the case in the message. */
void sift_test_one_line(const sift_test_proc *p, const char *what, const char *line);

/* How many files folder DIR/SUB holds, or -1 when one is hidden (a temporary left) or not named
 * by the SHA-1 of what it holds (cut short under its final name). The campaign's lock, .lock,
 * is left out. Runs a shell through P. */
long sift_test_intact_files(sift_test_proc *p, const char *dir, const char *sub);

/* CLOCK_MONOTONIC in milliseconds, a sleep of MS milliseconds, and whether PID runs (a zombie
 * does not): for tests that wait on processes they started in the background. */
unsigned long long sift_test_now_ms(void);
void sift_test_nap_ms(long ms);
int sift_test_alive(long pid);

/* A new empty folder under $TMPDIR or /tmp (NULL on failure), and its removal with all it
 * holds. */
char *sift_test_tmpdir(void);
void sift_test_rmtree(char *dir);

/* Writes the string TEXT to DIR/NAME, created with MODE; returns the path (to free) or NULL. */
char *sift_test_write(const char *dir, const char *name, const char *text, unsigned mode);

#endif
