%% @doc A small coverage-guided fuzz loop on sift_cov: a corpus, random byte mutations, and a
%% snapshot that keeps the inputs that reach something new.
%%
%% run/3 fuzzes in the calling process. run_parallel/4 runs several workers in this VM, each
%% with a context of its own; they share one snapshot (so a new probe is new to exactly one of
%% them) and pass the inputs they keep on to each other.
%%
%%   erl -noshell -pa build/erlang -eval 'sift_fuzz:demo(), halt().'
-module(sift_fuzz).

-export([run/3, run_parallel/4, mutate/2, trace/3, demo/0]).

-define(PROBES, 65536).

-type target() :: fun((binary()) -> term()).
-type crash() :: {error | exit | throw, term(), list()}.
-type result() :: {crash, binary(), crash(), map()} | {done, map()}.

%% @doc Fuzzes Target from Seeds. Options: seed (rand seed, {1, 2, 3}), iterations (100000),
%% max_len (64), probes (the size of the instrumented modules' id space, 65536).
-spec run(target(), [binary()], map()) -> result().
run(Target, Seeds, Opts) ->
    Snap = sift_cov:snapshot_new(maps:get(probes, Opts, ?PROBES)),
    fuzz(Target, Seeds, Snap, [], Opts).

%% @doc Fuzzes with Workers processes at once; the first crash found ends them all. Worker K
%% seeds its generator with the seed option's third element plus K.
-spec run_parallel(pos_integer(), target(), [binary()], map()) -> result().
run_parallel(Workers, Target, Seeds, Opts) ->
    Snap = sift_cov:snapshot_new(maps:get(probes, Opts, ?PROBES)),
    {A, B, C} = maps:get(seed, Opts, {1, 2, 3}),
    Parent = self(),
    %% Results carry this run's reference: a worker killed after a crash may already have sent
    %% its result, and that stale message must not count in a later run.
    Ref = make_ref(),
    Pids = [begin
                WOpts = Opts#{seed => {A, B, C + K}},
                spawn_link(fun() ->
                                   Peers = receive {sift_peers, Ps} -> Ps -- [self()] end,
                                   Parent ! {sift_result, Ref, self(),
                                             fuzz(Target, Seeds, Snap, Peers, WOpts)}
                           end)
            end || K <- lists:seq(1, Workers)],
    [P ! {sift_peers, Pids} || P <- Pids],
    collect(Ref, Pids, #{execs => 0, corpus => 0}).

collect(_Ref, [], Stats) ->
    {done, Stats};
collect(Ref, Pids, Stats) ->
    receive
        {sift_result, Ref, Pid, {crash, _, _, _} = Crash} ->
            [begin unlink(P), exit(P, kill) end || P <- Pids, P =/= Pid],
            Crash;
        {sift_result, Ref, Pid, {done, #{execs := E, corpus := N}}} ->
            #{execs := E0, corpus := N0} = Stats,
            collect(Ref, Pids -- [Pid], Stats#{execs => E0 + E, corpus => N0 + N})
    end.

fuzz(Target, Seeds, Snap, Peers, Opts) ->
    rand:seed(exsss, maps:get(seed, Opts, {1, 2, 3})),
    Ctx = sift_cov:new(maps:get(probes, Opts, ?PROBES)),
    Old = sift_cov:set_ctx(Ctx),
    try
        Corpus = lists:foldl(fun(S, Acc) ->
                                     _ = sift_erl:execute(Target, S),
                                     _ = sift_cov:check_and_advance(Snap, Ctx),
                                     add(S, Acc)
                             end, #{}, Seeds),
        St = #{target => Target, snap => Snap, ctx => Ctx, peers => Peers,
               max_len => maps:get(max_len, Opts, 64),
               iterations => maps:get(iterations, Opts, 100000)},
        loop(St, Corpus, 0)
    after
        sift_cov:set_ctx(Old),
        sift_cov:release(Ctx)
    end.

loop(#{iterations := Max}, Corpus, I) when I >= Max ->
    {done, #{execs => I, corpus => map_size(Corpus)}};
loop(#{target := Target, snap := Snap, ctx := Ctx} = St, Corpus0, I) ->
    Corpus = receive_peers(Corpus0),
    Input = mutate(pick(Corpus), maps:get(max_len, St)),
    case sift_erl:execute(Target, Input) of
        {crash, Error} ->
            {crash, Input, Error, #{execs => I + 1, corpus => map_size(Corpus)}};
        ok ->
            case sift_cov:check_and_advance(Snap, Ctx) of
                nothing ->
                    loop(St, Corpus, I + 1);
                _New ->
                    [P ! {sift_input, Input} || P <- maps:get(peers, St)],
                    loop(St, add(Input, Corpus), I + 1)
            end
    end.

%% Inputs that peers kept: already folded into the shared snapshot, so no need to run them.
receive_peers(Corpus) ->
    receive {sift_input, Input} -> receive_peers(add(Input, Corpus))
    after 0 -> Corpus
    end.

add(Input, Corpus) -> Corpus#{map_size(Corpus) => Input}.

pick(Corpus) -> maps:get(rand:uniform(map_size(Corpus)) - 1, Corpus).

%% @doc One to three random byte edits of Input, kept within MaxLen bytes.
-spec mutate(binary(), pos_integer()) -> binary().
mutate(Input, MaxLen) ->
    Out = lists:foldl(fun(_, Acc) -> edit(rand:uniform(4), Acc) end, Input,
                      lists:seq(1, rand:uniform(3))),
    binary:part(Out, 0, min(byte_size(Out), MaxLen)).

edit(_, <<>>) ->
    <<(rand:uniform(256) - 1)>>;
edit(1, Bin) ->
    {Pre, <<_, Post/binary>>} = split_at_random(Bin),
    <<Pre/binary, (rand:uniform(256) - 1), Post/binary>>;
edit(2, Bin) ->
    {Pre, <<B, Post/binary>>} = split_at_random(Bin),
    <<Pre/binary, (B bxor (1 bsl (rand:uniform(8) - 1))), Post/binary>>;
edit(3, Bin) ->
    At = rand:uniform(byte_size(Bin) + 1) - 1,
    <<Pre:At/binary, Post/binary>> = Bin,
    <<Pre/binary, (rand:uniform(256) - 1), Post/binary>>;
edit(4, Bin) ->
    {Pre, <<_, Post/binary>>} = split_at_random(Bin),
    <<Pre/binary, Post/binary>>.

split_at_random(Bin) ->
    At = rand:uniform(byte_size(Bin)) - 1,
    <<Pre:At/binary, Post/binary>> = Bin,
    {Pre, Post}.

%% @doc The source lines of Modules that Target reaches on Input: each probe it hit, once.
-spec trace(target(), binary(), [module()]) -> [sift_cov:probe()].
trace(Target, Input, Modules) ->
    Probes = sift_cov:probes(Modules),
    Size = lists:max([maps:get(size, M:'$sift_probes'()) || M <- Modules]),
    Ctx = sift_cov:new(Size),
    Old = sift_cov:set_ctx(Ctx),
    try
        _ = sift_erl:execute(Target, Input),
        [P || {_Id, _Buckets, Ps} <- sift_cov:covered(sift_cov:take(Ctx), Probes), P <- Ps]
    after
        sift_cov:set_ctx(Old),
        sift_cov:release(Ctx)
    end.

%% @doc Fuzzes sift_example_tlv until it crashes, and prints the input and the lines it took.
demo() ->
    T0 = erlang:monotonic_time(millisecond),
    Target = fun sift_example_tlv:parse/1,
    case run(Target, [<<"hello world">>], #{iterations => 1000000}) of
        {crash, Input, {Class, Reason, _}, #{execs := N, corpus := C}} ->
            Ms = erlang:monotonic_time(millisecond) - T0,
            io:format("crash after ~b executions (~b ms, corpus ~b): ~p:~p~ninput: ~p~n",
                      [N, Ms, C, Class, Reason, Input]),
            [io:format("  ~s.erl:~b  ~s/~b  ~s~n", [M, Line, F, A, Kind])
             || {M, {F, A}, Line, Kind} <- trace(Target, Input, [sift_example_tlv])],
            ok;
        {done, Stats} ->
            io:format("no crash: ~p~n", [Stats]),
            error
    end.
