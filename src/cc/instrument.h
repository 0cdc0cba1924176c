/* sift-instrument (sift_instrument.c): adds function-boundary value hooks to an LLVM bitcode
 * module. The parts share this plan of one function, built by instrument_plan.c from the IR and
 * its debug information (instrument_debug.c), and turned into code and tables by
 * instrument.c, with the features computed inline by instrument_inline.c; instrument_ir.c holds
 * the helpers they all use. */
#ifndef SIFT_INSTRUMENT_H
#define SIFT_INSTRUMENT_H

#include "abi/values_abi.h"

#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h>
#include <llvm-c/Target.h>
#include <stdbool.h>
#include <stdint.h>

/* Fields taken from one function, over all its pointer arguments. */
#define SIFT_INSTR_MAX_FIELDS 32
#define SIFT_INSTR_MAX_SLOTS  (SIFT_VALUES_MAX_ARGS + SIFT_INSTR_MAX_FIELDS + 1)

typedef struct {
    char *name; /* allocated */
    uint32_t offset;
    uint16_t arg;
    uint8_t kind, type;
} sift_instr_slot;

typedef struct {
    LLVMValueRef fn;
    LLVMMetadataRef sp; /* its DISubprogram, or NULL */
    uint64_t id;
    char *name, *file; /* allocated */
    unsigned line;
    unsigned nargs, nslots;
    LLVMValueRef args[SIFT_VALUES_MAX_ARGS]; /* the IR argument of each ARG slot */
    uint32_t implied_args; /* ARG slots (bit per slot) whose values the callers' edges tell */
    bool covered;          /* sanitizer coverage counts its blocks */
    LLVMValueRef calls;    /* sift_instr_entry_counter, or NULL */
    sift_instr_slot slots[SIFT_INSTR_MAX_SLOTS];
} sift_instr_fn;

/* What the plan needs of the module. */
typedef struct {
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMTargetDataRef layout;
    const char *source;  /* the module's source file name */
    uint64_t max_struct; /* fields are read from structs of at most this many bytes */
} sift_instr_module;

/* The default of max_struct: state machines keep their state in small structs, while a large
 * struct is most often a program's or library's context (libpng's png_struct is 1.3 KB),
 * passed to nearly every function, whose fields would be read on every call. */
#define SIFT_INSTR_MAX_STRUCT 256

/* Whether FN gets hooks: a definition that emits code, not sift's or a sanitizer's own. */
bool sift_instr_wanted(LLVMValueRef fn);

/* Plans FN's slots into OUT. Returns false when out of memory. */
bool sift_instr_plan(const sift_instr_module *m, LLVMValueRef fn, sift_instr_fn *out);

void sift_instr_plan_free(sift_instr_fn *plan);

/* Where the features that instrumented code computes itself while fuzzing go
 * (instrument_inline.c): the VALUES counters, dirty bytes and known bits, as loaded from the
 * module's
 * sift_values_module, for slots of the function FN with id ID; and how it asks whether
 * fields are readable. */
typedef struct {
    LLVMBuilderRef b;
    LLVMValueRef fn;
    LLVMValueRef counters, dirty; /* i8* */
    LLVMValueRef known;           /* i64*: the bits that say a counter needs no mark */
    uint64_t id;
    LLVMValueRef word;     /* the address of the mode word */
    LLVMValueRef readable; /* __sift_values_readable */
    LLVMTypeRef readable_type;
} sift_instr_features;

/* Emits at the builder's position what the hooks do with VALUE, the IR value of slot SLOT of
 * type TYPE, while fuzzing: it marks the counter of the value's bucket and its dirty byte,
 * exactly as sift_values_bucket and sift_values_feature would. A pointer counts only when
 * null: the marking then goes in a block of its own, and the builder is left in the block
 * after it. */
void sift_instr_feature(const sift_instr_features *f, unsigned slot, uint8_t type,
                        LLVMValueRef value);

/* Emits at the builder's position the features of P's fields, as __sift_values_enter takes
 * them: the fields of one argument are loaded, in blocks of their own, when
 * __sift_values_readable finds the span from the first to the end of the last readable. */
