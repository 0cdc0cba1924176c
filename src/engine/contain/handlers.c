#define _GNU_SOURCE
#include "engine/contain/handlers.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

extern void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

/* Room for symbolizing stack traces and writing the artifact after a stack overflow. */
#define ALT_STACK_SIZE ((size_t)256 * 1024)

/* The deadly signals' handlers before LLVMFuzzerInitialize ran (sift_handlers_note): those of
 * a sanitizer, not those of the target. Signal dispositions are the process's, and so is this
 * note of them. */
static const int deadly[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
#define NDEADLY (sizeof(deadly) / sizeof(deadly[0]))
static struct sigaction g_noted[NDEADLY];
static bool g_noted_set;

int sift_handlers_set(int sig, sift_handler_fn *fn, int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    /* No other handler may run on top of a report. */
    sigfillset(&sa.sa_mask);
    sa.sa_sigaction = fn;
    sa.sa_flags = SA_SIGINFO | flags;
    return sigaction(sig, &sa, NULL);
}

static bool is_sanitizer_handler(const struct sigaction *sa)
{
    return __sanitizer_set_death_callback && (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction;
}

void sift_handlers_note(void)
{
    for (size_t i = 0; i < NDEADLY; i++)
        if (sigaction(deadly[i], NULL, &g_noted[i]) != 0) g_noted[i] = (struct sigaction){0};
    g_noted_set = true;
}

/* A sanitizer's handler reports more than ours could (fault address, shadow memory, symbolized
 * frames) and then runs the death callback, which writes the artifact: like libFuzzer, leave
 * it in place. A handler that the target installed in LLVMFuzzerInitialize over it, or where
 * there was none, would take the crash without an artifact: the sanitizer's goes back, or
 * FN goes in. */
static int install_deadly(size_t i, sift_handler_fn *fn)
{
    struct sigaction cur;
    if (sigaction(deadly[i], NULL, &cur) != 0) return -1;
    if (!g_noted_set) {
        if (is_sanitizer_handler(&cur)) return 0;
    } else if (is_sanitizer_handler(&g_noted[i])) {
        if (cur.sa_sigaction == g_noted[i].sa_sigaction) return 0;
        return sigaction(deadly[i], &g_noted[i], NULL);
    }
    return sift_handlers_set(deadly[i], fn, SA_ONSTACK);
}

int sift_handlers_install_deadly(sift_handler_fn *fn)
{
    for (size_t i = 0; i < NDEADLY; i++)
        if (install_deadly(i, fn) < 0) return -1;
    return 0;
}

int sift_handlers_alt_stack(void)
{
    stack_t cur;
    if (sigaltstack(NULL, &cur) == 0 && !(cur.ss_flags & SS_DISABLE) &&
        cur.ss_size >= ALT_STACK_SIZE)
        return 0;
    void *mem = mmap(NULL, ALT_STACK_SIZE, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED) return -1;
    stack_t ss = {.ss_sp = mem, .ss_size = ALT_STACK_SIZE, .ss_flags = 0};
    return sigaltstack(&ss, NULL);
}
