/* Containment: deadly signals, sanitizer deaths, timeouts, memory limits and leaks. Whatever
 * kills an input, that input is written as an artifact before the process exits. */
#ifndef SIFT_FAULT_H
#define SIFT_FAULT_H

#include "engine/base/options.h"
#include "engine/contain/history.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The symbol name of an engine function that is on the stack while the target runs (between
 * main and LLVMFuzzerTestOneInput, or in a handler that prints a report's stack): "fuzzer::NAME",
 * libFuzzer's namespace. Crash triage skips frames of that namespace (ClusterFuzz's stack
 * analyzer ignores "^fuzzer::" as it ignores main), so a crash a few frames below the harness
 * gets the same crash state, its top frames from the target, under sift as under libFuzzer.
 * Symbolizers print this name: the debug information carries it as the linkage name. */
#define SIFT_FRAME(name) __asm__("fuzzer::" #name)

/* Exit codes as libFuzzer uses them (error and timeout codes come from the options). */
#define SIFT_EXIT_OOM 71
/* libFuzzer's exit code when SIGINT or SIGTERM ends a merge (its InterruptExitCode). */
#define SIFT_EXIT_INTERRUPTED 72

/* Why a run stops after the input now running (sift_fault.stop_requested). */
enum {
    SIFT_STOP_NONE,
    SIFT_STOP_ASKED,     /* by the supervisor, or a worker that restarts */
    SIFT_STOP_INTERRUPT, /* SIGINT or SIGTERM */
    SIFT_STOP_GRACEFUL,  /* SIGUSR1 or SIGUSR2: libFuzzer's graceful exit */
};

typedef struct {
    const sift_options *opts;
    /* The input now running: read by signal handlers, so volatile. */
    const uint8_t *volatile data;
    volatile size_t size;
    volatile uint64_t started_ns; /* 0 while no input runs */
    volatile int stop_requested;  /* SIFT_STOP_*: finish the current input, then stop */
    const char *argv0;
    /* Set while the inputs run are files the user named (reproducing): a fault there prints
     * no unit and writes no artifact, as libFuzzer's, which has no unit to dump outside its
     * fuzzing loop: the input is already a file, and the runs of crash triage (ClusterFuzz's
     * reproduce, minimize, cleanse) would otherwise leave files in their working folders. */
    bool inputs_are_files;
    /* Set while the seeds run, before the first mutant: a leak report says so, as libFuzzer's. */
    bool initial_corpus;
    /* While a mutant runs: the operators that made it ("-" separated) and the name of the entry
     * it was made from, which a report prints before the unit, as libFuzzer's "MS: N ...; base
     * unit: SHA1" line. NULL otherwise. */
    const char *volatile mutation;
    const char *volatile base_unit;
    /* Called on the reporting thread before the running input's report is completed and the
     * process exits, with BEFORE_REPORT_CTX: the last chance to write out what the input did
     * (the records of -trace). Async-signal-safe. NULL for none. */
    void (*before_report)(void *ctx);
    void *before_report_ctx;
    /* Called last before a fault exits the process, with FINAL_STATS_CTX: libFuzzer's "stat::"
     * lines of -print_final_stats=1, which it prints after every crash, timeout, OOM and leak
     * and ClusterFuzz reads. Async-signal-safe. NULL for none. */
    void (*final_stats)(void *ctx);
    void *final_stats_ctx;
    /* The last -crash_history inputs run, written beside the artifact of a fault. */
    sift_history history;
} sift_fault;

/* Installs every handler for the process (once): SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT on
 * an alternate stack; the sanitizers' death callback; the -timeout alarm; the -rss_limit_mb
 * watcher thread; the -malloc_limit_mb check, through a sanitizer's malloc hooks or sift-cc's
 * wraps of the program's allocations (src/rt/interpose/alloc.c); SIGINT, SIGTERM, SIGUSR1, SIGUSR2.
 * F must stay valid for the life of the process: the handlers reach it through the one global
 * that signal handlers force on the engine. Returns 0, or -1 with a message on stderr. */
int sift_fault_install(sift_fault *f);

/* libFuzzer's line for a run that STOP (SIFT_STOP_*) ended: "run interrupted; exiting" after
 * SIGINT or SIGTERM, "exiting as requested" after SIGUSR1 or SIGUSR2, none for the others. */
void sift_fault_say_stop(int stop);

/* fork() for sift's own processes that run inputs (merge, -minimize_crash): a crash in one
 * of them is its own, not one in a process the target forked, and it has its own -timeout
 * alarm and -rss_limit_mb watcher. */
pid_t sift_fault_fork(void);

/* How long a process that runs one input under O's -timeout may stay silent before it hangs
 * beyond the reach of its alarm, and another process should kill it; 0 without a timeout. */
uint64_t sift_fault_hang_ns(const sift_options *o);

/* Brackets one execution of the harness so that a fault is blamed on this input. */
void sift_fault_begin(sift_fault *f, const uint8_t *data, size_t size);
/* Ends it; stops the process, as after a crash, when a process the target forked crashed. */
void sift_fault_end(sift_fault *f);

/* The harness wrote into the input it was given (still the current one): reports it as
 * libFuzzer does, writes the crash artifact of the original input and exits. ClusterFuzz looks
 * for this report's words in a binary to decide that it takes a merge in two steps. */
void sift_fault_input_overwritten(sift_fault *f);

/* Whether leak detection can run here (built with LeakSanitizer and -detect_leaks=1). */
bool sift_fault_can_check_leaks(const sift_fault *f);

/* Whether the execution that just ended allocated more than it freed, by the sanitizer's malloc
 * hooks (false without them, as libFuzzer tells nothing then). */
bool sift_fault_run_allocated_more(void);

/* While IGNORE, LeakSanitizer reports nothing this thread allocates (a second run of an input
 * whose first run's leak is the one to report). */
void sift_fault_ignore_leaks(bool ignore);

/* After an execution of DATA that allocated more than it freed, runs the leak check; on a leak
 * writes the leak artifact, prints the report and exits with -error_exitcode. After 1000 checks
 * that found nothing it stops checking, as libFuzzer does, saying so. */
void sift_fault_check_leaks(sift_fault *f, const uint8_t *data, size_t size);

/* For a merge that SIGINT or SIGTERM ends: prints libFuzzer's line ("==PID== libFuzzer: run
 * interrupted; exiting") and returns libFuzzer's exit code for it, SIFT_EXIT_INTERRUPTED. */
int sift_fault_interrupted(void);

/* Process memory in MiB (peak resident set), for status lines. */
size_t sift_fault_rss_mb(void);

#endif