void sift_instr_fields(const sift_instr_features *f, const sift_instr_fn *p);

/* Debug information, all optional: every function returns NULL (or false) where the module
 * has none for what is asked. Strings are allocated. */

/* The source name of the function of subprogram SP, qualified by its namespaces and classes,
 * and its file. */
char *sift_instr_di_name(LLVMContextRef ctx, LLVMMetadataRef sp);
char *sift_instr_di_file(LLVMMetadataRef sp);

/* The name and type of the variable that FN's debug information gives its argument ARG: the
 * one whose value is ARG (or, unoptimised, its spill slot), else, where POSITION is not 0, the
 * parameter of that number (from 1). Sanitizers move unoptimised spill slots into frames of
 * their own, where only the number finds the parameter. */
char *sift_instr_di_arg(LLVMContextRef ctx, LLVMValueRef fn, LLVMMetadataRef sp, LLVMValueRef arg,
                        unsigned position, LLVMMetadataRef *type);

/* The number of parameters in SP's type, without the variadic ones. */
unsigned sift_instr_di_params(LLVMContextRef ctx, LLVMMetadataRef sp);

/* The type SP's debug information gives its return value. */
LLVMMetadataRef sift_instr_di_return(LLVMContextRef ctx, LLVMMetadataRef sp);

/* The member path ("state", "hdr.len") at OFFSET_BITS in the struct that TYPE (a pointer,
 * reference or typedef of one) points to, and the member's type. */
char *sift_instr_di_member(LLVMContextRef ctx, LLVMMetadataRef type, uint64_t offset_bits,
                           LLVMMetadataRef *member_type);

/* Whether TYPE, typedefs and qualifiers removed, is an unsigned integer type. */
bool sift_instr_di_unsigned(LLVMContextRef ctx, LLVMMetadataRef type);

/* Where unoptimised code keeps the argument ARG: the stack slot it is stored to, or NULL. */
LLVMValueRef sift_instr_spill_slot(LLVMValueRef arg);

/* Values the edges tell (instrument_implied.c), whose features the inline code leaves out:
 * whether sanitizer coverage counts FN's blocks; whether every call of FN, each from code it
 * counts, passes a constant as argument INDEX; whether the return RET, of a function it counts,
 * returns a constant or a constant chosen by the block it came from. */
bool sift_instr_has_coverage(LLVMValueRef fn);
/* The address of the 8-bit counter that sanitizer coverage increments in FN's entry block (the
 * calls of FN in this execution, modulo 256), or NULL where it counts none. */
LLVMValueRef sift_instr_entry_counter(LLVMValueRef fn);
bool sift_instr_arg_implied(LLVMValueRef fn, unsigned index);
bool sift_instr_return_implied(LLVMValueRef ret);

/* Adds the value hooks and their table to every function of M that sift_instr_wanted takes. */
void sift_instr_values(const sift_instr_module *m);

/* Appends CTOR to MOD's llvm.global_ctors at PRIORITY, dropped with DATA's comdat when DATA
 * is not NULL. */
void sift_instr_add_ctor(LLVMModuleRef mod, LLVMValueRef ctor, unsigned priority,
                         LLVMValueRef data);

/* Gives every function with a sanitizer-coverage pc table a dirty byte that its entry sets,
 * and the constructor that registers them (rt/fn_dirty_abi.h). A module whose pc tables it
 * cannot all read is left as it is. False when out of memory. */
bool sift_instr_fn_dirty(LLVMModuleRef mod);

/* Puts each call of a sanitizer-coverage comparison callback behind the runtime's gate byte
 * (abi/cmp_gate_abi.h). */
void sift_instr_cmp_gate(LLVMModuleRef mod);

/* A copy of TEXT, or of its first LEN bytes. */
char *sift_instr_strdup(const char *text, size_t len);

/* The integer constant V of type T. */
LLVMValueRef sift_instr_int(LLVMTypeRef t, uint64_t v);

/* Prints "sift-instrument: PATH: WHAT[: DETAIL]" and exits with 1. */
_Noreturn void sift_instr_die(const char *path, const char *what, const char *detail);

#endif
