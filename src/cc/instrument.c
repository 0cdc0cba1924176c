/* The function-boundary value hooks that sift-instrument (sift_instrument.c) adds to a bitcode
 * module that clang has optimised (and instrumented for coverage and sanitizers) already. While
 * fuzzing, every function it plans computes its values' features itself (instrument_inline.c),
 * with a call only to ask whether fields are readable; for a trace, each calls
 * __sift_values_enter at entry with its argument values in a stack array, and
 * __sift_values_return before each return. A table of the module's functions, registered by a
 * constructor, names what they pass. See docs/values.md. */
#include "cc/instrument.h"

#include <stdlib.h>
#include <string.h>

/* sancov's constructors run at 2 as well: before the program's own, which may already reach
 * instrumented code. */
#define CTOR_PRIORITY 2

typedef struct {
    sift_instr_module m;
    LLVMBuilderRef b;
    LLVMTypeRef i8, i16, i32, i64, ptr, slot_type, fn_type, enter_type, return_type, readable_type;
    LLVMValueRef enter, ret, readable;
    LLVMTypeRef module_type;
    LLVMValueRef module; /* the module's sift_values_module */
    unsigned dbg_kind;
} instr;

static LLVMValueRef declare_hook(instr *s, const char *name, LLVMTypeRef type)
{
    LLVMValueRef fn = LLVMGetNamedFunction(s->m.mod, name);
    if (!fn) {
        fn = LLVMAddFunction(s->m.mod, name, type);
        unsigned nounwind = LLVMGetEnumAttributeKindForName("nounwind", 8);
        LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                                LLVMCreateEnumAttribute(s->m.ctx, nounwind, 0));
    }
    return LLVMGlobalGetValueType(fn) == type ? fn : LLVMConstBitCast(fn, LLVMPointerType(type, 0));
}

static void set_up(instr *s)
{
    LLVMContextRef c = s->m.ctx;
    s->b = LLVMCreateBuilderInContext(c);
    s->i8 = LLVMInt8TypeInContext(c);
    s->i16 = LLVMInt16TypeInContext(c);
    s->i32 = LLVMInt32TypeInContext(c);
    s->i64 = LLVMInt64TypeInContext(c);
    s->ptr = LLVMPointerType(s->i8, 0);
    /* The layout of values_abi.h's structs, field by field. */
    s->slot_type = LLVMStructCreateNamed(c, "sift.values.slot");
    LLVMTypeRef slot_fields[] = {s->ptr, s->i32, s->i16, s->i8, s->i8};
    LLVMStructSetBody(s->slot_type, slot_fields, 5, 0);
    s->fn_type = LLVMStructCreateNamed(c, "sift.values.fn");
    LLVMTypeRef fn_fields[] = {
        s->i64, s->ptr, s->ptr, s->i32, s->i16, s->i16, LLVMPointerType(s->slot_type, 0)};
    LLVMStructSetBody(s->fn_type, fn_fields, 7, 0);
    LLVMTypeRef fn_ptr = LLVMPointerType(s->fn_type, 0);
    LLVMTypeRef mode_ptr = LLVMPointerType(s->i32, 0);
    LLVMTypeRef enter_params[] = {mode_ptr, fn_ptr, LLVMPointerType(s->i64, 0)};
    LLVMTypeRef return_params[] = {mode_ptr, fn_ptr, s->i64};
    s->enter_type = LLVMFunctionType(LLVMVoidTypeInContext(c), enter_params, 3, 0);
    s->return_type = LLVMFunctionType(LLVMVoidTypeInContext(c), return_params, 3, 0);
    s->enter = declare_hook(s, SIFT_VALUES_ENTER_HOOK, s->enter_type);
    s->ret = declare_hook(s, SIFT_VALUES_RETURN_HOOK, s->return_type);
    LLVMTypeRef readable_params[] = {mode_ptr, s->i64, s->i64};
    s->readable_type = LLVMFunctionType(s->i32, readable_params, 3, 0);
    s->readable = declare_hook(s, SIFT_VALUES_READABLE_HOOK, s->readable_type);
    s->dbg_kind = LLVMGetMDKindIDInContext(c, "dbg", 3);
    /* The code computes features or calls hooks only while the runtime's mode word says so.
     * Until registration points the module at that word, it points at a zero of its own. */
    LLVMValueRef off = LLVMAddGlobal(s->m.mod, s->i32, "sift.values.off");
    LLVMSetInitializer(off, sift_instr_int(s->i32, 0));
    LLVMSetGlobalConstant(off, 1);
    LLVMSetLinkage(off, LLVMPrivateLinkage);
    s->module_type = LLVMStructCreateNamed(c, "sift.values.module");
    LLVMTypeRef known_ptr = LLVMPointerType(s->ptr, 0);
    LLVMTypeRef module_fields[] = {LLVMPointerType(s->i32, 0), s->ptr, s->ptr, known_ptr};
    LLVMStructSetBody(s->module_type, module_fields, 4, 0);
    LLVMValueRef module_init[] = {off, LLVMConstNull(s->ptr), LLVMConstNull(s->ptr),
                                  LLVMConstNull(known_ptr)};
    s->module = LLVMAddGlobal(s->m.mod, s->module_type, "sift.values.module");
    LLVMSetInitializer(s->module, LLVMConstNamedStruct(s->module_type, module_init, 4));
    LLVMSetLinkage(s->module, LLVMPrivateLinkage);
}

