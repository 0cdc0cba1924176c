/* Containment: whatever kills an input, the input is written as an artifact before the process
 * exits, with the lines and exit codes of libFuzzer that crash triage tools parse. Reports run
 * in signal handlers, malloc hooks and sanitizer callbacks, on a possibly broken heap, so they
 * only use the async-signal-safe output of artifact.c. */
#define _GNU_SOURCE
#include "engine/contain/fault.h"
#include "engine/contain/report.h"
#include "engine/contain/handlers.h"
#include "engine/base/clock.h"

#include "engine/contain/artifact.h"
#include "engine/contain/mtrace.h"

#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* Defined by a sanitizer runtime when one is linked in; NULL otherwise. */
extern void __sanitizer_print_stack_trace(void) __attribute__((weak));
extern void __sanitizer_print_memory_profile(size_t top_percent, size_t max_reports)
    __attribute__((weak));
extern void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));
extern int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *,
                                                                         size_t),
                                                     void (*free_hook)(const volatile void *))
    __attribute__((weak));
extern int __lsan_do_recoverable_leak_check(void) __attribute__((weak));
extern void __lsan_disable(void) __attribute__((weak));
extern void __lsan_enable(void) __attribute__((weak));
extern int __sanitizer_acquire_crash_state(void) __attribute__((weak));
/* Defined where sift-cc wrapped the program's allocation functions, a build without a
 * sanitizer's allocator (src/rt/interpose/alloc.c); NULL otherwise. */
extern void __sift_malloc_limit(size_t bytes, void (*exceeded)(size_t size)) __attribute__((weak));

/* The installed state. Signal handlers, the sanitizers' death callback, the malloc hooks, the
 * exit hook and the memory watcher thread receive no context, so they all reach it through
 * this one pointer. Set once by sift_fault_install and never cleared: a handler may run at
 * any later moment. */
static sift_fault *volatile g_fault;

/* Taken by the first fault that reports: a second one (another thread, or an alarm during a
 * crash report) must neither interleave its lines nor write a second artifact. */
static atomic_int g_reporting;
static atomic_int g_reporter_tid;
/* A report stalls when its signal came while the target held a lock that printing a stack
 * trace takes (malloc's, in glibc's pthread_getattr_np): the watcher ends it after
 * REPORT_STALL_NS, writing the input first if the report had not, with the report's exit
 * code. */
#define REPORT_STALL_NS (10 * SIFT_SECOND_NS)
static _Atomic uint64_t g_report_since_ns;
static const char *_Atomic g_report_kind;
static atomic_int g_report_exit;
static atomic_bool g_unit_dumped;

/* The thread that installed, which runs the inputs: a timeout's stack trace must be its. */
static pid_t g_fuzz_tid;

/* The process that installed. A process the target forks inherits the handlers, and its
 * report writes the artifact; this flag, in memory shared across fork, tells the fuzzing
 * process, whose exit status would otherwise say nothing happened. */
static pid_t g_fuzz_pid;
static atomic_int *g_child_crashed;

/* Single allocations of at least this many MiB are out-of-memory; 0 = no limit. */
static size_t g_malloc_limit_mb;
static bool g_hooks_installed;
/* Allocations and frees of the running input: the leak check stops the world and scans the
 * heap, so it runs only after executions that allocated more than they freed. */
static atomic_size_t g_mallocs, g_frees;
static unsigned g_leak_attempts;
static bool g_leaks_off;

/* libFuzzer's bound: a target that keeps allocations in global state without leaking them
 * would otherwise pay for a leak check after every execution. */
#define MAX_LEAK_ATTEMPTS 1000

#define MAX_FRAMES 64

static pid_t current_tid(void)
{
    return (pid_t)syscall(SYS_gettid);
}

