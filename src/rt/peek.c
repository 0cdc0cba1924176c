/* Fault-safe reads, as an operating system kernel reads user memory: each load is the first
 * instruction of a tiny assembly routine, and the SIGSEGV/SIGBUS handler, when the faulting pc
 * is one of those loads, resumes at a routine that returns "unreadable". Any other fault goes
 * on to the handler that was in place before. A read costs one call, with no system call and
 * no per-thread state; only an unreadable address pays for a signal.
 *
 * The alternatives cost more or protect less: process_vm_readv or a pipe write costs a system
 * call per read; a cached copy of /proc/self/maps misses memory unmapped since it was read (a
 * freed large block); sigsetjmp around each read saves registers every time. */
#define _GNU_SOURCE
#include "rt/peek.h"
#include "rt/rt.h"

#include <signal.h>
#include <string.h>
#include <ucontext.h>

#if defined(__x86_64__) || defined(__aarch64__)
#if defined(__x86_64__)
#define PEEK_TYPE(name) ".type " name ",@function\n"
#define PEEK_RETURN(v)  "\tmovl $" #v ", %eax\n\tret\n"
#define PEEK_STORE      "\tmovq %rax, (%rsi)\n"
#define PEEK_PC(uc)     ((uc)->uc_mcontext.gregs[REG_RIP])
#define PEEK_LOADS                                                                                 \
    "movzbl (%rdi), %eax", "movzwl (%rdi), %eax", "movl (%rdi), %eax", "movq (%rdi), %rax"
#define PEEK_FIRST "movzbl (%rdi), %eax"
#define PEEK_LAST  "movzbl (%rsi), %eax"
#else
#define PEEK_TYPE(name) ".type " name ",%function\n"
#define PEEK_RETURN(v)  "\tmov w0, #" #v "\n\tret\n"
#define PEEK_STORE      "\tstr x2, [x1]\n"
#define PEEK_PC(uc)     ((uc)->uc_mcontext.pc)
#define PEEK_LOADS      "ldrb w2, [x0]", "ldrh w2, [x0]", "ldr w2, [x0]", "ldr x2, [x0]"
#define PEEK_FIRST      "ldrb w2, [x0]"
#define PEEK_LAST       "ldrb w2, [x1]"
#endif
/* The load is the routine's first instruction, so that a fault there leaves the stack as the
 * call made it, and sift_peek_fail can return in its place. */
#define PEEK_ROUTINE(name, load)                                                                   \
    ".p2align 4\n.globl " name "\n.hidden " name "\n" PEEK_TYPE(name) name                         \
        ":\n\t" load "\n" PEEK_STORE PEEK_RETURN(0) ".size " name ", .-" name "\n"
#define PEEK_ROUTINES(l1, l2, l4, l8)                                                              \
    PEEK_ROUTINE("sift_peek_load1", l1)                                                            \
    PEEK_ROUTINE("sift_peek_load2", l2)                                                            \
    PEEK_ROUTINE("sift_peek_load4", l4) PEEK_ROUTINE("sift_peek_load8", l8)
#define PEEK_EXPAND(...) PEEK_ROUTINES(__VA_ARGS__)
/* Two loads, of the first and the last byte of a span: neither leaves the stack changed, so a
 * fault at either returns through sift_peek_fail alike. */
/* clang-format off */
#define PEEK_ENDS                                                                                  \
    ".p2align 4\n"                                                                                 \
    ".globl sift_peek_ends\n.hidden sift_peek_ends\n" PEEK_TYPE("sift_peek_ends")                 \
    "sift_peek_ends:\n\t" PEEK_FIRST "\n"                                                          \
    ".globl sift_peek_ends_last\n.hidden sift_peek_ends_last\n"                                    \
    "sift_peek_ends_last:\n\t" PEEK_LAST "\n" PEEK_RETURN(0)                                      \
    ".size sift_peek_ends, .-sift_peek_ends\n"
__asm__(".pushsection .text\n"
        PEEK_EXPAND(PEEK_LOADS)
        PEEK_ENDS
        ".p2align 4\n"
        ".globl sift_peek_fail\n.hidden sift_peek_fail\n" PEEK_TYPE("sift_peek_fail")
        "sift_peek_fail:\n" PEEK_RETURN(1)
        ".size sift_peek_fail, .-sift_peek_fail\n"
        ".popsection\n");
/* clang-format on */

/* Each returns 0 after storing the zero-extended value, or 1 (from sift_peek_fail) when the
 * load faulted. */
int sift_peek_load1(uintptr_t addr, uint64_t *out);
int sift_peek_load2(uintptr_t addr, uint64_t *out);
int sift_peek_load4(uintptr_t addr, uint64_t *out);
int sift_peek_load8(uintptr_t addr, uint64_t *out);
/* Not a function: the address of sift_peek_ends's second load. */
void sift_peek_ends_last(void);
int sift_peek_fail(void);

