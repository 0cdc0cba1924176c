/* The sift_cov NIF's shared context module (sift_nif_ctx.c): contexts and snapshots as Erlang
 * resources, and what every NIF file answers with. */
#ifndef SIFT_ERL_NIF_CTX_H
#define SIFT_ERL_NIF_CTX_H

#include "rt/rt.h"
#include "sift/covmap.h"
#include "sift/snapshot.h"

#include <erl_nif.h>
#include <stdbool.h>

typedef struct {
    sift_covmap *map;
    sift_counters c;   /* the map's one region, for hit() without a lookup */
    sift_rt_state *rt; /* comparison rings and CMP counters; NULL when not recording them */
    int released;      /* read and set atomically: release() may race with any other call */
} cov_ctx;

typedef struct {
    sift_snapshot *snap;
    void *mem; /* the snapshot's state, in memory it claims with atomic ORs */
} cov_snap;

/* Opens the resource types and atoms; 0 on success. */
int nif_ctx_load(ErlNifEnv *env);

/* A new resource, its fields unset (the destructor frees what they hold), or NULL. */
cov_ctx *ctx_alloc(void);
cov_snap *snap_alloc(void);

/* A live context, or NULL for anything else (another type, a released context). */
cov_ctx *get_ctx(ErlNifEnv *env, ERL_NIF_TERM term);
/* Ends the context TERM; false when it is none or was already ended. */
bool release_ctx(ErlNifEnv *env, ERL_NIF_TERM term);
cov_snap *get_snap(ErlNifEnv *env, ERL_NIF_TERM term);
/* The error a failed core call raises: badarg, or enomem. */
ERL_NIF_TERM fail(ErlNifEnv *env, int rc);
ERL_NIF_TERM novelty_atom(sift_novelty n);

/* Gives C a comparison recorder, and with FEATURES a CMP domain for their distances. SIFT_OK
 * or SIFT_ENOMEM. */
int cmp_ctx_init(cov_ctx *c, bool features);

#endif
