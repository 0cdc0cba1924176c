%% @doc Probe hits and per-execution novelty checks, sift_cov's NIF against an ETS path like
%% efz's, on one instrumented module compiled several ways; then sift_erl's executions per
%% second with 1 and 2 workers in this VM on an OTP module instrumented from its beam. Run
%% through bench/erlang.
-module(erlang_bench).

-export([main/1, ets_hit/2, count_hit/2, noop_hit/2]).

-nifs([noop_hit/2]).
-on_load(init/0).

-define(TARGET, sift_example_tlv).
-define(PROBES, 65536).
-define(INPUTS, 1000).
-define(PASSES, 30).
%% The worker figures: seconds of each campaign, pairs of campaigns (1 and 2 workers), and
%% seconds of each spinning run. A campaign's rate falls over its first seconds, as its inputs
%% grow (one worker on uri_string: 143K execs/s over 2 s, 100K over 8 s, 74K over 20 s), so runs
%% of a few seconds time the ramp, where the side that went further runs longer inputs.
-define(WORKER_SECONDS, 20).
-define(WORKER_PAIRS, 3).
-define(SPIN_SECONDS, 2).

init() ->
    erlang:load_nif(filename:join(filename:dirname(code:which(?MODULE)), "erlang_bench_nif"), 0).

%% The probe of the floor build: a NIF that does nothing, what any probe calling a NIF costs.
noop_hit(_Ctx, _Id) -> erlang:nif_error(nif_not_loaded).

%% The probe of the ETS build: efz's, an Erlang function that records the probe in a table.
ets_hit(Tab, Id) ->
    ets:insert(Tab, {Id}),
    ok.

%% The probe of the counting build, which tells how many probes an execution hits.
count_hit(Ref, _Id) ->
    counters:add(Ref, 1, 1).

main([Source, Runs]) ->
    Builds = #{plain => compile(Source, []),
               %% Probes only, as the other builds: comparisons are a fuzzer's cost, not a probe's.
               nif => compile(Source, [{parse_transform, sift_cov_transform},
                                       {sift_cov_cmp, false}]),
               ets => compile(Source, [{parse_transform, sift_cov_transform},
                                       {sift_cov_hit, {?MODULE, ets_hit}}]),
               noop => compile(Source, [{parse_transform, sift_cov_transform},
                                        {sift_cov_hit, {?MODULE, noop_hit}}]),
               count => compile(Source, [{parse_transform, sift_cov_transform},
                                         {sift_cov_hit, {?MODULE, count_hit}}])},
    rand:seed(exsss, {17, 18, 19}),
    Inputs = [input() || _ <- lists:seq(1, ?INPUTS)],
    Hits = count_hits(maps:get(count, Builds), Inputs),
    Results = [run_once(Builds, Inputs) || _ <- lists:seq(1, list_to_integer(Runs))],
    report(Results, Hits, length(Inputs)),
    workers(),
    halt().

compile(Source, Opts) ->
    {ok, ?TARGET, Bin} = compile:file(Source, [binary, report_errors | Opts]),
    Bin.

load(Bin) ->
    code:purge(?TARGET),
    {module, ?TARGET} = code:load_binary(?TARGET, "sift_example_tlv.erl", Bin).

%% A well-formed input of 0 to 24 records of the types that do not crash.
input() ->
    Records = [record(lists:nth(rand:uniform(4), [$T, $N, $X, $A]))
               || _ <- lists:seq(1, rand:uniform(25) - 1)],
    iolist_to_binary(["SF", rand:uniform(2) | Records]).

record($N) -> [$N, 2, rand:uniform(256) - 1, rand:uniform(256) - 1];
record(Type) ->
    Len = rand:uniform(8),
    [Type, Len, [rand:uniform(256) - 1 || _ <- lists:seq(1, Len)]].

count_hits(Bin, Inputs) ->
    load(Bin),
    Ref = counters:new(1, []),
    put('$sift_ctx', Ref),
    [execute(I) || I <- Inputs],
    erase('$sift_ctx'),
    counters:get(Ref, 1).

execute(Input) ->
    try ?TARGET:parse(Input) catch error:_ -> crash end.

