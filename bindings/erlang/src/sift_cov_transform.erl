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
%%   {sift_cov_cmp, Bool}    report comparisons (see below); by default unless sift_cov_hit
%%                           names another function
%%
%% Comparisons with literals also report their operands, for sift's input-to-state mutations
%% and comparison features: `X =:= Lit' (and ==, =/=, /=), `lists:member(X, Lits)' and
%% `binary:match(X, Lit)' in bodies (guards cannot call out, and are left alone), and the literal
%% patterns of case and function clauses: a clause that follows clauses with a literal (an
%% integer, a binary, a string, or a binary or string pattern with a literal prefix) in some
%% position reports, when it runs, the value in that position against those literals, which
%% failed to match it. Operands go through sift_cov:'$cmp'/3 and sift_cov:'$search'/3, which
%% return the value and record nothing outside a fuzzer.
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
             cmp = true :: boolean(),
             sites = 0 :: non_neg_integer(),
             function = none :: {atom(), arity()} | none,
             next = 0 :: non_neg_integer(),
             probes = [] :: [{non_neg_integer(), {atom(), arity()}, pos_integer(), atom()}]}).

parse_transform(Forms, Options0) ->
    Options = Options0 ++ compile_options(Forms),
    Module = hd([M || {attribute, _, module, M} <- Forms]),
    Size = proplists:get_value(sift_cov_size, Options, ?DEFAULT_SIZE),
    Base = proplists:get_value(sift_cov_base, Options, erlang:phash2(Module, Size)),
    Hit = proplists:get_value(sift_cov_hit, Options, {sift_cov, hit}),
    %% A custom hit function may keep anything under '$sift_ctx', not a sift_cov context.
    Cmp = proplists:get_value(sift_cov_cmp, Options, Hit =:= {sift_cov, hit}),
    St0 = #st{module = Module, size = Size, base = Base rem Size, hit = Hit, cmp = Cmp},
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

%% Function and case clauses carry, from one to the next, the literals of the patterns
%% before them, by position (Seen).
clauses(Kind, Cs, #st{cmp = true} = St0) when Kind =:= function; Kind =:= 'case' ->
    {Out, {St, _}} = lists:mapfoldl(fun(C, {S, Seen}) ->
                                            {C1, S1, Seen1} = clause(Kind, C, S, Seen),
                                            {C1, {S1, Seen1}}
                                    end, {St0, #{}}, Cs),
    {Out, St};
clauses(Kind, Cs, St) ->
    lists:mapfoldl(fun(C, S) -> {C1, S1, _} = clause(Kind, C, S, #{}), {C1, S1} end, St, Cs).

clause(Kind, {clause, A, Patterns0, Guards, Body0}, St0, Seen) ->
    {Probe, St1} = probe(Kind, A, St0),
    {Body, St2} = exprs(Body0, St1),
    {Patterns, Reports, St} = report_literals(Patterns0, 1, Seen, St2, [], []),
    {{clause, A, Patterns, Guards, [Probe | Reports ++ Body]}, St,
     lists:foldl(fun({P, Pos}, M) ->
                         case pattern_literal(P) of
                             none -> M;
                             Lit -> maps:update_with(Pos, fun(L) -> L ++ [Lit] end, [Lit], M)
                         end
                 end, Seen, lists:zip(Patterns0, lists:seq(1, length(Patterns0))))}.

%% A pattern in a position where earlier clauses had literals is bound to a variable of its
%% own, which the clause's body reports against them.
report_literals([], _, _, St, Ps, Rs) ->
    {lists:reverse(Ps), lists:reverse(Rs), St};
report_literals([P | Rest], Pos, Seen, St0, Ps, Rs) ->
    case {maps:get(Pos, Seen, []), pattern_literal(P)} of
        {[_ | _] = Lits, none} ->
            A = erl_anno:set_generated(true, element(2, P)),
            {Site, St} = site(St0),
            Var = {var, A, list_to_atom("SiftArg@" ++ integer_to_list(Site))},
            Report = cmp_call(A, Site, Var, erl_parse:abstract(Lits)),
            report_literals(Rest, Pos + 1, Seen, St, [{match, A, P, Var} | Ps], [Report | Rs]);
        _ ->
            report_literals(Rest, Pos + 1, Seen, St0, [P | Ps], Rs)
    end.

%% What a pattern compares its value with, when that is worth reporting: an integer, a binary
%% or a string, or the literal head of a binary or string pattern.
pattern_literal({match, _, P1, P2}) ->
    case pattern_literal(P1) of none -> pattern_literal(P2); Lit -> Lit end;
pattern_literal({bin, _, Segs} = P) ->
    case literal(P) of
        none -> literal_prefix(Segs, <<>>);
        Lit -> Lit
    end;
pattern_literal({op, _, '++', {string, _, [_, _ | _] = S}, _}) ->
    S;
pattern_literal(P) ->
    literal(P).

%% Leading segments whose value and size are literals (<<"PK", 16#0605:16/little, ...>>), as
%% the bytes they match; two at least, since a fuzzer finds a single byte by itself.
literal_prefix([{bin_element, A, _, _, _} = Seg | Segs], Acc) ->
    try erl_eval:expr({bin, A, [Seg]}, erl_eval:new_bindings()) of
        {value, B, _} when is_binary(B) -> literal_prefix(Segs, <<Acc/binary, B/binary>>);
        _ -> literal_prefix([], Acc)
    catch
        _:_ -> literal_prefix([], Acc)
    end;
literal_prefix(_, Acc) when byte_size(Acc) >= 2 ->
    Acc;
literal_prefix(_, _) ->
    none.

%% An integer, a non-empty binary or a non-empty string (not atoms: an input rarely becomes
%% one, and `X == true' is everywhere).
literal(E) ->
    try erl_parse:normalise(E) of
        I when is_integer(I) -> I;
        B when is_binary(B), B =/= <<>> -> B;
        [_ | _] = L -> case io_lib:char_list(L) andalso lists:all(fun(C) -> C =< 255 end, L) of
                           true -> L;
                           false -> none
                       end;
        _ -> none
    catch
        _:_ -> none
    end.

