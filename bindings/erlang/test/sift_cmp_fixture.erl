%% @doc Comparisons with literals for sift_cov_transform_tests: "cmp: Value Literals" comments
%% say what each reports.
-module(sift_cmp_fixture).

-export([eq/1, neq/1, member/1, search/1, heads/2, cased/1, in_guard/1, strings/1, sized/1]).

eq(X) -> X =:= 1234.                                % cmp: X [1234]

neq(X) -> <<"neq-lit">> /= X.                       % cmp: X [<<"neq-lit">>]

member(X) -> lists:member(X, [<<"GET">>, <<"PUT">>, get]). % cmp: X [<<"GET">>, <<"PUT">>]

search(X) -> binary:match(X, <<"needle">>).         % search: X [<<"needle">>]

heads(<<"MAGIC", _/binary>>, 7) -> magic;
heads(_, 300) -> three_hundred;                     % cmp: Arg1 [<<"MAGIC">>] (not 300)
heads(A, B) -> {A, B}.                              % cmp: Arg1 [<<"MAGIC">>] Arg2 [7, 300]

cased(X) ->
    case X of
        <<"one">> -> 1;
        "two" ++ _ -> 2;                            % nothing: a literal pattern itself
        _ -> 0                                      % cmp: X [<<"one">>, "two"]
    end.

in_guard(X) when X =:= 99 -> guard;                 % nothing: guards call nothing
in_guard(_) -> other.

strings(X) -> X == "text".                          % cmp: X ["text"]

sized(<<"PK", 16#0605:16/little, _/binary>>) -> eocd;
sized(<<1, _/binary>>) -> one;
sized(<<_:16, X:8, _/binary>>) -> X;                % cmp: Arg1 [<<"PK", 5, 6>>] (not <<1>>)
sized(_) -> short.                                  % cmp: Arg1 [<<"PK", 5, 6>>]
