/* Which functions get hooks, and what each records: its integer and pointer arguments, the
 * integer fields of the structs its pointer arguments point to, and its return value, each
 * named from debug information where the module has it. */
#include "cc/instrument.h"
#include "cc/text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool has_prefix(const char *name, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);
    return len >= n && !memcmp(name, prefix, n);
}

static bool has_attribute(LLVMValueRef fn, const char *name)
{
    unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
    return kind && LLVMGetEnumAttributeAtIndex(fn, LLVMAttributeFunctionIndex, kind);
}

static bool has_param_attribute(LLVMValueRef fn, unsigned index, const char *name)
{
    unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
    return kind && LLVMGetEnumAttributeAtIndex(fn, index, kind);
}

bool sift_instr_wanted(LLVMValueRef fn)
{
    if (LLVMIsDeclaration(fn) || LLVMGetLinkage(fn) == LLVMAvailableExternallyLinkage) return false;
    size_t len;
    const char *name = LLVMGetValueName2(fn, &len);
    /* The runtime's own code, and code that sanitizers and sanitizer coverage generate
     * (module constructors, whose calls would reach the runtime before it is set up). */
    static const char *const skipped[] = {"sift_",   "__sift_", "__sanitizer_", "__asan",
                                          "__ubsan", "__msan",  "__tsan",       "asan.",
                                          "sancov.", "llvm.",   "__llvm"};
    for (size_t i = 0; i < sizeof(skipped) / sizeof(skipped[0]); i++)
        if (has_prefix(name, len, skipped[i])) return false;
    /* Code asked to stay uninstrumented, code with no prologue to insert into, and thunks,
     * whose tail call must stay the last thing they do. */
    if (has_attribute(fn, "nosanitize_coverage") ||
        has_attribute(fn, "disable_sanitizer_instrumentation") || has_attribute(fn, "naked"))
        return false;
    return !LLVMGetStringAttributeAtIndex(fn, LLVMAttributeFunctionIndex, "thunk", 5);
}

/* FNV-1a: the id must come out the same in every build and module that sees the function. */
static uint64_t hash_text(uint64_t h, const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)text[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* A function's id is a hash of its symbol; a local symbol is unique only within its file,
 * which becomes part of the key. */
static uint64_t function_id(const sift_instr_module *m, LLVMValueRef fn)
{
    size_t len;
    const char *name = LLVMGetValueName2(fn, &len);
    uint64_t h = 0xcbf29ce484222325ull;
    LLVMLinkage linkage = LLVMGetLinkage(fn);
    if (linkage == LLVMInternalLinkage || linkage == LLVMPrivateLinkage) {
        h = hash_text(h, m->source, strlen(m->source));
        h = hash_text(h, ":", 1);
    }
    return hash_text(h, name, len);
}

/* PREFIX followed by N in decimal, allocated. */
static char *numbered(const char *prefix, unsigned n)
{
    char digits[16];
    snprintf(digits, sizeof(digits), "%u", n);
    return sift_cc_join3(prefix, digits, "");
}

/* The slot type of an IR integer or pointer type, 0 for a type that is not recorded. Widths
 * other than 8, 16, 32 and 64 bits (i1, bit-field storage) round up and count as unsigned. */
static uint8_t value_type(LLVMTypeRef t, bool is_unsigned)
{
    if (LLVMGetTypeKind(t) == LLVMPointerTypeKind)
        return LLVMGetPointerAddressSpace(t) == 0 ? SIFT_VALUES_POINTER | 8 : 0;
    if (LLVMGetTypeKind(t) != LLVMIntegerTypeKind) return 0;
    unsigned bits = LLVMGetIntTypeWidth(t);
    if (bits > 64) return 0;
    unsigned bytes = bits <= 8 ? 1 : bits <= 16 ? 2 : bits <= 32 ? 4 : 8;
    bool exact = bits == 8 * bytes;
    return (uint8_t)(bytes | (exact && !is_unsigned ? SIFT_VALUES_SIGNED : 0));
}

static bool add_slot(sift_instr_fn *p, char *name, uint8_t kind, uint8_t type, uint16_t arg,
                     uint32_t offset)
{
    if (!name) return false;
    p->slots[p->nslots++] =
        (sift_instr_slot){.name = name, .kind = kind, .type = type, .arg = arg, .offset = offset};
    return true;
}

/* Loads through one pointer argument that the analysis below keeps track of. */
#define MAX_LOADED 64

/* The constant byte offset from ARG that the pointer V holds: V is ARG or its reload from
 * SPILL, or a cast or constant-index GEP of such a pointer. */
static bool offset_from(const sift_instr_module *m, LLVMValueRef v, LLVMValueRef arg,
                        LLVMValueRef spill, int depth, uint64_t *off)
{
    if (v == arg || (spill && LLVMIsALoadInst(v) && LLVMGetOperand(v, 0) == spill)) {
        *off = 0;
        return true;
    }
    if (depth > 8) return false;
    if (LLVMIsABitCastInst(v))
        return offset_from(m, LLVMGetOperand(v, 0), arg, spill, depth + 1, off);
    uint64_t base;
    if (!LLVMIsAGetElementPtrInst(v) ||
        !offset_from(m, LLVMGetOperand(v, 0), arg, spill, depth + 1, &base))
        return false;
    LLVMTypeRef t = LLVMGetGEPSourceElementType(v);
    int64_t total = 0;
    for (int i = 1; i < LLVMGetNumOperands(v); i++) {
        LLVMValueRef index = LLVMGetOperand(v, (unsigned)i);
        if (!LLVMIsAConstantInt(index)) return false;
        long long k = LLVMConstIntGetSExtValue(index);
        if (i > 1 && LLVMGetTypeKind(t) == LLVMStructTypeKind) {
            total += (int64_t)LLVMOffsetOfElement(m->layout, t, (unsigned)k);
            t = LLVMStructGetTypeAtIndex(t, (unsigned)k);
            continue;
        }
        if (i > 1 && LLVMGetTypeKind(t) != LLVMArrayTypeKind) return false;
        if (i > 1) t = LLVMGetElementType(t);
        total += k * (int64_t)LLVMABISizeOfType(m->layout, t);
    }
    if (total < 0) return false;
    *off = base + (uint64_t)total;
    return true;
}

/* The offsets FN loads from through its argument ARG, into OUT (at most MAX_LOADED). The
 * fields a function reads are those its behaviour depends on: recording only them keeps the
 * cost and the features to what matters, where a large struct passed everywhere (a library's
 * context) would otherwise add its first few fields to every call. */
static size_t loaded_offsets(const sift_instr_module *m, LLVMValueRef fn, LLVMValueRef arg,
                             uint64_t *out)
{
    LLVMValueRef spill = sift_instr_spill_slot(arg);
    size_t n = 0;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
        for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
            uint64_t off;
            if (!LLVMIsALoadInst(i) || !offset_from(m, LLVMGetOperand(i, 0), arg, spill, 0, &off))
                continue;
            size_t k = 0;
            while (k < n && out[k] != off)
                k++;
            if (k == n && n < MAX_LOADED) out[n++] = off;
        }
    }
    return n;
}

