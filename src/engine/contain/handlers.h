/* Signal handlers as containment installs them: every signal masked while one runs, and the
 * crash handlers a sanitizer put in place left to it. */
#ifndef SIFT_HANDLERS_H
#define SIFT_HANDLERS_H

#include <signal.h>

typedef void sift_handler_fn(int sig, siginfo_t *info, void *uctx);

/* Installs FN for SIG with SA_SIGINFO and FLAGS, no other handler running on top of it.
 * Returns 0, or -1 with errno set. */
int sift_handlers_set(int sig, sift_handler_fn *fn, int flags);

/* Notes the crash handlers in place before LLVMFuzzerInitialize runs (a sanitizer's), so that
 * sift_handlers_install_deadly puts them back, or FN, where the target replaced them. */
void sift_handlers_note(void);

/* FN for every deadly signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) that no sanitizer
 * handles, on the alternate stack. Returns 0, or -1 with errno set. */
int sift_handlers_install_deadly(sift_handler_fn *fn);

/* An alternate stack for the handlers of stack overflows, unless one large enough is set.
 * Returns 0, or -1 with errno set. */
int sift_handlers_alt_stack(void);

#endif
