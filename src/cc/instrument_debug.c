/* Names from debug information. The LLVM-C API reads few properties of debug metadata, but
 * every node's operands are reachable as metadata values, in an order fixed per node kind:
 * scopes and types hold (file, scope, name) in operands 0-2, derived and composite types their
 * base type in 3, composite types their members in 4, local variables their type in 3, and
 * subroutine types their (return, parameter...) types in 3. */
#include "cc/instrument.h"

#include <stdlib.h>
#include <string.h>

enum { OP_SCOPE = 1, OP_NAME = 2, OP_BASE = 3, OP_MEMBERS = 4 };
enum { SP_TYPE = 4 };     /* DISubprogram */
enum { VAR_TYPE = 3 };    /* DILocalVariable */
enum { SUB_TYPES = 3 };   /* DISubroutineType */
enum { MAX_SCOPES = 16 }; /* namespaces and classes around a function */
enum { MAX_ASKED = 32 };  /* variables asked their parameter number, per argument */

static LLVMMetadataKind kind(LLVMMetadataRef md)
{
    return LLVMGetMetadataKind(md);
}

/* Operand I of the node MD as a value (a metadata value, or a constant), or NULL. */
static LLVMValueRef operand_value(LLVMContextRef ctx, LLVMMetadataRef md, unsigned i)
{
    if (!md) return NULL;
    LLVMValueRef node = LLVMMetadataAsValue(ctx, md);
    unsigned n = LLVMGetMDNodeNumOperands(node);
    if (i >= n) return NULL;
    LLVMValueRef *ops = malloc(n * sizeof(LLVMValueRef));
    if (!ops) return NULL;
    LLVMGetMDNodeOperands(node, ops);
    LLVMValueRef op = ops[i];
    free(ops);
    return op;
}

static LLVMMetadataRef operand(LLVMContextRef ctx, LLVMMetadataRef md, unsigned i)
{
    LLVMValueRef op = operand_value(ctx, md, i);
    return op ? LLVMValueAsMetadata(op) : NULL;
}

/* The string operand I of MD, or NULL (also for an empty string). */
static const char *operand_string(LLVMContextRef ctx, LLVMMetadataRef md, unsigned i, unsigned *len)
{
    LLVMValueRef op = operand_value(ctx, md, i);
    if (!op) return NULL;
    const char *s = LLVMGetMDString(op, len);
    return s && *len ? s : NULL;
}

static bool is_type(LLVMMetadataRef md)
{
    LLVMMetadataKind k = kind(md);
    return k == LLVMDIBasicTypeMetadataKind || k == LLVMDIDerivedTypeMetadataKind ||
           k == LLVMDICompositeTypeMetadataKind || k == LLVMDISubroutineTypeMetadataKind;
}

/* TYPE with typedefs, qualifiers, pointers and references removed down to a basic or
 * composite type. Callers know from the IR type how many pointers there were. */
static LLVMMetadataRef strip(LLVMContextRef ctx, LLVMMetadataRef type)
{
    for (int depth = 0; type && depth < 32 && kind(type) == LLVMDIDerivedTypeMetadataKind; depth++)
        type = operand(ctx, type, OP_BASE);
    return type && is_type(type) ? type : NULL;
}

char *sift_instr_di_name(LLVMContextRef ctx, LLVMMetadataRef sp)
{
    unsigned len;
    const char *name = operand_string(ctx, sp, OP_NAME, &len);
    if (!name) return NULL;
    const char *parts[MAX_SCOPES];
    unsigned lens[MAX_SCOPES], n = 0;
    size_t total = len + 1;
    LLVMMetadataRef scope = operand(ctx, sp, OP_SCOPE);
    while (scope && n < MAX_SCOPES &&
           (kind(scope) == LLVMDINamespaceMetadataKind ||
            kind(scope) == LLVMDICompositeTypeMetadataKind)) {
        const char *part = operand_string(ctx, scope, OP_NAME, &lens[n]);
        if (!part) {
            part = "(anonymous)";
            lens[n] = (unsigned)strlen(part);
        }
        parts[n] = part;
        total += lens[n++] + 2;
        scope = operand(ctx, scope, OP_SCOPE);
    }
    char *out = malloc(total), *w = out;
    if (!out) return NULL;
    while (n-- > 0) {
        memcpy(w, parts[n], lens[n]);
        memcpy(w + lens[n], "::", 2);
        w += lens[n] + 2;
    }
    memcpy(w, name, len);
    w[len] = '\0';
    return out;
}

