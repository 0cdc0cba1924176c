/* The function index of the edge counters (docs/coverage-api.md): sanitizer coverage gives
 * each function a counter array and a pc table of its own, kept or dropped together with the
 * function, and the linker lays them out in the same order. Each function gets a dirty byte
 * the same way, so the module's section of dirty bytes runs parallel to its pc tables: byte k
 * belongs to the k-th function the pc tables open, and the runtime scans these bytes instead
 * of every counter. */
#include "cc/instrument.h"
#include "abi/fn_dirty_abi.h"

#include <llvm-c/Comdat.h>

#include <stdlib.h>
#include <string.h>

#define PCS_SECTION "__sancov_pcs"

static LLVMValueRef strip_casts(LLVMValueRef v)
{
    while (LLVMIsAConstantExpr(v) && LLVMGetConstOpcode(v) == LLVMBitCast)
        v = LLVMGetOperand(v, 0);
    return v;
}

/* The function whose pc table G is: its first entry is the function itself with the flag of a
 * function entry. NULL for any other global; *BAD when G is a pc table of another shape. */
static LLVMValueRef pc_table_function(LLVMValueRef g, bool *bad)
{
    const char *section = LLVMGetSection(g);
    if (!section || strcmp(section, PCS_SECTION) != 0) return NULL;
    LLVMValueRef init = LLVMGetInitializer(g);
    LLVMValueRef fn = init && LLVMIsAConstantArray(init) && LLVMGetNumOperands(init) >= 2
                          ? strip_casts(LLVMGetOperand(init, 0))
                          : NULL;
    LLVMValueRef flags = fn ? LLVMGetOperand(init, 1) : NULL;
    if (!fn || !LLVMIsAFunction(fn) || !LLVMIsAConstantExpr(flags) ||
        LLVMGetConstOpcode(flags) != LLVMIntToPtr ||
        !(LLVMConstIntGetZExtValue(LLVMGetOperand(flags, 0)) & 1)) {
        *bad = true;
        return NULL;
    }
    return fn;
}

/* Stores 1 to a new dirty byte at FN's entry, after the static allocas. The byte lives in the
 * comdat of FN's pc table PCS, and so goes wherever the linker takes that. */
static void mark_entry(LLVMBuilderRef b, LLVMModuleRef mod, LLVMValueRef fn, LLVMValueRef pcs)
{
    LLVMTypeRef i8 = LLVMInt8TypeInContext(LLVMGetModuleContext(mod));
    LLVMValueRef dirty = LLVMAddGlobal(mod, i8, "sift.fn_dirty");
    LLVMSetInitializer(dirty, LLVMConstInt(i8, 0, 0));
    LLVMSetLinkage(dirty, LLVMPrivateLinkage);
    LLVMSetSection(dirty, SIFT_FN_DIRTY_SECTION);
    LLVMSetAlignment(dirty, 1);
    if (LLVMGetComdat(pcs)) LLVMSetComdat(dirty, LLVMGetComdat(pcs));
    LLVMValueRef at = LLVMGetFirstInstruction(LLVMGetEntryBasicBlock(fn));
    while (at && LLVMIsAAllocaInst(at))
        at = LLVMGetNextInstruction(at);
    LLVMPositionBuilderBefore(b, at);
    LLVMSetCurrentDebugLocation2(b, NULL);
    /* Volatile, so that nothing may drop a store to a byte the module never reads. */
    LLVMValueRef store = LLVMBuildStore(b, LLVMConstInt(i8, 1, 0), dirty);
    LLVMSetVolatile(store, 1);
}

/* The module's constructor, one per linked object as sanitizer coverage's is (a comdat of its
 * name): it passes the bounds of the dirty section to the runtime. */
static void add_init(LLVMBuilderRef b, LLVMModuleRef mod)
{
    LLVMContextRef c = LLVMGetModuleContext(mod);
    LLVMTypeRef i8 = LLVMInt8TypeInContext(c), ptr = LLVMPointerType(i8, 0);
    LLVMTypeRef void_fn = LLVMFunctionType(LLVMVoidTypeInContext(c), NULL, 0, 0);
    LLVMTypeRef params[] = {ptr, ptr};
    LLVMTypeRef hook_type = LLVMFunctionType(LLVMVoidTypeInContext(c), params, 2, 0);
    LLVMValueRef hook = LLVMAddFunction(mod, SIFT_FN_DIRTY_INIT_HOOK, hook_type);
    LLVMValueRef bounds[2];
    static const char *const names[] = {"__start_" SIFT_FN_DIRTY_SECTION,
                                        "__stop_" SIFT_FN_DIRTY_SECTION};
    for (int i = 0; i < 2; i++) {
        bounds[i] = LLVMAddGlobal(mod, i8, names[i]);
        LLVMSetLinkage(bounds[i], LLVMExternalWeakLinkage);
        LLVMSetVisibility(bounds[i], LLVMHiddenVisibility);
    }
    LLVMValueRef ctor = LLVMAddFunction(mod, "sift.fn_dirty.init", void_fn);
    LLVMSetLinkage(ctor, LLVMInternalLinkage);
    LLVMSetComdat(ctor, LLVMGetOrInsertComdat(mod, "sift.fn_dirty.init"));
    LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(c, ctor, ""));
    LLVMSetCurrentDebugLocation2(b, NULL);
    LLVMBuildCall2(b, hook_type, hook, bounds, 2, "");
    LLVMBuildRetVoid(b);
    sift_instr_add_ctor(mod, ctor, SIFT_FN_DIRTY_CTOR_PRIORITY, ctor);
}

bool sift_instr_fn_dirty(LLVMModuleRef mod)
{
    size_t n = 0, cap = 0;
    LLVMValueRef *pairs = NULL; /* function, pc table */
    bool bad = false;
    for (LLVMValueRef g = LLVMGetFirstGlobal(mod); g && !bad; g = LLVMGetNextGlobal(g)) {
        LLVMValueRef fn = pc_table_function(g, &bad);
        if (!fn) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            LLVMValueRef *grown = realloc(pairs, 2 * cap * sizeof(LLVMValueRef));
            if (!grown) {
                free(pairs);
                return false;
            }
            pairs = grown;
        }
        pairs[2 * n] = fn;
        pairs[2 * n + 1] = g;
        n++;
    }
    /* Without a byte for every function, the runtime could not tell which is whose. */
    if (n && !bad) {
        LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetModuleContext(mod));
        for (size_t i = 0; i < n; i++)
            mark_entry(b, mod, pairs[2 * i], pairs[2 * i + 1]);
        add_init(b, mod);
        LLVMDisposeBuilder(b);
    }
    free(pairs);
    return true;
}