/* KIND names the artifact of the running input, NULL for none; EXIT_CODE ends the process. */
static bool claim_report(const char *kind, long long exit_code)
{
    if (atomic_exchange(&g_reporting, 1) != 0) return false;
    atomic_store(&g_reporter_tid, current_tid());
    atomic_store(&g_report_kind, kind);
    atomic_store(&g_report_exit, (int)exit_code);
    atomic_store(&g_report_since_ns, sift_now_ns());
    return true;
}

/* Whether the sanitizer's crash state is still free to take, and now taken: a target that took
 * it reports for itself, and libFuzzer then reports no exit, timeout or out-of-memory of its
 * own. True without a sanitizer. */
static bool take_crash_state(void)
{
    return !__sanitizer_acquire_crash_state || __sanitizer_acquire_crash_state();
}

/* Starts a line as libFuzzer starts its error lines: "==PID== ". */
static void out_pid(sift_report *o)
{
    sift_report_str(o, "==");
    sift_report_u64(o, (uint64_t)getpid());
    sift_report_str(o, "== ");
}

static void say(const char *text)
{
    sift_report o;
    o.len = 0;
    sift_report_str(&o, text);
    sift_report_flush(&o);
}

static void say_pid(const char *text)
{
    sift_report o;
    o.len = 0;
    out_pid(&o);
    sift_report_str(&o, text);
    sift_report_flush(&o);
}

static void print_stack_trace(void) SIFT_FRAME(print_stack_trace);
static void print_stack_trace(void)
{
    if (__sanitizer_print_stack_trace) {
        __sanitizer_print_stack_trace();
        return;
    }
    void *frames[MAX_FRAMES];
    int n = backtrace(frames, MAX_FRAMES);
    backtrace_symbols_fd(frames, n, sift_report_fd());
}

/* libFuzzer's line on how the mutant that F runs was made. */
static void report_mutation(const sift_fault *f)
{
    const char *trace = f->mutation, *base = f->base_unit;
    if (!trace || !base) return;
    uint64_t ops = 0;
    for (const char *c = trace; *c; c++)
        ops += *c == '-';
    sift_report o;
    o.len = 0;
    sift_report_str(&o, "MS: ");
    sift_report_u64(&o, ops);
    sift_report_str(&o, " ");
    sift_report_str(&o, trace);
    sift_report_str(&o, "; base unit: ");
    sift_report_str(&o, base);
    sift_report_str(&o, "\n");
    sift_report_flush(&o);
}

static void dump_unit(const sift_fault *f, const char *kind, const uint8_t *data, size_t size)
{
    if (g_child_crashed && getpid() != g_fuzz_pid) atomic_store(g_child_crashed, 1);
    if (!f->inputs_are_files) {
        report_mutation(f);
        sift_report_unit(data, size);
        sift_artifact_write(f->opts->artifact_prefix, f->opts->exact_artifact_path, kind, data,
                            size, NULL, 0);
        if (f->history.n)
            sift_artifact_write_history(f->opts->artifact_prefix, f->opts->exact_artifact_path,
                                        data, size, &f->history, f->argv0);
    }
    /* Only once written: a report that stalls in the lines above leaves the watcher to it. */
    atomic_store(&g_unit_dumped, true);
}

static void final_stats(const sift_fault *f)
{
    if (f->final_stats) f->final_stats(f->final_stats_ctx);
}

/* Writes the running input, if any: a fault outside an execution has no input to blame. */
static void dump_current_unit(const sift_fault *f, const char *kind)
{
    if (!f->started_ns) return;
    atomic_thread_fence(memory_order_acquire);
    if (f->before_report) f->before_report(f->before_report_ctx);
    dump_unit(f, kind, f->data, f->size);
}

