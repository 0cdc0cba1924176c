/* Crash minimisation (-minimize_crash=1) and cleansing (-cleanse_crash=1): remove ever smaller
 * chunks and lower bytes while the crash stays the same. Each try runs in a child process, so a
 * crash costs that try only. */
#include "engine/modes/minimize.h"
#include "engine/base/clock.h"
#include "engine/base/fsutil.h"
#include "engine/contain/artifact.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
                    crash_sig *sig) SIFT_FRAME(crashes);
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
        sift_fuzzer_check_leaks(f, data, size);
        _exit(0);
    }
    close(pipefd[1]);
    if (pid < 0) {
        close(pipefd[0]);
        return false;
    }
    /* The child holds the pipe open while it runs: silence past the timeout is a hang. */
    uint64_t hang_ns = sift_fault_hang_ns(f->opts);
    if (!sift_fs_wait_readable(pipefd[0], hang_ns ? (long long)(hang_ns / SIFT_MS_NS) : -1))
        kill(pid, SIGKILL);
    close(pipefd[0]);
    int status;
    waitpid(pid, &status, 0);
    sig->status = status;
    read_summary(s->errlog, sig->summary, sizeof sig->summary);
    return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static bool same_crash(sift_fuzzer *f, const scratch *s, const uint8_t *data, size_t size,
                       const crash_sig *want) SIFT_FRAME(same_crash);
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
           sift_now_ns() - start_ns < (uint64_t)o->max_total_time * SIFT_SECOND_NS;
}

/* Removes chunks of halving size while the crash stays the same; returns the new size. */
static size_t shrink(sift_fuzzer *f, const scratch *s, uint8_t *cur, size_t size,
                     const crash_sig *want, long long *tries, uint64_t start) SIFT_FRAME(shrink);
