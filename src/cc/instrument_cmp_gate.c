/* The comparison gate (abi/cmp_gate_abi.h): each call to one of sanitizer coverage's
 * comparison callbacks goes into a block of its own, entered only when the runtime's gate byte
 * has a bit the callback serves. The block the call was in is split after the call: its
 * instructions up to the call stay, the rest move to a new block that both ways join. */
#include "cc/instrument.h"
#include "abi/cmp_gate_abi.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMBuilderRef b;
    LLVMValueRef gate; /* the runtime's byte, declared on first use */
    unsigned prof_kind;
    LLVMValueRef unlikely; /* branch weights: the call's side is the rare one */
} gater;

/* The gate bits that a call to the function NAME serves, or 0 when it is no comparison
 * callback. A one-byte comparison and an array index only ever give features: the operand ring
 * leaves them out (rt/cmp.c). */
static unsigned bits_for(const char *name)
{
    static const char *const feature_only[] = {"__sanitizer_cov_trace_cmp1",
                                               "__sanitizer_cov_trace_const_cmp1",
                                               "__sanitizer_cov_trace_gep", NULL};
    static const char *const ring_too[] = {
        "__sanitizer_cov_trace_cmp2",       "__sanitizer_cov_trace_cmp4",
        "__sanitizer_cov_trace_cmp8",       "__sanitizer_cov_trace_const_cmp2",
        "__sanitizer_cov_trace_const_cmp4", "__sanitizer_cov_trace_const_cmp8",
        "__sanitizer_cov_trace_switch",     "__sanitizer_cov_trace_div4",
        "__sanitizer_cov_trace_div8",       NULL};
    for (int i = 0; feature_only[i]; i++)
        if (!strcmp(name, feature_only[i])) return SIFT_CMP_GATE_FEATURES;
    for (int i = 0; ring_too[i]; i++)
        if (!strcmp(name, ring_too[i])) return SIFT_CMP_GATE_ALL;
    return 0;
}

/* The gate bits for the instruction I: 0 unless it is a plain call of a comparison callback
 * that can be moved to a block of its own. An alloca after it stays in its block, since moving
 * it out of the entry block would make it dynamic. */
static unsigned gated_call(LLVMValueRef i)
{
    if (!LLVMIsACallInst(i)) return 0;
    LLVMValueRef callee = LLVMGetCalledValue(i);
    while (LLVMIsAConstantExpr(callee) && LLVMGetConstOpcode(callee) == LLVMBitCast)
        callee = LLVMGetOperand(callee, 0);
    if (!LLVMIsAFunction(callee)) return 0;
    size_t len;
    unsigned bits = bits_for(LLVMGetValueName2(callee, &len));
    for (LLVMValueRef n = LLVMGetNextInstruction(i); bits && n; n = LLVMGetNextInstruction(n))
        if (LLVMIsAAllocaInst(n)) return 0;
    return bits;
}

/* Successor phis name the block their edge came from, and that edge now leaves TAIL, not
 * FROM: each phi of a successor is rebuilt with TAIL in FROM's place (the C API cannot set an
 * incoming block). */
static void move_phi_edges(gater *g, LLVMBasicBlockRef from, LLVMBasicBlockRef tail)
{
    LLVMValueRef term = LLVMGetBasicBlockTerminator(tail);
    unsigned nsucc = LLVMGetNumSuccessors(term);
    for (unsigned s = 0; s < nsucc; s++) {
        LLVMBasicBlockRef succ = LLVMGetSuccessor(term, s);
        bool seen = false;
        for (unsigned t = 0; t < s && !seen; t++)
            seen = LLVMGetSuccessor(term, t) == succ;
        if (seen) continue;
        LLVMValueRef phi = LLVMGetFirstInstruction(succ);
        while (phi && LLVMIsAPHINode(phi)) {
            LLVMValueRef next = LLVMGetNextInstruction(phi);
            unsigned n = LLVMCountIncoming(phi);
            LLVMValueRef *values = calloc(n + 1, sizeof(LLVMValueRef));
            LLVMBasicBlockRef *blocks = calloc(n + 1, sizeof(LLVMBasicBlockRef));
            if (!values || !blocks) sift_instr_die("sift-instrument", "out of memory", NULL);
            for (unsigned k = 0; k < n; k++) {
                values[k] = LLVMGetIncomingValue(phi, k);
                blocks[k] = LLVMGetIncomingBlock(phi, k);
                if (blocks[k] == from) blocks[k] = tail;
            }
            LLVMPositionBuilderBefore(g->b, phi);
            size_t len;
            const char *name = LLVMGetValueName2(phi, &len);
            LLVMValueRef rebuilt = LLVMBuildPhi(g->b, LLVMTypeOf(phi), "");
            LLVMSetValueName2(rebuilt, name, len);
            LLVMAddIncoming(rebuilt, values, blocks, n);
            LLVMReplaceAllUsesWith(phi, rebuilt);
            LLVMInstructionEraseFromParent(phi);
            free(values);
            free(blocks);
            phi = next;
        }
    }
}

