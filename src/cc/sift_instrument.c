/* sift-instrument IN.bc -o OUT.bc: adds function-boundary value hooks (instrument.c), the
 * dirty bytes of the edge counters' function index (instrument_fn_dirty.c) and the gate before
 * each comparison callback (instrument_cmp_gate.c) to a bitcode module
 * that clang has optimised (and instrumented for coverage and sanitizers) already, checks the
 * result and writes it. See docs/values.md. */
#include "cc/instrument.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <stdlib.h>
#include <string.h>

#define USAGE "usage: sift-instrument [-max-struct BYTES] IN.bc -o OUT.bc"

int main(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    uint64_t max_struct = SIFT_INSTR_MAX_STRUCT;
    for (int i = 1; i < argc; i++) {
        char *end;
        if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out = argv[++i];
        } else if (!strcmp(argv[i], "-max-struct") && i + 1 < argc) {
            max_struct = strtoull(argv[++i], &end, 10);
            if (*end || !*argv[i] || argv[i][0] == '-')
                sift_instr_die(argv[i], "-max-struct takes a number of bytes", NULL);
        } else if (argv[i][0] != '-' && !in) {
            in = argv[i];
        } else {
            sift_instr_die(argv[i], "unexpected argument (" USAGE ")", NULL);
        }
    }
    if (!in || !out) sift_instr_die("sift-instrument", USAGE, NULL);
    sift_instr_module m = {.ctx = LLVMContextCreate(), .max_struct = max_struct};
    LLVMMemoryBufferRef buf;
    char *msg = NULL;
    if (LLVMCreateMemoryBufferWithContentsOfFile(in, &buf, &msg))
        sift_instr_die(in, "cannot read", msg);
    if (LLVMParseBitcodeInContext2(m.ctx, buf, &m.mod))
        sift_instr_die(in, "not LLVM bitcode", NULL);
    LLVMDisposeMemoryBuffer(buf);
    size_t len;
    const char *source = LLVMGetSourceFileName(m.mod, &len);
    char *source_copy =
        sift_instr_strdup(source && len ? source : in, source && len ? len : strlen(in));
    if (!source_copy) sift_instr_die(in, "out of memory", NULL);
    m.source = source_copy;
    m.layout = LLVMGetModuleDataLayout(m.mod);
    sift_instr_values(&m);
    if (!sift_instr_fn_dirty(m.mod)) sift_instr_die(in, "out of memory", NULL);
    sift_instr_cmp_gate(m.mod);
    if (LLVMVerifyModule(m.mod, LLVMReturnStatusAction, &msg)) {
        char *nl = strchr(msg, '\n');
        if (nl) *nl = '\0';
        sift_instr_die(in, "the instrumented module does not verify", msg);
    }
    LLVMDisposeMessage(msg);
    if (LLVMWriteBitcodeToFile(m.mod, out) != 0) sift_instr_die(out, "cannot write", NULL);
    LLVMDisposeModule(m.mod);
    LLVMContextDispose(m.ctx);
    free(source_copy);
    return 0;
}