static size_t shrink(sift_fuzzer *f, const scratch *s, uint8_t *cur, size_t size,
                     const crash_sig *want, long long *tries, uint64_t start)
{
    uint8_t *cand = malloc(size ? size : 1);
    for (size_t chunk = size / 2 ? size / 2 : 1; cand && chunk >= 1; chunk /= 2) {
        for (size_t pos = 0; pos < size && size > 1 && budget_left(f, *tries, start); (*tries)++) {
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

/* Lowers the bytes from *POS on, one by one, each as far as the crash stays the same: to 0,
 * else by bisection between the last value that lost the crash and the last that kept it. A
 * length or count field that chunk removal must keep in step with what follows it shrinks this
 * way. Stops after the first byte that went down, with *POS after it, so that chunk removal
 * takes at once the bytes the field no longer covers, before they are tried one by one (each
 * crashing try costs a crash report). Returns whether a byte went down. */
static bool lower_bytes(sift_fuzzer *f, const scratch *s, uint8_t *cur, size_t size,
                        const crash_sig *want, long long *tries, uint64_t start, size_t *pos)
{
    for (; *pos < size; ++*pos) {
        unsigned orig = cur[*pos], lost = 0, kept = orig;
        for (unsigned v = 0; v < kept && budget_left(f, *tries, start); (*tries)++) {
            cur[*pos] = (uint8_t)v;
            if (same_crash(f, s, cur, size, want))
                kept = v;
            else
                lost = v;
            cur[*pos] = (uint8_t)kept;
            v = (lost + kept) / 2;
            if (v <= lost) break;
        }
        if (kept < orig) {
            ++*pos;
            return true;
        }
    }
    return false;
}

/* Replaces each byte with ' ' or 0xff, as libFuzzer's -cleanse_crash does, where the crash
 * stays the same, in passes until one changes nothing (at most 5): what is left of the input
 * is what the crash needs, scrubbed of whatever else it carried. Returns whether any byte was
 * replaced. */
static bool cleanse(sift_fuzzer *f, const scratch *s, uint8_t *cur, size_t size,
                    const crash_sig *want)
{
    static const uint8_t replacements[] = {' ', 0xff};
    long long tries = 0;
    uint64_t start = sift_now_ns();
    bool changed = true, any = false;
    for (int pass = 0; changed && pass < 5; pass++) {
        changed = false;
        for (size_t pos = 0; pos < size; pos++) {
            uint8_t orig = cur[pos];
            if (orig == replacements[0] || orig == replacements[1]) continue;
            for (size_t r = 0; r < sizeof replacements && budget_left(f, tries, start); r++) {
                tries++;
                cur[pos] = replacements[r];
                if (same_crash(f, s, cur, size, want)) {
                    fprintf(stderr, "CLEANSE: Replaced byte %zu with 0x%x\n", pos, cur[pos]);
                    changed = any = true;
                    break;
                }
                cur[pos] = orig;
            }
        }
    }
    return any;
}

/* Reads the one crashing input, runs it once to learn its crash, then minimizes (MINIMIZE) or
 * cleanses it and writes the result as an artifact. */
static int rework_crash(sift_fuzzer *f, bool minimize)
{
    const sift_options *o = f->opts;
    const char *flag = minimize ? "-minimize_crash=1" : "-cleanse_crash=1";
    uint8_t *data;
    size_t size;
    if (sift_fs_read_one(flag, o->inputs, o->ninputs, &data, &size) != 0) return 1;
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
    char path[PATH_MAX];
    if (!crashes(f, &s, data, size, &want)) {
        fprintf(stderr, "sift: %s does not crash the target; nothing to %s\n", o->inputs[0],
                minimize ? "minimize" : "cleanse");
        rc = 1;
    } else if (minimize) {
        fprintf(stderr, "CRASH_MIN: minimizing crash input: '%s' (%zu bytes)\n", o->inputs[0],
                size);
        long long tries = 0;
        uint64_t start = sift_now_ns();
        size_t pos = 0;
        bool saved = false; /* whether the artifact holds DATA as it is now */
        for (;;) {
            /* Until a pass removes nothing: a cut can make another possible that an earlier,
             * larger chunk size already passed over. With an exact path each pass's smaller
             * crash replaces the last, as libFuzzer's rounds write theirs: a minimisation
             * stopped early keeps what it reached. */
            size_t before;
            do {
                before = size;
                size = shrink(f, &s, data, size, &want, &tries, start);
                if (size < before) saved = false;
                if (exact && !saved) {
                    if (sift_artifact_write(o->artifact_prefix, exact, "minimized-from", data, size,
                                            path, sizeof path) != 0) {
                        rc = 1;
                        break;
                    }
                    saved = true;
                }
            } while (size < before && budget_left(f, tries, start));
            if (rc != 0) break;
            if (size <= 1) {
                fprintf(stderr, "INFO: The input is small enough, exiting\n");
                break;
            }
            if (!lower_bytes(f, &s, data, size, &want, &tries, start, &pos)) break;
            saved = false;
        }
        if (rc == 0 && !saved &&
            sift_artifact_write(o->artifact_prefix, exact, "minimized-from", data, size, path,
                                sizeof path) != 0)
            rc = 1;
        if (rc == 0)
            fprintf(stderr, "CRASH_MIN: failed to minimize beyond %s (%zu bytes), exiting\n", path,
                    size);
    } else {
        fprintf(stderr, "CLEANSE_CRASH: cleansing crash input: '%s' (%zu bytes)\n", o->inputs[0],
                size);
        /* As libFuzzer's, which writes its output only when it replaces a byte: a tool that
         * finds no output file knows that the input had nothing to scrub. */
        if (!cleanse(f, &s, data, size, &want))
            fprintf(stderr, "CLEANSE_CRASH: no byte could be replaced; nothing written\n");
        else if (sift_artifact_write(o->artifact_prefix, exact, "cleansed-from", data, size, path,
                                     sizeof path) != 0)
            rc = 1;
        else
            fprintf(stderr, "CLEANSE_CRASH: cleansed input written to %s\n", path);
    }
    unlink(s.errlog);
    unlink(s.artifact);
    rmdir(s.dir);
    free(data);
    return rc;
}

int sift_minimize_crash(sift_fuzzer *f)
{
    return rework_crash(f, true);
}

int sift_cleanse_crash(sift_fuzzer *f)
{
    return rework_crash(f, false);
}
