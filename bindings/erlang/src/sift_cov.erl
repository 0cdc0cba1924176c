%% @doc sift's coverage core for Erlang.
%%
%% A context holds the probe counters of one execution; a snapshot holds what all executions
%% have covered so far and answers whether the last one reached anything new. Instrumented code
%% (see sift_cov_transform) finds its context in the process dictionary, under '$sift_ctx'.
%% docs/erlang.md describes the API, its concurrency rules and the probe tables.
-module(sift_cov).

-export([new/1, new/2, hit/2, take/1, export/1, release/1]).
-export([snapshot_new/1, has_new/2, check_and_advance/2, import/2, count/1]).
-export([set_ctx/1, get_ctx/0, with_ctx/1, spawn_with_ctx/1]).
-export([probes/1, covered/2]).
-export([cmp/4, search/4, '$cmp'/3, '$search'/3]).
-export([fuzzer_new/2, fuzzer_dict/3, fuzzer_add/3, fuzzer_next/3, fuzzer_judge/4,
         fuzzer_stats/1, write_atomic/2, sha1/1]).

-nifs([new/1, new/2, hit/2, take/1, export/1, release/1,
       snapshot_new/1, has_new/2, check_and_advance/2, import/2, count/1,
       cmp/4, search/4, fuzzer_new/2, fuzzer_dict/3, fuzzer_add/3, fuzzer_next/3,
       fuzzer_judge/4, fuzzer_stats/1, write_atomic/2, sha1/1]).
-on_load(init/0).

-define(CTX_KEY, '$sift_ctx').

-export_type([ctx/0, snapshot/0, novelty/0, probe/0, fuzzer/0]).

-opaque ctx() :: reference().
-opaque snapshot() :: reference().
-opaque fuzzer() :: reference().
-type novelty() :: new_edge | new_count | nothing.
-type probe() :: {module(), {atom(), arity()}, pos_integer(), atom()}.

%% The library sits next to this module's beam file unless SIFT_COV_NIF names it (without
%% the .so), which lets a build keep several variants apart.
init() ->
    Path = case os:getenv("SIFT_COV_NIF") of
               false -> filename:join(filename:dirname(code:which(?MODULE)), "sift_cov_nif");
               Named -> Named
           end,
    erlang:load_nif(Path, 0).

%% @doc A context of N probes (1..1048576), counters all zero.
-spec new(pos_integer()) -> ctx().
new(_N) -> erlang:nif_error(nif_not_loaded).

%% @doc A context of N probes that also records comparisons (cmp/4, search/4): with Cmp true
%% their operands, for the mutator; with value_profile their distances too, as features of a
%% CMP domain of the context (a snapshot made from the context, snapshot_new/1, holds it).
-spec new(pos_integer(), boolean() | value_profile) -> ctx().
new(_N, _Cmp) -> erlang:nif_error(nif_not_loaded).

%% @doc Counts one hit of probe Id (0..N-1): what every probe of instrumented code calls.
-spec hit(ctx(), non_neg_integer()) -> ok.
hit(_Ctx, _Id) -> erlang:nif_error(nif_not_loaded).

%% @doc The bucket bits of every probe, one byte each (see docs/coverage-api.md), and the
%% counters reset.
-spec take(ctx()) -> binary().
take(_Ctx) -> erlang:nif_error(nif_not_loaded).

%% @doc What the execution covered in sift's compact export format, and the counters reset.
-spec export(ctx()) -> binary().
export(_Ctx) -> erlang:nif_error(nif_not_loaded).

%% @doc Ends the context: any later call with it raises badarg.
-spec release(ctx()) -> ok.
release(_Ctx) -> erlang:nif_error(nif_not_loaded).

%% @doc An empty snapshot for N probes, or for as many as a context has.
-spec snapshot_new(pos_integer() | ctx()) -> snapshot().
snapshot_new(_NOrCtx) -> erlang:nif_error(nif_not_loaded).

%% @doc Whether the context's execution holds anything the snapshot lacks. Changes neither.
-spec has_new(snapshot(), ctx()) -> novelty().
has_new(_Snap, _Ctx) -> erlang:nif_error(nif_not_loaded).

%% @doc Whether the execution found anything new; folds it into the snapshot and resets the
%% counters, in one pass over the probes it touched.
-spec check_and_advance(snapshot(), ctx()) -> novelty().
check_and_advance(_Snap, _Ctx) -> erlang:nif_error(nif_not_loaded).

%% @doc Folds an export (from this VM or another) into the snapshot.
-spec import(snapshot(), binary()) -> novelty().
import(_Snap, _Export) -> erlang:nif_error(nif_not_loaded).

%% @doc Probes ever covered and (probe, bucket) features seen.
-spec count(snapshot()) -> {non_neg_integer(), non_neg_integer()}.
count(_Snap) -> erlang:nif_error(nif_not_loaded).

%% @doc Records that A was compared at Site (any integer below 2^32 that names the place) with
%% each of Literals; returns A. Integers give integer operands, binaries, atoms and strings byte
%% strings (a shorter A as if padded with zeros). Nothing is recorded for a context made
%% without comparisons.
-spec cmp(ctx(), non_neg_integer(), term(), list()) -> term().
cmp(_Ctx, _Site, _A, _Literals) -> erlang:nif_error(nif_not_loaded).

%% @doc Records a search of binary Haystack for any of Needles (binary:match) at Site: the
%% longest prefix of each needle found in it. Returns Haystack.
-spec search(ctx(), non_neg_integer(), binary(), [binary()]) -> binary().
search(_Ctx, _Site, _Hay, _Needles) -> erlang:nif_error(nif_not_loaded).