static LLVMValueRef gate_global(gater *g)
{
    if (!g->gate) {
        LLVMTypeRef i8 = LLVMInt8TypeInContext(g->ctx);
        g->gate = LLVMGetNamedGlobal(g->mod, SIFT_CMP_GATE_SYMBOL);
        if (!g->gate) g->gate = LLVMAddGlobal(g->mod, i8, SIFT_CMP_GATE_SYMBOL);
    }
    return g->gate;
}

/* Puts CALL behind the gate for BITS. */
static void gate_call(gater *g, LLVMValueRef call, unsigned bits)
{
    LLVMBasicBlockRef from = LLVMGetInstructionParent(call);
    LLVMValueRef fn = LLVMGetBasicBlockParent(from);
    LLVMBasicBlockRef after = LLVMGetNextBasicBlock(from);
    LLVMBasicBlockRef tail = after ? LLVMInsertBasicBlockInContext(g->ctx, after, "")
                                   : LLVMAppendBasicBlockInContext(g->ctx, fn, "");
    /* The call's block is out of the way, where the hot path does not jump over it. */
    LLVMBasicBlockRef open = LLVMAppendBasicBlockInContext(g->ctx, fn, "");
    LLVMPositionBuilderAtEnd(g->b, tail);
    for (LLVMValueRef i = LLVMGetNextInstruction(call), next; i; i = next) {
        next = LLVMGetNextInstruction(i);
        LLVMInstructionRemoveFromParent(i);
        LLVMInsertIntoBuilder(g->b, i);
    }
    LLVMInstructionRemoveFromParent(call);
    LLVMPositionBuilderAtEnd(g->b, open);
    LLVMInsertIntoBuilder(g->b, call);
    LLVMBuildBr(g->b, tail);
    move_phi_edges(g, from, tail);

    LLVMTypeRef i8 = LLVMInt8TypeInContext(g->ctx);
    LLVMPositionBuilderAtEnd(g->b, from);
    LLVMSetCurrentDebugLocation2(g->b, NULL);
    /* Atomic, so that no pass may keep the byte in a register across the loop it is in: the
     * runtime changes it between executions. Monotonic costs a plain load. */
    LLVMValueRef byte = LLVMBuildLoad2(g->b, i8, gate_global(g), "");
    LLVMSetOrdering(byte, LLVMAtomicOrderingMonotonic);
    LLVMSetAlignment(byte, 1);
    LLVMValueRef wanted = LLVMBuildAnd(g->b, byte, sift_instr_int(i8, bits), "");
    LLVMValueRef on = LLVMBuildICmp(g->b, LLVMIntNE, wanted, sift_instr_int(i8, 0), "");
    LLVMValueRef br = LLVMBuildCondBr(g->b, on, open, tail);
    LLVMSetMetadata(br, g->prof_kind, g->unlikely);
}

/* The gated calls of one block, last first: each split then moves only what follows the call
 * into the block that the next (earlier) split moves again, so a block costs its length once. */
static void gate_block(gater *g, LLVMBasicBlockRef bb)
{
    LLVMValueRef i = LLVMGetLastInstruction(bb);
    while (i) {
        LLVMValueRef prev = LLVMGetPreviousInstruction(i);
        unsigned bits = gated_call(i);
        if (bits) gate_call(g, i, bits);
        i = prev;
    }
}

static LLVMValueRef branch_weights(LLVMContextRef ctx, unsigned taken, unsigned not_taken)
{
    LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx);
    LLVMMetadataRef parts[] = {
        LLVMMDStringInContext2(ctx, "branch_weights", strlen("branch_weights")),
        LLVMValueAsMetadata(sift_instr_int(i32, taken)),
        LLVMValueAsMetadata(sift_instr_int(i32, not_taken)),
    };
    return LLVMMetadataAsValue(ctx, LLVMMDNodeInContext2(ctx, parts, 3));
}

void sift_instr_cmp_gate(LLVMModuleRef mod)
{
    gater g = {.ctx = LLVMGetModuleContext(mod), .mod = mod};
    g.b = LLVMCreateBuilderInContext(g.ctx);
    g.prof_kind = LLVMGetMDKindIDInContext(g.ctx, "prof", 4);
    g.unlikely = branch_weights(g.ctx, 1, 1000);
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
        /* The blocks that splits add hold no call left to gate: a tail goes right after the
         * block split, before the next one taken here, and the calls' blocks go after all the
         * function's own. */
        unsigned own = LLVMCountBasicBlocks(fn);
        LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn);
        for (unsigned k = 0; k < own; k++) {
            LLVMBasicBlockRef next = LLVMGetNextBasicBlock(bb);
            gate_block(&g, bb);
            bb = next;
        }
    }
    LLVMDisposeBuilder(g.b);
}
