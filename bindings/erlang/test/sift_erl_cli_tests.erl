%% @doc sift-erl's command line (sift_erl_cli:status/1, what the escript runs short of halting).
-module(sift_erl_cli_tests).

-include_lib("eunit/include/eunit.hrl").

cli_test_() ->
    {timeout, 120,
     fun() ->
             Dir = filename:join(os:getenv("TMPDIR", "/tmp"), "sift_erl_cli_tests." ++ os:getpid()),
             Corpus = filename:join(Dir, "corpus"),
             ok = filelib:ensure_dir(filename:join(Corpus, "x")),
             Quiet = ["-verbosity=0", "-seed=3", "-artifact_prefix=" ++ Dir ++ "/"],
             ?assertEqual(1, sift_erl_cli:status(Quiet ++ ["-runs=200000", "sift_planted:six"])),
             [Crash] = filelib:wildcard(filename:join(Dir, "crash-*")),
             ?assertEqual(1, sift_erl_cli:status(["sift_planted:six", Crash])),
             ?assertEqual(0, sift_erl_cli:status(["sift_planted:sixteen", Crash])),
             ?assertEqual(1, sift_erl_cli:status(Quiet ++ ["-timeout=1", "sift_planted:hang"])),
             [Hang] = filelib:wildcard(filename:join(Dir, "timeout-*")),
             ?assertEqual(1, sift_erl_cli:status(["-timeout=1", "sift_planted:hang", Hang])),
             ?assertEqual(0, sift_erl_cli:status(Quiet ++ ["-runs=2000", "-workers=2",
                                                          "sift_example_tlv:parse", Corpus])),
             ?assertMatch({ok, [_ | _]}, file:list_dir(Corpus)),
             [?assertEqual(2, sift_erl_cli:status(Args))
              || Args <- [[], ["-bogus=1", "m:f"], ["-runs=x", "sift_planted:six"],
                          ["-runs", "sift_planted:six"], ["sift_planted"],
                          ["no_such_module:f"], ["sift_planted:nope"],
                          ["-pa=/no/such/folder", "sift_planted:six"],
                          ["sift_planted:six", Crash ++ ".none"]]],
             [ok = file:delete(F) || F <- filelib:wildcard(filename:join([Dir, "*", "*"])) ++
                                         filelib:wildcard(filename:join(Dir, "*")),
                                     filelib:is_regular(F)],
             ok = file:del_dir(Corpus),
             ok = file:del_dir(Dir)
     end}.
