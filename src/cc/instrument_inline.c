/* The features of function-boundary values, computed by the instrumented code itself while
 * fuzzing: a hook call per entry and return, with its argument array and its walk over the
 * function's slots, cost libpng a fifth of its speed, where the bucket and the index of a value
 * are a dozen instructions once the slot's type and id are constants. The code must give the
 * counter that the runtime's sift_values_bucket and sift_values_feature give (values.c), so
 * that features agree with traces and between modules built either way; tests/test_instrument.c
 * compares the two. */
#include "cc/instrument.h"

static LLVMValueRef constant(LLVMValueRef like, uint64_t v)
{
    return LLVMConstInt(LLVMTypeOf(like), v, 0);
}

/* VALUE as the runtime reads it, in 64 bits: sign-extended from its width in a signed slot,
 * zero-extended otherwise (the instrumenter gives signed slots only to exact widths). */
static LLVMValueRef widen(LLVMBuilderRef b, LLVMTypeRef i64, LLVMValueRef value, uint8_t type)
{
    if (LLVMGetIntTypeWidth(LLVMTypeOf(value)) == 64) return value;
    return type & SIFT_VALUES_SIGNED ? LLVMBuildSExt(b, value, i64, "")
                                     : LLVMBuildZExt(b, value, i64, "");
}

static LLVMValueRef count_leading_zeros(LLVMBuilderRef b, LLVMValueRef fn, LLVMValueRef v)
{
    LLVMModuleRef mod = LLVMGetGlobalParent(fn);
    LLVMContextRef c = LLVMGetModuleContext(mod);
    LLVMTypeRef i64 = LLVMTypeOf(v);
    unsigned id = LLVMLookupIntrinsicID("llvm.ctlz", 9);
    LLVMValueRef ctlz = LLVMGetIntrinsicDeclaration(mod, id, &i64, 1);
    /* Zero is a small value, whose select below never takes this count: zero may be poison. */
    LLVMValueRef args[] = {v, LLVMConstInt(LLVMInt1TypeInContext(c), 1, 0)};
    return LLVMBuildCall2(b, LLVMIntrinsicGetType(c, id, &i64, 1), ctlz, args, 2, "");
}

/* sift_values_bucket without branches: V + SMALL for -SMALL..SMALL, else the first bucket of
 * the sign plus floor(log2(|V|)) - LOG_FIRST, the log held at LOG_LARGE below LOG_HUGE and at
 * LOG_LARGE + 1 from there. */
static LLVMValueRef bucket(const sift_instr_features *f, LLVMValueRef v, uint8_t type)
{
    LLVMBuilderRef b = f->b;
    LLVMValueRef shifted = LLVMBuildAdd(b, v, constant(v, SIFT_VALUES_SMALL), "");
    LLVMValueRef magnitude = v;
    LLVMValueRef first = constant(v, SIFT_VALUES_POSITIVE_FIRST - SIFT_VALUES_LOG_FIRST);
    LLVMValueRef small;
    if (type & SIFT_VALUES_SIGNED) {
        small =
            LLVMBuildICmp(b, LLVMIntULE, shifted, constant(v, (uint64_t)2 * SIFT_VALUES_SMALL), "");
        LLVMValueRef negative = LLVMBuildICmp(b, LLVMIntSLT, v, constant(v, 0), "");
        magnitude = LLVMBuildSelect(b, negative, LLVMBuildNeg(b, v, ""), v, "");
        first = LLVMBuildSelect(b, negative,
                                constant(v, SIFT_VALUES_NEGATIVE_FIRST - SIFT_VALUES_LOG_FIRST),
                                first, "");
    } else {
        /* Unsigned, V + SMALL wraps for the largest values: compare V itself. */
        small = LLVMBuildICmp(b, LLVMIntULE, v, constant(v, SIFT_VALUES_SMALL), "");
    }
    LLVMValueRef log =
        LLVMBuildSub(b, constant(v, 63), count_leading_zeros(b, f->fn, magnitude), "");
    LLVMValueRef large = LLVMBuildICmp(b, LLVMIntUGE, log, constant(v, SIFT_VALUES_LOG_LARGE), "");
    LLVMValueRef huge = LLVMBuildICmp(b, LLVMIntUGE, log, constant(v, SIFT_VALUES_LOG_HUGE), "");
    log = LLVMBuildSelect(b, large, constant(v, SIFT_VALUES_LOG_LARGE), log, "");
    log = LLVMBuildSelect(b, huge, constant(v, SIFT_VALUES_LOG_LARGE + 1), log, "");
    return LLVMBuildSelect(b, small, shifted, LLVMBuildAdd(b, first, log, ""), "");
}

/* Ends the block the builder is in with a branch on COND to a new block NAME, where the builder
 * is left; returns the block both ways meet again in, which join() enters. */
static LLVMBasicBlockRef branch_into(const sift_instr_features *f, LLVMValueRef cond,
                                     const char *name)
{
    LLVMContextRef c = LLVMGetTypeContext(LLVMTypeOf(cond));
    LLVMBasicBlockRef then = LLVMAppendBasicBlockInContext(c, f->fn, name);
    LLVMMoveBasicBlockAfter(then, LLVMGetInsertBlock(f->b));
    LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(c, f->fn, "sift.values.next");
    LLVMMoveBasicBlockAfter(next, then);
    LLVMBuildCondBr(f->b, cond, then, next);
    LLVMPositionBuilderAtEnd(f->b, then);
    return next;
}

