/* The gate that sift-instrument puts before each comparison callback of sanitizer coverage
 * (instrument_cmp_gate.c), and the runtime opens (rt/cmp.c). A campaign with the default
 * features wants a comparison's operands on one execution in eight and never counts them as
 * features, yet the callbacks ran on every comparison of every execution, returning at once:
 * the calls alone were a fifth of freetype2's samples. Behind the gate a closed callback costs a
 * load and a branch that always goes the same way. */
#ifndef SIFT_CMP_GATE_ABI_H
#define SIFT_CMP_GATE_ABI_H

/* A byte, defined by the runtime; the bits say which callbacks are wanted. */
#define SIFT_CMP_GATE_SYMBOL "__sift_cmp_gate"
/* CMP-domain features are counted: every callback. */
#define SIFT_CMP_GATE_FEATURES 1u
/* This execution records the operands of comparisons wider than a byte (and of switches). */
#define SIFT_CMP_GATE_RING 2u
#define SIFT_CMP_GATE_ALL  (SIFT_CMP_GATE_FEATURES | SIFT_CMP_GATE_RING)

#endif
