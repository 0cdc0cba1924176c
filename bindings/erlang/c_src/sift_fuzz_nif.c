/* sift's engine for Erlang fuzz loops (sift_erl): a worker's corpus and scheduler
 * (engine/core/corpus.c), its mutator with dictionary and comparison operands
 * (engine/core/mutate.c), and the judgement of an execution, which keeps what reached anything
 * new. The Erlang side runs the target; everything between two executions happens here. */
#include "engine/base/files.h"
#include "engine/core/corpus.h"
#include "engine/core/dict.h"
#include "engine/core/mutate.h"
#include "sift_nif.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LEN     ((size_t)1 << 20)
#define EXPORT_INIT 4096

/* One worker's state. A worker is one process, but the mutex keeps a term passed to another
 * process from racing it. */
typedef struct {
    ErlNifMutex *lock;
    sift_rng rng;
    sift_corpus *corpus;
    sift_dict dict;
    sift_mutator mut;
    sift_entry *parent; /* the entry the last input was mutated from */
    size_t max_len;
    uint8_t *buf; /* max_len bytes */
    uint8_t *export_buf;
    size_t export_cap;
    uint64_t execs; /* executions judged: the corpus's clock */
    sift_feature_id *feats;
    size_t nfeats, feat_cap;
} fz_state;

static ErlNifResourceType *fz_type;
static ERL_NIF_TERM atom_nothing, atom_true, atom_false, atom_error, atom_ok;

static void fz_dtor(ErlNifEnv *env, void *obj)
{
    (void)env;
    fz_state *f = obj;
    if (f->lock) enif_mutex_destroy(f->lock);
    sift_corpus_free(f->corpus);
    sift_dict_free(&f->dict);
    free(f->buf);
    free(f->export_buf);
    free(f->feats);
}

int sift_fuzz_nif_load(ErlNifEnv *env)
{
    fz_type = enif_open_resource_type(env, NULL, "sift_fuzzer", fz_dtor, ERL_NIF_RT_CREATE, NULL);
    atom_nothing = enif_make_atom(env, "nothing");
    atom_true = enif_make_atom(env, "true");
    atom_false = enif_make_atom(env, "false");
    atom_error = enif_make_atom(env, "error");
    atom_ok = enif_make_atom(env, "ok");
    return fz_type ? 0 : -1;
}

/* Crossover's other parent: any entry still scheduled. */
static const uint8_t *pick_other(void *ctx, size_t *len)
{
    fz_state *f = ctx;
    size_t n = sift_corpus_count(f->corpus);
    if (!n) return NULL;
    sift_entry *e = sift_corpus_at(f->corpus, sift_rng_below(&f->rng, n));
    if (!e || e->evicted || !e->data) return NULL;
    *len = e->size;
    return e->data;
}

/* fuzzer_new(Seed, MaxLen): an empty corpus, a mutator seeded with Seed, inputs of at most
 * MaxLen bytes. */
ERL_NIF_TERM fuzzer_new_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    ErlNifUInt64 seed;
    unsigned long max_len;
    if (!enif_get_uint64(env, argv[0], &seed) || !enif_get_ulong(env, argv[1], &max_len) ||
        max_len == 0 || max_len > MAX_LEN)
        return enif_make_badarg(env);
    fz_state *f = enif_alloc_resource(fz_type, sizeof(*f));
    if (!f) return fail(env, SIFT_ENOMEM);
    *f = (fz_state){.lock = enif_mutex_create("sift_fuzzer"),
                    .corpus = sift_corpus_new(),
                    .max_len = max_len,
                    .buf = malloc(max_len)};
    sift_rng_seed(&f->rng, seed);
    f->mut = (sift_mutator){.rng = &f->rng, .pick_other = pick_other, .pick_ctx = f};
    if (!f->lock || !f->corpus || !f->buf) {
        enif_release_resource(f);
        return fail(env, SIFT_ENOMEM);
    }
    ERL_NIF_TERM term = enif_make_resource(env, f);
    enif_release_resource(f);
    return term;
}

static fz_state *get_fz(ErlNifEnv *env, ERL_NIF_TERM term)
{
    fz_state *f;
    return enif_get_resource(env, term, fz_type, (void **)&f) ? f : NULL;
}

/* fuzzer_dict(Fz, Name, Text): adds a dictionary in the AFL/libFuzzer format; ok, or
 * {error, "Name:Line: problem"}. */
