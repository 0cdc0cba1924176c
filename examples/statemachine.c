/* A table-driven state machine whose bug only values can lead to: every state runs the same
 * code, and nothing compares the state with anything. Each input byte picks one of eight
 * symbols; one symbol per state moves the machine one state deeper, every other symbol sends
 * it back to the start. The deepest state has no tally to count its visits in.
 *
 * Edge coverage is the same for every input, and the only comparison is the loop's, so neither
 * edges nor comparison distances see progress: a fuzzer guided by them needs the sixteen right
 * symbols in a row by chance (one in 8^16). With function-boundary values each state the
 * machine enters is a new value of m->state at step()'s entry, and the fuzzer keeps every
 * input that goes one state deeper. */
#include <stddef.h>
#include <stdint.h>

enum { SYMBOLS = 8, DEEP = 16, STATES = DEEP + 1 };

struct machine {
    int state;
    unsigned steps;
};

/* Row K: the one symbol that leads from state K to K + 1; all others lead back to 0. */
#define ADVANCE(k, symbol) [k] = {[symbol] = (k) + 1}
static const uint8_t next_state[STATES][SYMBOLS] = {
    ADVANCE(0, 5),  ADVANCE(1, 2),  ADVANCE(2, 7),  ADVANCE(3, 1),  ADVANCE(4, 4),  ADVANCE(5, 0),
    ADVANCE(6, 6),  ADVANCE(7, 3),  ADVANCE(8, 2),  ADVANCE(9, 7),  ADVANCE(10, 1), ADVANCE(11, 5),
    ADVANCE(12, 3), ADVANCE(13, 6), ADVANCE(14, 0), ADVANCE(15, 4),
};

static unsigned tally[DEEP];
static unsigned *const counter[STATES] = {
    &tally[0],  &tally[1],  &tally[2],  &tally[3],  &tally[4],  &tally[5],
    &tally[6],  &tally[7],  &tally[8],  &tally[9],  &tally[10], &tally[11],
    &tally[12], &tally[13], &tally[14], &tally[15], /* the planted bug: none for DEEP */
};

/* Kept out of line: value instrumentation sees the calls that the optimiser leaves, and an
 * inlined step() would have no entry to record m->state at. */
__attribute__((noinline)) static void step(struct machine *m, uint8_t byte)
{
    m->state = next_state[m->state][byte % SYMBOLS];
    m->steps++;
    *counter[m->state] += 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct machine m = {0, 0};
    for (size_t i = 0; i < size; i++)
        step(&m, data[i]);
    return 0;
}