/* A private constant C string, as an i8*. */
static LLVMValueRef string_constant(instr *s, const char *text)
{
    LLVMValueRef init = LLVMConstStringInContext(s->m.ctx, text, (unsigned)strlen(text), 0);
    LLVMValueRef g = LLVMAddGlobal(s->m.mod, LLVMTypeOf(init), "sift.values.str");
    LLVMSetInitializer(g, init);
    LLVMSetGlobalConstant(g, 1);
    LLVMSetLinkage(g, LLVMPrivateLinkage);
    LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
    LLVMSetAlignment(g, 1);
    return LLVMConstBitCast(g, s->ptr);
}

/* The table: one array of every function's slots and one of the functions (sorted by id),
 * so that a module adds two globals and its strings. Returns the functions' array. */
static LLVMValueRef emit_table(instr *s, sift_instr_fn *fns, size_t n)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += fns[i].nslots;
    LLVMValueRef *slots = calloc(total ? total : 1, sizeof(LLVMValueRef));
    LLVMValueRef *entries = calloc(n, sizeof(LLVMValueRef));
    if (!slots || !entries) sift_instr_die(s->m.source, "out of memory", NULL);
    LLVMTypeRef slots_type = LLVMArrayType(s->slot_type, (unsigned)total);
    LLVMValueRef slots_global = LLVMAddGlobal(s->m.mod, slots_type, "sift.values.slots");
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        LLVMValueRef first = LLVMConstNull(LLVMPointerType(s->slot_type, 0));
        if (fns[i].nslots) {
            LLVMValueRef index[] = {sift_instr_int(s->i64, 0), sift_instr_int(s->i64, at)};
            first = LLVMConstInBoundsGEP2(slots_type, slots_global, index, 2);
        }
        for (unsigned k = 0; k < fns[i].nslots; k++, at++) {
            const sift_instr_slot *sl = &fns[i].slots[k];
            LLVMValueRef fields[] = {
                string_constant(s, sl->name), sift_instr_int(s->i32, sl->offset),
                sift_instr_int(s->i16, sl->arg), sift_instr_int(s->i8, sl->kind),
                sift_instr_int(s->i8, sl->type)};
            slots[at] = LLVMConstNamedStruct(s->slot_type, fields, 5);
        }
        LLVMValueRef fields[] = {
            sift_instr_int(s->i64, fns[i].id),
            string_constant(s, fns[i].name),
            string_constant(s, fns[i].file),
            sift_instr_int(s->i32, fns[i].line),
            sift_instr_int(s->i16, fns[i].nargs),
            sift_instr_int(s->i16, fns[i].nslots),
            first,
        };
        entries[i] = LLVMConstNamedStruct(s->fn_type, fields, 7);
    }
    LLVMSetInitializer(slots_global, LLVMConstArray(s->slot_type, slots, (unsigned)total));
    LLVMSetGlobalConstant(slots_global, 1);
    LLVMSetLinkage(slots_global, LLVMPrivateLinkage);
    LLVMValueRef table =
        LLVMAddGlobal(s->m.mod, LLVMArrayType(s->fn_type, (unsigned)n), "sift.values.table");
    LLVMSetInitializer(table, LLVMConstArray(s->fn_type, entries, (unsigned)n));
    LLVMSetGlobalConstant(table, 1);
    LLVMSetLinkage(table, LLVMPrivateLinkage);
    free(slots);
    free(entries);
    return table;
}

