/* What sift-instrument compiles into a module and the runtime reads: the tables that describe
 * instrumented functions, and the hooks their code calls. sift-instrument builds these structs
 * as LLVM constants, field by field, so their layout is part of the contract: change it only
 * with SIFT_VALUES_ABI. */
#ifndef SIFT_VALUES_ABI_H
#define SIFT_VALUES_ABI_H

#include <stddef.h>
#include <stdint.h>

/* Passed to the registration hook; a module built for another layout is ignored. */
#define SIFT_VALUES_ABI 5

/* The hooks' names, as the instrumenter declares them. */
#define SIFT_VALUES_ENTER_HOOK    "__sift_values_enter"
#define SIFT_VALUES_RETURN_HOOK   "__sift_values_return"
#define SIFT_VALUES_REGISTER_HOOK "__sift_values_register"
#define SIFT_VALUES_READABLE_HOOK "__sift_values_readable"

typedef enum {
    SIFT_VALUES_ARG = 0,    /* an argument, recorded at entry */
    SIFT_VALUES_FIELD = 1,  /* an integer field of a pointer argument's struct, at entry */
    SIFT_VALUES_RETURN = 2, /* the returned value */
} sift_values_kind;

/* What the hooks do, in the runtime's mode word (0: nothing). */
#define SIFT_VALUES_FEATURES 1u /* count each value as a feature of the VALUES domain */
#define SIFT_VALUES_RECORD   2u /* push each value into the thread's ring (trace mode) */

/* A slot's type: its width in bytes (1, 2, 4 or 8) in the low bits, and flags. */
#define SIFT_VALUES_WIDTH   0x0f
#define SIFT_VALUES_SIGNED  0x10 /* sign-extend from the width */
#define SIFT_VALUES_POINTER 0x20 /* an address: only null or not counts */

/* Buckets and features (values.h: sift_values_bucket, sift_values_feature). While fuzzing,
 * instrumented code computes its features itself from these, so that the same value of the
 * same slot hits the same counter whether the code or a hook computed it. Values from -SMALL
 * to SMALL are their own buckets: enough for the states, kinds, flags and short lengths that
 * steer a program, and few enough that a slot cannot add more than 2 * SMALL + 1 exact
 * features. */
#define SIFT_VALUES_SMALL     16
#define SIFT_VALUES_LOG_FIRST 4 /* floor(log2(SMALL + 1)) */
/* Beyond 2^LOG_LARGE a magnitude no longer counts by its order: every value up to 2^LOG_HUGE
 * shares one bucket, and every value from 2^LOG_HUGE on (where 32-bit arithmetic overflows)
 * the next. A bucket per doubling rewarded inputs for asking for ever larger sizes, which only
 * bought slower executions and allocations of gigabytes. */
#define SIFT_VALUES_LOG_LARGE 16
#define SIFT_VALUES_LOG_HUGE  31
/* The buckets of one sign: the exact small values' neighbours up to 2^LOG_LARGE, and the two
 * above. A slot's buckets, both signs and the null pointer, fit the 64 counters of one line. */
#define SIFT_VALUES_SIGN_BUCKETS   (SIFT_VALUES_LOG_LARGE + 2 - SIFT_VALUES_LOG_FIRST)
#define SIFT_VALUES_POSITIVE_FIRST (2 * SIFT_VALUES_SMALL + 1)
#define SIFT_VALUES_NEGATIVE_FIRST (SIFT_VALUES_POSITIVE_FIRST + SIFT_VALUES_SIGN_BUCKETS)
#define SIFT_VALUES_NULL_BUCKET    (SIFT_VALUES_NEGATIVE_FIRST + SIFT_VALUES_SIGN_BUCKETS)
#define SIFT_VALUES_HASH           0x9E3779B97F4A7C15ull /* Fibonacci hashing's multiplier */
#define SIFT_VALUES_FEATURE_BITS   18 /* the VALUES domain has 1 << FEATURE_BITS counters */
#define SIFT_VALUES_DIRTY_SHIFT    6  /* one dirty byte per 1 << DIRTY_SHIFT counters */
_Static_assert(SIFT_VALUES_NULL_BUCKET + 1 < 1 << SIFT_VALUES_DIRTY_SHIFT,
               "a slot's buckets, the non-null pointer's included, fit one line");

/* While fuzzing, the code that computes features inline takes a function's values in the first
 * SAMPLED_CALLS of every 256 calls in one execution, as sanitizer coverage's counter of its
 * entry block counts them: a decoder's inner function, called for each block of an image,
 * otherwise pays a bucket and a load for each value of every call, for values that its first
 * calls mostly showed already (docs/values.md). The hooks, and so traces, take every call. */