static void on_deadly_signal(int sig, siginfo_t *info, void *uctx) SIFT_FRAME(on_deadly_signal);
static void on_deadly_signal(int sig, siginfo_t *info, void *uctx)
{
    (void)info;
    (void)uctx;
    sift_fault *f = g_fault;
    if (!claim_report("crash", f->opts->error_exitcode)) {
        /* The report under way ends the process. Its own thread lands here only when that
         * report dies itself, as a sanitizer with abort_on_error=1 aborts after the death
         * callback: die of the signal, as asked. */
        if (atomic_load(&g_reporter_tid) == current_tid()) {
            struct sigaction dfl;
            memset(&dfl, 0, sizeof(dfl));
            dfl.sa_handler = SIG_DFL;
            sigaction(sig, &dfl, NULL);
            (void)raise(sig);
            return;
        }
        for (;;)
            pause();
    }
    say_pid("ERROR: libFuzzer: deadly signal\n");
    print_stack_trace();
    say("NOTE: libFuzzer has rudimentary signal handlers.\n"
        "      Combine libFuzzer with AddressSanitizer or similar for better crash reports.\n"
        "SUMMARY: libFuzzer: deadly signal\n");
    dump_current_unit(f, "crash");
    final_stats(f);
    _exit((int)f->opts->error_exitcode);
}

/* The sanitizer has printed its report and exits after this returns. */
static void on_sanitizer_death(void)
{
    if (!claim_report("crash", g_fault->opts->error_exitcode)) return;
    dump_current_unit(g_fault, "crash");
    final_stats(g_fault);
}

static void on_alarm(int sig, siginfo_t *info, void *uctx) SIFT_FRAME(on_alarm);
static void on_alarm(int sig, siginfo_t *info, void *uctx)
{
    (void)info;
    (void)uctx;
    int saved = errno;
    sift_fault *f = g_fault;
    /* The stack worth printing is the fuzzing thread's; after a fork() that thread is gone and
     * the alarm is handled where it lands. */
    if (current_tid() != g_fuzz_tid && syscall(SYS_tgkill, getpid(), g_fuzz_tid, sig) == 0) {
        errno = saved;
        return;
    }
    uint64_t started = f->started_ns;
    uint64_t seconds = started ? (sift_now_ns() - started) / SIFT_SECOND_NS : 0;
    if (seconds < (uint64_t)f->opts->timeout || !take_crash_state() ||
        !claim_report("timeout", f->opts->timeout_exitcode)) {
        errno = saved;
        return;
    }
    sift_report o;
    o.len = 0;
    sift_report_str(&o, "ALARM: working on the last Unit for ");
    sift_report_u64(&o, seconds);
    sift_report_str(&o, " seconds\n       and the timeout value is ");
    sift_report_u64(&o, (uint64_t)f->opts->timeout);
    sift_report_str(&o, " (use -timeout=N to change)\n");
    sift_report_flush(&o);
    dump_current_unit(f, "timeout");
    out_pid(&o);
    sift_report_str(&o, "ERROR: libFuzzer: timeout after ");
    sift_report_u64(&o, seconds);
    sift_report_str(&o, " seconds\n");
    sift_report_flush(&o);
    print_stack_trace();
    say("SUMMARY: libFuzzer: timeout\n");
    final_stats(f);
    _exit((int)f->opts->timeout_exitcode);
}

/* The first SIGINT or SIGTERM lets the current input finish and the loop print its final
 * stats; a second one leaves at once, as libFuzzer does on any interrupt. */
static void on_interrupt(int sig, siginfo_t *info, void *uctx)
{
    (void)sig;
    (void)info;
    (void)uctx;
    int saved = errno;
    sift_fault *f = g_fault;
    if (f->stop_requested != SIFT_STOP_INTERRUPT) {
        f->stop_requested = SIFT_STOP_INTERRUPT;
        say("INFO: signal received, trying to exit gracefully\n");
        errno = saved;
        return;
    }
    say_pid("libFuzzer: run interrupted; exiting\n");
    _exit(0);
}

/* SIGUSR1 and SIGUSR2: libFuzzer's graceful exit, after the input now running. */
static void on_graceful_exit(int sig, siginfo_t *info, void *uctx)
{
    (void)sig;
    (void)info;
    (void)uctx;
    int saved = errno;
    sift_fault *f = g_fault;
    if (f->stop_requested == SIFT_STOP_NONE) f->stop_requested = SIFT_STOP_GRACEFUL;
    say("INFO: signal received, trying to exit gracefully\n");
    errno = saved;
}

