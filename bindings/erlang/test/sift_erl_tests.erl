%% @doc sift_erl, the front end: finds the planted bugs within run budgets (never timed),
%% writes and reproduces artifacts, keeps a corpus folder, reads dictionaries, stops at its
%% limits, and instruments modules from their beams for a run.
-module(sift_erl_tests).

-include_lib("eunit/include/eunit.hrl").

tmp_dir(Name) ->
    Dir = filename:join(os:getenv("TMPDIR", "/tmp"),
                        lists:flatten(io_lib:format("sift_erl_tests.~s.~s.~b",
                                                    [os:getpid(), Name,
                                                     erlang:unique_integer([positive])]))),
    ok = filelib:ensure_dir(filename:join(Dir, "x")),
    Dir.

remove(Dir) ->
    [ok = file:delete(filename:join(Dir, F)) || F <- element(2, file:list_dir(Dir))],
    ok = file:del_dir(Dir).

opts(Dir, More) ->
    maps:merge(#{verbose => false, artifact_prefix => Dir ++ "/", seed => 1}, More).

%% Finds Target's bug from an empty corpus within Runs; returns the crash.
find(Target, Reason, Runs, More) ->
    Dir = tmp_dir("find"),
    try
        {crash, #{input := Input, file := File, error := {error, Reason, _}, execs := N} = C} =
            sift_erl:fuzz(Target, opts(Dir, More#{runs => Runs})),
        ?assert(N =< Runs + 2),
        ?assertEqual(Dir ++ "/crash-" ++ binary_to_list(sift_cov:sha1(Input)), File),
        ?assertEqual({ok, Input}, file:read_file(File)),
        ?assertMatch({crash, {error, Reason, _}}, sift_erl:reproduce(Target, File)),
        C
    after
        remove(Dir)
    end.

six_bytes_test_() ->
    {timeout, 120,
     fun() ->
             #{input := <<"SIFT", 258:16, _/binary>>} =
                 find(fun sift_planted:six/1, planted_six, 200000, #{})
     end}.

tlv_test_() ->
    {timeout, 120,
     fun() ->
             #{input := <<"SF", 2, _/binary>>} =
                 find(fun sift_example_tlv:parse/1, badarith, 500000, #{})
     end}.

%% The 16-byte literal is found through the comparison's operands: in a few hundred runs with
%% them, not in 20000 without (the same source compiled with {sift_cov_cmp, false}).
sixteen_bytes_test_() ->
    {timeout, 120,
     fun() ->
             #{input := <<"sift-erlang-16by", _/binary>>} =
                 find(fun sift_planted:sixteen/1, planted_sixteen, 1000, #{}),
             #{input := Found} = find(fun sift_planted:search/1, planted_search, 1000, #{}),
             ?assertNotEqual(nomatch, binary:match(Found, <<"needle-of-16-byt">>)),
             M = load_renamed(sift_planted, sift_planted_nocmp,
                              [{parse_transform, sift_cov_transform}, {sift_cov_cmp, false}]),
             Dir = tmp_dir("nocmp"),
             ?assertMatch({done, #{execs := _}},
                          sift_erl:fuzz(fun M:sixteen/1, opts(Dir, #{runs => 20000}))),
             remove(Dir)
     end}.

%% Compiles Mod's source under the name New, with Options: {Source, Beam}.
compile_renamed(Mod, New, Options) ->
    Src = proplists:get_value(source, Mod:module_info(compile)),
    {ok, Forms} = epp:parse_file(Src, []),
    Renamed = [case F of {attribute, A, module, Mod} -> {attribute, A, module, New}; _ -> F end
               || F <- Forms],
    {ok, New, Bin} = compile:forms(Renamed, [binary, return_errors, debug_info | Options]),
    {Src, Bin}.

%% ... and loads it.
load_renamed(Mod, New, Options) ->
    {Src, Bin} = compile_renamed(Mod, New, Options),
    {module, New} = code:load_binary(New, Src, Bin),
    New.

%% Mod's source compiled plainly under the name New into a beam file of a folder of its own,
%% and loaded from there.
beam_file(Mod, New) ->
    {_, Bin} = compile_renamed(Mod, New, []),
    Dir = tmp_dir("beam"),
    Base = filename:join(Dir, atom_to_list(New)),
    ok = file:write_file(Base ++ ".beam", Bin),
    {module, New} = code:load_abs(Base),
    {New, Dir}.

%% The same seed and one worker replay the same campaign.
same_seed_test_() ->
    {timeout, 120,
     fun() ->
             A = find(fun sift_planted:six/1, planted_six, 200000, #{seed => 42}),
             B = find(fun sift_planted:six/1, planted_six, 200000, #{seed => 42}),
             ?assertEqual(maps:without([file], A), maps:without([file], B))
     end}.

two_workers_test_() ->
    {timeout, 120,
     fun() ->
             find(fun sift_example_tlv:parse/1, badarith, 500000, #{workers => 2}),
             find(fun sift_planted:six/1, planted_six, 400000, #{workers => 2})
     end}.

%% A token that only a dictionary provides: the target is not instrumented at all.
dictionary_test() ->
    Dir = tmp_dir("dict"),
    Target = fun(<<"dict-only-token!", _/binary>>) -> erlang:error(dict_bug); (_) -> ok end,
    Dict = filename:join(Dir, "tokens.dict"),
    ok = file:write_file(Dict, "# tokens\nkw=\"dict-only-token!\"\n"),
    ?assertMatch({crash, #{error := {error, dict_bug, _}}},
                 sift_erl:fuzz(Target, opts(Dir, #{runs => 20000, dict => Dict}))),
    ?assertMatch({done, _}, sift_erl:fuzz(Target, opts(Dir, #{runs => 20000}))),
    Bad = filename:join(Dir, "bad.dict"),
    ok = file:write_file(Bad, "kw=unquoted\n"),
    ?assertMatch({error, <<_/binary>>}, sift_erl:fuzz(Target, opts(Dir, #{runs => 10, dict => Bad}))),
    ?assertMatch({error, {_, enoent}},
                 sift_erl:fuzz(Target, opts(Dir, #{runs => 10, dict => Dict ++ ".none"}))),
    remove(Dir).

%% New inputs go to the corpus folder, named by their SHA-1; the next run starts from them.
corpus_folder_test() ->
    Dir = tmp_dir("corpus"),
    Corpus = filename:join(Dir, "corpus"),
    Target = fun(B) -> catch sift_example_tlv:parse(B) end,
    {done, #{corpus := N}} = sift_erl:fuzz(Target, opts(Dir, #{runs => 20000, corpus => Corpus})),
    {ok, Files} = file:list_dir(Corpus),
    ?assertEqual(N, length(Files)),
    ?assert(N > 3),
    [?assertEqual({ok, list_to_binary(F)},
                  {ok, sift_cov:sha1(element(2, file:read_file(filename:join(Corpus, F))))})
     || F <- Files],
    {done, _} = sift_erl:fuzz(Target, opts(Dir, #{runs => 10, corpus => Corpus})),
    {ok, Files2} = file:list_dir(Corpus),
    ?assert(length(Files2) >= N),
    remove(Corpus),
    remove(Dir).

%% The run budget is shared among workers; a time limit ends a run without a budget.
limits_test() ->
    Dir = tmp_dir("limits"),
    Target = fun(B) -> byte_size(B) end,
    {done, #{execs := E1}} = sift_erl:fuzz(Target, opts(Dir, #{runs => 1000})),
    ?assertEqual(1000, E1),
    {done, #{execs := E2}} = sift_erl:fuzz(Target, opts(Dir, #{runs => 1001, workers => 3})),
    ?assertEqual(1001, E2),
    ?assertMatch({done, _}, sift_erl:fuzz(Target, opts(Dir, #{max_total_time => 0.2}))),
    remove(Dir).

%% A run leaves the caller's mailbox as it found it, whatever ended it, trapping exits or not.
mailbox_test_() ->
    {timeout, 120,
     fun() ->
             Dir = tmp_dir("mailbox"),
             %% What earlier tests of this process left (sift_fuzz's stale results) is not ours.
             flush(),
             Old = process_flag(trap_exit, true),
             {crash, _} = sift_erl:fuzz(fun sift_example_tlv:parse/1,
                                        opts(Dir, #{workers => 3, runs => 900000})),
             {done, _} = sift_erl:fuzz(fun(B) -> B end, opts(Dir, #{workers => 2, runs => 5000})),
             {done, _} = sift_erl:fuzz(fun(B) -> B end, opts(Dir, #{workers => 2,
                                                                   max_total_time => 0.1})),
             process_flag(trap_exit, Old),
             ?assertEqual({messages, []}, process_info(self(), messages)),
             remove(Dir)
     end}.

%% A target that never returns: found (through its literal), written to timeout-<sha1>, and
%% reproduced under a timeout. Only the detection waits for the clock, never the find.
timeout_test_() ->
    {timeout, 120,
     fun() ->
             Dir = tmp_dir("timeout"),
             {timeout, #{input := <<"HANG", _/binary>> = Input, file := File, stack := Stack}} =
                 sift_erl:fuzz(fun sift_planted:hang/1,
                               opts(Dir, #{runs => 100000, timeout => 1, workers => 2})),
             ?assertEqual(Dir ++ "/timeout-" ++ binary_to_list(sift_cov:sha1(Input)), File),
             ?assertEqual({ok, Input}, file:read_file(File)),
             ?assertMatch([{sift_planted, hang, 1, _} | _], Stack),
             ?assertMatch({timeout, [{sift_planted, hang, 1, _} | _]},
                          sift_erl:reproduce(fun sift_planted:hang/1, File, #{timeout => 0.2})),
             ?assertEqual(ok, sift_erl:reproduce(fun sift_planted:six/1, File, #{timeout => 60})),
             ?assertMatch({crash, {error, planted_six, _}},
                          sift_erl:reproduce(fun(_) -> sift_planted:six(<<"SIFT", 258:16>>) end,
                                             File, #{timeout => 60})),
             remove(Dir)
     end}.

bad_options_test() ->
    T = fun(B) -> B end,
    [?assertMatch({error, {bad_option, {K, V}}}, sift_erl:fuzz(T, #{K => V, verbose => false}))
     || {K, V} <- [{workers, 0}, {runs, -1}, {max_len, 1 bsl 21}, {max_total_time, x},
                   {seed, -1}, {timeout, 0}, {dict, 5}, {corpus, <<"dir">>}, {instrument, ["m"]}, {no_such_option, 1},
                   {value_profile, yes}]].

flush() ->
    receive _ -> flush() after 0 -> ok end.

%% Every kind of exception is a crash, and reproduce runs a file once.
reproduce_test() ->
    Dir = tmp_dir("repro"),
    File = filename:join(Dir, "input"),
    ok = file:write_file(File, <<"boom">>),
    ?assertEqual(ok, sift_erl:reproduce(fun(_) -> fine end, File)),
    ?assertMatch({crash, {throw, <<"boom">>, _}}, sift_erl:reproduce(fun(B) -> throw(B) end, File)),
    ?assertMatch({crash, {exit, x, _}}, sift_erl:reproduce(fun(_) -> exit(x) end, File)),
    ?assertMatch({error, {_, enoent}}, sift_erl:reproduce(fun(_) -> ok end, File ++ ".none")),
    ok = file:delete(File),
    remove(Dir).

%% A module without its source: sift_planted compiled plainly (with debug_info), instrumented
%% from its beam for the run, restored after.
instrument_option_test_() ->
    {timeout, 120,
     fun() ->
             {M, BeamDir} = beam_file(sift_planted, sift_planted_plain),
             ?assertNot(erlang:function_exported(M, '$sift_probes', 0)),
             #{input := <<"SIFT", 258:16, _/binary>>} =
                 find(fun M:six/1, planted_six, 200000, #{instrument => [M]}),
             ?assertNot(erlang:function_exported(M, '$sift_probes', 0)),
             ?assertEqual([], sift_beam:instrumented()),
             Dir = tmp_dir("instr"),
             ?assertEqual({error, {no_beam, no_such_module}},
                          sift_erl:fuzz(fun M:six/1, opts(Dir, #{instrument => [M, no_such_module]}))),
             ?assertEqual([], sift_beam:instrumented()),
             remove(Dir),
             remove(BeamDir)
     end}.
