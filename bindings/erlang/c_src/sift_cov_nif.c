/* sift's coverage core as an Erlang NIF (module sift_cov): per-execution contexts of probe
 * counters, and snapshots that answer "did this execution reach anything new?". */
#include "sift_nif.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Every call that walks a whole context or snapshot must stay well under the millisecond a NIF
 * may hold a scheduler: 1 Mi probes keep take and count there. */
#define MAX_PROBES   ((size_t)1 << 20)
#define EXPORT_GUESS 1024

static ERL_NIF_TERM atom_ok;

static int load(ErlNifEnv *env, void **priv, ERL_NIF_TERM info)
{
    (void)priv, (void)info;
    if (nif_ctx_load(env) != 0 || sift_fuzz_nif_load(env) != 0) return 1;
    atom_ok = enif_make_atom(env, "ok");
    return 0;
}

static bool get_probes(ErlNifEnv *env, ERL_NIF_TERM term, size_t *n)
{
    unsigned long v;
    if (!enif_get_ulong(env, term, &v) || v == 0 || v > MAX_PROBES) return false;
    *n = v;
    return true;
}

/* new/2's Cmp: false, true (comparison operands) or value_profile (their distances too). */
static bool get_cmp_mode(ErlNifEnv *env, ERL_NIF_TERM term, bool *cmp, bool *features)
{
    char atom[16];
    if (!enif_get_atom(env, term, atom, sizeof atom, ERL_NIF_LATIN1)) return false;
    *features = strcmp(atom, "value_profile") == 0;
    *cmp = *features || strcmp(atom, "true") == 0;
    return *cmp || strcmp(atom, "false") == 0;
}

/* new(N) and new(N, Cmp): with Cmp true the context records the operands of comparisons
 * (sift_cov:cmp/4) for the mutator; with value_profile also their distances, as features of a
 * CMP domain of its own, as the C runtime does under -use_value_profile. */
static ERL_NIF_TERM new_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    size_t n;
    bool cmp = false, features = false;
    if (!get_probes(env, argv[0], &n) || (argc > 1 && !get_cmp_mode(env, argv[1], &cmp, &features)))
        return enif_make_badarg(env);
    cov_ctx *c = ctx_alloc();
    if (!c) return fail(env, SIFT_ENOMEM);
    *c = (cov_ctx){.map = sift_covmap_new()};
    int rc = c->map ? sift_covmap_alloc(c->map, SIFT_DOMAIN_EDGES, n, NULL, NULL) : SIFT_ENOMEM;
    if (rc == SIFT_OK) rc = sift_covmap_counters(c->map, SIFT_DOMAIN_EDGES, 0, &c->c);
    if (rc == SIFT_OK && cmp) rc = cmp_ctx_init(c, features);
    if (rc != SIFT_OK) {
        enif_release_resource(c); /* the destructor frees what was made */
        return fail(env, rc);
    }
    ERL_NIF_TERM term = enif_make_resource(env, c);
    enif_release_resource(c);
    return term;
}

/* The hot path: every probe of instrumented code lands here, so it allocates nothing and takes
 * no lock. Several processes hitting one context lose counts at worst, never memory. */
static ERL_NIF_TERM hit_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    cov_ctx *c = get_ctx(env, argv[0]);
    unsigned long id;
    if (!c || !enif_get_ulong(env, argv[1], &id) || id >= c->c.len) return enif_make_badarg(env);
    sift_hit(&c->c, id);
    return atom_ok;
}

static ERL_NIF_TERM take_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    cov_ctx *c = get_ctx(env, argv[0]);
    if (!c) return enif_make_badarg(env);
    ERL_NIF_TERM bin;
    uint8_t *out = enif_make_new_binary(env, c->c.len, &bin);
    if (!out) return fail(env, SIFT_ENOMEM);
    int rc = sift_covmap_take(c->map, SIFT_DOMAIN_EDGES, out, c->c.len);
    return rc == SIFT_OK ? bin : fail(env, rc);
}

static ERL_NIF_TERM export_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    cov_ctx *c = get_ctx(env, argv[0]);
    if (!c) return enif_make_badarg(env);
    ErlNifBinary bin;
    size_t len;
    if (!enif_alloc_binary(EXPORT_GUESS, &bin)) return fail(env, SIFT_ENOMEM);
    int rc = sift_covmap_export(c->map, SIFT_DOMAINS_ALL, bin.data, bin.size, &len);
    /* Too small: the counters were left alone and LEN is what it takes. */
    if (rc == SIFT_ESPACE) {
        rc = enif_realloc_binary(&bin, len) ? SIFT_OK : SIFT_ENOMEM;
        if (rc == SIFT_OK) rc = sift_covmap_export(c->map, SIFT_DOMAINS_ALL, bin.data, len, &len);
    }
    if (rc == SIFT_OK && !enif_realloc_binary(&bin, len)) rc = SIFT_ENOMEM;
    if (rc != SIFT_OK) {
        enif_release_binary(&bin);
        return fail(env, rc);
    }
    return enif_make_binary(env, &bin);
}

