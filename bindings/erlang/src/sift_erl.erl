%% @doc sift for Erlang: fuzzes a function of one binary with sift's engine, as libFuzzer fuzzes
%% LLVMFuzzerTestOneInput. Any exception the function raises is a crash.
%%
%%   sift_erl:fuzz(fun my_parser:parse/1, #{max_total_time => 60, corpus => "corpus"})
%%
%% Workers run in this VM, each with its own context, corpus and mutator (sift_cov's fuzzer
%% calls: sift's corpus, scheduler and mutators with dictionaries and comparison operands); they
%% share one snapshot, so what is new to one is new to none of the others, and pass on the inputs
%% they keep. Options (docs/erlang.md has the table): runs, max_total_time, workers, corpus, dict,
%% seed, max_len, len_control, value_profile, artifact_prefix, instrument, probes, verbose.
-module(sift_erl).

-export([fuzz/2, reproduce/2, reproduce/3, execute/2]).

-define(PROBES, 65536).
%% The first input length limit, and the executions without a new input, per bit of the limit,
%% after which it doubles.
-define(FIRST_LIMIT, 16).
-define(LEN_CONTROL, 1000).
-define(PULSE_MS, 1000).
%% Where a worker keeps the input it runs, for the parent to read when it hangs.
-define(INPUT_KEY, '$sift_erl_input').

-type target() :: fun((binary()) -> term()).
-type crash() :: {error | exit | throw, term(), list()}.
-type result() :: {crash, #{input := binary(), file := string(), error := crash(),
                            execs := non_neg_integer()}}
                | {timeout, #{input := binary(), file := string(), stack := list(),
                              execs := non_neg_integer()}}
                | {done, #{execs := non_neg_integer(), corpus := non_neg_integer()}}
                | {error, term()}.

-export_type([target/0, crash/0, result/0]).

%% @doc Fuzzes Target until it crashes or a limit (runs, max_total_time) is reached.
-spec fuzz(target(), map()) -> result().
fuzz(Target, Opts0) when is_function(Target, 1), is_map(Opts0) ->
    Opts = maps:merge(#{workers => 1, max_len => 4096, len_control => true, timeout => 1200,
                        value_profile => false, artifact_prefix => "./",
                        probes => ?PROBES, verbose => true, instrument => [],
                        seed => erlang:unique_integer([positive]) bxor os:system_time()},
                      Opts0),
    case [{K, V} || {K, V} <- maps:to_list(Opts), not valid(K, V)] of
        [] -> instrumented(Target, Opts);
        [Bad | _] -> {error, {bad_option, Bad}}
    end.

%% An option fuzz/2 can use: anything else is an error of the call, never a worker's crash.
valid(workers, N) -> is_integer(N) andalso N >= 1;
valid(K, N) when K =:= max_len; K =:= probes -> is_integer(N) andalso N >= 1 andalso N =< 1 bsl 20;
valid(runs, N) -> is_integer(N) andalso N >= 0;
valid(max_total_time, S) -> is_number(S) andalso S >= 0;
valid(timeout, S) -> S =:= infinity orelse (is_number(S) andalso S > 0);
valid(seed, N) -> is_integer(N) andalso N >= 0 andalso N < 1 bsl 64;
valid(K, B) when K =:= len_control; K =:= value_profile; K =:= verbose -> is_boolean(B);
valid(K, Path) when K =:= corpus; K =:= dict; K =:= artifact_prefix -> io_lib:char_list(Path);
valid(instrument, Ms) -> is_list(Ms) andalso lists:all(fun is_atom/1, Ms);
valid(_, _) -> false.

instrumented(Target, Opts) ->
    case instrument(maps:get(instrument, Opts), []) of
        {ok, Done} ->
            try
                setup(Target, Opts)
            after
                [sift_beam:restore(M) || M <- Done]
            end;
        {error, _} = E ->
            E
    end.

instrument([], Done) ->
    {ok, Done};
instrument([M | Ms], Done) ->
    case sift_beam:instrument(M) of
        ok -> instrument(Ms, [M | Done]);
        {error, _} = E -> [sift_beam:restore(D) || D <- Done], E
    end.