ERL_NIF_TERM fuzzer_dict_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    fz_state *f = get_fz(env, argv[0]);
    ErlNifBinary name, text;
    if (!f || !enif_inspect_iolist_as_binary(env, argv[1], &name) ||
        !enif_inspect_iolist_as_binary(env, argv[2], &text))
        return enif_make_badarg(env);
    char cname[1024], err[1200];
    snprintf(cname, sizeof cname, "%.*s", (int)name.size, (const char *)name.data);
    enif_mutex_lock(f->lock);
    int rc = sift_dict_parse(&f->dict, cname, (const char *)text.data, text.size, err, sizeof err);
    f->mut.dict = f->dict.count ? &f->dict : NULL;
    enif_mutex_unlock(f->lock);
    if (rc == 0) return atom_ok;
    ERL_NIF_TERM msg;
    size_t n = strlen(err);
    memcpy(enif_make_new_binary(env, n, &msg), err, n);
    return enif_make_tuple2(env, atom_error, msg);
}

/* Takes DATA into the corpus with the features in f->feats. Called with the lock held. */
static bool admit(fz_state *f, const uint8_t *data, size_t size)
{
    char name[41];
    sift_sha1_hex(data, size, name);
    return sift_corpus_add(f->corpus, data, size, f->feats, f->nfeats, 0, name, f->execs) != NULL;
}

/* Buf reallocated to hold Want items of Elem bytes, *Cap set to Want; NULL (Buf and *Cap left
 * as they were) when out of memory. */
static void *grow_to(void *buf, size_t *cap, size_t want, size_t elem)
{
    void *grown = realloc(buf, want * elem);
    if (grown) *cap = want;
    return grown;
}

static bool reserve_feats(fz_state *f, size_t n)
{
    if (n <= f->feat_cap) return true;
    sift_feature_id *grown = grow_to(f->feats, &f->feat_cap, n < 256 ? 256 : n * 2, sizeof(*grown));
    if (grown) f->feats = grown;
    return grown != NULL;
}

/* fuzzer_add(Fz, Input, Features): Input joins the corpus with the features another worker (or
 * fuzzer_judge) found for it, native 64-bit feature ids; false when it is there already. */
ERL_NIF_TERM fuzzer_add_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    fz_state *f = get_fz(env, argv[0]);
    ErlNifBinary in, feats;
    if (!f || !enif_inspect_binary(env, argv[1], &in) ||
        !enif_inspect_binary(env, argv[2], &feats) || feats.size % sizeof(sift_feature_id))
        return enif_make_badarg(env);
    enif_mutex_lock(f->lock);
    size_t n = feats.size / sizeof(sift_feature_id);
    bool ok = reserve_feats(f, n);
    if (ok) {
        /* No features, no buffer yet: memcpy must not see its NULL. */
        if (n) memcpy(f->feats, feats.data, feats.size);
        f->nfeats = n;
        ok = admit(f, in.data, in.size);
    }
    enif_mutex_unlock(f->lock);
    return ok ? atom_true : atom_false;
}

/* fuzzer_next(Fz, Ctx, Limit): the next input, an entry the scheduler picks, mutated with the
 * dictionary and the comparison operands Ctx recorded, at most Limit bytes (and the fuzzer's
 * MaxLen). <<>> while the corpus is empty. */
ERL_NIF_TERM fuzzer_next_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    fz_state *f = get_fz(env, argv[0]);
    cov_ctx *c = get_ctx(env, argv[1]);
    unsigned long limit;
    if (!f || !c || !enif_get_ulong(env, argv[2], &limit) || !limit) return enif_make_badarg(env);
    enif_mutex_lock(f->lock);
    sift_entry *e = sift_corpus_pick(f->corpus, &f->rng);
    size_t size = 0, max = limit < f->max_len ? limit : f->max_len;
    if (e) {
        size = e->size < max ? e->size : max;
        if (size) memcpy(f->buf, e->data, size);
        f->mut.cmps = c->rt ? &c->rt->cmps : NULL;
        size = sift_mutate(&f->mut, f->buf, size, max);
    }
    f->parent = e;
    ERL_NIF_TERM bin;
    uint8_t *out = enif_make_new_binary(env, size, &bin);
    if (out) memcpy(out, f->buf, size);
    enif_mutex_unlock(f->lock);
    return out ? bin : fail(env, SIFT_ENOMEM);
}

static void add_feature(void *ctx, sift_domain domain, size_t index, uint8_t buckets)
{
    fz_state *f = ctx;
    if (!reserve_feats(f, f->nfeats + 1)) return;
    f->feats[f->nfeats++] = sift_feature(domain, index, (unsigned)__builtin_ctz(buckets));
}

/* The execution in Ctx as an export, counters reset; SIFT_OK or an error. */
static int export_ctx(fz_state *f, cov_ctx *c, size_t *len)
{
    int rc;
    while ((rc = sift_covmap_export(c->map, SIFT_DOMAINS_ALL, f->export_buf, f->export_cap, len)) ==
           SIFT_ESPACE) {
        size_t cap = *len > EXPORT_INIT ? *len : EXPORT_INIT;
        uint8_t *grown = grow_to(f->export_buf, &f->export_cap, cap, 1);
        if (!grown) return SIFT_ENOMEM;
        f->export_buf = grown;
    }
    return rc;
}