#define SIFT_VALUES_SAMPLED_CALLS 16

/* A slot's counters lie in one line, which the hash of its function's id and its index picks;
 * the same hash's low bits rotate the buckets within the line, so that two slots that share a
 * line collide on one value in 64, not on all of them. One line per slot keeps the lines a pass
 * visits to one per slot that ran, where a counter per value hashed anywhere in the domain made
 * them one per value seen (docs/values.md). */
static inline size_t sift_values_slot_base(uint64_t fn, unsigned slot)
{
    return (size_t)(((fn ^ (uint64_t)slot << 8) * SIFT_VALUES_HASH) >>
                    (64 - SIFT_VALUES_FEATURE_BITS));
}

/* Limits the instrumenter keeps to: argument slots per function (they are passed in one
 * array), and fields taken from one pointer argument's struct. */
#define SIFT_VALUES_MAX_ARGS   32
#define SIFT_VALUES_MAX_FIELDS 8

typedef struct {
    const char *name; /* "len", "conn->state", "arg2", "arg0->field3", "return" */
    uint32_t offset;  /* FIELD: byte offset in the struct */
    uint16_t arg;     /* FIELD: the ARG slot that holds the struct's address */
    uint8_t kind;     /* sift_values_kind */
    uint8_t type;     /* width and flags */
} sift_values_slot;

/* One instrumented function. Slots come in a fixed order: ARG slots first (the hook's array
 * holds their values in this order), then FIELD slots, those of one argument together and by
 * increasing offset, then at most one RETURN slot. */
typedef struct sift_values_fn {
    uint64_t id;      /* stable across builds and modules: a hash of the function's name */
    const char *name; /* the source name, qualified in C++ ("ns::cls::step"); else the symbol */
    const char *file; /* the source file, as the compiler saw it */
    uint32_t line;    /* 0 without debug information */
    uint16_t nargs;   /* ARG slots */
    uint16_t nslots;  /* all slots */
    const sift_values_slot *slots;
} sift_values_fn;

_Static_assert(sizeof(sift_values_slot) == 16, "sift-instrument emits 16-byte slots");
_Static_assert(sizeof(sift_values_fn) == 40, "sift-instrument emits 40-byte function entries");

/* Called at entry of an instrumented function with its ARG values, each zero-extended to 64
 * bits (pointers as addresses), and before a return with the returned value (0 when the
 * function returns nothing the runtime records). MODE is the module's pointer to the runtime's
 * mode word, which registration set and which the code tested before the call: it leads the
 * hooks to the runtime's state without a call to find it. */
void __sift_values_enter(const unsigned *mode, const sift_values_fn *fn, const uint64_t *args);
void __sift_values_return(const unsigned *mode, const sift_values_fn *fn, uint64_t value);

/* Whether the bytes from LO up to HI are all readable (sift_peek_span): 1 or 0. While fuzzing,
 * instrumented code asks before it loads the fields of one pointer argument. */
int __sift_values_readable(const unsigned *mode, uintptr_t lo, uintptr_t hi);

/* What an instrumented module keeps of the runtime, which registration fills in. */
typedef struct {
    /* The runtime's mode word (SIFT_VALUES_FEATURES, SIFT_VALUES_RECORD); until registration a
     * zero of the module's own. Tested at every entry and return: exactly FEATURES, the code
     * computes its features inline; else it calls a hook when the word says it does something. */
    const unsigned *mode;
    /* The VALUES domain's counters and their dirty bytes, which the inline features mark. */
    uint8_t *counters, *dirty;
    /* The runtime's pointer to one bit per counter (bit i % 64 of word i / 64): the inline
     * features mark a counter only where that bit is 0. While fuzzing it leads to what the
     * campaign has seen, so that a value seen before costs a load and no stores, and leaves no
     * line for the pass to visit; for a run whose features are listed, to zeros. A slot's
     * counters share one word, and a function's words a few lines. */
    const uint64_t *const *known;
} sift_values_module;

/* Called by each instrumented module's constructor with its table, sorted by id, and its
 * sift_values_module. While the mode word is exactly SIFT_VALUES_FEATURES the code calls
 * neither __sift_values_enter nor __sift_values_return; with SIFT_VALUES_RECORD it calls both
 * everywhere. */
void __sift_values_register(uint32_t abi, const sift_values_fn *fns, size_t n,
                            sift_values_module *module);

#endif