static LLVMValueRef to_i64(instr *s, LLVMValueRef v)
{
    LLVMTypeRef t = LLVMTypeOf(v);
    if (LLVMGetTypeKind(t) == LLVMPointerTypeKind) return LLVMBuildPtrToInt(s->b, v, s->i64, "");
    unsigned bits = LLVMGetIntTypeWidth(t);
    if (bits < 64) return LLVMBuildZExt(s->b, v, s->i64, "");
    return bits == 64 ? v : LLVMBuildTrunc(s->b, v, s->i64, "");
}

/* Inserted code gets a location (the function's line, or the return's), so that a stack trace
 * through a hook points at the function rather than at nothing. */
static void locate(instr *s, LLVMMetadataRef sp, unsigned line, LLVMMetadataRef at)
{
    if (!at && sp) at = LLVMDIBuilderCreateDebugLocation(s->m.ctx, line, 0, sp, NULL);
    LLVMSetCurrentDebugLocation2(s->b, at);
}

/* Moves INST to the builder's position, keeping its own location (the builder would give it
 * its current one). */
static void move_here(instr *s, LLVMValueRef inst)
{
    LLVMMetadataRef at = LLVMInstructionGetDebugLoc(inst);
    LLVMInstructionRemoveFromParent(inst);
    LLVMInsertIntoBuilder(s->b, inst);
    LLVMInstructionSetDebugLoc(inst, at);
}

/* The mode word, loaded at the builder's position; *WORD receives its address, which the hooks
 * take. */
static LLVMValueRef load_mode(instr *s, LLVMValueRef *word)
{
    LLVMValueRef at = LLVMBuildStructGEP2(s->b, s->module_type, s->module, 0, "");
    *word = LLVMBuildLoad2(s->b, LLVMPointerType(s->i32, 0), at, "");
    LLVMValueRef mode = LLVMBuildLoad2(s->b, s->i32, *word, "");
    LLVMSetOrdering(mode, LLVMAtomicOrderingMonotonic);
    LLVMSetAlignment(mode, 4);
    return mode;
}

/* A new block after the one the builder is in. */
static LLVMBasicBlockRef block_after(instr *s, LLVMValueRef fn, const char *name)
{
    LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(s->m.ctx, fn, name);
    LLVMMoveBasicBlockAfter(bb, LLVMGetInsertBlock(s->b));
    return bb;
}

/* While fuzzing, the mode word is exactly SIFT_VALUES_FEATURES: ends the block the builder is
 * in with a branch on that to a new block, where the builder is left and *F is set up for
 * the features of P's slots, unless the call is past the sampled ones (values_abi.h), which go
 * to SKIP (AFTER_ENTRY: the entry counter counts this call already). Returns the block the
 * other way goes to, for the test of the hook. */
static LLVMBasicBlockRef branch_to_features(instr *s, const sift_instr_fn *p, LLVMValueRef word,
                                            LLVMValueRef mode, bool after_entry,
                                            LLVMBasicBlockRef skip, sift_instr_features *f)
{
    LLVMValueRef fuzzing =
        LLVMBuildICmp(s->b, LLVMIntEQ, mode, sift_instr_int(s->i32, SIFT_VALUES_FEATURES), "");
    LLVMBasicBlockRef features = block_after(s, p->fn, "sift.values.features");
    LLVMBasicBlockRef other = LLVMAppendBasicBlockInContext(s->m.ctx, p->fn, "sift.values.other");
    LLVMMoveBasicBlockAfter(other, features);
    LLVMBuildCondBr(s->b, fuzzing, features, other);
    LLVMPositionBuilderAtEnd(s->b, features);
    if (p->calls) {
        LLVMValueRef before = LLVMBuildLoad2(s->b, s->i8, p->calls, "");
        if (after_entry) before = LLVMBuildSub(s->b, before, sift_instr_int(s->i8, 1), "");
        LLVMValueRef sampled = LLVMBuildICmp(s->b, LLVMIntULT, before,
                                             sift_instr_int(s->i8, SIFT_VALUES_SAMPLED_CALLS), "");
        LLVMBasicBlockRef take = block_after(s, p->fn, "sift.values.sampled");
        LLVMBuildCondBr(s->b, sampled, take, skip);
        LLVMPositionBuilderAtEnd(s->b, take);
    }
    *f = (sift_instr_features){.b = s->b,
                               .fn = p->fn,
                               .id = p->id,
                               .word = word,
                               .readable = s->readable,
                               .readable_type = s->readable_type};
    LLVMValueRef at = LLVMBuildStructGEP2(s->b, s->module_type, s->module, 1, "");
    f->counters = LLVMBuildLoad2(s->b, s->ptr, at, "");
    at = LLVMBuildStructGEP2(s->b, s->module_type, s->module, 2, "");
    f->dirty = LLVMBuildLoad2(s->b, s->ptr, at, "");
    at = LLVMBuildStructGEP2(s->b, s->module_type, s->module, 3, "");
    LLVMValueRef known = LLVMBuildLoad2(s->b, LLVMPointerType(s->ptr, 0), at, "");
    f->known = LLVMBuildBitCast(s->b, LLVMBuildLoad2(s->b, s->ptr, known, ""),
                                LLVMPointerType(LLVMInt64TypeInContext(s->m.ctx), 0), "");
    return other;
}

