%% @doc Runs EUnit tests and reports each as a TAP line, the form tests/run counts:
%% "ok N - name", "not ok N - name". Halts the VM with status 1 when any test failed.
%%
%%   erl -noshell -pa build/erlang -eval 'sift_tap:run([sift_cov_tests])'
-module(sift_tap).
-behaviour(eunit_listener).

-export([run/1]).
-export([start/1, init/1, handle_begin/3, handle_end/3, handle_cancel/3, terminate/2]).

-spec run([module()]) -> no_return().
run(Modules) ->
    Result = eunit:test(tests(Modules), [no_tty, {report, {?MODULE, [{parent, self()}]}}]),
    Failed = receive {sift_tap_failed, N} -> N end,
    halt(case {Result, Failed} of {ok, 0} -> 0; _ -> 1 end).

%% Each simple test of MODULES (name_test/0) with a timeout of 600 s: EUnit's default of 5 s
%% is a timing, not a verdict, and a first compile on a loaded machine outlasts it (loading the
%% compiler's modules alone took 7 s under a full load). A timeout around a group is not its
%% tests' default, hence one per test. Generators (name_test_/0) set their own.
tests(Modules) ->
    [case lists:suffix("_test_", atom_to_list(F)) of
         true -> {generator, M, F};
         false -> {timeout, 600, {M, F}}
     end
     || M <- Modules, {F, 0} <- M:module_info(exports),
        lists:suffix("_test", atom_to_list(F)) orelse lists:suffix("_test_", atom_to_list(F))].

start(Options) ->
    eunit_listener:start(?MODULE, Options).

init(Options) ->
    #{parent => proplists:get_value(parent, Options), n => 0, failed => 0}.

handle_begin(_Kind, _Data, St) ->
    St.

handle_end(test, Data, St) ->
    case proplists:get_value(status, Data) of
        ok ->
            report(St, "ok", name(Data), "");
        {skipped, Why} ->
            report(St, "not ok", name(Data), io_lib:format(" # SKIP ~0p", [Why]));
        {error, Exception} ->
            diagnose(Exception, proplists:get_value(output, Data, <<>>)),
            fail(report(St, "not ok", name(Data), ""))
    end;
handle_end(group, _Data, St) ->
    St.

%% A cancelled test or group (a failed setup, a timeout) counts as one failure.
handle_cancel(_Kind, Data, St) ->
    diagnose(proplists:get_value(reason, Data), <<>>),
    fail(report(St, "not ok", name(Data), " (cancelled)")).

terminate(_Result, #{parent := Parent, n := N, failed := Failed}) ->
    io:format("1..~b~n", [N]),
    Parent ! {sift_tap_failed, Failed},
    ok.

report(#{n := N0} = St, Status, Name, Suffix) ->
    N = N0 + 1,
    io:format("~s ~b - ~s~s~n", [Status, N, Name, Suffix]),
    St#{n => N}.

fail(#{failed := F} = St) -> St#{failed => F + 1}.

name(Data) ->
    Where = case proplists:get_value(source, Data) of
                {M, F, _} -> io_lib:format("~s:~s", [M, function_name(F)]);
                _ -> io_lib:format("~0p", [proplists:get_value(id, Data)])
            end,
    case proplists:get_value(desc, Data) of
        undefined -> Where;
        Desc -> [Where, " (", Desc, ")"]
    end.

%% A test that a generator wraps in a fun (for a timeout, say) is named after the generator.
function_name(F) ->
    case atom_to_list(F) of
        "-" ++ Wrapped -> hd(string:split(Wrapped, "/"));
        Name -> Name
    end.

diagnose(What, Output) ->
    Text = io_lib:format("~P~n~s", [What, 40, Output]),
    [io:format("# ~s~n", [L]) || L <- string:split(lists:flatten(Text), "\n", all), L =/= ""].