%% @doc What instrumented comparisons call (sift_cov_transform): cmp/4 with the calling
%% process's context, if any. Returns A.
'$cmp'(Site, A, Literals) ->
    case get(?CTX_KEY) of
        undefined -> A;
        Ctx -> cmp(Ctx, Site, A, Literals)
    end.

'$search'(Site, Hay, Needles) when is_binary(Hay) ->
    case get(?CTX_KEY) of
        undefined -> Hay;
        Ctx -> search(Ctx, Site, Hay, Needles)
    end;
'$search'(_Site, Hay, _Needles) ->
    Hay.

%% @doc A worker's corpus, scheduler and mutator (sift's engine): Seed seeds it, MaxLen bounds
%% the inputs it makes. sift_erl drives it; docs/erlang.md describes the calls.
-spec fuzzer_new(non_neg_integer(), pos_integer()) -> fuzzer().
fuzzer_new(_Seed, _MaxLen) -> erlang:nif_error(nif_not_loaded).

%% @doc Adds dictionary Text (AFL/libFuzzer format; Name for errors) to the mutator.
-spec fuzzer_dict(fuzzer(), iodata(), iodata()) -> ok | {error, binary()}.
fuzzer_dict(_Fz, _Name, _Text) -> erlang:nif_error(nif_not_loaded).

%% @doc Adds Input to the corpus with its features (as fuzzer_judge/4 returned them); false
%% when it is there already.
-spec fuzzer_add(fuzzer(), binary(), binary()) -> boolean().
fuzzer_add(_Fz, _Input, _Features) -> erlang:nif_error(nif_not_loaded).

%% @doc The next input to run, at most Limit bytes: a corpus entry the scheduler picks, mutated
%% with the dictionary and the comparisons Ctx recorded. <<>> while the corpus is empty.
-spec fuzzer_next(fuzzer(), ctx(), pos_integer()) -> binary().
fuzzer_next(_Fz, _Ctx, _Limit) -> erlang:nif_error(nif_not_loaded).

%% @doc After Input ran with Ctx: nothing, or {Novelty, Features} when it reached what Snap
%% lacked (then Input joined the corpus and Snap holds its coverage). Resets Ctx.
-spec fuzzer_judge(fuzzer(), snapshot(), ctx(), binary()) -> nothing | {novelty(), binary()}.
fuzzer_judge(_Fz, _Snap, _Ctx, _Input) -> erlang:nif_error(nif_not_loaded).

%% @doc {Entries, Active, Bytes, Features, MaxSize} of the corpus.
-spec fuzzer_stats(fuzzer()) -> {non_neg_integer(), non_neg_integer(), non_neg_integer(),
                                 non_neg_integer(), non_neg_integer()}.
fuzzer_stats(_Fz) -> erlang:nif_error(nif_not_loaded).

%% @doc Writes Data to Path whole or not at all (temporary, fsync, rename), as sift writes
%% artifacts.
-spec write_atomic(file:filename_all(), binary()) -> ok | {error, binary()}.
write_atomic(_Path, _Data) -> erlang:nif_error(nif_not_loaded).

%% @doc Lowercase hex SHA-1 of Data: the name of an input or artifact.
-spec sha1(binary()) -> binary().
sha1(_Data) -> erlang:nif_error(nif_not_loaded).

%% @doc Makes Ctx the calling process's context (undefined: none), returning the previous one.
-spec set_ctx(ctx() | undefined) -> ctx() | undefined.
set_ctx(undefined) -> erase(?CTX_KEY);
set_ctx(Ctx) -> put(?CTX_KEY, Ctx).

-spec get_ctx() -> ctx() | undefined.
get_ctx() -> get(?CTX_KEY).

%% @doc Fun, wrapped to run with the caller's context: for any spawn variant, since a new
%% process starts with an empty process dictionary.
-spec with_ctx(fun(() -> term())) -> fun(() -> term()).
with_ctx(Fun) ->
    Ctx = get_ctx(),
    fun() -> set_ctx(Ctx), Fun() end.

-spec spawn_with_ctx(fun(() -> term())) -> pid().
spawn_with_ctx(Fun) -> spawn(with_ctx(Fun)).

%% @doc The probe tables of instrumented modules, by probe id. Modules laid out over the same
%% ids (see sift_cov_transform) share entries.
-spec probes([module()]) -> #{non_neg_integer() => [probe()]}.
probes(Modules) ->
    lists:foldl(
      fun(M, Acc) ->
              #{module := M, probes := Ps} = M:'$sift_probes'(),
              lists:foldl(fun({Id, Fun, Line, Kind}, A) ->
                                  maps:update_with(Id, fun(L) -> L ++ [{M, Fun, Line, Kind}] end,
                                                   [{M, Fun, Line, Kind}], A)
                          end, Acc, Ps)
      end, #{}, Modules).

%% @doc The probes a take/1 result holds, with their bucket bits, in id order.
-spec covered(binary(), #{non_neg_integer() => [probe()]}) ->
          [{non_neg_integer(), pos_integer(), [probe()]}].
covered(Taken, Probes) ->
    [{Id, B, maps:get(Id, Probes, [])} || {Id, B} <- nonzero(Taken, 0)].

nonzero(<<>>, _) -> [];
nonzero(<<0, Rest/binary>>, Id) -> nonzero(Rest, Id + 1);
nonzero(<<B, Rest/binary>>, Id) -> [{Id, B} | nonzero(Rest, Id + 1)].