char *sift_instr_di_file(LLVMMetadataRef sp)
{
    LLVMMetadataRef file = LLVMDIScopeGetFile(sp);
    if (!file) return NULL;
    unsigned len, dir_len;
    const char *name = LLVMDIFileGetFilename(file, &len);
    if (!name || !len) return NULL;
    /* clang splits an absolute source path that shares more than "/" with the compilation
     * folder into that common folder and the rest: join them again, so that a file is named
     * the same whichever folder it was compiled from. */
    const char *dir = LLVMDIFileGetDirectory(file, &dir_len);
    if (name[0] == '/' || !dir || !dir_len) return sift_instr_strdup(name, len);
    char *path = malloc((size_t)dir_len + 1 + len + 1);
    if (!path) return NULL;
    memcpy(path, dir, dir_len);
    path[dir_len] = '/';
    memcpy(path + dir_len + 1, name, len);
    path[dir_len + 1 + len] = '\0';
    return path;
}

/* The value a debug intrinsic call describes: its first operand, when that wraps one value. */
static LLVMValueRef described_value(LLVMValueRef call)
{
    LLVMValueRef op = LLVMGetOperand(call, 0);
    if (!op || LLVMGetValueKind(op) != LLVMMetadataAsValueValueKind) return NULL;
    LLVMMetadataKind k = kind(LLVMValueAsMetadata(op));
    if (k != LLVMLocalAsMetadataMetadataKind) return NULL;
    LLVMValueRef value;
    LLVMGetMDNodeOperands(op, &value);
    return value;
}

static bool is_debug_call(LLVMValueRef inst)
{
    if (!LLVMIsACallInst(inst)) return false;
    LLVMValueRef callee = LLVMGetCalledValue(inst);
    if (!callee || !LLVMIsAFunction(callee)) return false;
    size_t len;
    const char *name = LLVMGetValueName2(callee, &len);
    return (len == 14 && !memcmp(name, "llvm.dbg.value", 14)) ||
           (len == 16 && !memcmp(name, "llvm.dbg.declare", 16));
}

LLVMValueRef sift_instr_spill_slot(LLVMValueRef arg)
{
    /* By the argument's uses, not by the entry block's stores: coverage's stack-depth check
     * splits the entry block after its allocas, which moves the spills into the next block. */
    for (LLVMUseRef u = LLVMGetFirstUse(arg); u; u = LLVMGetNextUse(u)) {
        LLVMValueRef user = LLVMGetUser(u);
        if (LLVMIsAStoreInst(user) && LLVMGetOperand(user, 0) == arg &&
            LLVMIsAAllocaInst(LLVMGetOperand(user, 1)))
            return LLVMGetOperand(user, 1);
    }
    return NULL;
}

/* An operand that used a value, by its user and index. */
typedef struct {
    LLVMValueRef user;
    unsigned index;
} use_slot;

/* Points every operand that is VALUE at STAND_IN and lists them in USES, which has room for as
 * many as VALUE has uses; returns how many it moved. */
static size_t detach_uses(LLVMValueRef value, LLVMValueRef stand_in, use_slot *uses)
{
    size_t n = 0;
    for (LLVMUseRef u; (u = LLVMGetFirstUse(value));) {
        LLVMValueRef user = LLVMGetUser(u);
        size_t before = n;
        for (int i = 0, ops = LLVMGetNumOperands(user); i < ops; i++) {
            if (LLVMGetOperand(user, i) != value) continue;
            uses[n++] = (use_slot){user, (unsigned)i};
            LLVMSetOperand(user, (unsigned)i, stand_in);
        }
        if (n == before) break; /* a use that is no operand: left alone */
    }
    return n;
}

/* The parameter number (from 1) of the local variable VAR, 0 for a variable that is not a
 * parameter. The C API has no getter for it; the node's printed form has it. A node printed
 * while debug intrinsics use it is printed with the slots of their module, which numbers every
 * metadata node of the module first: instrumenting would grow with functions times module
 * size. So its uses point at a stand-in while it prints alone, and back after. */