/* Ends the block the builder is in with a branch to a new block, where the builder is left,
 * taken when MODE has a bit of BITS; the other way goes to NEXT. */
static void branch_to_hook(instr *s, LLVMValueRef fn, LLVMValueRef mode, unsigned bits,
                           LLVMBasicBlockRef next)
{
    LLVMValueRef on =
        LLVMBuildICmp(s->b, LLVMIntNE, LLVMBuildAnd(s->b, mode, sift_instr_int(s->i32, bits), ""),
                      sift_instr_int(s->i32, 0), "");
    LLVMBasicBlockRef hook = block_after(s, fn, "sift.values.hook");
    LLVMBuildCondBr(s->b, on, hook, next);
    LLVMPositionBuilderAtEnd(s->b, hook);
}

static bool is_harness(LLVMValueRef fn)
{
    size_t len;
    const char *name = LLVMGetValueName2(fn, &len);
    static const char entry[] = "LLVMFuzzerTestOneInput";
    return len == sizeof entry - 1 && memcmp(name, entry, len) == 0;
}

/* A new entry block takes the old one's static allocas (which must stay in the entry block to
 * stay static), the argument array, and the test of the mode word; the old entry block follows
 * the features or the hook's call, so the blocks after it keep their predecessor and their
 * phis. While fuzzing, the function computes its arguments' and fields' features itself. */
static void hook_entry(instr *s, const sift_instr_fn *p, LLVMValueRef desc)
{
    LLVMBasicBlockRef old = LLVMGetEntryBasicBlock(p->fn);
    LLVMBasicBlockRef entry = LLVMInsertBasicBlockInContext(s->m.ctx, old, "sift.values.entry");
    LLVMPositionBuilderAtEnd(s->b, entry);
    for (LLVMValueRef i = LLVMGetFirstInstruction(old); i;) {
        LLVMValueRef next = LLVMGetNextInstruction(i);
        if (LLVMIsAAllocaInst(i) && LLVMIsAConstant(LLVMGetOperand(i, 0))) move_here(s, i);
        i = next;
    }
    locate(s, p->sp, p->line, NULL);
    LLVMTypeRef array_type = LLVMArrayType(s->i64, p->nargs ? p->nargs : 1);
    LLVMValueRef array = LLVMBuildAlloca(s->b, array_type, "sift.values.args"), word;
    LLVMValueRef mode = load_mode(s, &word);
    /* The harness's own arguments are no feedback: every input has a size, and a feature per
     * size bucket filled the corpus with inputs that differ only in length (traces still show
     * them). Nor are arguments that the callers' edges tell. */
    bool harness = is_harness(p->fn);
    uint32_t featured_args =
        harness ? 0 : (uint32_t)(((uint64_t)1 << p->nargs) - 1) & ~p->implied_args;
    bool fields = p->nslots > p->nargs && p->slots[p->nargs].kind == SIFT_VALUES_FIELD;
    bool featured = featured_args || (fields && !harness);
    if (featured) {
        sift_instr_features f;
        LLVMBasicBlockRef other = branch_to_features(s, p, word, mode, false, old, &f);
        for (unsigned i = 0; i < p->nargs; i++)
            if (featured_args >> i & 1) sift_instr_feature(&f, i, p->slots[i].type, p->args[i]);
        sift_instr_fields(&f, p);
        LLVMBuildBr(s->b, old);
        LLVMPositionBuilderAtEnd(s->b, other);
    }
    branch_to_hook(s, p->fn, mode, SIFT_VALUES_RECORD | (featured ? SIFT_VALUES_FEATURES : 0), old);
    for (unsigned i = 0; i < p->nargs; i++) {
        LLVMValueRef index[] = {sift_instr_int(s->i64, 0), sift_instr_int(s->i64, i)};
        LLVMValueRef at = LLVMBuildInBoundsGEP2(s->b, array_type, array, index, 2, "");
        LLVMBuildStore(s->b, to_i64(s, p->args[i]), at);
    }
    LLVMValueRef first[] = {sift_instr_int(s->i64, 0), sift_instr_int(s->i64, 0)};
    LLVMValueRef args[] = {word, desc,
                           LLVMBuildInBoundsGEP2(s->b, array_type, array, first, 2, "")};
    LLVMBuildCall2(s->b, s->enter_type, s->enter, args, 3, "");
    LLVMBuildBr(s->b, old);
}

