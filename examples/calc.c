/* A small calculator for text expressions: numbers, + - * / and parentheses. */
#include <stddef.h>
#include <stdint.h>

struct parser {
    const uint8_t *p, *end;
    int depth;
};

static long expr(struct parser *ps);

static int peek(struct parser *ps)
{
    while (ps->p < ps->end && *ps->p == ' ')
        ps->p++;
    return ps->p < ps->end ? *ps->p : -1;
}

static long primary(struct parser *ps)
{
    int c = peek(ps);
    if (c == '(') {
        ps->p++;
        if (++ps->depth > 64) return 0;
        long v = expr(ps);
        ps->depth--;
        if (peek(ps) == ')') ps->p++;
        return v;
    }
    long v = 0;
    while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
        v = v * 10 % 1000003 + (*ps->p++ - '0');
    return v;
}

static long term(struct parser *ps)
{
    long v = primary(ps);
    for (int c = peek(ps); c == '*' || c == '/'; c = peek(ps)) {
        ps->p++;
        long rhs = primary(ps);
        /* The planted bug: a divisor that is zero only after the modulo slips through. */
        if (c == '*')
            v = v * rhs % 1000003;
        else if (rhs != 0)
            v = v / (rhs % 7);
    }
    return v;
}

static long expr(struct parser *ps)
{
    long v = term(ps);
    for (int c = peek(ps); c == '+' || c == '-'; c = peek(ps)) {
        ps->p++;
        long rhs = term(ps);
        v = c == '+' ? v + rhs : v - rhs;
    }
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct parser ps = {data, data + size, 0};
    volatile long result = expr(&ps);
    (void)result;
    return 0;
}
