%% @doc sift_beam: modules instrumented from their beams, without their sources, then restored.
-module(sift_beam_tests).

-include_lib("eunit/include/eunit.hrl").

-export([parse_transform/2]).

%% uri_string, an OTP module (stdlib, sticky), as any user of sift would take it. Compiling it
%% twice takes seconds on a loaded machine, more under ASan.
otp_module_test_() ->
    {timeout, 300, fun otp_module/0}.

otp_module() ->
    M = uri_string,
    Plain = M:parse(<<"http://h:8/p?q#f">>),
    ?assertEqual(ok, sift_beam:instrument(M)),
    try
        ?assertEqual([M], sift_beam:instrumented()),
        #{module := M, probes := [_ | _] = Probes} = M:'$sift_probes'(),
        ?assertEqual(Plain, M:parse(<<"http://h:8/p?q#f">>)),
        %% Its probes count in a context.
        Ctx = sift_cov:new(65536),
        sift_cov:set_ctx(Ctx),
        _ = M:parse(<<"http://h:8/p?q#f">>),
        sift_cov:set_ctx(undefined),
        Hit = [Id || {Id, _, _} <- sift_cov:covered(sift_cov:take(Ctx), sift_cov:probes([M]))],
        ?assert(length(Hit) > 10),
        ?assert(lists:all(fun(Id) -> lists:keymember(Id, 1, Probes) end, Hit)),
        %% Instrumenting again starts from the original beam, with the new options.
        ?assertEqual(ok, sift_beam:instrument(M, [{sift_cov_base, 0}])),
        #{probes := [{0, _, _, _} | _]} = M:'$sift_probes'()
    after
        ?assertEqual(ok, sift_beam:restore(M))
    end,
    ?assertNot(erlang:function_exported(M, '$sift_probes', 0)),
    ?assert(code:is_sticky(M)),
    ?assertEqual([], sift_beam:instrumented()),
    ?assertEqual(Plain, M:parse(<<"http://h:8/p?q#f">>)).

errors_test() ->
    ?assertEqual({error, {refused, sift_cov}}, sift_beam:instrument(sift_cov)),
    ?assertEqual({error, {refused, erlang}}, sift_beam:instrument(erlang)),
    ?assertEqual({error, {no_beam, no_such_module}}, sift_beam:instrument(no_such_module)),
    ?assertEqual({error, {not_a_module, "x"}}, sift_beam:instrument("x")),
    ?assertEqual({error, {not_instrumented, lists}}, sift_beam:restore(lists)),
    %% A beam built without debug_info has no abstract code to instrument.
    {M, Dir, File} = beam_of([{attribute, 1, module, sift_beam_nodebug},
                              {attribute, 1, export, [{f, 0}]},
                              {function, 1, f, 0, [{clause, 1, [], [], [{atom, 1, ok}]}]}],
                             "nodebug", []),
    ?assertEqual({error, {no_debug_info, M}}, sift_beam:instrument(M)),
    ?assertEqual(ok, M:f()),
    ok = file:delete(File),
    ok = file:del_dir(Dir).

%% A module whose own parse transform already ran: its -compile attribute names the transform
%% (this module's parse_transform/2, which counts its runs), which must not run again on the
%% abstract code.
parse_transform(Forms, _Options) ->
    persistent_term:put({?MODULE, runs}, persistent_term:get({?MODULE, runs}, 0) + 1),
    Forms.

%% Forms compiled (with Options) into a beam file of a folder of their own, loaded from there.
beam_of(Forms, Name, Options) ->
    {ok, M, Bin} = compile:forms(Forms, [binary | Options]),
    Dir = filename:join(os:getenv("TMPDIR", "/tmp"), "sift_beam_tests." ++ Name ++ os:getpid()),
    Base = filename:join(Dir, atom_to_list(M)),
    ok = filelib:ensure_dir(Base),
    ok = file:write_file(Base ++ ".beam", Bin),
    {module, M} = code:load_abs(Base),
    {M, Dir, Base ++ ".beam"}.

parse_transform_not_rerun_test() ->
    {M, Dir, File} =
        beam_of([{attribute, 1, module, sift_beam_pt},
                 {attribute, 1, compile, [{parse_transform, ?MODULE}]},
                 {attribute, 1, export, [{f, 1}]},
                 {function, 2, f, 1, [{clause, 2, [{integer, 2, 1}], [], [{atom, 2, one}]},
                                      {clause, 3, [{var, 3, '_'}], [], [{atom, 3, other}]}]}],
                "pt", [debug_info]),
    Runs = persistent_term:get({?MODULE, runs}),
    ?assertEqual(ok, sift_beam:instrument(M)),
    ?assertEqual(Runs, persistent_term:get({?MODULE, runs})),
    ?assertMatch(#{probes := [_, _]}, M:'$sift_probes'()),
    ?assertEqual(other, M:f(2)),
    ?assertEqual(ok, sift_beam:restore(M)),
    ok = file:delete(File),
    ok = file:del_dir(Dir).

%% A module compiled with sift_cov_transform already has its probes.
already_instrumented_test() ->
    {M, Dir, File} =
        beam_of([{attribute, 1, module, sift_beam_pre},
                 {attribute, 1, compile, [{parse_transform, sift_cov_transform}]},
                 {attribute, 1, export, [{f, 0}]},
                 {function, 2, f, 0, [{clause, 2, [], [], [{atom, 2, ok}]}]}],
                "pre", [debug_info]),
    ?assertEqual({error, {already_instrumented, M}}, sift_beam:instrument(M)),
    ?assertEqual([], sift_beam:instrumented()),
    ok = file:delete(File),
    ok = file:del_dir(Dir).