%% @doc Runs Target once on the input in File: ok, or the crash.
-spec reproduce(target(), file:filename()) -> ok | {crash, crash()} | {error, term()}.
reproduce(Target, File) ->
    reproduce(Target, File, #{}).

%% @doc The same with a timeout (#{timeout => Seconds}): then Target runs in a process of its
%% own, and {timeout, Stack} says where it was when the time ran out.
-spec reproduce(target(), file:filename(), map()) ->
          ok | {crash, crash()} | {timeout, list()} | {error, term()}.
reproduce(Target, File, Opts) ->
    case file:read_file(File) of
        {ok, Input} -> run_once(Target, Input, maps:get(timeout, Opts, infinity));
        {error, Why} -> {error, {File, Why}}
    end.

run_once(Target, Input, infinity) ->
    case execute(Target, Input) of
        ok -> ok;
        {crash, Error} -> {crash, Error}
    end;
run_once(Target, Input, T) ->
    Self = self(),
    {Pid, Mon} = spawn_monitor(fun() -> Self ! {self(), run_once(Target, Input, infinity)} end),
    receive
        {Pid, Result} ->
            erlang:demonitor(Mon, [flush]),
            Result
    after round(T * 1000) ->
            {current_stacktrace, Stack} = process_info(Pid, current_stacktrace),
            erlang:demonitor(Mon, [flush]),
            exit(Pid, kill),
            {timeout, Stack}
    end.

setup(Target, Opts) ->
    case {seeds(maps:get(corpus, Opts, undefined)), dict(maps:get(dict, Opts, undefined))} of
        {{error, _} = E, _} -> E;
        {_, {error, _} = E} -> E;
        {{ok, Seeds}, {ok, Dict}} -> run(Target, Seeds, Dict, Opts)
    end.

seeds(undefined) ->
    {ok, []};
seeds(Dir) ->
    case file:list_dir(Dir) of
        {ok, Names} ->
            {ok, [B || N <- lists:sort(Names), hd(N) =/= $.,
                       {ok, B} <- [file:read_file(filename:join(Dir, N))]]};
        {error, enoent} ->
            case file:make_dir(Dir) of
                ok -> {ok, []};
                {error, Why} -> {error, {Dir, Why}}
            end;
        {error, Why} ->
            {error, {Dir, Why}}
    end.

dict(undefined) ->
    {ok, undefined};
%% Parsed once here, so that a bad dictionary is an error of fuzz/2 rather than of every worker.
dict(File) ->
    case file:read_file(File) of
        {ok, Text} ->
            case sift_cov:fuzzer_dict(sift_cov:fuzzer_new(0, 1), File, Text) of
                ok -> {ok, {File, Text}};
                {error, _} = E -> E
            end;
        {error, Why} ->
            {error, {File, Why}}
    end.

run(Target, Seeds, Dict, Opts) ->
    Workers = maps:get(workers, Opts),
    Seed = maps:get(seed, Opts),
    %% The snapshot takes its domains (edges, comparisons) from a context like the workers'.
    Probe = new_ctx(Opts),
    Snap = sift_cov:snapshot_new(Probe),
    sift_cov:release(Probe),
    %% One slot per worker: the total is their sum, and a slot that stops moving is a hang.
    Execs = counters:new(Workers, [write_concurrency]),
    Budget = budget(maps:get(runs, Opts, infinity)),
    Parent = self(),
    Ref = make_ref(),
    status(Opts, "INFO: Seed: ~b~nINFO: ~b workers, ~b seed inputs~n", [Seed, Workers, length(Seeds)]),
    Pids = [spawn_link(fun() ->
                               Peers = receive {Ref, peers, Ps} -> Ps -- [self()] end,
                               worker(#{target => Target, snap => Snap, execs => Execs,
                                        slot => K + 1, parent => Parent, ref => Ref, peers => Peers,
                                        seed => Seed + K, dict => Dict,
                                        budget => Budget, opts => Opts},
                                      Seeds)
                       end) || K <- lists:seq(0, Workers - 1)],
    [P ! {Ref, peers, Pids} || P <- Pids],
    Now = erlang:monotonic_time(millisecond),
    Timer = case maps:get(max_total_time, Opts, infinity) of
                infinity -> undefined;
                S -> erlang:send_after(round(S * 1000), self(), {Ref, time_up})
            end,
    %% Under a timeout, the parent looks at the workers' progress every second.
    Ticker = case maps:get(timeout, Opts) of
                 infinity -> undefined;
                 _ -> {ok, TRef} = timer:send_interval(1000, {Ref, tick}), TRef
             end,
    Slots = maps:from_list(lists:zip(Pids, lists:seq(1, Workers))),
    Result = collect(#{ref => Ref, pids => Pids, snap => Snap, execs => Execs, opts => Opts,
                       start => Now, corpus => 0, bytes => 0, next_pulse => 2,
                       slots => Slots, seen => #{}}),
    Timer =:= undefined orelse erlang:cancel_timer(Timer),
    Ticker =:= undefined orelse timer:cancel(Ticker),
    reap(Pids, Ref),
    Result.

%% A worker whose executions have not moved for the timeout: {hung, Pid, the input it runs}
%% (which it keeps in its dictionary while it runs it); else {ok, St} with each worker's count
%% and the time it last moved.
hung(#{pids := Pids, slots := Slots, execs := Execs, seen := Seen0, opts := #{timeout := T}} = St) ->
    Now = erlang:monotonic_time(millisecond),
    Seen = maps:from_list(
             [{P, case {maps:get(P, Seen0, none), counters:get(Execs, maps:get(P, Slots))} of
                      {{N, Since}, N} -> {N, Since};
                      {_, N} -> {N, Now}
                  end} || P <- Pids]),
    case [P || P <- Pids, Now - element(2, maps:get(P, Seen)) >= T * 1000] of
        [Pid | _] ->
            {dictionary, Dict} = process_info(Pid, dictionary),
            {hung, Pid, proplists:get_value(?INPUT_KEY, Dict, <<>>)};
        [] ->
            {ok, St#{seen := Seen}}
    end.

%% The run budget, which the workers draw from one execution at a time, so that none of them
%% stops while another still has runs left: {Runs, an atomic count of those taken}.
budget(infinity) -> infinity;
budget(Runs) -> {Runs, atomics:new(1, [])}.

%% Takes one run of the budget: false when it is spent.
take(infinity) -> true;
take({Runs, Taken}) -> atomics:add_get(Taken, 1, 1) =< Runs.

%% A seed input runs whatever the budget, and counts against it.
spend(#{budget := infinity}) -> ok;
spend(#{budget := {_, Taken}}) -> atomics:add(Taken, 1, 1).

collect(#{pids := []} = St) ->
    finish(St);
collect(#{ref := Ref, pids := Pids} = St) ->
    receive
        {Ref, new, Input, At} ->
            collect(new_input(Input, At, St));
        {Ref, crash, _Pid, Input, Error} ->
            crash(Input, Error, St);
        {Ref, done, Pid} ->
            collect(St#{pids := Pids -- [Pid]});
        {Ref, time_up} ->
            finish(St#{pids := []});
        {Ref, tick} ->
            case hung(St) of
                {hung, Pid, Input} -> timeout(Pid, Input, St);
                {ok, St1} -> collect(pulse(St1))
            end
    after ?PULSE_MS ->
            collect(pulse(St))
    end.

%% Ends the workers still running, then drops whatever they or the timer sent that is still
%% queued, so that the caller's mailbox is left as it was: a worker's 'DOWN' comes after all
%% that it sent, and its link is gone with any exit signal it gave.
reap(Pids, Ref) ->
    Mons = [begin M = erlang:monitor(process, P), unlink(P), exit(P, kill), M end || P <- Pids],
    [receive {'DOWN', M, process, _, _} -> ok end || M <- Mons],
    [receive {'EXIT', P, _} -> ok after 0 -> ok end || P <- Pids],
    flush(Ref).

flush(Ref) ->
    receive
        Msg when element(1, Msg) =:= Ref -> flush(Ref)
    after 0 -> ok
    end.

%% At: the executions and coverage when the worker kept it, since the line may be printed later.
new_input(Input, At, #{opts := Opts, corpus := N, bytes := B} = St) ->
    case maps:get(corpus, Opts, undefined) of
        undefined -> ok;
        Dir -> write(filename:join(Dir, sift_cov:sha1(Input)), Input)
    end,
    St1 = St#{corpus := N + 1, bytes := B + byte_size(Input)},
    status_line("NEW", At, St1),
    St1.

%% A line at powers of two of executions, as libFuzzer's pulse, each second that no new input
%% keeps the status lines coming (or at the timeout's check).
pulse(#{execs := Execs, next_pulse := Next} = St) ->
    case total(Execs) of
        E when E >= Next ->
            Count = sift_cov:count(maps:get(snap, St)),
            status_line("pulse", {E, Count}, St),
            Count =:= {0, 0} andalso
                status(maps:get(opts, St), "WARNING: no probe reached so far: is the code "
                       "instrumented (sift_cov_transform, or the instrument option)?~n", []),
            St#{next_pulse := 2 * E};
        _ -> St
    end.

finish(#{execs := Execs, corpus := N} = St) ->
    E = total(Execs),
    status_line("DONE", {E, sift_cov:count(maps:get(snap, St))}, St),
    {done, #{execs => E, corpus => N}}.

%% #1024	NEW    cov: 31 ft: 70 corp: 12/180b exec/s: 51200 rss: 42Mb
status_line(_What, _At, #{opts := #{verbose := false}}) ->
    ok;
status_line(What, {E, {Cov, Ft}}, #{start := T0, corpus := N, bytes := B}) ->
    Ms = max(1, erlang:monotonic_time(millisecond) - T0),
    io:format(standard_error, "#~b\t~s cov: ~b ft: ~b corp: ~b/~bb exec/s: ~b rss: ~bMb~n",
              [E, string:pad(What, 6), Cov, Ft, N, B, E * 1000 div Ms,
               erlang:memory(total) div (1 bsl 20)]).

status(Opts, Fmt, Args) ->
    maps:get(verbose, Opts) andalso io:format(standard_error, Fmt, Args).

crash(Input, {Class, Reason, Stack} = Error, St) ->
    artifact(crash, Input, io_lib:format("~p:~0p", [Class, Reason]), Stack, #{error => Error}, St).

%% The worker is killed with the others (reap/2); its stack says where it was.
timeout(Pid, Input, #{opts := #{timeout := T}} = St) ->
    Stack = case process_info(Pid, current_stacktrace) of
                {current_stacktrace, S} -> S;
                undefined -> []
            end,
    artifact(timeout, Input, io_lib:format("timeout after ~p seconds", [T]), Stack,
             #{stack => Stack}, St).

%% Writes Kind-<sha1> and reports it as libFuzzer does.
artifact(Kind, Input, What, Stack, Extra, #{opts := Opts, execs := Execs}) ->
    File = maps:get(artifact_prefix, Opts) ++ atom_to_list(Kind) ++ "-" ++
        binary_to_list(sift_cov:sha1(Input)),
    write(File, Input),
    status(Opts, "==ERROR: sift_erl: ~s~n~s"
           "artifact_prefix='~s'; Test unit written to ~s~nBase64: ~s~n",
           [What, [io_lib:format("    ~0p~n", [F]) || F <- lists:sublist(Stack, 8)],
            maps:get(artifact_prefix, Opts), File, base64:encode(Input)]),
    {Kind, Extra#{input => Input, file => File, execs => total(Execs)}}.

total(Execs) ->
    lists:sum([counters:get(Execs, I) || I <- lists:seq(1, maps:get(size, counters:info(Execs)))]).

write(File, Data) ->
    case sift_cov:write_atomic(File, Data) of
        ok -> ok;
        {error, Why} -> io:format(standard_error, "sift_erl: cannot write ~s: ~s~n", [File, Why])
    end.

new_ctx(#{probes := N, value_profile := VP}) ->
    sift_cov:new(N, case VP of true -> value_profile; false -> true end).

%% A worker: a context of its own (coverage and comparisons), a corpus of its own.
worker(#{opts := Opts, seed := Seed, dict := Dict} = W, Seeds) ->
    process_flag(trap_exit, true),
    Ctx = new_ctx(Opts),
    Fz = sift_cov:fuzzer_new(Seed, maps:get(max_len, Opts)),
    case Dict of
        undefined -> ok;
        {Name, Text} -> ok = sift_cov:fuzzer_dict(Fz, Name, Text)
    end,
    St = W#{ctx => Ctx, fz => Fz},
    lists:foreach(fun(S) -> spend(St), one(St, S) end, Seeds),
    %% A corpus that has nothing yet starts from the empty input, as libFuzzer's does.
    case sift_cov:fuzzer_stats(Fz) of
        {0, _, _, _, _} -> spend(St), one(St, <<>>), sift_cov:fuzzer_add(Fz, <<>>, <<>>);
        _ -> ok
    end,
    MaxLen = maps:get(max_len, Opts),
    Limit = case maps:get(len_control, Opts) of
                true -> min(MaxLen, lists:max([?FIRST_LIMIT | [byte_size(S) || S <- Seeds]]));
                false -> MaxLen
            end,
    loop(St#{limit => Limit}, 0).

%% Length control, as libFuzzer's: inputs start short, and the limit doubles (up to max_len)
%% each time the worker has gone a while without keeping anything, the while growing with the
%% limit's logarithm.
loop(#{budget := Budget, parent := P, ref := Ref} = St, Quiet) ->
    case take(Budget) of
        true -> step(grow(St, Quiet));
        false -> P ! {Ref, done, self()}
    end.

grow(#{limit := Limit, opts := #{max_len := MaxLen}} = St, Quiet) when Limit < MaxLen ->
    case Quiet >= ?LEN_CONTROL * length(integer_to_list(Limit, 2)) of
        true -> {St#{limit := min(MaxLen, 2 * Limit)}, 0};
        false -> {St, Quiet}
    end;
grow(St, Quiet) ->
    {St, Quiet}.

step({#{fz := Fz, ctx := Ctx, limit := Limit} = St, Quiet}) ->
    peers(St),
    case one(St, sift_cov:fuzzer_next(Fz, Ctx, Limit)) of
        kept -> loop(St, 0);
        ok -> loop(St, Quiet + 1)
    end.

%% Runs Input and keeps it when it reached anything new; a crash ends the worker.
one(#{target := Target, fz := Fz, snap := Snap, ctx := Ctx, execs := Execs, slot := Slot,
      parent := P, ref := Ref, peers := Peers, opts := #{verbose := Verbose}}, Input) ->
    put(?INPUT_KEY, Input),
    sift_cov:set_ctx(Ctx),
    R = execute(Target, Input),
    sift_cov:set_ctx(undefined),
    counters:add(Execs, Slot, 1),
    case R of
        {crash, Error} ->
            P ! {Ref, crash, self(), Input, Error},
            receive after infinity -> ok end;
        ok ->
            case sift_cov:fuzzer_judge(Fz, Snap, Ctx, Input) of
                nothing ->
                    ok;
                {_Novelty, Features} ->
                    [Peer ! {Ref, input, Input, Features} || Peer <- Peers],
                    %% The status line's figures, counted only when it is printed.
                    P ! {Ref, new, Input,
                         Verbose andalso {total(Execs), sift_cov:count(Snap)}},
                    kept
            end
    end.

%% Inputs other workers kept (already in the shared snapshot: no need to run them), and
%% anything else that reached this process's mailbox, which the target may have sent it.
peers(#{ref := Ref, fz := Fz, parent := P} = St) ->
    receive
        {Ref, input, Input, Features} -> sift_cov:fuzzer_add(Fz, Input, Features), peers(St);
        {'EXIT', P, _} -> exit(shutdown);
        _ -> peers(St)
    after 0 -> ok
    end.

%% @doc Runs Target on Input once: ok, or the exception it raised as a crash.
-spec execute(target(), binary()) -> ok | {crash, crash()}.
execute(Target, Input) ->
    try Target(Input) of
        _ -> ok
    catch
        Class:Reason:Stack -> {crash, {Class, Reason, Stack}}
    end.
