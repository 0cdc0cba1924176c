%% @doc The example fuzz loop finds the bug planted in sift_example_tlv.
-module(sift_fuzz_tests).

-include_lib("eunit/include/eunit.hrl").

-define(SEEDS, [<<"hello world">>]).
-define(LIMIT, 500000).

target() -> fun sift_example_tlv:parse/1.

finds_planted_bug_test_() ->
    {timeout, 60,
     fun() ->
             Opts = #{seed => {1, 2, 3}, iterations => ?LIMIT},
             {crash, Input, {error, badarith, _}, #{execs := N}} =
                 sift_fuzz:run(target(), ?SEEDS, Opts),
             ?assertMatch(<<"SF", 2, _/binary>>, Input),
             ?assert(N < ?LIMIT),
             %% A fixed seed replays the same campaign.
             ?assertMatch({crash, Input, _, #{execs := N}}, sift_fuzz:run(target(), ?SEEDS, Opts))
     end}.

parallel_workers_find_planted_bug_test_() ->
    {timeout, 60,
     fun() ->
             {crash, Input, {error, badarith, _}, _} =
                 sift_fuzz:run_parallel(4, target(), ?SEEDS, #{iterations => ?LIMIT}),
             ?assertError(badarith, sift_example_tlv:parse(Input))
     end}.

%% Without a bug the loop runs its iterations, keeping only inputs that reached something new.
no_crash_runs_out_test() ->
    {done, #{execs := 2000, corpus := Corpus}} =
        sift_fuzz:run(fun(B) -> byte_size(B) end, ?SEEDS, #{iterations => 2000}),
    ?assertEqual(1, Corpus),
    {done, #{execs := 4000}} =
        sift_fuzz:run_parallel(2, fun(B) -> byte_size(B) end, ?SEEDS, #{iterations => 2000}).

mutate_keeps_length_bound_test() ->
    rand:seed(exsss, {4, 5, 6}),
    Outs = [sift_fuzz:mutate(<<"0123456789">>, 12) || _ <- lists:seq(1, 2000)],
    ?assert(lists:all(fun(B) -> byte_size(B) =< 12 end, Outs)),
    ?assert(length(lists:usort(Outs)) > 1000),
    ?assert(byte_size(sift_fuzz:mutate(<<>>, 1)) =< 1).

%% The lines a crash went through, named from the probe table.
trace_names_lines_test() ->
    Trace = sift_fuzz:trace(target(), <<"SF", 2, $A, 0>>, [sift_example_tlv]),
    Funs = [F || {sift_example_tlv, F, _, _} <- Trace],
    ?assertEqual([{parse, 1}, {magic, 1}, {version, 2}, {records, 3}, {records, 3}, {record, 3},
                  {average, 1}], Funs),
    ?assert(lists:all(fun({_, _, Line, _}) -> Line > 0 end, Trace)).
