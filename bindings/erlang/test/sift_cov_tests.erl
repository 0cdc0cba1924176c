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
