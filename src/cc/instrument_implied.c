/* Values that the edges already tell. Where sanitizer coverage counts a function's blocks, a
 * value that is the same every time a given block runs adds no feature the edges lack: an
 * argument that every call passes as a constant, a return of a constant. Computing its feature
 * costs each call a bucket and a load (expat's token accounting takes __LINE__ on every token),
 * so the inline code leaves such values out; traces still record them. */
#include "cc/instrument.h"

#include <string.h>

/* Whether V, through constant casts and GEPs, is sanitizer coverage's counter array, or with
 * GUARDS also its guard array. */
static bool is_coverage_array(LLVMValueRef v, bool guards)
{
    while (v && LLVMIsAConstantExpr(v))
        v = LLVMGetOperand(v, 0);
    if (!v || !LLVMIsAGlobalVariable(v)) return false;
    const char *section = LLVMGetSection(v);
    return section &&
           (!strcmp(section, "__sancov_cntrs") || (guards && !strcmp(section, "__sancov_guards")));
}

bool sift_instr_has_coverage(LLVMValueRef fn)
{
    /* Sanitizer coverage instruments every entry block it instruments anything in, and prunes
     * only blocks whose runs others imply. */
    LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(fn);
    for (LLVMValueRef i = LLVMGetFirstInstruction(entry); i; i = LLVMGetNextInstruction(i))
        for (int k = 0, n = LLVMGetNumOperands(i); k < n; k++)
            if (is_coverage_array(LLVMGetOperand(i, k), true)) return true;
    return false;
}

LLVMValueRef sift_instr_entry_counter(LLVMValueRef fn)
{
    LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(fn);
    for (LLVMValueRef i = LLVMGetFirstInstruction(entry); i; i = LLVMGetNextInstruction(i)) {
        if (!LLVMIsALoadInst(i)) continue;
        LLVMTypeRef t = LLVMTypeOf(i);
        if (LLVMGetTypeKind(t) == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(t) == 8 &&
            is_coverage_array(LLVMGetOperand(i, 0), false))
            return LLVMGetOperand(i, 0);
    }
    return NULL;
}

/* Whether the constant V (a cast of a function, an array of such) is only part of sanitizer
 * coverage's pc tables, which name each function without calling it. */
static bool only_in_pc_tables(LLVMValueRef v, int depth)
{
    if (depth > 4) return false;
    for (LLVMUseRef use = LLVMGetFirstUse(v); use; use = LLVMGetNextUse(use)) {
        LLVMValueRef user = LLVMGetUser(use);
        if (LLVMIsAGlobalVariable(user)) {
            const char *section = LLVMGetSection(user);
            if (!section || strcmp(section, "__sancov_pcs") != 0) return false;
        } else if (!LLVMIsAConstant(user) || LLVMIsAGlobalValue(user) ||
                   !only_in_pc_tables(user, depth + 1)) {
            return false;
        }
    }
    return true;
}

bool sift_instr_arg_implied(LLVMValueRef fn, unsigned index)
{
    /* Only a function no other module can call, and whose address goes nowhere but into the
     * pc tables. */
    LLVMLinkage linkage = LLVMGetLinkage(fn);
    if (linkage != LLVMInternalLinkage && linkage != LLVMPrivateLinkage) return false;
    LLVMUseRef use = LLVMGetFirstUse(fn);
    if (!use) return false;
    for (; use; use = LLVMGetNextUse(use)) {
        LLVMValueRef call = LLVMGetUser(use);
        if (LLVMIsAConstant(call) && !LLVMIsAGlobalValue(call) && only_in_pc_tables(call, 0))
            continue;
        if (!(LLVMIsACallInst(call) || LLVMIsAInvokeInst(call)) || LLVMGetCalledValue(call) != fn ||
            index >= LLVMGetNumArgOperands(call))
            return false;
        for (unsigned k = 0, n = LLVMGetNumArgOperands(call); k < n; k++)
            if (LLVMGetOperand(call, k) == fn) return false;
        LLVMValueRef caller = LLVMGetBasicBlockParent(LLVMGetInstructionParent(call));
        if (!LLVMIsAConstant(LLVMGetOperand(call, index)) || !sift_instr_has_coverage(caller))
            return false;
    }
    return true;
}

bool sift_instr_return_implied(LLVMValueRef ret)
{
    LLVMValueRef v = LLVMGetOperand(ret, 0);
    if (LLVMIsAConstant(v)) return true;
    /* A phi of constants in the return's block, each coming from a block that leads nowhere
     * else: the block that ran tells the value. */
    if (!LLVMIsAPHINode(v) || LLVMGetInstructionParent(v) != LLVMGetInstructionParent(ret))
        return false;
    for (unsigned i = 0, n = LLVMCountIncoming(v); i < n; i++) {
        LLVMValueRef from = LLVMGetBasicBlockTerminator(LLVMGetIncomingBlock(v, i));
        if (!LLVMIsAConstant(LLVMGetIncomingValue(v, i)) || !from ||
            LLVMGetNumSuccessors(from) != 1)
            return false;
    }
    return true;
}