site(#st{module = M, sites = N} = St) ->
    {erlang:phash2({M, N}, 1 bsl 32), St#st{sites = N + 1}}.

cmp_call(A, Site, Value, Lits) ->
    {call, A, {remote, A, {atom, A, sift_cov}, {atom, A, '$cmp'}}, [{integer, A, Site}, Value, Lits]}.

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
expr({op, A, Op, L0, R0} = E, #st{cmp = true} = St0)
  when Op =:= '=:='; Op =:= '=='; Op =:= '=/='; Op =:= '/=' ->
    case {literal(L0), literal(R0)} of
        {none, none} ->
            expr_parts(E, St0);
        {none, Lit} ->
            {L, St1} = expr(L0, St0),
            {Site, St} = site(St1),
            G = erl_anno:set_generated(true, A),
            {{op, A, Op, cmp_call(G, Site, L, erl_parse:abstract([Lit])), R0}, St};
        {Lit, none} ->
            {R, St1} = expr(R0, St0),
            {Site, St} = site(St1),
            G = erl_anno:set_generated(true, A),
            {{op, A, Op, L0, cmp_call(G, Site, R, erl_parse:abstract([Lit]))}, St};
        _ ->
            {E, St0}
    end;
expr({call, A, {remote, _, {atom, _, lists}, {atom, _, member}} = F, [X0, Ls]} = E,
     #st{cmp = true} = St0) ->
    case literals(Ls) of
        [] ->
            expr_parts(E, St0);
        Lits ->
            {X, St1} = expr(X0, St0),
            {Site, St} = site(St1),
            G = erl_anno:set_generated(true, A),
            {{call, A, F, [cmp_call(G, Site, X, erl_parse:abstract(Lits)), Ls]}, St}
    end;
expr({call, A, {remote, _, {atom, _, binary}, {atom, _, match}} = F, [S0, P | Opts]} = E,
     #st{cmp = true} = St0) ->
    case needles(P) of
        [] ->
            expr_parts(E, St0);
        Needles ->
            {S1, St1} = expr(S0, St0),
            {Opts1, St2} = exprs(Opts, St1),
            {Site, St} = site(St2),
            G = erl_anno:set_generated(true, A),
            Search = {call, G, {remote, G, {atom, G, sift_cov}, {atom, G, '$search'}},
                      [{integer, G, Site}, S1, erl_parse:abstract(Needles)]},
            {{call, A, F, [Search, P | Opts1]}, St}
    end;
expr(T, St) when is_tuple(T) ->
    expr_parts(T, St);
expr(L, St) when is_list(L) ->
    lists:mapfoldl(fun expr/2, St, L);
expr(X, St) ->
    {X, St}.

%% The literals of a literal list worth reporting (lists:member's second argument).
literals(Ls) ->
    try erl_parse:normalise(Ls) of
        L when is_list(L) -> [V || V <- L, literal(erl_parse:abstract(V)) =/= none];
        _ -> []
    catch
        _:_ -> []
    end.

%% binary:match's pattern: a binary or a list of binaries, as literals.
needles(P) ->
    try erl_parse:normalise(P) of
        B when is_binary(B), B =/= <<>> -> [B];
        L when is_list(L) -> [B || B <- L, is_binary(B), B =/= <<>>];
        _ -> []
    catch
        _:_ -> []
    end.

%% Everything else only holds branches further down. Patterns and guards hold none, so
%% walking them changes nothing.
expr_parts(T, St0) ->
    {Es, St} = lists:mapfoldl(fun expr/2, St0, tuple_to_list(T)),
    {list_to_tuple(Es), St}.

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
