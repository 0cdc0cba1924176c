%% @doc Parse transform that puts a sift probe at the start of every function clause and every
%% branch: case, if, receive (and its after), try (of and catch clauses), fun and maybe-else
%% clauses.
%%
%% A probe is `case erlang:get('$sift_ctx') of undefined -> ok; C -> sift_cov:hit(C, Id) end':
%% outside an execution it costs a dictionary read and nothing else. Probe ids are
%% (Base + Ordinal) rem Size, Ordinal counting probes in the order of a walk of the source, so
%% the same source gets the same ids. Options (compile options, or in -compile attributes):
%%
%%   {sift_cov_size, Size}   ids lie in 0..Size-1; the context needs Size probes (65536)
%%   {sift_cov_base, Base}   first id; by default phash2(Module, Size), which spreads modules
%%                           over the id space as AFL spreads edges
%%   {sift_cov_hit, {M, F}}  call M:F(C, Id) instead of sift_cov:hit(C, Id)
%%
%% The module gains '$sift_probes'/0, returning #{module, size, probes => [{Id, {Name, Arity},
%% Line, Kind}]}, Kind being function, 'case', 'if', 'receive', 'after', 'try', 'catch', 'fun'
%% or 'else'.
-module(sift_cov_transform).

-export([parse_transform/2, format_error/1]).

-define(DEFAULT_SIZE, 65536).

-record(st, {module :: module(),
             size :: pos_integer(),
             base :: non_neg_integer(),
             hit :: {module(), atom()},
             function = none :: {atom(), arity()} | none,
             next = 0 :: non_neg_integer(),
             probes = [] :: [{non_neg_integer(), {atom(), arity()}, pos_integer(), atom()}]}).

parse_transform(Forms, Options0) ->
    Options = Options0 ++ compile_options(Forms),
    Module = hd([M || {attribute, _, module, M} <- Forms]),
    Size = proplists:get_value(sift_cov_size, Options, ?DEFAULT_SIZE),
    Base = proplists:get_value(sift_cov_base, Options, erlang:phash2(Module, Size)),
    Hit = proplists:get_value(sift_cov_hit, Options, {sift_cov, hit}),
    St0 = #st{module = Module, size = Size, base = Base rem Size, hit = Hit},
    {Instrumented, St} = lists:mapfoldl(fun form/2, St0, Forms),
    case St#st.next > Size of
        true ->
            File = hd([F || {attribute, _, file, {F, _}} <- Forms]),
            {error, [{File, [{erl_anno:new(1), ?MODULE, {too_many_probes, St#st.next, Size}}]}],
             []};
        false ->
            add_table(Instrumented, St)
    end.

format_error({too_many_probes, Probes, Size}) ->
    io_lib:format("~b probes do not fit in ~b ids: raise sift_cov_size", [Probes, Size]).

compile_options(Forms) ->
    lists:flatten([Opts || {attribute, _, compile, Opts} <- Forms]).

%% The table goes in as a literal: reading it costs nothing, and it names lines for reports.
add_table(Forms, #st{module = M, size = Size, probes = Probes}) ->
    Anno = erl_anno:set_generated(true, erl_anno:new(0)),
    Table = erl_parse:abstract(#{module => M, size => Size, probes => lists:reverse(Probes)}),
    Fun = {function, Anno, '$sift_probes', 0, [{clause, Anno, [], [], [Table]}]},
    Export = {attribute, Anno, export, [{'$sift_probes', 0}]},
    {Before, [Eof]} = lists:split(length(Forms) - 1, Forms),
    {Head, Rest} = lists:splitwith(fun(F) -> element(3, F) =/= module end, Before),
    Head ++ [hd(Rest), Export | tl(Rest)] ++ [Fun, Eof].

form({function, A, Name, Arity, Clauses}, St0) ->
    {Cs, St} = clauses(function, Clauses, St0#st{function = {Name, Arity}}),
    {{function, A, Name, Arity, Cs}, St};
form(Form, St) ->
    {Form, St}.

clauses(Kind, Cs, St) ->
    lists:mapfoldl(fun(C, S) -> clause(Kind, C, S) end, St, Cs).

clause(Kind, {clause, A, Patterns, Guards, Body0}, St0) ->
    {Probe, St1} = probe(Kind, A, St0),
    {Body, St} = exprs(Body0, St1),
    {{clause, A, Patterns, Guards, [Probe | Body]}, St}.

%% A body that gets a probe at its start without being a list of clauses.
probed_body(Kind, A, Body0, St0) ->
    {Probe, St1} = probe(Kind, A, St0),
    {Body, St} = exprs(Body0, St1),
    {[Probe | Body], St}.

exprs(Es, St) ->
    lists:mapfoldl(fun expr/2, St, Es).

expr({'case', A, E0, Cs0}, St0) ->
    {E, St1} = expr(E0, St0),
    {Cs, St} = clauses('case', Cs0, St1),
    {{'case', A, E, Cs}, St};
expr({'if', A, Cs0}, St0) ->
    {Cs, St} = clauses('if', Cs0, St0),
    {{'if', A, Cs}, St};
expr({'receive', A, Cs0}, St0) ->
    {Cs, St} = clauses('receive', Cs0, St0),
    {{'receive', A, Cs}, St};
expr({'receive', A, Cs0, T0, After0}, St0) ->
    {Cs, St1} = clauses('receive', Cs0, St0),
    {T, St2} = expr(T0, St1),
    {After, St} = probed_body('after', element(2, hd(After0)), After0, St2),
    {{'receive', A, Cs, T, After}, St};
expr({'try', A, Body0, Cs0, Hs0, After0}, St0) ->
    {Body, St1} = exprs(Body0, St0),
    {Cs, St2} = clauses('try', Cs0, St1),
    {Hs, St3} = clauses('catch', Hs0, St2),
    {After, St} = exprs(After0, St3),
    {{'try', A, Body, Cs, Hs, After}, St};
expr({'fun', A, {clauses, Cs0}}, St0) ->
    {Cs, St} = clauses('fun', Cs0, St0),
    {{'fun', A, {clauses, Cs}}, St};
expr({named_fun, A, Name, Cs0}, St0) ->
    {Cs, St} = clauses('fun', Cs0, St0),
    {{named_fun, A, Name, Cs}, St};
expr({'maybe', A, Body0, {'else', EA, Cs0}}, St0) ->
    {Body, St1} = exprs(Body0, St0),
    {Cs, St} = clauses('else', Cs0, St1),
    {{'maybe', A, Body, {'else', EA, Cs}}, St};
%% Everything else only holds branches further down. Patterns and guards hold none, so
%% walking them changes nothing.
expr(T, St0) when is_tuple(T) ->
    {Es, St} = lists:mapfoldl(fun expr/2, St0, tuple_to_list(T)),
    {list_to_tuple(Es), St};
expr(L, St) when is_list(L) ->
    lists:mapfoldl(fun expr/2, St, L);
expr(X, St) ->
    {X, St}.

%% The variable is unique to the probe: Erlang has no block scope, and two probes of one body
%% binding the same name would clash.
probe(Kind, A0, #st{next = N, base = Base, size = Size, hit = {M, F}} = St) ->
    A = erl_anno:set_generated(true, A0),
    Id = (Base + N) rem Size,
    Var = {var, A, list_to_atom("SiftCtx@" ++ integer_to_list(N))},
    Get = {call, A, {remote, A, {atom, A, erlang}, {atom, A, get}}, [{atom, A, '$sift_ctx'}]},
    Hit = {call, A, {remote, A, {atom, A, M}, {atom, A, F}}, [Var, {integer, A, Id}]},
    Probe = {'case', A, Get, [{clause, A, [{atom, A, undefined}], [], [{atom, A, ok}]},
                              {clause, A, [Var], [], [Hit]}]},
    Entry = {Id, St#st.function, erl_anno:line(A0), Kind},
    {Probe, St#st{next = N + 1, probes = [Entry | St#st.probes]}}.