/* A musttail call must be followed by the return (and at most a bitcast): nothing can go in
 * between, so such returns go unrecorded. The C API tells a tail call but not its kind, which
 * the call's printed form shows. An instruction printed in its block first numbers every value
 * and metadata node of the module, so the call leaves its block while it prints: printing
 * stays as cheap as the call, not the module. */
static bool after_musttail(instr *s, LLVMValueRef ret)
{
    LLVMValueRef prev = LLVMGetPreviousInstruction(ret), next = ret;
    if (prev && LLVMIsABitCastInst(prev)) {
        next = prev;
        prev = LLVMGetPreviousInstruction(prev);
    }
    if (!prev || !LLVMIsACallInst(prev) || !LLVMIsTailCall(prev)) return false;
    LLVMMetadataRef at = LLVMInstructionGetDebugLoc(prev);
    LLVMInstructionRemoveFromParent(prev);
    char *text = LLVMPrintValueToString(prev);
    LLVMPositionBuilderBefore(s->b, next);
    LLVMInsertIntoBuilderWithName(s->b, prev, LLVMGetValueName(prev));
    LLVMInstructionSetDebugLoc(prev, at);
    bool must = strstr(text, "musttail call ") != NULL;
    LLVMDisposeMessage(text);
    return must;
}

/* Each return moves into a block of its own, after a test of the mode word: while fuzzing, the
 * returned value's feature is computed inline; a return without a value, or of a value the
 * edges tell, calls its hook only for a trace, as features have nothing to take from it. */
static void hook_returns(instr *s, const sift_instr_fn *p, LLVMValueRef desc)
{
    bool has_slot = p->nslots && p->slots[p->nslots - 1].kind == SIFT_VALUES_RETURN;
    size_t n = 0;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(p->fn); bb; bb = LLVMGetNextBasicBlock(bb))
        n++;
    LLVMValueRef *rets = calloc(n ? n : 1, sizeof(LLVMValueRef));
    if (!rets) sift_instr_die(s->m.source, "out of memory", NULL);
    n = 0;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(p->fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
        LLVMValueRef ret = LLVMGetBasicBlockTerminator(bb);
        if (ret && LLVMGetInstructionOpcode(ret) == LLVMRet && !after_musttail(s, ret))
            rets[n++] = ret;
    }
    for (size_t i = 0; i < n; i++) {
        LLVMValueRef ret = rets[i];
        LLVMBasicBlockRef bb = LLVMGetInstructionParent(ret);
        /* The harness's return stays a feature, though a constant: every input has it, and
         * the corpus's weights count it among each entry's features (docs/values.md). */
        bool featured =
            has_slot && !(p->covered && !is_harness(p->fn) && sift_instr_return_implied(ret));
        LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(s->m.ctx, p->fn, "sift.values.ret");
        LLVMPositionBuilderAtEnd(s->b, done);
        move_here(s, ret);
        LLVMPositionBuilderAtEnd(s->b, bb);
        locate(s, p->sp, p->line, LLVMInstructionGetDebugLoc(ret));
        LLVMValueRef word, mode = load_mode(s, &word);
        if (featured) {
            sift_instr_features f;
            LLVMBasicBlockRef other = branch_to_features(s, p, word, mode, true, done, &f);
            sift_instr_feature(&f, p->nslots - 1, p->slots[p->nslots - 1].type,
                               LLVMGetOperand(ret, 0));
            LLVMBuildBr(s->b, done);
            LLVMPositionBuilderAtEnd(s->b, other);
        }
        branch_to_hook(s, p->fn, mode, SIFT_VALUES_RECORD | (featured ? SIFT_VALUES_FEATURES : 0),
                       done);
        LLVMValueRef value =
            has_slot ? to_i64(s, LLVMGetOperand(ret, 0)) : sift_instr_int(s->i64, 0);
        LLVMValueRef args[] = {word, desc, value};
        LLVMBuildCall2(s->b, s->return_type, s->ret, args, 3, "");
        LLVMBuildBr(s->b, done);
    }
    free(rets);
}

