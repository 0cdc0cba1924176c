%% @doc Tests of the sift_cov NIF: every function, its bad arguments, snapshot semantics,
%% export and import, and several processes at once.
-module(sift_cov_tests).

-include_lib("eunit/include/eunit.hrl").

-define(BADARG(Expr), ?assertError(badarg, Expr)).

hits(Ctx, Ids) -> [ok = sift_cov:hit(Ctx, Id) || Id <- Ids], ok.

new_bad_arguments_test() ->
    ?BADARG(sift_cov:new(0)),
    ?BADARG(sift_cov:new(-1)),
    ?BADARG(sift_cov:new((1 bsl 20) + 1)),
    ?BADARG(sift_cov:new(1 bsl 70)),
    ?BADARG(sift_cov:new(1.5)),
    ?BADARG(sift_cov:new(foo)),
    ?assertEqual(1 bsl 20, byte_size(sift_cov:take(sift_cov:new(1 bsl 20)))).

hit_bad_arguments_test() ->
    Ctx = sift_cov:new(100),
    ?BADARG(sift_cov:hit(Ctx, 100)),
    ?BADARG(sift_cov:hit(Ctx, -1)),
    ?BADARG(sift_cov:hit(Ctx, 1 bsl 70)),
    ?BADARG(sift_cov:hit(Ctx, foo)),
    ?BADARG(sift_cov:hit(Ctx, 1.0)),
    ?BADARG(sift_cov:hit(undefined, 0)),
    ?BADARG(sift_cov:hit(make_ref(), 0)),
    ?BADARG(sift_cov:hit(sift_cov:snapshot_new(100), 0)),
    ?assertEqual(ok, sift_cov:hit(Ctx, 99)),
    ?assertEqual(<<0:99/unit:8, 1>>, sift_cov:take(Ctx)).

take_buckets_and_resets_test() ->
    Ctx = sift_cov:new(300),
    hits(Ctx, [0, 1, 1, 2, 2, 2] ++ lists:duplicate(5, 70) ++ lists:duplicate(300, 299)),
    Taken = sift_cov:take(Ctx),
    ?assertEqual(300, byte_size(Taken)),
    ?assertEqual([{0, 1}, {1, 2}, {2, 4}, {70, 8}, {299, 128}],
                 [{I, B} || {I, B} <- lists:zip(lists:seq(0, 299), binary_to_list(Taken)),
                            B =/= 0]),
    ?assertEqual(<<0:300/unit:8>>, sift_cov:take(Ctx)),
    ?BADARG(sift_cov:take(foo)).

snapshot_novelty_test() ->
    Ctx = sift_cov:new(128),
    Snap = sift_cov:snapshot_new(Ctx),
    ?assertEqual(nothing, sift_cov:check_and_advance(Snap, Ctx)),
    hits(Ctx, [3]),
    ?assertEqual(new_edge, sift_cov:check_and_advance(Snap, Ctx)),
    hits(Ctx, [3]),
    ?assertEqual(nothing, sift_cov:check_and_advance(Snap, Ctx)),
    hits(Ctx, [3, 3]),
    ?assertEqual(new_count, sift_cov:check_and_advance(Snap, Ctx)),
    hits(Ctx, [3, 3, 100]),
    ?assertEqual(new_edge, sift_cov:check_and_advance(Snap, Ctx)),
    ?assertEqual({2, 3}, sift_cov:count(Snap)).

has_new_reads_only_test() ->
    Ctx = sift_cov:new(64),
    Snap = sift_cov:snapshot_new(64),
    hits(Ctx, [5]),
    ?assertEqual(new_edge, sift_cov:has_new(Snap, Ctx)),
    ?assertEqual(new_edge, sift_cov:has_new(Snap, Ctx)),
    ?assertEqual({0, 0}, sift_cov:count(Snap)),
    ?assertEqual(new_edge, sift_cov:check_and_advance(Snap, Ctx)),
    hits(Ctx, [5, 5]),
    ?assertEqual(new_count, sift_cov:has_new(Snap, Ctx)),
    ?assertEqual(<<0:5/unit:8, 2, 0:58/unit:8>>, sift_cov:take(Ctx)),
    ?assertEqual(nothing, sift_cov:has_new(Snap, Ctx)).

