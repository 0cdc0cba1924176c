/* A NIF that does nothing, for bench/erlang: the floor of any probe that calls a NIF. */
#include <erl_nif.h>

static ERL_NIF_TERM atom_ok;

static int load(ErlNifEnv *env, void **priv, ERL_NIF_TERM info)
{
    (void)priv, (void)info;
    atom_ok = enif_make_atom(env, "ok");
    return 0;
}

static ERL_NIF_TERM noop_hit(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)env, (void)argc, (void)argv;
    return atom_ok;
}

static ErlNifFunc funcs[] = {{"noop_hit", 2, noop_hit, 0}};

ERL_NIF_INIT(erlang_bench, funcs, load, NULL, NULL, NULL)