/* The constructor that registers the table. */
static void register_table(instr *s, LLVMValueRef table, size_t n)
{
    LLVMTypeRef void_fn = LLVMFunctionType(LLVMVoidTypeInContext(s->m.ctx), NULL, 0, 0);
    LLVMValueRef ctor = LLVMAddFunction(s->m.mod, "sift.values.register", void_fn);
    LLVMSetLinkage(ctor, LLVMInternalLinkage);
    LLVMPositionBuilderAtEnd(s->b, LLVMAppendBasicBlockInContext(s->m.ctx, ctor, ""));
    LLVMSetCurrentDebugLocation2(s->b, NULL);
    LLVMTypeRef reg_params[] = {s->i32, LLVMPointerType(s->fn_type, 0), s->i64,
                                LLVMPointerType(s->module_type, 0)};
    LLVMTypeRef reg_type = LLVMFunctionType(LLVMVoidTypeInContext(s->m.ctx), reg_params, 4, 0);
    LLVMValueRef reg = declare_hook(s, SIFT_VALUES_REGISTER_HOOK, reg_type);
    LLVMValueRef first[] = {sift_instr_int(s->i64, 0), sift_instr_int(s->i64, 0)};
    LLVMValueRef args[] = {sift_instr_int(s->i32, SIFT_VALUES_ABI),
                           LLVMConstInBoundsGEP2(LLVMGlobalGetValueType(table), table, first, 2),
                           sift_instr_int(s->i64, n), s->module};
    LLVMBuildCall2(s->b, reg_type, reg, args, 4, "");
    LLVMBuildRetVoid(s->b);
    sift_instr_add_ctor(s->m.mod, ctor, CTOR_PRIORITY, NULL);
}

static int by_id(const void *a, const void *b)
{
    const sift_instr_fn *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static void instrument(instr *s)
{
    size_t n = 0, cap = 0;
    sift_instr_fn *fns = NULL;
    for (LLVMValueRef fn = LLVMGetFirstFunction(s->m.mod); fn; fn = LLVMGetNextFunction(fn)) {
        if (!sift_instr_wanted(fn)) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            sift_instr_fn *grown = realloc(fns, cap * sizeof(*fns));
            if (!grown) sift_instr_die(s->m.source, "out of memory", NULL);
            fns = grown;
        }
        if (!sift_instr_plan(&s->m, fn, &fns[n++]))
            sift_instr_die(s->m.source, "out of memory", NULL);
    }
    if (n == 0) return;
    qsort(fns, n, sizeof(*fns), by_id);
    LLVMValueRef table = emit_table(s, fns, n);
    for (size_t i = 0; i < n; i++) {
        LLVMValueRef index[] = {sift_instr_int(s->i64, 0), sift_instr_int(s->i64, i)};
        LLVMValueRef desc = LLVMConstInBoundsGEP2(LLVMGlobalGetValueType(table), table, index, 2);
        hook_entry(s, &fns[i], desc);
        hook_returns(s, &fns[i], desc);
        sift_instr_plan_free(&fns[i]);
    }
    free(fns);
    register_table(s, table, n);
}

void sift_instr_values(const sift_instr_module *m)
{
    instr s = {.m = *m};
    set_up(&s);
    instrument(&s);
    LLVMDisposeBuilder(s.b);
}