snapshot_bad_arguments_test() ->
    Small = sift_cov:new(64),
    Big = sift_cov:new(1000),
    Snap = sift_cov:snapshot_new(Small),
    ?BADARG(sift_cov:snapshot_new(0)),
    ?BADARG(sift_cov:snapshot_new((1 bsl 20) + 1)),
    ?BADARG(sift_cov:snapshot_new(foo)),
    ?BADARG(sift_cov:snapshot_new(Snap)),
    ?BADARG(sift_cov:has_new(Small, Snap)),
    ?BADARG(sift_cov:check_and_advance(Small, Snap)),
    ?BADARG(sift_cov:check_and_advance(Snap, foo)),
    %% a context larger than the snapshot's capacity
    ?BADARG(sift_cov:check_and_advance(Snap, Big)),
    ?BADARG(sift_cov:has_new(Snap, Big)),
    ?BADARG(sift_cov:count(Small)),
    ?BADARG(sift_cov:count(foo)),
    ?assertEqual(nothing, sift_cov:check_and_advance(sift_cov:snapshot_new(Big), Small)).

export_import_round_trip_test() ->
    Ctx = sift_cov:new(256),
    hits(Ctx, [1, 200, 200, 200, 255]),
    Export = sift_cov:export(Ctx),
    ?assertMatch(<<"SFX1", _/binary>>, Export),
    ?assertEqual(<<0:256/unit:8>>, sift_cov:take(Ctx)),
    Snap = sift_cov:snapshot_new(256),
    ?assertEqual(new_edge, sift_cov:import(Snap, Export)),
    ?assertEqual(nothing, sift_cov:import(Snap, Export)),
    ?assertEqual({3, 3}, sift_cov:count(Snap)),
    hits(Ctx, [1, 200, 200, 200, 255]),
    ?assertEqual(nothing, sift_cov:check_and_advance(Snap, Ctx)),
    hits(Ctx, [1, 1]),
    ?assertEqual(new_count, sift_cov:import(Snap, sift_cov:export(Ctx))).

%% More than the NIF's first guess at an export's size.
large_export_test() ->
    N = 1 bsl 16,
    Ctx = sift_cov:new(N),
    Ids = lists:seq(0, N - 1, 7),
    hits(Ctx, Ids),
    Export = sift_cov:export(Ctx),
    ?assert(byte_size(Export) > 4096),
    Snap = sift_cov:snapshot_new(N),
    ?assertEqual(new_edge, sift_cov:import(Snap, Export)),
    ?assertEqual({length(Ids), length(Ids)}, sift_cov:count(Snap)).

import_bad_arguments_test() ->
    Ctx = sift_cov:new(1000),
    hits(Ctx, [999]),
    Export = sift_cov:export(Ctx),
    Snap = sift_cov:snapshot_new(100),
    ?BADARG(sift_cov:import(Snap, Export)),
    ?BADARG(sift_cov:import(Snap, <<"junk">>)),
    ?BADARG(sift_cov:import(Snap, <<>>)),
    ?BADARG(sift_cov:import(Snap, binary:part(Export, 0, byte_size(Export) - 1))),
    ?BADARG(sift_cov:import(Snap, "SFX1")),
    ?BADARG(sift_cov:import(Ctx, Export)),
    ?BADARG(sift_cov:export(Snap)),
    ?assertEqual({0, 0}, sift_cov:count(Snap)).

release_test() ->
    Ctx = sift_cov:new(64),
    Snap = sift_cov:snapshot_new(Ctx),
    hits(Ctx, [1]),
    ?assertEqual(ok, sift_cov:release(Ctx)),
    ?BADARG(sift_cov:hit(Ctx, 1)),
    ?BADARG(sift_cov:take(Ctx)),
    ?BADARG(sift_cov:export(Ctx)),
    ?BADARG(sift_cov:has_new(Snap, Ctx)),
    ?BADARG(sift_cov:check_and_advance(Snap, Ctx)),
    ?BADARG(sift_cov:snapshot_new(Ctx)),
    ?BADARG(sift_cov:release(Ctx)),
    ?BADARG(sift_cov:release(Snap)),
    ?BADARG(sift_cov:release(foo)),
    ?assertEqual({0, 0}, sift_cov:count(Snap)).

%% A process still hitting a context that another releases gets badarg, and the VM lives on.
release_while_hitting_test() ->
    Ctx = sift_cov:new(4096),
    Parent = self(),
    Hitters = [spawn_link(fun() -> Parent ! {self(), hammer(Ctx, 0)} end)
               || _ <- lists:seq(1, 4)],
    timer:sleep(20),
    ok = sift_cov:release(Ctx),
    Counts = [receive {P, N} -> N end || P <- Hitters],
    ?assert(lists:all(fun(N) -> N > 0 end, Counts)).

