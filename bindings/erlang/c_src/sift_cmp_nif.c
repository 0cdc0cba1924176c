/* Comparisons of Erlang values with literals, recorded as the C runtime records them (rt/cmp.c):
 * their operands go to the context's rings, where the mutator's input-to-state operator finds
 * them, and their distances to the context's CMP domain, as features. The parse transform
 * (sift_cov_transform) calls these through sift_cov:'$cmp'/3 and sift_cov:'$search'/3. */
#include "sift_nif.h"

#include <stdlib.h>
#include <string.h>

/* Literals looked at per call, and haystack bytes searched: a call stays far under the
 * millisecond a NIF may take. */
#define MAX_LITERALS 64
#define MAX_HAY      4096
/* Each literal of a call counts as a site of its own, as a switch's cases do: this far apart. */
#define LITERAL_STRIDE ((uintptr_t)0x9E37)

/* The start of this shared object: a site S is given to the runtime as this address plus S, the
 * form it hashes (rt/cmp.c subtracts it again). */
extern const char __ehdr_start[] __attribute__((visibility("hidden")));

/* How a value may sit in the input as bytes: a binary, an atom's text, or a list of bytes (a
 * string). At most CAP bytes; false for anything else. */
static bool term_bytes(ErlNifEnv *env, ERL_NIF_TERM t, uint8_t *out, size_t cap, size_t *len)
{
    ErlNifBinary bin;
    if (enif_inspect_binary(env, t, &bin)) {
        *len = bin.size < cap ? bin.size : cap;
        memcpy(out, bin.data, *len);
        return true;
    }
    char atom[256];
    int n = enif_get_atom(env, t, atom, sizeof atom, ERL_NIF_LATIN1);
    if (n > 0) {
        *len = (size_t)n - 1 < cap ? (size_t)n - 1 : cap;
        memcpy(out, atom, *len);
        return true;
    }
    ERL_NIF_TERM head, tail = t;
    size_t k = 0;
    int ch;
    while (k < cap && enif_get_list_cell(env, tail, &head, &tail)) {
        if (!enif_get_int(env, head, &ch) || ch < 0 || ch > 255) return false;
        out[k++] = (uint8_t)ch;
    }
    *len = k;
    return k == cap || enif_is_empty_list(env, tail);
}

static bool term_int(ErlNifEnv *env, ERL_NIF_TERM t, uint64_t *v)
{
    ErlNifSInt64 s;
    if (enif_get_int64(env, t, &s)) {
        *v = (uint64_t)s;
        return true;
    }
    ErlNifUInt64 u;
    if (!enif_get_uint64(env, t, &u)) return false;
    *v = u;
    return true;
}

/* The narrowest of 1, 2, 4 and 8 bytes that holds V, zero- or sign-extended. */
static uint8_t width(uint64_t v)
{
    for (uint8_t w = 1; w < 8; w *= 2) {
        unsigned drop = 64 - 8u * w;
        if (v >> (8 * w) == 0 || (uint64_t)((int64_t)(v << drop) >> drop) == v) return w;
    }
    return 8;
}

/* Compares A with one literal B. A string shorter than the literal is padded with zeros, as a
 * memcmp reads past a short input: the mutator then writes the whole literal where A began. */
static void compare(ErlNifEnv *env, sift_rt_state *rt, uintptr_t pc, ERL_NIF_TERM a, ERL_NIF_TERM b)
{
    uint64_t x, y;
    if (term_int(env, a, &x) && term_int(env, b, &y)) {
        uint8_t wx = width(x), wy = width(y);
        sift_rt_cmp(rt, pc, x, y, wx > wy ? wx : wy);
        return;
    }
    uint8_t ab[SIFT_CMP_BYTELEN] = {0}, bb[SIFT_CMP_BYTELEN];
    size_t an, bn;
    if (!term_bytes(env, b, bb, sizeof bb, &bn) || !bn || !term_bytes(env, a, ab, sizeof ab, &an))
        return;
    sift_rt_cmp_bytes(rt, pc, ab, bb, bn);
}

/* The context's recorder (NULL when it records no comparisons) and the site's address; false
 * for a bad context or site. */
static bool recorder(ErlNifEnv *env, const ERL_NIF_TERM argv[], sift_rt_state **rt, uintptr_t *pc)
{
    cov_ctx *c = get_ctx(env, argv[0]);
    unsigned long s;
    if (!c || !enif_get_ulong(env, argv[1], &s)) return false;
    *rt = c->rt;
    *pc = (uintptr_t)__ehdr_start + s;
    return true;
}

/* cmp(Ctx, Site, A, Literals): A was compared with each literal (or matched against it as a
 * pattern, or looked up among them). A context made without comparisons records nothing. */
ERL_NIF_TERM cmp_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    uintptr_t pc;
    sift_rt_state *rt;
    if (!recorder(env, argv, &rt, &pc) || !enif_is_list(env, argv[3])) return enif_make_badarg(env);
    ERL_NIF_TERM head, tail = argv[3];
    for (unsigned i = 0; rt && i < MAX_LITERALS && enif_get_list_cell(env, tail, &head, &tail); i++)
        compare(env, rt, pc + i * LITERAL_STRIDE, argv[2], head);
    return argv[2];
}

/* search(Ctx, Site, Haystack, Needles): a binary search for any of the needles (binary:match).
 * As rt/cmp.c scores a failed strstr: the longest prefix of a needle found anywhere in the
 * haystack, whose bytes there are what the needle should replace. */
ERL_NIF_TERM search_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    uintptr_t pc;
    sift_rt_state *rt;
    ErlNifBinary hay;
    if (!recorder(env, argv, &rt, &pc) || !enif_inspect_binary(env, argv[2], &hay) ||
        !enif_is_list(env, argv[3]))
        return enif_make_badarg(env);
    size_t hay_len = hay.size < MAX_HAY ? hay.size : MAX_HAY;
    ERL_NIF_TERM head, tail = argv[3];
    for (unsigned i = 0; rt && i < MAX_LITERALS && enif_get_list_cell(env, tail, &head, &tail);
         i++) {
        uint8_t needle[SIFT_CMP_BYTELEN], at_hay[SIFT_CMP_BYTELEN] = {0};
        size_t n, best = 0, at = 0;
        if (!term_bytes(env, head, needle, sizeof needle, &n) || !n) continue;
        for (size_t k = 0; k < hay_len && best < n; k++) {
            size_t e = 0;
            while (e < n && k + e < hay_len && hay.data[k + e] == needle[e])
                e++;
            if (e > best) best = e, at = k;
        }
        size_t keep = hay_len - at < n ? hay_len - at : n;
        memcpy(at_hay, hay.data + at, keep);
        sift_rt_cmp_bytes(rt, pc + i * LITERAL_STRIDE, at_hay, needle, n);
    }
    return argv[2];
}
