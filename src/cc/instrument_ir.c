/* IR helpers that the instrumenter's parts share: constants, the module's constructor list,
 * copies of strings, and the one way out on a fatal error. */
#include "cc/instrument.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Noreturn void sift_instr_die(const char *path, const char *what, const char *detail)
{
    fprintf(stderr, "sift-instrument: %s: %s%s%s\n", path, what, detail ? ": " : "",
            detail ? detail : "");
    exit(1);
}

LLVMValueRef sift_instr_int(LLVMTypeRef t, uint64_t v)
{
    return LLVMConstInt(t, v, 0);
}

char *sift_instr_strdup(const char *text, size_t len)
{
    char *copy = malloc(len + 1);
    if (!copy) return NULL;
    memcpy(copy, text, len);
    copy[len] = '\0';
    return copy;
}

void sift_instr_add_ctor(LLVMModuleRef mod, LLVMValueRef ctor, unsigned priority, LLVMValueRef data)
{
    LLVMContextRef c = LLVMGetModuleContext(mod);
    LLVMTypeRef i32 = LLVMInt32TypeInContext(c), ptr = LLVMPointerType(LLVMInt8TypeInContext(c), 0);
    LLVMTypeRef void_fn = LLVMFunctionType(LLVMVoidTypeInContext(c), NULL, 0, 0);
    LLVMValueRef old = LLVMGetNamedGlobal(mod, "llvm.global_ctors");
    LLVMTypeRef entry_type;
    unsigned count = 0;
    if (old) {
        entry_type = LLVMGetElementType(LLVMGlobalGetValueType(old));
        count = LLVMGetArrayLength(LLVMGlobalGetValueType(old));
    } else {
        LLVMTypeRef fields[] = {i32, LLVMPointerType(void_fn, 0), ptr};
        entry_type = LLVMStructTypeInContext(c, fields, 3, 0);
    }
    LLVMValueRef *entries = calloc(count + 1, sizeof(LLVMValueRef));
    if (!entries) sift_instr_die("sift-instrument", "out of memory", NULL);
    LLVMValueRef init = old ? LLVMGetInitializer(old) : NULL;
    for (unsigned i = 0; i < count; i++)
        entries[i] = LLVMGetOperand(init, i);
    LLVMValueRef fields[] = {sift_instr_int(i32, priority), ctor,
                             data ? LLVMConstBitCast(data, ptr) : LLVMConstNull(ptr)};
    entries[count] = LLVMConstNamedStruct(entry_type, fields, 3);
    if (old) LLVMDeleteGlobal(old);
    LLVMValueRef array = LLVMConstArray(entry_type, entries, count + 1);
    LLVMValueRef ctors = LLVMAddGlobal(mod, LLVMTypeOf(array), "llvm.global_ctors");
    LLVMSetInitializer(ctors, array);
    LLVMSetLinkage(ctors, LLVMAppendingLinkage);
    free(entries);
}