static void join(const sift_instr_features *f, LLVMBasicBlockRef next)
{
    LLVMBuildBr(f->b, next);
    LLVMPositionBuilderAtEnd(f->b, next);
}

/* Marks the counter of BUCKET (an i64, constant or not) in SLOT, as the hooks' take() does,
 * unless its known bit is set: the slot's line is a constant, and so are its dirty byte and
 * its word of known bits. The builder is left in the block after the marking, which has a
 * block of its own. */
static void mark(const sift_instr_features *f, unsigned slot, LLVMValueRef bucket)
{
    LLVMBuilderRef b = f->b;
    LLVMContextRef c = LLVMGetTypeContext(LLVMTypeOf(bucket));
    LLVMTypeRef i8 = LLVMInt8TypeInContext(c);
    uint64_t base = sift_values_slot_base(f->id, slot), mask = (1u << SIFT_VALUES_DIRTY_SHIFT) - 1;
    LLVMValueRef rotated = LLVMBuildAnd(
        b, LLVMBuildAdd(b, bucket, constant(bucket, base & mask), ""), constant(bucket, mask), "");
    LLVMValueRef idx = LLVMBuildOr(b, rotated, constant(bucket, base & ~mask), "");
    LLVMValueRef line = constant(bucket, base >> SIFT_VALUES_DIRTY_SHIFT);
    LLVMTypeRef i64 = LLVMInt64TypeInContext(c);
    LLVMValueRef word = LLVMBuildLoad2(b, i64, LLVMBuildGEP2(b, i64, f->known, &line, 1, ""), "");
    LLVMValueRef known =
        LLVMBuildAnd(b, LLVMBuildLShr(b, word, rotated, ""), constant(word, 1), "");
    LLVMBasicBlockRef next = branch_into(f, LLVMBuildIsNull(b, known, ""), "sift.values.mark");
    LLVMValueRef one = LLVMConstInt(i8, 1, 0);
    LLVMBuildStore(b, one, LLVMBuildGEP2(b, i8, f->counters, &idx, 1, ""));
    LLVMBuildStore(b, one, LLVMBuildGEP2(b, i8, f->dirty, &line, 1, ""));
    join(f, next);
}

void sift_instr_feature(const sift_instr_features *f, unsigned slot, uint8_t type,
                        LLVMValueRef value)
{
    LLVMContextRef c = LLVMGetTypeContext(LLVMTypeOf(value));
    LLVMTypeRef i64 = LLVMInt64TypeInContext(c);
    if (!(type & SIFT_VALUES_POINTER)) {
        mark(f, slot, bucket(f, widen(f->b, i64, value, type), type));
        return;
    }
    /* A non-null pointer is every call's usual case: only a null one is a feature. */
    LLVMBasicBlockRef next = branch_into(f, LLVMBuildIsNull(f->b, value, ""), "sift.values.null");
    mark(f, slot, LLVMConstInt(i64, SIFT_VALUES_NULL_BUCKET, 0));
    join(f, next);
}

/* The fields of argument P->slots[FIRST].arg, slots FIRST up to END. */
static void argument_fields(const sift_instr_features *f, const sift_instr_fn *p, unsigned first,
                            unsigned end)
{
    LLVMBuilderRef b = f->b;
    LLVMContextRef c = LLVMGetModuleContext(LLVMGetGlobalParent(f->fn));
    LLVMTypeRef i8 = LLVMInt8TypeInContext(c), i64 = LLVMInt64TypeInContext(c);
    LLVMValueRef base = LLVMBuildPtrToInt(b, p->args[p->slots[first].arg], i64, "");
    const sift_instr_slot *last = &p->slots[end - 1];
    LLVMValueRef args[] = {
        f->word,
        LLVMBuildAdd(b, base, LLVMConstInt(i64, p->slots[first].offset, 0), ""),
        LLVMBuildAdd(b, base, LLVMConstInt(i64, last->offset + (last->type & SIFT_VALUES_WIDTH), 0),
                     ""),
    };
    LLVMValueRef readable = LLVMBuildCall2(b, f->readable_type, f->readable, args, 3, "");
    LLVMBasicBlockRef next =
        branch_into(f, LLVMBuildIsNotNull(b, readable, ""), "sift.values.fields");
    LLVMValueRef bytes =
        LLVMBuildBitCast(b, p->args[p->slots[first].arg], LLVMPointerType(i8, 0), "");
    for (unsigned slot = first; slot < end; slot++) {
        const sift_instr_slot *field = &p->slots[slot];
        LLVMTypeRef t = LLVMIntTypeInContext(c, 8 * (field->type & SIFT_VALUES_WIDTH));
        LLVMValueRef offset = LLVMConstInt(i64, field->offset, 0);
        LLVMValueRef at = LLVMBuildGEP2(b, i8, bytes, &offset, 1, "");
        LLVMValueRef value =
            LLVMBuildLoad2(b, t, LLVMBuildBitCast(b, at, LLVMPointerType(t, 0), ""), "");
        LLVMSetAlignment(value, 1);
        sift_instr_feature(f, slot, field->type, value);
    }
    join(f, next);
}

void sift_instr_fields(const sift_instr_features *f, const sift_instr_fn *p)
{
    unsigned slot = p->nargs;
    while (slot < p->nslots && p->slots[slot].kind == SIFT_VALUES_FIELD) {
        unsigned end = slot + 1;
        while (end < p->nslots && p->slots[end].kind == SIFT_VALUES_FIELD &&
               p->slots[end].arg == p->slots[slot].arg)
            end++;
        argument_fields(f, p, slot, end);
        slot = end;
    }
}