/* fuzzer_judge(Fz, Snap, Ctx, Input): after Input ran with Ctx. nothing, or {Novelty,
 * Features} when it reached something the shared snapshot lacked; then Input joins the corpus,
 * and Features (for fuzzer_add of other workers) are its feature ids. Resets Ctx's counters. */
ERL_NIF_TERM fuzzer_judge_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    fz_state *f = get_fz(env, argv[0]);
    cov_snap *s = get_snap(env, argv[1]);
    cov_ctx *c = get_ctx(env, argv[2]);
    ErlNifBinary in;
    if (!f || !s || !c || !enif_inspect_binary(env, argv[3], &in)) return enif_make_badarg(env);
    sift_novelty n;
    int rc = sift_snapshot_has_new(s->snap, c->map, SIFT_DOMAINS_ALL, &n);
    if (rc != SIFT_OK || n == SIFT_NOTHING) {
        sift_covmap_reset(c->map, SIFT_DOMAINS_ALL);
        __atomic_add_fetch(&f->execs, 1, __ATOMIC_RELAXED);
        return rc == SIFT_OK ? atom_nothing : fail(env, rc);
    }
    enif_mutex_lock(f->lock);
    f->execs++;
    size_t len;
    f->nfeats = 0;
    rc = export_ctx(f, c, &len);
    /* Another worker may have claimed the same bits since has_new: the import says. */
    if (rc == SIFT_OK) rc = sift_snapshot_import(s->snap, f->export_buf, len, &n);
    if (rc == SIFT_OK && n != SIFT_NOTHING)
        rc = sift_export_foreach(f->export_buf, len, add_feature, f);
    ERL_NIF_TERM result = atom_nothing, feats;
    if (rc == SIFT_OK && n != SIFT_NOTHING) {
        if (admit(f, in.data, in.size) && f->parent) sift_corpus_found(f->corpus, f->parent);
        size_t bytes = f->nfeats * sizeof(sift_feature_id);
        uint8_t *out = enif_make_new_binary(env, bytes, &feats);
        if (out && bytes) memcpy(out, f->feats, bytes);
        result = out ? enif_make_tuple2(env, novelty_atom(n), feats) : fail(env, SIFT_ENOMEM);
    }
    enif_mutex_unlock(f->lock);
    return rc == SIFT_OK ? result : fail(env, rc);
}

/* fuzzer_stats(Fz): {Entries, Active, Bytes, Features, MaxSize} of the worker's corpus. */
ERL_NIF_TERM fuzzer_stats_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    fz_state *f = get_fz(env, argv[0]);
    if (!f) return enif_make_badarg(env);
    enif_mutex_lock(f->lock);
    sift_corpus_update(f->corpus);
    ERL_NIF_TERM t = enif_make_tuple5(env, enif_make_uint64(env, sift_corpus_count(f->corpus)),
                                      enif_make_uint64(env, sift_corpus_active(f->corpus)),
                                      enif_make_uint64(env, sift_corpus_bytes(f->corpus)),
                                      enif_make_uint64(env, sift_corpus_features(f->corpus)),
                                      enif_make_uint64(env, sift_corpus_max_size(f->corpus)));
    enif_mutex_unlock(f->lock);
    return t;
}

/* write_atomic(Path, Data): the engine's whole-or-nothing writer (temporary, fsync, rename),
 * for crash artifacts and corpus files. ok, or {error, Reason} (strerror's text). */
ERL_NIF_TERM write_atomic_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    ErlNifBinary path, data;
    if (!enif_inspect_iolist_as_binary(env, argv[0], &path) ||
        !enif_inspect_binary(env, argv[1], &data) || !path.size || path.size >= 4096 ||
        memchr(path.data, 0, path.size))
        return enif_make_badarg(env);
    char cpath[4096];
    memcpy(cpath, path.data, path.size);
    cpath[path.size] = 0;
    if (sift_write_atomic(cpath, data.data, data.size) == 0) return atom_ok;
    const char *why = strerror(errno);
    ERL_NIF_TERM msg;
    memcpy(enif_make_new_binary(env, strlen(why), &msg), why, strlen(why));
    return enif_make_tuple2(env, atom_error, msg);
}

/* sha1(Data): the lowercase hex SHA-1 that names inputs and artifacts. */
ERL_NIF_TERM sha1_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    ErlNifBinary data;
    if (!enif_inspect_binary(env, argv[0], &data)) return enif_make_badarg(env);
    char hex[41];
    sift_sha1_hex(data.data, data.size, hex);
    ERL_NIF_TERM out;
    memcpy(enif_make_new_binary(env, 40, &out), hex, 40);
    return out;
}
