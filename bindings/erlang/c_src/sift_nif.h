/* The entry points of the comparison recorder (sift_cmp_nif.c) and of the fuzzer
 * (sift_fuzz_nif.c), which sift_cov_nif.c registers with the module; the context they share is
 * sift_nif_ctx.h's. */
#ifndef SIFT_ERL_NIF_H
#define SIFT_ERL_NIF_H

#include "sift_nif_ctx.h"

/* Opens the fuzzer's resource type and atoms; 0 on success. */
int sift_fuzz_nif_load(ErlNifEnv *env);

ERL_NIF_TERM cmp_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM search_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM fuzzer_new_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM fuzzer_dict_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM fuzzer_add_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM fuzzer_next_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM fuzzer_judge_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM fuzzer_stats_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM write_atomic_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM sha1_nif(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);

#define SIFT_FUZZ_NIFS                                                                             \
    {"cmp", 4, cmp_nif, 0}, {"search", 4, search_nif, 0}, {"fuzzer_new", 2, fuzzer_new_nif, 0},    \
        {"fuzzer_dict", 3, fuzzer_dict_nif, 0}, {"fuzzer_add", 3, fuzzer_add_nif, 0},              \
        {"fuzzer_next", 3, fuzzer_next_nif, 0}, {"fuzzer_judge", 4, fuzzer_judge_nif, 0},          \
        {"fuzzer_stats", 1, fuzzer_stats_nif, 0},                                                  \
        {"write_atomic", 2, write_atomic_nif, ERL_NIF_DIRTY_JOB_IO_BOUND},                         \
        {"sha1", 1, sha1_nif, 0},

#endif
