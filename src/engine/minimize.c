/* Crash minimisation (-minimize_crash=1): remove ever smaller chunks while the crash stays the
 * same. Each try runs in a child process, so a crash costs that try only. */
#include "engine/minimize.h"
#include "engine/artifact.h"
#include "engine/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* What makes two crashes the same: how the process ended and the sanitizer's summary. */
typedef struct {
    int status;
    char summary[512];
} crash_sig;

typedef struct {
    char dir[64];
    char errlog[96];
    char artifact[96];
} scratch;

static void read_summary(const char *path, char *out, size_t cap)
{
    out[0] = 0;
    FILE *in = fopen(path, "r");
    if (!in) return;
    char line[512];
    while (fgets(line, sizeof line, in))
        if (!strncmp(line, "SUMMARY:", 8)) snprintf(out, cap, "%s", line);
    (void)fclose(in);
}

/* Runs DATA once in a child; returns whether it crashed, filling SIG. */
static bool crashes(sift_fuzzer *f, const scratch *s, const uint8_t *data, size_t size,
                    crash_sig *sig)
{
    int pipefd[2];
    if (pipe(pipefd) != 0) return false;
    fflush(stderr);
    pid_t pid = sift_fault_fork();
    if (pid == 0) {
        close(pipefd[0]);
        int fd = open(s->errlog, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) dup2(fd, STDERR_FILENO);
        f->opts->exact_artifact_path = s->artifact; /* keep each try's artifact out of sight */
        sift_fuzzer_execute(f, data, size);
        if (sift_fault_can_check_leaks(&f->fault)) sift_fault_check_leaks(&f->fault, data, size);
        _exit(0);
    }
    close(pipefd[1]);
    if (pid < 0) {
        close(pipefd[0]);
        return false;
    }
    /* The child holds the pipe open while it runs: silence past the timeout is a hang. */
    struct pollfd p = {.fd = pipefd[0], .events = POLLIN};
    long long timeout = f->opts->timeout;
    if (poll(&p, 1, timeout > 0 ? (int)(timeout * 1000 + 1000) : -1) == 0) kill(pid, SIGKILL);
    close(pipefd[0]);
    int status;
    waitpid(pid, &status, 0);
    sig->status = status;
    read_summary(s->errlog, sig->summary, sizeof sig->summary);
    return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static bool same_crash(sift_fuzzer *f, const scratch *s, const uint8_t *data, size_t size,
                       const crash_sig *want)
{
    crash_sig got;
    return crashes(f, s, data, size, &got) && got.status == want->status &&
           !strcmp(got.summary, want->summary);
}

static bool budget_left(sift_fuzzer *f, long long tries, uint64_t start_ns)
{
    const sift_options *o = f->opts;
    if (o->runs > 0 && tries >= o->runs) return false;
    return !o->max_total_time ||
           sift_now_ns() - start_ns < (uint64_t)o->max_total_time * 1000000000ull;
}

/* Removes chunks of halving size while the crash stays the same; returns the new size. */
static size_t shrink(sift_fuzzer *f, const scratch *s, uint8_t *cur, size_t size,
                     const crash_sig *want)
{
    uint8_t *cand = malloc(size ? size : 1);
    long long tries = 0;
    uint64_t start = sift_now_ns();
    for (size_t chunk = size / 2 ? size / 2 : 1; cand && chunk >= 1; chunk /= 2) {
        for (size_t pos = 0; pos < size && size > 1 && budget_left(f, tries, start); tries++) {
            size_t cut = pos + chunk <= size ? chunk : size - pos;
            memcpy(cand, cur, pos);
            memcpy(cand + pos, cur + pos + cut, size - pos - cut);
            if (same_crash(f, s, cand, size - cut, want)) {
                size -= cut;
                memcpy(cur, cand, size);
                fprintf(stderr, "CRASH_MIN: %zu bytes still crash\n", size);
            } else {
                pos += cut;
            }
        }
    }
    free(cand);
    return size;
}

int sift_minimize_crash(sift_fuzzer *f)
{
    const sift_options *o = f->opts;
    if (o->ninputs != 1 || sift_fs_is_dir(o->inputs[0]) != 0) {
        fprintf(stderr, "sift: -minimize_crash=1 takes exactly one crashing input file\n");
        return 1;
    }
    uint8_t *data;
    size_t size;
    char err[4352];
    if (sift_fs_read(o->inputs[0], (size_t)-1, &data, &size, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "sift: %s\n", err);
        return 1;
    }
    scratch s;
    snprintf(s.dir, sizeof s.dir, "/tmp/sift-minimize-XXXXXX");
    if (!mkdtemp(s.dir)) {
        fprintf(stderr, "sift: cannot create a scratch folder in /tmp: %s\n", strerror(errno));
        free(data);
        return 1;
    }
    snprintf(s.errlog, sizeof s.errlog, "%s/stderr", s.dir);
    snprintf(s.artifact, sizeof s.artifact, "%s/artifact", s.dir);
    const char *exact = o->exact_artifact_path;
    crash_sig want;
    int rc = 0;
    if (!crashes(f, &s, data, size, &want)) {
        fprintf(stderr, "sift: %s does not crash the target; nothing to minimize\n", o->inputs[0]);
        rc = 1;
    } else {
        fprintf(stderr, "CRASH_MIN: minimizing crash input: '%s' (%zu bytes)\n", o->inputs[0],
                size);
        size = shrink(f, &s, data, size, &want);
        char path[PATH_MAX];
        if (sift_artifact_write(o->artifact_prefix, exact, "minimized-from", data, size, path,
                                sizeof path) != 0)
            rc = 1;
        else
            fprintf(stderr, "CRASH_MIN: failed to minimize beyond %s (%zu bytes), exiting\n", path,
                    size);
    }
    unlink(s.errlog);
    unlink(s.artifact);
    rmdir(s.dir);
    free(data);
    return rc;
}