%% One run: each build in turn, every input ?PASSES times. Probes are timed by whole passes,
%% with and without them; the check after an execution, which costs about as much as reading
%% the clock, by the median of clocked checks less the median of empty clocked intervals.
run_once(Builds, Inputs) ->
    Ctx = sift_cov:new(?PROBES),
    Snap = sift_cov:snapshot_new(Ctx),
    Tab = ets:new(efz_hits, [set, public]),
    put(efz_global, sets:new([{version, 2}])),
    Nif = fun() -> sift_cov:check_and_advance(Snap, Ctx) end,
    Ets = fun() -> ets_check(Tab) end,
    #{plain := Plain, nif := NifBuild, noop := Noop, ets := EtsBuild} = Builds,
    R = #{plain => timed(Plain, undefined, Inputs, none),
          nif_run => timed(NifBuild, Ctx, Inputs, none),
          noop_run => timed(Noop, Ctx, Inputs, none),
          nif => timed(NifBuild, Ctx, Inputs, Nif),
          nif_check => clocked(NifBuild, Ctx, Inputs, Nif),
          ets_run => timed(EtsBuild, Tab, Inputs, none),
          ets => timed(EtsBuild, Tab, Inputs, Ets),
          ets_check => clocked(EtsBuild, Tab, Inputs, Ets)},
    ets:delete(Tab),
    sift_cov:release(Ctx),
    R.

%% efz's step after a test case: the hits as a set, compared with (and merged into) the
%% global set, and the table emptied for the next one.
ets_check(Tab) ->
    Hits = sets:from_list([Id || {Id} <- ets:tab2list(Tab)], [{version, 2}]),
    ets:delete_all_objects(Tab),
    Global = get(efz_global),
    case sets:is_subset(Hits, Global) of
        true -> nothing;
        false -> put(efz_global, sets:union(Global, Hits)), new_edge
    end.

%% Without a check the counters saturate and the table keeps its keys, which costs a probe
%% the same.
timed(Bin, Ctx, Inputs, Check) ->
    load(Bin),
    put('$sift_ctx', Ctx),
    %% A pass to warm up and to fill the global state: the timed passes are the steady state
    %% of a campaign, where almost no execution finds anything.
    pass(Inputs, Check),
    T0 = erlang:monotonic_time(nanosecond),
    lists:foreach(fun(_) -> pass(Inputs, Check) end, lists:seq(1, ?PASSES)),
    T1 = erlang:monotonic_time(nanosecond),
    erase('$sift_ctx'),
    (T1 - T0) / ?PASSES.

pass([], _) -> ok;
pass([Input | Rest], none) -> execute(Input), pass(Rest, none);
pass([Input | Rest], Check) -> execute(Input), Check(), pass(Rest, Check).

clocked(Bin, Ctx, Inputs, Check) ->
    load(Bin),
    put('$sift_ctx', Ctx),
    pass(Inputs, Check),
    Samples = lists:append([clocked_pass(Inputs, Check, []) || _ <- lists:seq(1, ?PASSES)]),
    erase('$sift_ctx'),
    {Empty, Checks} = lists:unzip(Samples),
    float(median(Checks) - median(Empty)).

clocked_pass([], _, Acc) ->
    Acc;
clocked_pass([Input | Rest], Check, Acc) ->
    execute(Input),
    T0 = erlang:monotonic_time(nanosecond),
    T1 = erlang:monotonic_time(nanosecond),
    Check(),
    T2 = erlang:monotonic_time(nanosecond),
    clocked_pass(Rest, Check, [{T1 - T0, T2 - T1} | Acc]).

median(Xs) -> lists:nth((length(Xs) + 1) div 2, lists:sort(Xs)).

%% Each figure is computed per run, then the median over the runs is taken.
report(Results, Hits, N) ->
    Med = fun(F) -> median([F(R) || R <- Results]) end,
    Hit = fun(B) -> Med(fun(R) -> (maps:get(B, R) - maps:get(plain, R)) / Hits end) end,
    Check = fun(B) -> Med(fun(R) -> maps:get(B, R) end) end,
    Total = fun(B) -> Med(fun(R) -> maps:get(B, R) / N end) end,
    io:format("target ~s: ~b inputs, ~.1f probe hits per execution; context of ~b probes; "
              "median of ~b runs of ~b passes~n~n",
              [?TARGET, N, Hits / N, ?PROBES, length(Results), ?PASSES]),
    io:format("~-40s ~10s ~10s ~8s~n", ["ns", "sift NIF", "ETS", "ETS/NIF"]),
    Row = fun(Name, X, Y) -> io:format("~-40s ~10.1f ~10.1f ~7.1fx~n", [Name, X, Y, Y / X]) end,
    {HitNif, HitEts} = {Hit(nif_run), Hit(ets_run)},
    {CheckNif, CheckEts} = {Check(nif_check), Check(ets_check)},
    Row("per probe hit", HitNif, HitEts),
    io:format("~-40s ~10.1f~n", ["per probe hit, a NIF doing nothing", Hit(noop_run)]),
    Row("per execution: check after it (median)", CheckNif, CheckEts),
    Row("per execution: run + check", Total(nif), Total(ets)),
    io:format("~-40s ~10.1f~n", ["per execution, uninstrumented", Total(plain)]),
    Goal = fun(X, Y) -> case Y / X >= 10 of true -> "met"; false -> "not met" end end,
    io:format("~ngoal, NIF at least 10x cheaper: per hit ~s, per check ~s~n",
              [Goal(HitNif, HitEts), Goal(CheckNif, CheckEts)]).

