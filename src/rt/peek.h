/* Reads of memory that may not be mapped: a field behind a pointer argument that may dangle. */
#ifndef SIFT_PEEK_H
#define SIFT_PEEK_H

#include <stdbool.h>
#include <stdint.h>

/* Puts the fault handler that sift_peek recovers with in front of the SIGSEGV and SIGBUS
 * handlers in place now; any other fault goes on to them. Call it after whatever else installs
 * handlers for these signals (the engine's, a sanitizer's); a second call puts it in front
 * again. Returns whether sift_peek may be used. */
bool sift_peek_install(void);

/* Reads WIDTH (1, 2, 4 or 8) bytes at ADDR into *OUT, zero-extended. Returns false, without
 * side effects, when they are not readable or sift_peek_install has not succeeded. */
bool sift_peek(uintptr_t addr, unsigned width, uint64_t *out);

#endif
