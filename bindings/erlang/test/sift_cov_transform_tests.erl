%% @doc Tests of sift_cov_transform on sift_probe_fixture, whose comments say where the probes
%% must be.
-module(sift_cov_transform_tests).

-include_lib("eunit/include/eunit.hrl").

-export([record_hit/2]).

-define(FIXTURE, sift_probe_fixture).

source() ->
    Dir = filename:dirname(proplists:get_value(source, ?MODULE:module_info(compile))),
    filename:join(Dir, "sift_probe_fixture.erl").

compile(Opts) ->
    {ok, ?FIXTURE, Bin} =
        compile:file(source(), [binary, return_errors, {parse_transform, sift_cov_transform}
                                | Opts]),
    Bin.

load(Opts) ->
    {module, ?FIXTURE} = code:load_binary(?FIXTURE, source(), compile(Opts)),
    ?FIXTURE:'$sift_probes'().

%% {Line, Kind} of every "probe:Kind" marker of the fixture, in source order.
markers() ->
    {ok, Text} = file:read_file(source()),
    Split = binary:split(Text, <<"\n">>, [global]),
    Lines = lists:zip(lists:seq(1, length(Split)), Split),
    [{N, binary_to_atom(Kind)}
     || {N, L} <- Lines,
        {match, Kinds} <- [re:run(L, "probe:(\\w+)", [global, {capture, all_but_first, binary}])],
        [Kind] <- Kinds].

table_names_lines_test() ->
    #{module := ?FIXTURE, size := 65536, probes := Probes} = load([{sift_cov_base, 0}]),
    ?assertEqual(markers(), [{Line, Kind} || {_, _, Line, Kind} <- Probes]),
    ?assertEqual(lists:seq(0, length(Probes) - 1), [Id || {Id, _, _, _} <- Probes]),
    ?assertEqual([{apply_twice, 2}, {classify, 1}, {countdown, 1}, {safe_div, 2}, {sign, 1},
                  {wait, 1}],
                 lists:usort([F || {_, F, _, _} <- Probes])).

stable_ids_test() ->
    ?assertEqual(compile([]), compile([])),
    #{probes := Probes} = load([]),
    Base = erlang:phash2(?FIXTURE, 65536),
    ?assertEqual([(Base + I) rem 65536 || I <- lists:seq(0, length(Probes) - 1)],
                 [Id || {Id, _, _, _} <- Probes]),
    #{probes := Small} = load([{sift_cov_size, 40}, {sift_cov_base, 30}]),
    ?assertEqual([(30 + I) rem 40 || I <- lists:seq(0, length(Small) - 1)],
                 [Id || {Id, _, _, _} <- Small]).

%% The transform also reads its options from -compile attributes.
compile_attribute_test() ->
    {ok, Forms0} = epp:parse_file(source(), []),
    {Head, Tail} = lists:splitwith(fun(F) -> element(3, F) =/= module end, Forms0),
    Forms = Head ++ [hd(Tail), {attribute, 1, compile, [{sift_cov_base, 7}]} | tl(Tail)],
    {ok, ?FIXTURE, Bin} = compile:forms(Forms, [binary, {parse_transform, sift_cov_transform}]),
    {module, ?FIXTURE} = code:load_binary(?FIXTURE, source(), Bin),
    #{probes := [{7, _, _, _} | _]} = ?FIXTURE:'$sift_probes'().