%% Total executions per second of sift_erl campaigns with 1 and 2 workers, from the same seed on
%% uri_string (instrumented from its beam once, before), each campaign given the same wall time
%% (as a campaign under -max_total_time is) and timed whole: the workers' sharing of one VM, one
%% snapshot and each other's inputs included. This machine's speed drifts by tens of percent
%% from one second to the next, so the figure is the median of ratios of runs side by side, in
%% pairs whose order alternates (1 then 2 workers, then 2 then 1), each pair beside a pair of
%% spinning runs that tells what the machine gave at that moment.
workers() ->
    {Target, Modules} = sift_otp_targets:target(uri_string),
    [ok = sift_beam:instrument(M) || M <- Modules],
    Rate = fun(W) ->
                   T0 = erlang:monotonic_time(nanosecond),
                   {done, #{execs := E}} =
                       sift_erl:fuzz(Target, #{max_total_time => ?WORKER_SECONDS, workers => W,
                                               seed => 1, verbose => false}),
                   E / ((erlang:monotonic_time(nanosecond) - T0) / 1.0e9)
           end,
    Pair = fun(F, K) when K rem 2 =:= 0 -> One = F(1), {One, F(2)};
              (F, _) -> Two = F(2), {F(1), Two}
           end,
    Pairs = [{Pair(Rate, K), Pair(fun spin/1, K)} || K <- lists:seq(1, ?WORKER_PAIRS)],
    [sift_beam:restore(M) || M <- Modules],
    Ratio = median([B / A || {{A, B}, _} <- Pairs]),
    {ok, Load} = file:read_file("/proc/loadavg"),
    io:format("~nsift_erl on uri_string (instrumented from its beam): ~b pairs of ~b-second "
              "campaigns; ~b schedulers, load average ~s~n",
              [?WORKER_PAIRS, ?WORKER_SECONDS, erlang:system_info(schedulers_online),
               hd(string:split(Load, " "))]),
    io:format("~-40s ~10b~n~-40s ~10b~n~-40s ~10.2fx~n",
              ["execs/s, 1 worker (median)", round(median([A || {{A, _}, _} <- Pairs])),
               "execs/s, 2 workers (median)", round(median([B || {{_, B}, _} <- Pairs])),
               "2 workers / 1, median of the pairs", Ratio]),
    io:format("pairs (execs/s of 1 and 2 workers; spinning 2/1): ~s~n",
              [lists:join(", ", [io_lib:format("~b ~b ~.2fx", [round(A), round(B), S2 / S1])
                                 || {{A, B}, {S1, S2}} <- Pairs])]),
    io:format("the machine's share now: 2 processes spinning do ~.2fx the work of 1 (median)~n",
              [median([S2 / S1 || {_, {S1, S2}} <- Pairs])]),
    io:format("workers' ratio over the spinning ratio, median of the pairs: ~.2f (1.00: as far "
              "as the machine lets anything scale)~n",
              [median([B / A / (S2 / S1) || {{A, B}, {S1, S2}} <- Pairs])]),
    io:format("goal, 2 workers at least 1.8x of 1: ~s~n",
              [case Ratio >= 1.8 of true -> "met"; false -> "not met" end]).

%% What the machine gives this VM now: loop iterations per second of P processes that only
%% count, the ceiling of any scaling of P workers. They count for seconds, not for a fixed
%% number, so that the moment the VM takes to move one of them to a free scheduler is noise.
spin(P) ->
    Self = self(),
    Deadline = erlang:monotonic_time(millisecond) + ?SPIN_SECONDS * 1000,
    [spawn_link(fun() -> Self ! {spun, count_until(Deadline, 0)} end) || _ <- lists:seq(1, P)],
    lists:sum([receive {spun, N} -> N end || _ <- lists:seq(1, P)]) / ?SPIN_SECONDS.

count_until(Deadline, N) ->
    case erlang:monotonic_time(millisecond) >= Deadline of
        true -> N;
        false -> count_until(Deadline, countdown(100000, N))
    end.

countdown(0, N) -> N;
countdown(K, N) -> countdown(K - 1, N + 1).