static bool is_loaded(const uint64_t *loaded, size_t n, uint64_t off)
{
    for (size_t i = 0; i < n; i++)
        if (loaded[i] == off) return true;
    return false;
}

typedef struct {
    const sift_instr_module *m;
    sift_instr_fn *plan;
    const uint64_t *loaded; /* offsets the function reads through the pointer */
    size_t nloaded;
    uint16_t arg;             /* the ARG slot of the pointer */
    const char *arg_name;     /* its name */
    LLVMMetadataRef pointer;  /* its debug type, or NULL */
    unsigned taken, fn_limit; /* fields taken from this argument; room left in the function */
} field_walk;

/* Adds the integer fields of struct type T at byte offset BASE, depth first, nested structs
 * included; INDEX names them where debug information does not ("arg0->field1.2"). */
static bool add_fields(field_walk *w, LLVMTypeRef t, uint64_t base, const char *index)
{
    unsigned n = LLVMCountStructElementTypes(t);
    for (unsigned i = 0; i < n && w->taken < SIFT_VALUES_MAX_FIELDS && w->fn_limit; i++) {
        LLVMTypeRef ft = LLVMStructGetTypeAtIndex(t, i);
        uint64_t at = base + LLVMOffsetOfElement(w->m->layout, t, i);
        char *sub = index[0] ? sift_cc_join3(index, ".", "") : sift_cc_join3("", "", "");
        char *grown = sub ? numbered(sub, i) : NULL;
        free(sub);
        sub = grown;
        if (!sub) return false;
        bool ok = true;
        if (LLVMGetTypeKind(ft) == LLVMStructTypeKind && !LLVMIsOpaqueStruct(ft)) {
            ok = add_fields(w, ft, at, sub);
        } else if (LLVMGetTypeKind(ft) == LLVMIntegerTypeKind && at <= UINT32_MAX) {
            unsigned bits = LLVMGetIntTypeWidth(ft);
            /* Only whole loads of 1, 2, 4 or 8 bytes: sift_peek reads no other widths. */
            if ((bits == 8 || bits == 16 || bits == 32 || bits == 64) &&
                is_loaded(w->loaded, w->nloaded, at)) {
                LLVMMetadataRef member_type = NULL;
                char *member =
                    w->pointer ? sift_instr_di_member(w->m->ctx, w->pointer, at * 8, &member_type)
                               : NULL;
                bool is_unsigned = member && sift_instr_di_unsigned(w->m->ctx, member_type);
                char *name = member ? sift_cc_join3(w->arg_name, "->", member)
                                    : sift_cc_join3(w->arg_name, "->field", sub);
                free(member);
                ok = add_slot(w->plan, name, SIFT_VALUES_FIELD, value_type(ft, is_unsigned), w->arg,
                              (uint32_t)at);
                w->taken++;
                w->fn_limit--;
            }
        }
        free(sub);
        if (!ok) return false;
    }
    return true;
}