%% Each branch taken hits its own probe, and nothing else.
probes_hit_branches_test() ->
    #{probes := Probes} = load([{sift_cov_base, 0}]),
    Lines = maps:from_list([{Id, {Line, Kind}} || {Id, _, Line, Kind} <- Probes]),
    Ctx = sift_cov:new(65536),
    Hit = fun(Run) ->
                  sift_cov:set_ctx(Ctx),
                  Run(),
                  sift_cov:set_ctx(undefined),
                  [{maps:get(Id, Lines), B} || {Id, B, _} <- sift_cov:covered(sift_cov:take(Ctx), #{})]
          end,
    [{Integer, 1}, {Even, 1}] = Hit(fun() -> even = ?FIXTURE:classify(4) end),
    ?assertEqual({function, 'case'}, {element(2, Integer), element(2, Even)}),
    ?assertMatch([{{_, function}, 1}, {{_, 'if'}, 1}],
                 Hit(fun() -> negative = ?FIXTURE:sign(-3) end)),
    ?assertMatch([{{_, function}, 1}, {{_, 'after'}, 1}],
                 Hit(fun() -> timeout = ?FIXTURE:wait(0) end)),
    self() ! {ping, self()},
    ?assertMatch([{{_, function}, 1}, {{_, 'receive'}, 1}],
                 Hit(fun() -> pinged = ?FIXTURE:wait(0) end)),
    receive pong -> ok end,
    ?assertMatch([{{_, function}, 1}, {{_, 'catch'}, 1}],
                 Hit(fun() -> {error, badarith} = ?FIXTURE:safe_div(1, 0) end)),
    ?assertMatch([{{_, function}, 1}, {{_, 'try'}, 1}],
                 Hit(fun() -> {ok, 3} = ?FIXTURE:safe_div(7, 2) end)),
    ?assertMatch([{{_, function}, 1}, {{_, 'fun'}, 1}],
                 Hit(fun() -> 3 = ?FIXTURE:apply_twice(fun(X) -> X + 1 end, 1) end)),
    %% Down(K) runs three times: bucket 3; Down(0) once.
    ?assertMatch([{{_, function}, 1}, {{L, 'fun'}, 1}, {{L, 'fun'}, 4}],
                 Hit(fun() -> done = ?FIXTURE:countdown(3) end)).

%% Outside an execution, instrumented code runs as if it were not.
runs_without_context_test() ->
    load([]),
    ?assertEqual(undefined, sift_cov:get_ctx()),
    ?assertEqual(odd, ?FIXTURE:classify(3)),
    ?assertEqual(zero, ?FIXTURE:sign(0)),
    ?assertEqual({ok, 2}, ?FIXTURE:safe_div(4, 2)),
    ?assertEqual(done, ?FIXTURE:countdown(5)).

record_hit(Ctx, Id) ->
    put(hits, [{Ctx, Id} | get(hits)]).

hit_option_test() ->
    #{probes := Probes} = load([{sift_cov_base, 0}, {sift_cov_hit, {?MODULE, record_hit}}]),
    put(hits, []),
    put('$sift_ctx', mine),
    odd = ?FIXTURE:classify(1),
    erase('$sift_ctx'),
    Ids = [Id || {Id, _, _, _} <- Probes],
    ?assertEqual([{mine, lists:nth(1, Ids)}, {mine, lists:nth(3, Ids)}],
                 lists:reverse(erase(hits))).

too_many_probes_test() ->
    {error, [{_, [{_, sift_cov_transform, Why}]}], []} =
        compile:file(source(), [binary, return_errors, {sift_cov_size, 4},
                                {parse_transform, sift_cov_transform}]),
    ?assertMatch({too_many_probes, _, 4}, Why),
    ?assertMatch("19 probes do not fit in 4 ids" ++ _,
                 lists:flatten(sift_cov_transform:format_error(Why))).

%% Two modules laid out over the same ids share the entries of the ids they both use.
probe_tables_merge_test() ->
    #{probes := Probes} = load([{sift_cov_base, 0}]),
    {ok, Forms0} = epp:parse_file(source(), []),
    Forms = [case F of
                 {attribute, A, module, _} -> {attribute, A, module, sift_probe_fixture2};
                 _ -> F
             end || F <- Forms0],
    {ok, Twin, Bin} = compile:forms(Forms, [binary, {sift_cov_base, 0},
                                            {parse_transform, sift_cov_transform}]),
    {module, Twin} = code:load_binary(Twin, "sift_probe_fixture2.erl", Bin),
    Table = sift_cov:probes([?FIXTURE, Twin]),
    ?assertEqual(length(Probes), map_size(Table)),
    [{_, {classify, 1}, Line, function} | _] = Probes,
    ?assertEqual([{?FIXTURE, {classify, 1}, Line, function}, {Twin, {classify, 1}, Line, function}],
                 maps:get(0, Table)).

%% Comparisons with literals: sift_cmp_fixture's functions keep their results, and report the
%% operands that its comments name to sift_cov:'$cmp'/3 and '$search'/3, as a call trace shows.
cmp_source() ->
    filename:join(filename:dirname(source()), "sift_cmp_fixture.erl").

load_cmp(Opts) ->
    {ok, M, Bin} = compile:file(cmp_source(), [binary, return_errors,
                                               {parse_transform, sift_cov_transform} | Opts]),
    {module, M} = code:load_binary(M, cmp_source(), Bin),
    M.

%% The reports a call makes: [{Function, Value, Literals}]. The call runs in a process of its
%% own, since a process does not trace itself.
reports(Fun) ->
    {module, sift_cov} = code:ensure_loaded(sift_cov),
    erlang:trace_pattern({sift_cov, '$cmp', 3}, true, [global]),
    erlang:trace_pattern({sift_cov, '$search', 3}, true, [global]),
    Self = self(),
    Pid = spawn(fun() -> receive go -> Self ! {result, Fun()} end end),
    erlang:trace(Pid, true, [call]),
    Pid ! go,
    Result = receive {result, R} -> R end,
    erlang:trace_pattern({sift_cov, '_', '_'}, false, [global]),
    Ref = erlang:trace_delivered(Pid),
    receive {trace_delivered, _, Ref} -> ok end,
    {Result, collect_reports()}.

collect_reports() ->
    receive
        {trace, _, call, {sift_cov, F, [Site, V, Lits]}} when is_integer(Site) ->
            [{F, V, Lits} | collect_reports()]
    after 0 -> []
    end.

cmp_reports_test() ->
    M = load_cmp([]),
    ?assertEqual({true, [{'$cmp', 1234, [1234]}]}, reports(fun() -> M:eq(1234) end)),
    ?assertEqual({false, [{'$cmp', 5, [1234]}]}, reports(fun() -> M:eq(5) end)),
    ?assertEqual({true, [{'$cmp', <<"x">>, [<<"neq-lit">>]}]}, reports(fun() -> M:neq(<<"x">>) end)),
    ?assertEqual({true, [{'$cmp', get, [<<"GET">>, <<"PUT">>]}]},
                 reports(fun() -> M:member(get) end)),
    ?assertEqual({{1, 6}, [{'$search', <<"aneedle">>, [<<"needle">>]}]},
                 reports(fun() -> M:search(<<"aneedle">>) end)),
    ?assertEqual({false, [{'$cmp', "txt", ["text"]}]}, reports(fun() -> M:strings("txt") end)).

clause_reports_test() ->
    M = load_cmp([]),
    ?assertEqual({magic, []}, reports(fun() -> M:heads(<<"MAGIC!">>, 7) end)),
    ?assertEqual({three_hundred, [{'$cmp', <<"MAGIX">>, [<<"MAGIC">>]}]},
                 reports(fun() -> M:heads(<<"MAGIX">>, 300) end)),
    ?assertEqual({{a, 1}, [{'$cmp', a, [<<"MAGIC">>]}, {'$cmp', 1, [7, 300]}]},
                 reports(fun() -> M:heads(a, 1) end)),
    ?assertEqual({1, []}, reports(fun() -> M:cased(<<"one">>) end)),
    ?assertEqual({2, []}, reports(fun() -> M:cased("twox") end)),
    ?assertEqual({0, [{'$cmp', x, [<<"one">>, "two"]}]}, reports(fun() -> M:cased(x) end)),
    ?assertEqual({eocd, []}, reports(fun() -> M:sized(<<"PK", 5, 6>>) end)),
    ?assertEqual({6, [{'$cmp', <<"PK", 6, 7>>, [<<"PK", 5, 6>>]}]},
                 reports(fun() -> M:sized(<<"PK", 6, 7>>) end)),
    ?assertEqual({short, [{'$cmp', <<"P">>, [<<"PK", 5, 6>>]}]},
                 reports(fun() -> M:sized(<<"P">>) end)),
    ?assertEqual({guard, []}, reports(fun() -> M:in_guard(99) end)),
    ?assertEqual({other, []}, reports(fun() -> M:in_guard(98) end)).

%% {sift_cov_cmp, false}, or a hit function of one's own, leaves comparisons alone; the probes
%% are the same either way.
cmp_off_test() ->
    M = load_cmp([{sift_cov_cmp, false}]),
    Off = M:'$sift_probes'(),
    ?assertEqual({true, []}, reports(fun() -> M:eq(1234) end)),
    ?assertEqual({three_hundred, []}, reports(fun() -> M:heads(<<"MAGIX">>, 300) end)),
    M = load_cmp([{sift_cov_hit, {?MODULE, record_hit}}]),
    ?assertEqual({true, []}, reports(fun() -> M:eq(1234) end)),
    M = load_cmp([]),
    ?assertEqual(Off, M:'$sift_probes'()).