static const int deadly[2] = {SIGSEGV, SIGBUS};

SIFT_RT_NOINSTR static bool is_load(uintptr_t pc)
{
    return pc == (uintptr_t)sift_peek_load1 || pc == (uintptr_t)sift_peek_load2 ||
           pc == (uintptr_t)sift_peek_load4 || pc == (uintptr_t)sift_peek_load8 ||
           pc == (uintptr_t)sift_peek_ends || pc == (uintptr_t)sift_peek_ends_last;
}

/* Hands a fault that is not ours to the handler that was there before, as the kernel would
 * have called it. A default action is taken by restoring it and returning: the instruction
 * faults again, and the process dies of the signal as it would have without sift. */
SIFT_RT_NOINSTR static void pass_on(int sig, siginfo_t *info, void *uctx)
{
    sift_rt_state *rt = sift_rt();
    const struct sigaction *prev = &rt->peek_prev[sig == SIGBUS];
    if (!(prev->sa_flags & SA_SIGINFO) &&
        (prev->sa_handler == SIG_DFL || prev->sa_handler == SIG_IGN)) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof(dfl));
        dfl.sa_handler = SIG_DFL;
        sigaction(sig, &dfl, NULL);
        return;
    }
    sigset_t mask = prev->sa_mask;
    if (!(prev->sa_flags & SA_NODEFER)) sigaddset(&mask, sig);
    pthread_sigmask(SIG_BLOCK, &mask, NULL);
    if (prev->sa_flags & SA_SIGINFO)
        prev->sa_sigaction(sig, info, uctx);
    else
        prev->sa_handler(sig);
}

SIFT_RT_NOINSTR static void on_fault(int sig, siginfo_t *info, void *uctx)
{
    ucontext_t *uc = uctx;
    if (is_load((uintptr_t)PEEK_PC(uc))) {
        PEEK_PC(uc) = (uintptr_t)sift_peek_fail;
        return;
    }
    pass_on(sig, info, uctx);
}

SIFT_RT_NOINSTR bool sift_peek_install(void)
{
    sift_rt_state *rt = sift_rt();
    if (!rt) return false;
    for (int i = 0; i < 2; i++) {
        struct sigaction cur, ours;
        if (sigaction(deadly[i], NULL, &cur) != 0) return false;
        if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_fault) continue;
        rt->peek_prev[i] = cur;
        memset(&ours, 0, sizeof(ours));
        ours.sa_sigaction = on_fault;
        /* The previous handler's mask and flags, so that it runs as it expects to when a
         * fault is passed on (on the alternate stack a sanitizer set up, say). */
        ours.sa_mask = cur.sa_mask;
        ours.sa_flags = (cur.sa_flags & ~SA_RESETHAND) | SA_SIGINFO | SA_ONSTACK;
        if (sigaction(deadly[i], &ours, NULL) != 0) return false;
    }
    __atomic_store_n(&rt->peek_ready, true, __ATOMIC_RELEASE);
    return true;
}

SIFT_RT_NOINSTR bool sift_peek(const sift_rt_state *rt, uintptr_t addr, unsigned width,
                               uint64_t *out)
{
    if (!sift_peek_may(rt, addr, addr + 1)) return false;
    switch (width) {
    case 1:
        return sift_peek_load1(addr, out) == 0;
    case 2:
        return sift_peek_load2(addr, out) == 0;
    case 4:
        return sift_peek_load4(addr, out) == 0;
    case 8:
        return sift_peek_load8(addr, out) == 0;
    default:
        return false;
    }
}

SIFT_RT_NOINSTR bool sift_peek_pages(const sift_rt_state *rt, uintptr_t lo, uintptr_t hi)
{
    uint64_t byte;
    if (!sift_peek(rt, lo, 1, &byte)) return false;
    for (uintptr_t page = (lo & ~(uintptr_t)4095) + 4096; page < hi; page += 4096)
        if (!sift_peek(rt, page, 1, &byte)) return false;
    return true;
}
#else
SIFT_RT_NOINSTR bool sift_peek_install(void)
{
    return false;
}

/* Never reached: sift_peek_install leaves peek_ready false. */
SIFT_RT_NOINSTR int sift_peek_ends(uintptr_t first, uintptr_t last)
{
    (void)first, (void)last;
    return 1;
}

SIFT_RT_NOINSTR bool sift_peek_pages(const sift_rt_state *rt, uintptr_t lo, uintptr_t hi)
{
    (void)rt, (void)lo, (void)hi;
    return false;
}

SIFT_RT_NOINSTR bool sift_peek(const sift_rt_state *rt, uintptr_t addr, unsigned width,
                               uint64_t *out)
{
    (void)rt, (void)addr, (void)width, (void)out;
    return false;
}
#endif