/* Ends the context: every later call with it raises badarg. Its memory stays until the last
 * term that refers to it is collected, so that a process still hitting it never writes into
 * freed counters. */
static ERL_NIF_TERM release_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    return release_ctx(env, argv[0]) ? atom_ok : enif_make_badarg(env);
}

/* The snapshot lives in memory of its own and is created as shared state: its bits are then
 * claimed with atomic ORs, so that workers of one VM can share it without a lock and exactly
 * one of them is told about each new bit. */
static ERL_NIF_TERM snapshot_new_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    size_t cap[SIFT_DOMAIN_COUNT] = {0};
    cov_ctx *c = get_ctx(env, argv[0]);
    if (c) {
        cap[SIFT_DOMAIN_EDGES] = c->c.len;
        cap[SIFT_DOMAIN_CMP] = sift_covmap_size(c->map, SIFT_DOMAIN_CMP);
    } else if (!get_probes(env, argv[0], &cap[SIFT_DOMAIN_EDGES])) {
        return enif_make_badarg(env);
    }
    cov_snap *s = snap_alloc();
    if (!s) return fail(env, SIFT_ENOMEM);
    size_t bytes = sift_snapshot_bytes(cap);
    *s = (cov_snap){.mem = aligned_alloc(64, bytes)};
    int rc = SIFT_ENOMEM;
    if (s->mem) {
        memset(s->mem, 0, bytes);
        rc = sift_snapshot_create(&s->snap, cap, s->mem, bytes);
    }
    if (rc != SIFT_OK) {
        enif_release_resource(s);
        return fail(env, rc);
    }
    ERL_NIF_TERM term = enif_make_resource(env, s);
    enif_release_resource(s);
    return term;
}

static ERL_NIF_TERM pass(ErlNifEnv *env, const ERL_NIF_TERM argv[], bool advance)
{
    cov_snap *s = get_snap(env, argv[0]);
    cov_ctx *c = get_ctx(env, argv[1]);
    if (!s || !c) return enif_make_badarg(env);
    sift_novelty n;
    int rc = advance ? sift_snapshot_check_and_advance(s->snap, c->map, SIFT_DOMAINS_ALL, &n, NULL)
                     : sift_snapshot_has_new(s->snap, c->map, SIFT_DOMAINS_ALL, &n);
    return rc == SIFT_OK ? novelty_atom(n) : fail(env, rc);
}

static ERL_NIF_TERM has_new_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    return pass(env, argv, false);
}

static ERL_NIF_TERM check_and_advance_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    return pass(env, argv, true);
}

static ERL_NIF_TERM import_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    cov_snap *s = get_snap(env, argv[0]);
    ErlNifBinary bin;
    if (!s || !enif_inspect_binary(env, argv[1], &bin)) return enif_make_badarg(env);
    sift_novelty n;
    int rc = sift_snapshot_import(s->snap, bin.data, bin.size, &n);
    return rc == SIFT_OK ? novelty_atom(n) : fail(env, rc);
}

static ERL_NIF_TERM count_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    cov_snap *s = get_snap(env, argv[0]);
    size_t edges, features;
    if (!s) return enif_make_badarg(env);
    int rc = sift_snapshot_count(s->snap, SIFT_DOMAINS_ALL, &edges, &features);
    if (rc != SIFT_OK) return fail(env, rc);
    return enif_make_tuple2(env, enif_make_uint64(env, edges), enif_make_uint64(env, features));
}

static ErlNifFunc funcs[] = {{"new", 1, new_nif, 0},
                             {"new", 2, new_nif, 0},
                             {"hit", 2, hit_nif, 0},
                             {"take", 1, take_nif, 0},
                             {"export", 1, export_nif, 0},
                             {"release", 1, release_nif, 0},
                             {"snapshot_new", 1, snapshot_new_nif, 0},
                             {"has_new", 2, has_new_nif, 0},
                             {"check_and_advance", 2, check_and_advance_nif, 0},
                             {"import", 2, import_nif, 0},
                             {"count", 1, count_nif, 0},
                             SIFT_FUZZ_NIFS};

ERL_NIF_INIT(sift_cov, funcs, load, NULL, NULL, NULL)