static unsigned param_number(LLVMContextRef ctx, LLVMMetadataRef var)
{
    LLVMValueRef node = LLVMMetadataAsValue(ctx, var);
    size_t n = 0;
    for (LLVMUseRef u = LLVMGetFirstUse(node); u; u = LLVMGetNextUse(u))
        n++;
    use_slot *uses = malloc((n ? n : 1) * sizeof(*uses));
    if (uses)
        n = detach_uses(node, LLVMMetadataAsValue(ctx, LLVMMDStringInContext2(ctx, "", 0)), uses);
    char *text = LLVMPrintValueToString(node);
    for (size_t i = 0; uses && i < n; i++)
        LLVMSetOperand(uses[i].user, uses[i].index, node);
    free(uses);
    const char *at = strstr(text, ", arg: ");
    unsigned number = at ? (unsigned)strtoul(at + 7, NULL, 10) : 0;
    LLVMDisposeMessage(text);
    return number;
}

/* The local variable of SP that the debug intrinsic call I describes, or NULL. A callee
 * inlined here may describe the argument as its own parameter: its variables are not SP's. */
static LLVMMetadataRef local_variable(LLVMContextRef ctx, LLVMValueRef i, LLVMMetadataRef sp)
{
    if (!is_debug_call(i)) return NULL;
    LLVMValueRef var_value = LLVMGetOperand(i, 1);
    LLVMMetadataRef var = var_value ? LLVMValueAsMetadata(var_value) : NULL;
    return var && kind(var) == LLVMDILocalVariableMetadataKind && operand(ctx, var, 0) == sp ? var
                                                                                             : NULL;
}

/* The variable of FN's (subprogram SP's) whose value is ARG or its spill slot SPILL. */
static LLVMMetadataRef variable_of(LLVMContextRef ctx, LLVMValueRef fn, LLVMMetadataRef sp,
                                   LLVMValueRef arg, LLVMValueRef spill)
{
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
        for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
            LLVMMetadataRef var = local_variable(ctx, i, sp);
            LLVMValueRef value = var ? described_value(i) : NULL;
            if (value && (value == arg || (spill && value == spill))) return var;
        }
    }
    return NULL;
}

/* The first variable of FN's that is SP's parameter POSITION. A variable is described by many
 * calls: each is asked its number once, up to MAX_ASKED of them. */
static LLVMMetadataRef parameter(LLVMContextRef ctx, LLVMValueRef fn, LLVMMetadataRef sp,
                                 unsigned position)
{
    LLVMMetadataRef asked[MAX_ASKED];
    unsigned nasked = 0;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
        for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
            LLVMMetadataRef var = local_variable(ctx, i, sp);
            bool known = false;
            for (unsigned k = 0; var && k < nasked && !known; k++)
                known = asked[k] == var;
            if (!var || known) continue;
            if (param_number(ctx, var) == position) return var;
            if (nasked < MAX_ASKED) asked[nasked++] = var;
        }
    }
    return NULL;
}

char *sift_instr_di_arg(LLVMContextRef ctx, LLVMValueRef fn, LLVMMetadataRef sp, LLVMValueRef arg,
                        unsigned position, LLVMMetadataRef *type)
{
    *type = NULL;
    if (!sp) return NULL;
    LLVMMetadataRef var = variable_of(ctx, fn, sp, arg, sift_instr_spill_slot(arg));
    if (!var && position) var = parameter(ctx, fn, sp, position);
    unsigned len;
    const char *name = var ? operand_string(ctx, var, 1, &len) : NULL;
    if (!name) return NULL;
    *type = operand(ctx, var, VAR_TYPE);
    return sift_instr_strdup(name, len);
}

unsigned sift_instr_di_params(LLVMContextRef ctx, LLVMMetadataRef sp)
{
    LLVMMetadataRef types = operand(ctx, operand(ctx, sp, SP_TYPE), SUB_TYPES);
    if (!types || kind(types) != LLVMMDTupleMetadataKind) return 0;
    unsigned n = LLVMGetMDNodeNumOperands(LLVMMetadataAsValue(ctx, types));
    /* The return type comes first; a variadic function's list ends in a null. */
    if (n > 1 && !operand_value(ctx, types, n - 1)) n--;
    return n ? n - 1 : 0;
}

