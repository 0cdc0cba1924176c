%% @doc The command line of sift_erl, libFuzzer's flags on an Erlang function of one binary:
%%
%%   sift-erl [-flag=value ...] Module:Function [CORPUS_DIR | INPUT ...]
%%
%% With a folder (or none) it fuzzes, the folder being the corpus; with input files it runs
%% each once, as libFuzzer reproduces crashes. Flags: -runs, -max_total_time, -timeout,
%% -workers, -seed, -max_len, -len_control, -use_value_profile, -dict, -artifact_prefix,
%% -instrument (comma-separated modules), -pa (a code path folder, repeatable), -verbosity.
%% Exit status 0, 1 after a crash or a timeout, 2 for a usage error.
-module(sift_erl_cli).

-export([main/1, status/1]).

-spec main([string()]) -> no_return().
main(Args) ->
    halt(status(Args)).

%% @doc What main/1 does, short of halting: the exit status.
-spec status([string()]) -> 0 | 1 | 2.
status(Args) ->
    try run(Args) catch throw:{usage, Fmt, Xs} -> usage(Fmt, Xs) end.

usage(Fmt, Xs) ->
    io:format(standard_error, "sift-erl: " ++ Fmt ++ "~n"
              "usage: sift-erl [-flag=value ...] Module:Function [CORPUS_DIR | INPUT ...]~n", Xs),
    2.

run(Args) ->
    {Flags, Rest} = lists:partition(fun(A) -> hd(A) =:= $- andalso A =/= "-" end, Args),
    Opts = lists:foldl(fun flag/2, #{}, Flags),
    case Rest of
        [Name | Paths] -> start(target(Name), Opts, Paths);
        [] -> throw({usage, "no target", []})
    end.

target(Name) ->
    case string:split(Name, ":") of
        [M, F] ->
            Mod = list_to_atom(M),
            Fun = list_to_atom(F),
            case code:ensure_loaded(Mod) of
                {module, Mod} -> ok;
                _ -> throw({usage, "module ~s not found (-pa=FOLDER?)", [M]})
            end,
            erlang:function_exported(Mod, Fun, 1) orelse
                throw({usage, "~s:~s/1 is not exported", [M, F]}),
            fun Mod:Fun/1;
        _ ->
            throw({usage, "target ~s is not Module:Function", [Name]})
    end.

start(Target, Opts, [Dir]) when is_list(Dir) ->
    case filelib:is_dir(Dir) of
        true -> fuzz(Target, Opts#{corpus => Dir});
        false -> reproduce(Target, [Dir], Opts)
    end;
start(Target, Opts, []) ->
    fuzz(Target, Opts);
start(Target, Opts, Files) ->
    reproduce(Target, Files, Opts).

fuzz(Target, Opts) ->
    case sift_erl:fuzz(Target, Opts) of
        {crash, _} -> 1;
        {timeout, _} -> 1;
        {done, _} -> 0;
        {error, Why} -> io:format(standard_error, "sift-erl: ~p~n", [Why]), 2
    end.

reproduce(Target, Files, Opts) ->
    lists:foldl(fun(File, Status) ->
                        case sift_erl:reproduce(Target, File, maps:with([timeout], Opts)) of
                            ok ->
                                io:format(standard_error, "Running: ~s~nExecuted ~s~n", [File, File]),
                                Status;
                            {crash, {Class, Reason, Stack}} ->
                                failed(File, io_lib:format("~p:~0p", [Class, Reason]), Stack);
                            {timeout, Stack} ->
                                failed(File, "timeout", Stack);
                            {error, Why} ->
                                io:format(standard_error, "sift-erl: ~p~n", [Why]),
                                2
                        end
                end, 0, Files).

failed(File, What, Stack) ->
    io:format(standard_error, "Running: ~s~n==ERROR: sift_erl: ~s~n~s",
              [File, What, [io_lib:format("    ~0p~n", [F]) || F <- Stack]]),
    1.

flag(Flag, Opts) ->
    case string:split(tl(Flag), "=") of
        [Name, Value] -> option(Name, Value, Opts);
        _ -> throw({usage, "flag ~s has no value (-name=value)", [Flag]})
    end.

option("runs", V, O) -> O#{runs => int(V)};
option("max_total_time", V, O) -> O#{max_total_time => int(V)};
option("workers", V, O) -> O#{workers => max(1, int(V))};
option("jobs", V, O) -> O#{workers => max(1, int(V))};
option("seed", V, O) -> O#{seed => int(V)};
option("timeout", V, O) -> O#{timeout => max(1, int(V))};
option("max_len", V, O) -> O#{max_len => max(1, int(V))};
option("len_control", V, O) -> O#{len_control => int(V) =/= 0};
option("use_value_profile", V, O) -> O#{value_profile => int(V) =/= 0};
option("dict", V, O) -> O#{dict => V};
option("artifact_prefix", V, O) -> O#{artifact_prefix => V};
option("verbosity", V, O) -> O#{verbose => int(V) > 0};
option("instrument", V, O) ->
    O#{instrument => [list_to_atom(M) || M <- string:lexemes(V, ","), M =/= ""]};
option("pa", V, O) ->
    code:add_patha(V) =:= true orelse throw({usage, "-pa=~s: no such folder", [V]}),
    O;
option(Name, _, _) ->
    throw({usage, "unknown flag -~s", [Name]}).

int(V) ->
    try list_to_integer(V) of
        N when N >= 0 -> N;
        _ -> throw({usage, "~s is not a count", [V]})
    catch
        error:badarg -> throw({usage, "~s is not a number", [V]})
    end.