void sift_fault_say_stop(int stop)
{
    if (stop == SIFT_STOP_INTERRUPT) say_pid("libFuzzer: run interrupted; exiting\n");
    if (stop == SIFT_STOP_GRACEFUL) say_pid("INFO: libFuzzer: exiting as requested\n");
}

int sift_fault_interrupted(void)
{
    sift_fault_say_stop(SIFT_STOP_INTERRUPT);
    return SIFT_EXIT_INTERRUPTED;
}

/* A process the target forked reported a crash (its report is above): the fuzzing process
 * stops with the error exit code, as if the crash were its own. */
static void stop_if_a_child_crashed(const sift_fault *f)
{
    if (!g_child_crashed || !atomic_load(g_child_crashed) || getpid() != g_fuzz_pid ||
        !claim_report(NULL, f->opts->error_exitcode))
        return;
    say_pid("ERROR: libFuzzer: a process forked by the fuzz target crashed\n"
            "SUMMARY: libFuzzer: crash in a forked process\n");
    _exit((int)f->opts->error_exitcode);
}

/* A harness calling exit() would end the run without a trace of the input that did it. A
 * process it forked calling exit() is not the harness's exit. */
static void on_exit_during_input(void) SIFT_FRAME(on_exit_during_input);
static void on_exit_during_input(void)
{
    sift_fault *f = g_fault;
    stop_if_a_child_crashed(f);
    if (!f->started_ns || getpid() != g_fuzz_pid || !take_crash_state() ||
        !claim_report("crash", f->opts->error_exitcode))
        return;
    say_pid("ERROR: libFuzzer: fuzz target exited\n");
    print_stack_trace();
    say("SUMMARY: libFuzzer: fuzz target exited\n");
    dump_current_unit(f, "crash");
    final_stats(f);
    _exit((int)f->opts->error_exitcode);
}

/* A sanitizer's report writes to its symbolizer through a pipe; a symbolizer that could not
 * start (a missing binary, an unprivileged user) leaves that pipe without a reader, and the
 * default SIGPIPE would kill the process before the death callback writes the artifact. A
 * handler that does nothing turns the signal into EPIPE, which the sanitizer reports and gets
 * past. A handler, not SIG_IGN, because an ignored signal stays ignored across exec in the
 * programs a target starts. */
static void on_broken_pipe(int sig, siginfo_t *info, void *uctx)
{
    (void)sig;
    (void)info;
    (void)uctx;
}

static void out_of_memory_header(sift_report *o)
{
    out_pid(o);
    sift_report_str(o, "ERROR: libFuzzer: out-of-memory (");
}

/* The report's lines may be what stalls (a reader that stopped reading): the lines from here
 * go out only where the descriptor takes them at once; the artifact is written regardless. */