LLVMMetadataRef sift_instr_di_return(LLVMContextRef ctx, LLVMMetadataRef sp)
{
    LLVMMetadataRef types = operand(ctx, operand(ctx, sp, SP_TYPE), SUB_TYPES);
    if (!types || kind(types) != LLVMMDTupleMetadataKind) return NULL;
    return operand(ctx, types, 0);
}

/* The member of composite TYPE that holds OFFSET_BITS: its name (NULL for none), with *BASE
 * its offset and *MEMBER its type. Static members, bit-fields, methods and bases are left
 * out: only plain data members have a storage of their own to name. */
static const char *member_at(LLVMContextRef ctx, LLVMMetadataRef type, uint64_t offset_bits,
                             unsigned *len, uint64_t *base, LLVMMetadataRef *member)
{
    LLVMMetadataRef members = operand(ctx, type, OP_MEMBERS);
    if (!members || kind(members) != LLVMMDTupleMetadataKind) return NULL;
    LLVMValueRef list = LLVMMetadataAsValue(ctx, members);
    unsigned n = LLVMGetMDNodeNumOperands(list);
    for (unsigned i = 0; i < n; i++) {
        LLVMMetadataRef m = operand(ctx, members, i);
        if (!m || kind(m) != LLVMDIDerivedTypeMetadataKind) continue;
        if (LLVMDITypeGetFlags(m) & (LLVMDIFlagStaticMember | LLVMDIFlagBitField)) continue;
        uint64_t at = LLVMDITypeGetOffsetInBits(m), size = LLVMDITypeGetSizeInBits(m);
        if (offset_bits < at || offset_bits >= at + (size ? size : 1)) continue;
        const char *name = operand_string(ctx, m, OP_NAME, len);
        if (!name) continue;
        *base = at;
        *member = operand(ctx, m, OP_BASE);
        return name;
    }
    return NULL;
}

/* TYPE with typedefs and qualifiers removed, stopping at pointers and references (the only
 * derived types with a size of their own): what a member's storage holds. */
static LLVMMetadataRef strip_qualifiers(LLVMContextRef ctx, LLVMMetadataRef type)
{
    for (int depth = 0; type && depth < 32 && kind(type) == LLVMDIDerivedTypeMetadataKind &&
                        LLVMDITypeGetSizeInBits(type) == 0;
         depth++)
        type = operand(ctx, type, OP_BASE);
    return type;
}

char *sift_instr_di_member(LLVMContextRef ctx, LLVMMetadataRef type, uint64_t offset_bits,
                           LLVMMetadataRef *member_type)
{
    char *path = NULL;
    *member_type = NULL;
    LLVMMetadataRef composite = strip(ctx, type);
    for (int depth = 0;
         composite && kind(composite) == LLVMDICompositeTypeMetadataKind && depth < 8; depth++) {
        unsigned len;
        uint64_t base;
        LLVMMetadataRef member;
        const char *name = member_at(ctx, composite, offset_bits, &len, &base, &member);
        /* An enumeration is a composite type without data members: the member found last
         * is the one. */
        if (!name) break;
        size_t old = path ? strlen(path) + 1 : 0;
        char *grown = realloc(path, old + len + 1);
        if (!grown) break;
        if (old) grown[old - 1] = '.';
        memcpy(grown + old, name, len);
        grown[old + len] = '\0';
        path = grown;
        *member_type = member;
        offset_bits -= base;
        composite = strip_qualifiers(ctx, member);
    }
    if (path && offset_bits == 0) return path;
    /* A path that stops inside a member names a part of it that has no name of its own. */
    free(path);
    *member_type = NULL;
    return NULL;
}

bool sift_instr_di_unsigned(LLVMContextRef ctx, LLVMMetadataRef type)
{
    LLVMMetadataRef basic = strip(ctx, type);
    if (!basic || kind(basic) != LLVMDIBasicTypeMetadataKind) return false;
    size_t len;
    const char *name = LLVMDITypeGetName(basic, &len);
    if (!name) return false;
    static const char *const unsigned_names[] = {"_Bool", "bool", "char8_t", "char16_t",
                                                 "char32_t"};
    for (size_t i = 0; i < sizeof(unsigned_names) / sizeof(unsigned_names[0]); i++)
        if (strlen(unsigned_names[i]) == len && !memcmp(name, unsigned_names[i], len)) return true;
    for (size_t i = 0; i + 8 <= len; i++)
        if (!memcmp(name + i, "unsigned", 8)) return true;
    return false;
}
