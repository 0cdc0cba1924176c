/* The sift_cov NIF's shared context module: the resource types of contexts and snapshots, the
 * lookups every NIF file makes, and the errors and atoms they answer with. The coverage,
 * comparison and fuzzer files use it; it uses none of them. */
#include "sift_nif_ctx.h"

#include <stdlib.h>

static ErlNifResourceType *ctx_type, *snap_type;
static ERL_NIF_TERM atom_new_edge, atom_new_count, atom_nothing, atom_enomem;

static void ctx_dtor(ErlNifEnv *env, void *obj)
{
    (void)env;
    cov_ctx *c = obj;
    sift_covmap_free(c->map);
    free(c->rt);
}

static void snap_dtor(ErlNifEnv *env, void *obj)
{
    (void)env;
    cov_snap *s = obj;
    sift_snapshot_free(s->snap);
    free(s->mem);
}

int nif_ctx_load(ErlNifEnv *env)
{
    ctx_type =
        enif_open_resource_type(env, NULL, "sift_cov_ctx", ctx_dtor, ERL_NIF_RT_CREATE, NULL);
    snap_type =
        enif_open_resource_type(env, NULL, "sift_cov_snapshot", snap_dtor, ERL_NIF_RT_CREATE, NULL);
    if (!ctx_type || !snap_type) return -1;
    atom_new_edge = enif_make_atom(env, "new_edge");
    atom_new_count = enif_make_atom(env, "new_count");
    atom_nothing = enif_make_atom(env, "nothing");
    atom_enomem = enif_make_atom(env, "enomem");
    return 0;
}

cov_ctx *ctx_alloc(void)
{
    return enif_alloc_resource(ctx_type, sizeof(cov_ctx));
}

cov_snap *snap_alloc(void)
{
    return enif_alloc_resource(snap_type, sizeof(cov_snap));
}

static bool is_released(cov_ctx *c)
{
    return __atomic_load_n(&c->released, __ATOMIC_ACQUIRE);
}

cov_ctx *get_ctx(ErlNifEnv *env, ERL_NIF_TERM term)
{
    cov_ctx *c;
    if (!enif_get_resource(env, term, ctx_type, (void **)&c) || is_released(c)) return NULL;
    return c;
}

bool release_ctx(ErlNifEnv *env, ERL_NIF_TERM term)
{
    cov_ctx *c;
    return enif_get_resource(env, term, ctx_type, (void **)&c) &&
           !__atomic_exchange_n(&c->released, 1, __ATOMIC_ACQ_REL);
}

cov_snap *get_snap(ErlNifEnv *env, ERL_NIF_TERM term)
{
    cov_snap *s;
    return enif_get_resource(env, term, snap_type, (void **)&s) ? s : NULL;
}

/* Only running out of memory is not the caller's fault. */
ERL_NIF_TERM fail(ErlNifEnv *env, int rc)
{
    return rc == SIFT_ENOMEM ? enif_raise_exception(env, atom_enomem) : enif_make_badarg(env);
}

ERL_NIF_TERM novelty_atom(sift_novelty n)
{
    return n == SIFT_NEW_EDGE ? atom_new_edge : n == SIFT_NEW_COUNT ? atom_new_count : atom_nothing;
}

int cmp_ctx_init(cov_ctx *c, bool features)
{
    c->rt = calloc(1, sizeof(*c->rt));
    if (!c->rt) return SIFT_ENOMEM;
    c->rt->map = c->map;
    c->rt->tracing = true;
    c->rt->cmp_features_off = !features;
    if (!features) return SIFT_OK;
    int rc = sift_covmap_alloc(c->map, SIFT_DOMAIN_CMP, SIFT_RT_CMP_COUNTERS, NULL, NULL);
    return rc == SIFT_OK ? sift_covmap_counters(c->map, SIFT_DOMAIN_CMP, 0, &c->rt->cmp) : rc;
}