static void end_stalled_report(sift_fault *f)
{
    uint64_t since = atomic_load(&g_report_since_ns);
    if (!since || sift_now_ns() - since < REPORT_STALL_NS) return;
    int fd = sift_report_fd();
    (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    const char *kind = atomic_load(&g_report_kind);
    if (kind && !atomic_load(&g_unit_dumped)) dump_current_unit(f, kind);
    say_pid("sift: the report stalled, the target holding a lock it needs; exiting\n");
    _exit(atomic_load(&g_report_exit));
}

/* What the watcher starts from: its fault, and the semaphore its starter waits on. */
typedef struct {
    sift_fault *fault;
    sem_t started;
} watcher_start;

static void *watch_process(void *arg)
{
    watcher_start *start = arg;
    sift_fault *f = start->fault;
    sem_post(&start->started); /* START is gone once the starter wakes */
    size_t limit = (size_t)f->opts->rss_limit_mb;
    for (;;) {
        sleep(1);
        end_stalled_report(f);
        size_t used = sift_fault_rss_mb();
        if (!limit || used <= limit || !take_crash_state() || !claim_report("oom", SIFT_EXIT_OOM))
            continue;
        sift_report o;
        o.len = 0;
        out_of_memory_header(&o);
        sift_report_str(&o, "used: ");
        sift_report_u64(&o, used);
        sift_report_str(&o, "Mb; limit: ");
        sift_report_u64(&o, limit);
        sift_report_str(&o, "Mb)\n   To change the out-of-memory limit use -rss_limit_mb=<N>\n\n");
        sift_report_flush(&o);
        /* What holds the memory, under ASan: the allocations of 95% of the heap, 8 at most,
         * as libFuzzer prints them ("Live Heap Allocations"). This thread is no handler. */
        if (__sanitizer_print_memory_profile) __sanitizer_print_memory_profile(95, 8);
        dump_current_unit(f, "oom");
        say("SUMMARY: libFuzzer: out-of-memory\n");
        final_stats(f);
        _exit(SIFT_EXIT_OOM);
    }
}

/* An allocation of at least -malloc_limit_mb, as libFuzzer reports it, before the target
 * touches any of it. */
static void malloc_over_limit(size_t size) SIFT_FRAME(malloc_over_limit);
static void malloc_over_limit(size_t size)
{
    sift_fault *f = g_fault;
    if (!claim_report("oom", SIFT_EXIT_OOM)) return;
    sift_report o;
    o.len = 0;
    out_of_memory_header(&o);
    sift_report_str(&o, "malloc(");
    sift_report_u64(&o, size);
    sift_report_str(&o, "))\n   To change the out-of-memory limit use -rss_limit_mb=<N>\n\n");
    sift_report_flush(&o);
    print_stack_trace();
    dump_current_unit(f, "oom");
    say("SUMMARY: libFuzzer: out-of-memory\n");
    final_stats(f);
    _exit(SIFT_EXIT_OOM);
}

static void on_malloc(const volatile void *ptr, size_t size) SIFT_FRAME(on_malloc);
static void on_malloc(const volatile void *ptr, size_t size)
{
    if (g_fault->started_ns)
        sift_mtrace_malloc(atomic_fetch_add_explicit(&g_mallocs, 1, memory_order_relaxed), ptr,
                           size);
    if (g_malloc_limit_mb && (size >> 20) >= g_malloc_limit_mb) malloc_over_limit(size);
}

static void on_free(const volatile void *ptr)
{
    if (ptr && g_fault->started_ns)
        sift_mtrace_free(atomic_fetch_add_explicit(&g_frees, 1, memory_order_relaxed), ptr);
}

/* The alarm checks the running input every PERIOD seconds, as libFuzzer's does: a timeout is
 * reported up to one period late. */
static time_t alarm_period(long long timeout)
{
    return timeout / 2 > 1 ? (time_t)(timeout / 2) : 1;
}

static int install_timer(long long timeout)
{
    if (sift_handlers_set(SIGALRM, on_alarm, SA_RESTART) < 0) return -1;
    time_t period = alarm_period(timeout);
    struct itimerval it = {.it_interval = {period, 0}, .it_value = {period, 0}};
    return setitimer(ITIMER_REAL, &it, NULL);
}

/* Time enough for an input's timeout report (the alarm's lateness, a symbolized stack trace):
 * past it, a process that runs inputs and has said nothing hangs beyond the alarm's reach. */
#define REPORT_GRACE_NS (5 * SIFT_SECOND_NS)

uint64_t sift_fault_hang_ns(const sift_options *o)
{
    if (o->timeout <= 0) return 0;
    return ((uint64_t)o->timeout + (uint64_t)alarm_period(o->timeout)) * SIFT_SECOND_NS +
           REPORT_GRACE_NS;
}

/* Returns once the watcher runs its own code. A new thread's start-up in the sanitizers'
 * runtime allocates, and a target that forks while it does leaves its child an allocator lock
 * that no thread of the child holds: the child then hangs in LeakSanitizer's check at exit
 * (LLVM 14 takes no allocator lock around fork). The watcher itself never allocates. */
static int start_watcher(sift_fault *f)
{
    watcher_start start = {.fault = f};
    if (sem_init(&start.started, 0, 0) != 0) return -1;
    /* Process-directed signals (the alarm, interrupts) must reach the fuzzing thread. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t thread;
    int rc = pthread_create(&thread, NULL, watch_process, &start);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0) {
        while (sem_wait(&start.started) != 0 && errno == EINTR) {
        }
        pthread_detach(thread);
    }
    sem_destroy(&start.started);
    if (rc) {
        errno = rc;
        return -1;
    }
    return 0;
}

/* A flag in memory that the processes forked from now on share; NULL when out of memory. */
static atomic_int *new_shared_flag(void)
{
    void *p =
        mmap(NULL, sizeof(atomic_int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

int sift_fault_install(sift_fault *f)
{
    if (g_fault) {
        fprintf(stderr, "ERROR: sift: fault handlers are already installed\n");
        return -1;
    }
    g_fault = f;
    g_fuzz_tid = current_tid();
    const sift_options *o = f->opts;

    /* backtrace() loads the unwinder on first use, which allocates: do it now, not in a
     * handler. */
    void *frame;
    backtrace(&frame, 1);

    const char *what = "input history";
    if (sift_history_init(&f->history, (size_t)o->crash_history) != 0) goto fail;
    what = "crash flag";
    g_fuzz_pid = getpid();
    if (!(g_child_crashed = new_shared_flag())) goto fail;
    what = "alternate signal stack";
    if (sift_handlers_alt_stack() < 0) goto fail;
    what = "signal handlers";
    if (sift_handlers_install_deadly(on_deadly_signal) < 0) goto fail;
    if (sift_handlers_set(SIGINT, on_interrupt, SA_RESTART) < 0 ||
        sift_handlers_set(SIGTERM, on_interrupt, SA_RESTART) < 0 ||
        sift_handlers_set(SIGUSR1, on_graceful_exit, SA_RESTART) < 0 ||
        sift_handlers_set(SIGUSR2, on_graceful_exit, SA_RESTART) < 0)
        goto fail;
    /* A target's own SIGPIPE handling, set up in LLVMFuzzerInitialize, is left alone. */
    struct sigaction pipe_now;
    if (sigaction(SIGPIPE, NULL, &pipe_now) == 0 && !(pipe_now.sa_flags & SA_SIGINFO) &&
        pipe_now.sa_handler == SIG_DFL &&
        sift_handlers_set(SIGPIPE, on_broken_pipe, SA_RESTART) < 0)
        goto fail;
    if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(on_sanitizer_death);
    what = "exit hook";
    if (atexit(on_exit_during_input) != 0) goto fail;
    what = "timeout alarm";
    if (o->timeout > 0 && install_timer(o->timeout) < 0) goto fail;
    what = "memory watcher thread";
    if (start_watcher(f) < 0) goto fail;
    long long limit = o->malloc_limit_mb > 0 ? o->malloc_limit_mb : o->rss_limit_mb;
    g_malloc_limit_mb = limit > 0 ? (size_t)limit : 0;
    if (__sanitizer_install_malloc_and_free_hooks)
        g_hooks_installed = __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free) != 0;
    if (!sift_mtrace_set(o->trace_malloc, g_hooks_installed))
        fprintf(stderr, "WARNING: -trace_malloc needs a sanitizer's allocator (build with "
                        "-fsanitize=address): nothing is traced\n");
    if (__sift_malloc_limit && g_malloc_limit_mb)
        __sift_malloc_limit(g_malloc_limit_mb << 20, malloc_over_limit);
    return 0;
fail:
    fprintf(stderr, "ERROR: sift: cannot install the %s: %s\n", what, strerror(errno));
    return -1;
}

void sift_fault_begin(sift_fault *f, const uint8_t *data, size_t size)
{
    if (!f->inputs_are_files) sift_history_add(&f->history, data, size);
    f->data = data;
    f->size = size;
    atomic_store_explicit(&g_mallocs, 0, memory_order_relaxed);
    atomic_store_explicit(&g_frees, 0, memory_order_relaxed);
    sift_mtrace_start();
    /* The watcher thread reads the input once it sees started_ns. */
    atomic_thread_fence(memory_order_release);
    uint64_t now = sift_now_ns();
    f->started_ns = now ? now : 1;
}

void sift_fault_end(sift_fault *f)
{
    f->started_ns = 0;
    sift_mtrace_stop(atomic_load(&g_mallocs), atomic_load(&g_frees));
    stop_if_a_child_crashed(f);
}

pid_t sift_fault_fork(void)
{
    pid_t pid = fork();
    if (pid != 0 || !g_child_crashed) return pid;
    /* The child runs inputs itself: a crash of its own is its report, and what the processes
     * it forks report goes to it, not to the parent. A fork keeps neither the interval timer
     * nor the memory watcher thread: the child arms its own, or a hanging input would end
     * only by the parent's kill, with no report and no timeout artifact, and memory would go
     * unwatched. */
    g_fuzz_pid = getpid();
    g_fuzz_tid = current_tid();
    g_child_crashed = new_shared_flag();
    const sift_options *o = g_fault->opts;
    if ((o->timeout > 0 && install_timer(o->timeout) < 0) || start_watcher(g_fault) < 0)
        fprintf(stderr, "ERROR: sift: a child process cannot watch its inputs: %s\n",
                strerror(errno));
    return pid;
}

void sift_fault_input_overwritten(sift_fault *f)
{
    if (!claim_report("crash", f->opts->error_exitcode)) return;
    say_pid("ERROR: libFuzzer: fuzz target overwrites its const input\n");
    print_stack_trace();
    say("SUMMARY: libFuzzer: overwrites-const-input\n");
    dump_current_unit(f, "crash");
    _exit((int)f->opts->error_exitcode);
}

bool sift_fault_can_check_leaks(const sift_fault *f)
{
    return __lsan_do_recoverable_leak_check && f->opts->detect_leaks && !g_leaks_off;
}

bool sift_fault_run_allocated_more(void)
{
    return g_hooks_installed && atomic_load(&g_mallocs) > atomic_load(&g_frees);
}

void sift_fault_ignore_leaks(bool ignore)
{
    if (!__lsan_disable || !__lsan_enable) return;
    if (ignore)
        __lsan_disable();
    else
        __lsan_enable();
}

void sift_fault_check_leaks(sift_fault *f, const uint8_t *data, size_t size)
{
    if (!sift_fault_can_check_leaks(f) || !sift_fault_run_allocated_more()) return;
    if (++g_leak_attempts > MAX_LEAK_ATTEMPTS) {
        g_leaks_off = true;
        say("INFO: libFuzzer disabled leak detection after every mutation.\n"
            "      Most likely the target function accumulates allocated\n"
            "      memory in a global state w/o actually leaking it.\n"
            "      You may try running this binary with -trace_malloc=[12]"
            "      to get a trace of mallocs and frees.\n"
            "      If LeakSanitizer is enabled in this process it will still\n"
            "      run on the process shutdown.\n");
        return;
    }
    /* LeakSanitizer prints the report, SUMMARY line included. */
    if (!__lsan_do_recoverable_leak_check() || !claim_report(NULL, f->opts->error_exitcode)) return;
    if (f->initial_corpus) say("\nINFO: a leak has been found in the initial corpus.\n\n");
    say("INFO: to ignore leaks on libFuzzer side use -detect_leaks=0.\n\n");
    dump_unit(f, "leak", data, size);
    final_stats(f);
    _exit((int)f->opts->error_exitcode);
}

size_t sift_fault_rss_mb(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) < 0) return 0;
    return (size_t)ru.ru_maxrss >> 10;
}
