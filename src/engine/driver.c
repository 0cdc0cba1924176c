/* The harness binary's entry: parses flags, then reproduces, merges, minimises or fuzzes. */
#include "engine/driver.h"
#include "engine/artifact.h"
#include "engine/fsutil.h"
#include "engine/fuzzer.h"
#include "engine/merge.h"
#include "engine/minimize.h"
#include "engine/options.h"
#include "sift/version.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

/* -close_fd_mask: silence a noisy target; 1 closes stdout, 2 closes stderr. Crash reports
 * keep a copy of the old stderr, so a crash found with a silenced target is still explained. */
static void close_fds(long long mask)
{
    int null = open("/dev/null", O_WRONLY);
    if (null < 0) return;
    if (mask & 2) sift_report_set_fd(fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3));
    if (mask & 1) dup2(null, STDOUT_FILENO);
    if (mask & 2) dup2(null, STDERR_FILENO);
    close(null);
}

/* Runs each file once (or -runs times): reproducing a crash from its artifact. */
static int reproduce(sift_fuzzer *f, char **argv)
{
    sift_options *o = f->opts;
    long long times = o->runs > 0 ? o->runs : 1;
    fprintf(stderr, "%s: Running %zu inputs %lld time(s) each.\n", argv[0], o->ninputs, times);
    for (size_t i = 0; i < o->ninputs; i++) {
        uint8_t *data;
        size_t size;
        char err[4352];
        size_t max = o->max_len ? (size_t)o->max_len : (size_t)-1;
        if (sift_fs_read(o->inputs[i], max, &data, &size, NULL, err, sizeof err) != 0) {
            fprintf(stderr, "sift: %s\n", err);
            return 1;
        }
        fprintf(stderr, "Running: %s\n", o->inputs[i]);
        uint64_t t0 = sift_now_ns();
        for (long long r = 0; r < times; r++)
            sift_fuzzer_execute(f, data, size);
        fprintf(stderr, "Executed %s in %llu ms\n", o->inputs[i],
                (unsigned long long)((sift_now_ns() - t0) / 1000000ull));
        if (sift_fault_can_check_leaks(&f->fault)) sift_fault_check_leaks(&f->fault, data, size);
        free(data);
    }
    fprintf(stderr, "***\n*** NOTE: fuzzing was not performed, you have only\n"
                    "***       executed the target code on a fixed set of inputs.\n***\n");
    return 0;
}

/* Whether the flag ARG is one of those that make the parent spawn jobs. */
static bool is_job_flag(const char *arg)
{
    static const char *const flags[] = {"-jobs=", "-workers=", "-fork="};
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        if (!strncmp(arg, flags[i], strlen(flags[i]))) return true;
    return false;
}

static pid_t spawn_job(int argc, char **argv, int job)
{
    char log[64];
    snprintf(log, sizeof log, "fuzz-%d.log", job);
    pid_t pid = fork();
    if (pid != 0) return pid;
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "sift: cannot create %s: %s\n", log, strerror(errno));
        _exit(1);
    }
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    char **args = calloc((size_t)argc + 1, sizeof(*args));
    if (!args) _exit(1);
    int n = 0;
    for (int i = 0; i < argc; i++)
        if (!is_job_flag(argv[i])) args[n++] = argv[i];
    execv("/proc/self/exe", args);
    fprintf(stderr, "sift: cannot start job: %s\n", strerror(errno));
    _exit(1);
}

/* -jobs=N: N independent fuzzing processes, at most -workers at a time, each logging to
 * fuzz-<job>.log and sharing the corpus folder. */
static int run_jobs(const sift_options *o, int argc, char **argv)
{
    long long jobs = o->jobs ? o->jobs : o->fork;
    long long workers = o->workers ? o->workers : o->fork;
    if (!workers) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        workers = cpus > 1 ? cpus / 2 : 1;
    }
    if (!jobs) jobs = workers;
    if (workers > jobs) workers = jobs;
    int running = 0, worst = 0;
    for (int job = 0; job < jobs || running > 0;) {
        if (job < jobs && running < workers) {
            fprintf(stderr, "%s > fuzz-%d.log 2>&1\n", argv[0], job);
            if (spawn_job(argc, argv, job) < 0) {
                fprintf(stderr, "sift: cannot fork job %d: %s\n", job, strerror(errno));
                return 1;
            }
            running++;
            job++;
            continue;
        }
        int status;
        if (wait(&status) < 0) break;
        running--;
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        worst = code > worst ? code : worst;
        fprintf(stderr, "================== Job finished with exit code %d\n", code);
    }
    return worst;
}

int sift_driver_main(int argc, char **argv, sift_target_fn target)
{
    static sift_options opts;
    sift_options_defaults(&opts);
    char err[512];
    if (sift_options_parse(&opts, argc, argv, err, sizeof err) != 0) {
        fprintf(stderr, "sift: %s\n", err);
        return 1;
    }
    if (opts.help) {
        sift_options_help(stdout, argv[0]);
        return 0;
    }
    fprintf(stderr, "INFO: sift %s\n", SIFT_VERSION);
    if (opts.jobs || opts.workers || opts.fork) return run_jobs(&opts, argc, argv);
    if (opts.close_fd_mask) close_fds(opts.close_fd_mask);
    if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
    bool files = false;
    for (size_t i = 0; i < opts.ninputs; i++) {
        int dir = sift_fs_is_dir(opts.inputs[i]);
        if (dir < 0) {
            fprintf(stderr, "sift: %s: %s\n", opts.inputs[i], strerror(errno));
            return 1;
        }
        files |= dir == 0;
    }
    static sift_fuzzer fuzzer;
    if (sift_fuzzer_init(&fuzzer, &opts, target, argv[0]) != 0) return 1;
    int rc;
    if (opts.merge)
        rc = sift_merge(&fuzzer);
    else if (opts.minimize_crash)
        rc = sift_minimize_crash(&fuzzer);
    else if (files)
        rc = reproduce(&fuzzer, argv);
    else
        rc = sift_fuzzer_run(&fuzzer);
    sift_fuzzer_free(&fuzzer);
    return rc;
}