static bool plan_args(const sift_instr_module *m, sift_instr_fn *p, char **names,
                      LLVMMetadataRef *types)
{
    unsigned n = LLVMCountParams(p->fn);
    /* IR parameters are the source's, one for one, unless the ABI added (a struct return) or
     * split some (small structs passed by value). */
    bool positional = p->sp && sift_instr_di_params(m->ctx, p->sp) == n;
    for (unsigned i = 0; i < n; i++)
        positional &= !has_param_attribute(p->fn, i + 1, "sret");
    for (unsigned i = 0; i < n && p->nargs < SIFT_VALUES_MAX_ARGS; i++) {
        LLVMValueRef arg = LLVMGetParam(p->fn, i);
        /* swifterror values may only be loaded, stored or passed on as swifterror. */
        if (has_param_attribute(p->fn, i + 1, "swifterror")) continue;
        types[p->nargs] = NULL;
        char *name =
            sift_instr_di_arg(m->ctx, p->fn, p->sp, arg, positional ? i + 1 : 0, &types[p->nargs]);
        bool is_unsigned = types[p->nargs] ? sift_instr_di_unsigned(m->ctx, types[p->nargs])
                                           : has_param_attribute(p->fn, i + 1, "zeroext");
        uint8_t type = value_type(LLVMTypeOf(arg), is_unsigned);
        if (!type) {
            free(name);
            continue;
        }
        if (!name) name = numbered("arg", i);
        if (sift_instr_arg_implied(p->fn, i)) p->implied_args |= 1u << p->nargs;
        names[p->nargs] = name;
        p->args[p->nargs] = arg;
        if (!add_slot(p, name, SIFT_VALUES_ARG, type, 0, 0)) return false;
        p->nargs++;
    }
    return true;
}

static bool plan_fields(const sift_instr_module *m, sift_instr_fn *p, char **names,
                        LLVMMetadataRef *types)
{
    unsigned room = SIFT_INSTR_MAX_FIELDS;
    for (unsigned a = 0; a < p->nargs && room; a++) {
        LLVMTypeRef t = LLVMTypeOf(p->args[a]);
        if (LLVMGetTypeKind(t) != LLVMPointerTypeKind) continue;
        LLVMTypeRef pointee = LLVMGetElementType(t);
        unsigned index = 0;
        while (LLVMGetParam(p->fn, index) != p->args[a])
            index++;
        /* An sret pointer's struct is still to be written when the function starts. */
        if (LLVMGetTypeKind(pointee) != LLVMStructTypeKind || LLVMIsOpaqueStruct(pointee) ||
            LLVMABISizeOfType(m->layout, pointee) > m->max_struct ||
            has_param_attribute(p->fn, index + 1, "sret"))
            continue;
        uint64_t loaded[MAX_LOADED];
        field_walk w = {.m = m,
                        .plan = p,
                        .loaded = loaded,
                        .nloaded = loaded_offsets(m, p->fn, p->args[a], loaded),
                        .arg = (uint16_t)a,
                        .arg_name = names[a],
                        .pointer = types[a],
                        .fn_limit = room};
        if (!add_fields(&w, pointee, 0, "")) return false;
        room = w.fn_limit;
    }
    return true;
}

bool sift_instr_plan(const sift_instr_module *m, LLVMValueRef fn, sift_instr_fn *p)
{
    memset(p, 0, sizeof(*p));
    p->fn = fn;
    p->sp = LLVMGetSubprogram(fn);
    p->id = function_id(m, fn);
    size_t len;
    const char *symbol = LLVMGetValueName2(fn, &len);
    p->name = p->sp ? sift_instr_di_name(m->ctx, p->sp) : NULL;
    if (!p->name) p->name = sift_instr_strdup(symbol, len);
    p->file = p->sp ? sift_instr_di_file(p->sp) : NULL;
    if (!p->file) p->file = sift_instr_strdup(m->source, strlen(m->source));
    p->line = p->sp ? LLVMDISubprogramGetLine(p->sp) : 0;
    p->covered = sift_instr_has_coverage(fn);
    p->calls = sift_instr_entry_counter(fn);
    char *names[SIFT_VALUES_MAX_ARGS] = {0};
    LLVMMetadataRef types[SIFT_VALUES_MAX_ARGS] = {0};
    if (!p->name || !p->file || !plan_args(m, p, names, types) || !plan_fields(m, p, names, types))
        return false;
    LLVMTypeRef ret = LLVMGetReturnType(LLVMGlobalGetValueType(fn));
    LLVMMetadataRef ret_type = p->sp ? sift_instr_di_return(m->ctx, p->sp) : NULL;
    bool is_unsigned = ret_type ? sift_instr_di_unsigned(m->ctx, ret_type)
                                : has_param_attribute(fn, LLVMAttributeReturnIndex, "zeroext");
    uint8_t type = value_type(ret, is_unsigned);
    if (type && !add_slot(p, sift_cc_join3("return", "", ""), SIFT_VALUES_RETURN, type, 0, 0))
        return false;
    return true;
}

void sift_instr_plan_free(sift_instr_fn *p)
{
    for (unsigned i = 0; i < p->nslots; i++)
        free(p->slots[i].name);
    free(p->name);
    free(p->file);
    memset(p, 0, sizeof(*p));
}