hammer(Ctx, N) ->
    try sift_cov:hit(Ctx, N rem 4096) of
        ok -> hammer(Ctx, N + 1)
    catch
        error:badarg -> N
    end.

%% Contexts and snapshots left to the garbage collector give their memory back without a
%% release: a round of 4000 of each would hold over 500 MB. The first round fills allocator
%% caches (and ASan's quarantine); a second must then not grow the process.
unreleased_contexts_are_collected_test() ->
    Round = fun() ->
                    lists:foreach(fun(I) ->
                                          Ctx = sift_cov:new(1 bsl 16),
                                          hits(Ctx, [I]),
                                          Snap = sift_cov:snapshot_new(Ctx),
                                          new_edge = sift_cov:check_and_advance(Snap, Ctx)
                                  end, lists:seq(1, 4000)),
                    erlang:garbage_collect(),
                    rss()
            end,
    First = Round(),
    ?assert(Round() - First < 200 bsl 20).

rss() ->
    {ok, Status} = file:read_file("/proc/self/status"),
    {match, [Kb]} = re:run(Status, "VmRSS:\\s+(\\d+)", [{capture, all_but_first, binary}]),
    binary_to_integer(Kb) bsl 10.

%% Each worker runs its executions against a context of its own; none sees another's hits.
concurrent_contexts_test() ->
    Parent = self(),
    Workers = 8,
    Pids = [spawn_link(fun() -> Parent ! {self(), K, own_context(K)} end)
            || K <- lists:seq(0, Workers - 1)],
    [receive {P, K, Result} -> ?assertEqual({K, ok}, {K, Result}) end
     || {P, K} <- lists:zip(Pids, lists:seq(0, Workers - 1))].

own_context(K) ->
    Ctx = sift_cov:new(1024),
    Snap = sift_cov:snapshot_new(Ctx),
    Mine = [K * 100 + I || I <- lists:seq(0, 99)],
    Rounds = [begin
                  hits(Ctx, Mine),
                  Taken = sift_cov:take(Ctx),
                  Expected = [{Id, 1} || Id <- Mine],
                  Got = [{I, B} || {I, B} <- lists:zip(lists:seq(0, 1023),
                                                       binary_to_list(Taken)), B =/= 0],
                  hits(Ctx, Mine),
                  Novelty = sift_cov:check_and_advance(Snap, Ctx),
                  Got =:= Expected andalso Novelty =:= (if R =:= 1 -> new_edge; true -> nothing end)
              end || R <- lists:seq(1, 200)],
    sift_cov:release(Ctx),
    case lists:all(fun(X) -> X end, Rounds) of true -> ok; false -> mismatch end.

%% Workers sharing a snapshot: when they all reach the same new probe, one is told.
shared_snapshot_claims_once_test() ->
    [begin
         Snap = sift_cov:snapshot_new(64),
         Parent = self(),
         Pids = [spawn_link(fun() ->
                                    Ctx = sift_cov:new(64),
                                    hits(Ctx, [Round rem 64]),
                                    receive go -> ok end,
                                    Parent ! {self(), sift_cov:check_and_advance(Snap, Ctx)}
                            end) || _ <- lists:seq(1, 6)],
         [P ! go || P <- Pids],
         Results = [receive {P, R} -> R end || P <- Pids],
         ?assertEqual([new_edge], [R || R <- Results, R =/= nothing])
     end || Round <- lists:seq(1, 100)].

set_ctx_test() ->
    ?assertEqual(undefined, sift_cov:get_ctx()),
    Ctx = sift_cov:new(8),
    ?assertEqual(undefined, sift_cov:set_ctx(Ctx)),
    ?assertEqual(Ctx, sift_cov:get_ctx()),
    ?assertEqual(Ctx, sift_cov:set_ctx(undefined)),
    ?assertEqual(undefined, sift_cov:get_ctx()).

spawned_processes_test() ->
    Ctx = sift_cov:new(8),
    sift_cov:set_ctx(Ctx),
    Parent = self(),
    Plain = spawn(fun() -> Parent ! {plain, sift_cov:get_ctx()} end),
    With = sift_cov:spawn_with_ctx(fun() ->
                                           sift_cov:hit(sift_cov:get_ctx(), 7),
                                           Parent ! {with, done}
                                   end),
    ?assert(is_pid(Plain) andalso is_pid(With)),
    ?assertEqual(undefined, receive {plain, C} -> C end),
    receive {with, done} -> ok end,
    Linked = spawn_link(sift_cov:with_ctx(fun() -> sift_cov:hit(sift_cov:get_ctx(), 6),
                                                   Parent ! {linked, done}
                                          end)),
    ?assert(is_pid(Linked)),
    receive {linked, done} -> ok end,
    sift_cov:set_ctx(undefined),
    ?assertEqual(<<0, 0, 0, 0, 0, 0, 1, 1>>, sift_cov:take(Ctx)).

%% Comparisons and the fuzzer calls (the engine through the NIF).

cmp_bad_arguments_test() ->
    C = sift_cov:new(16, true),
    ?BADARG(sift_cov:new(16, maybe)),
    ?BADARG(sift_cov:cmp(nope, 1, a, [b])),
    ?BADARG(sift_cov:cmp(C, -1, a, [b])),
    ?BADARG(sift_cov:cmp(C, 1, a, not_a_list)),
    ?BADARG(sift_cov:search(C, 1, "not a binary", [<<"x">>])),
    ?BADARG(sift_cov:search(C, 1, <<"x">>, <<"x">>)),
    %% Values of any type are compared; what cannot be in an input is left out.
    ?assertEqual({1, 2}, sift_cov:cmp(C, 1, {1, 2}, [<<"ab">>, 1 bsl 70, [1000], self()])),
    ?assertEqual(<<"hay">>, sift_cov:search(C, 2, <<"hay">>, [<<>>, 7, <<"needle">>])),
    ok = sift_cov:release(C),
    ?BADARG(sift_cov:cmp(C, 1, a, [b])).

%% A context made without comparisons ignores them; '$cmp' without a context returns the value.
cmp_without_recorder_test() ->
    C = sift_cov:new(16),
    ?assertEqual(5, sift_cov:cmp(C, 1, 5, [1000])),
    undefined = sift_cov:get_ctx(),
    ?assertEqual(x, sift_cov:'$cmp'(1, x, [y])),
    ?assertEqual(<<"h">>, sift_cov:'$search'(1, <<"h">>, [<<"n">>])).

fuzzer_bad_arguments_test() ->
    ?BADARG(sift_cov:fuzzer_new(-1, 10)),
    ?BADARG(sift_cov:fuzzer_new(1, 0)),
    ?BADARG(sift_cov:fuzzer_new(1, 1 bsl 21)),
    F = sift_cov:fuzzer_new(1, 64),
    C = sift_cov:new(16, true),
    S = sift_cov:snapshot_new(C),
    ?BADARG(sift_cov:fuzzer_add(F, <<"x">>, <<1, 2, 3>>)),
    ?BADARG(sift_cov:fuzzer_add(C, <<"x">>, <<>>)),
    ?BADARG(sift_cov:fuzzer_next(F, S, 10)),
    ?BADARG(sift_cov:fuzzer_next(F, C, 0)),
    ?BADARG(sift_cov:fuzzer_judge(F, C, C, <<>>)),
    ?BADARG(sift_cov:fuzzer_judge(F, S, C, "x")),
    ?BADARG(sift_cov:fuzzer_dict(F, "d", 5)),
    ?assertMatch({error, <<"d:1: ", _/binary>>}, sift_cov:fuzzer_dict(F, "d", "x=abc")),
    ?assertEqual(ok, sift_cov:fuzzer_dict(F, "d", "# comment\nx=\"abc\"\n")),
    ?BADARG(sift_cov:write_atomic("", <<>>)),
    ?BADARG(sift_cov:sha1("x")).

%% The corpus starts empty; an execution that reaches a new probe joins it, with its features,
%% and the same again does not.
fuzzer_judge_test() ->
    F = sift_cov:fuzzer_new(7, 64),
    C = sift_cov:new(64, true),
    S = sift_cov:snapshot_new(C),
    ?assertEqual(<<>>, sift_cov:fuzzer_next(F, C, 64)),
    ?assertEqual({0, 0, 0, 0, 0}, sift_cov:fuzzer_stats(F)),
    ok = sift_cov:hit(C, 3),
    {new_edge, Feats} = sift_cov:fuzzer_judge(F, S, C, <<"abc">>),
    ?assertEqual(8, byte_size(Feats)),
    ?assertMatch({1, 1, 3, 1, 3}, sift_cov:fuzzer_stats(F)),
    ok = sift_cov:hit(C, 3),
    ?assertEqual(nothing, sift_cov:fuzzer_judge(F, S, C, <<"abd">>)),
    ?assertEqual(<<0:64/unit:8>>, sift_cov:take(C)),
    %% Another worker's input, with the features it came with; the same input twice is refused.
    ?assert(sift_cov:fuzzer_add(F, <<"other">>, Feats)),
    ?assertNot(sift_cov:fuzzer_add(F, <<"other">>, Feats)),
    Next = [sift_cov:fuzzer_next(F, C, 5) || _ <- lists:seq(1, 200)],
    ?assert(lists:all(fun(B) -> byte_size(B) >= 1 andalso byte_size(B) =< 5 end, Next)),
    ?assert(length(lists:usort(Next)) > 50).

%% The same seed makes the same inputs.
fuzzer_seeded_test() ->
    Run = fun(Seed) ->
                  F = sift_cov:fuzzer_new(Seed, 32),
                  C = sift_cov:new(16, true),
                  true = sift_cov:fuzzer_add(F, <<"seed input">>, <<>>),
                  [sift_cov:fuzzer_next(F, C, 32) || _ <- lists:seq(1, 100)]
          end,
    ?assertEqual(Run(1), Run(1)),
    ?assertNotEqual(Run(1), Run(2)).

%% Input-to-state: a comparison's literal reaches the mutator's output, in place of the bytes
%% compared with it; the dictionary's tokens too. Neither appears without them.
literal_count(F, C, Lit) ->
    length([B || B <- [sift_cov:fuzzer_next(F, C, 64) || _ <- lists:seq(1, 1000)],
                 binary:match(B, Lit) =/= nomatch]).

fuzzer_uses_comparisons_test() ->
    Lit = <<"0123456789abcdef">>,
    Plain = sift_cov:new(16),
    Cmp = sift_cov:new(16, true),
    F = sift_cov:fuzzer_new(3, 64),
    true = sift_cov:fuzzer_add(F, <<"xyz">>, <<>>),
    ?assertEqual(0, literal_count(F, Plain, Lit)),
    <<"xy">> = sift_cov:cmp(Cmp, 1, <<"xy">>, [Lit]),
    ?assertEqual(0, literal_count(F, Plain, Lit)),
    ?assert(literal_count(F, Cmp, Lit) > 20),
    <<"xyz">> = sift_cov:search(Cmp, 2, <<"xyz">>, [<<"needle-needle">>]),
    ?assert(literal_count(F, Cmp, <<"needle-needle">>) > 5),
    ok = sift_cov:fuzzer_dict(F, "d", "t=\"dictionary-token\"\n"),
    ?assert(literal_count(F, Plain, <<"dictionary-token">>) > 20).

%% Under value_profile a comparison's distance is a feature: closer operands are new.
value_profile_test() ->
    C = sift_cov:new(16, value_profile),
    S = sift_cov:snapshot_new(C),
    F = sift_cov:fuzzer_new(1, 16),
    Judge = fun(V) -> _ = sift_cov:cmp(C, 9, V, [<<"abcd">>]), sift_cov:fuzzer_judge(F, S, C, V) end,
    ?assertMatch({new_edge, _}, Judge(<<"xxxx">>)),
    ?assertEqual(nothing, Judge(<<"yyyy">>)),
    ?assertMatch({new_edge, _}, Judge(<<"abxx">>)),
    ?assertEqual(nothing, Judge(<<"abyy">>)),
    P = sift_cov:new(16, true),
    PS = sift_cov:snapshot_new(P),
    _ = sift_cov:cmp(P, 9, <<"xxxx">>, [<<"abcd">>]),
    ?assertEqual(nothing, sift_cov:fuzzer_judge(F, PS, P, <<"q">>)).

write_atomic_test() ->
    Dir = filename:join(os:getenv("TMPDIR", "/tmp"), "sift_cov_tests." ++ os:getpid()),
    ok = filelib:ensure_dir(filename:join(Dir, "x")),
    Path = filename:join(Dir, "f"),
    ?assertEqual(ok, sift_cov:write_atomic(Path, <<"one">>)),
    ?assertEqual(ok, sift_cov:write_atomic(Path, <<"two">>)),
    ?assertEqual({ok, <<"two">>}, file:read_file(Path)),
    ?assertEqual({ok, ["f"]}, file:list_dir(Dir)),
    ?assertMatch({error, <<_, _/binary>>}, sift_cov:write_atomic(filename:join(Path, "g"), <<>>)),
    ok = file:delete(Path),
    ok = file:del_dir(Dir),
    ?assertEqual(<<"da39a3ee5e6b4b0d3255bfef95601890afd80709">>, sift_cov:sha1(<<>>)).
