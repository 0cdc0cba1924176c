%% @doc Bugs that coverage alone reaches slowly, for sift_erl to find.
%%
%% six/1 crashes on inputs that begin "SIFT" and then a 16-bit version 258: six bytes, in two
%% comparisons with literals (a binary pattern's literal head, a case on an integer).
%% sixteen/1 crashes on inputs that begin with a 16-byte literal, in one pattern: no branch
%% tells a fuzzer it got a byte of it right, only the comparison's operands do. search/1 crashes
%% on inputs that hold a 16-byte literal anywhere (binary:match). hang/1 never returns on inputs
%% that begin "HANG".
-module(sift_planted).

-export([six/1, sixteen/1, search/1, hang/1]).

six(<<"SIFT", Rest/binary>>) -> version(Rest);
six(_) -> {error, magic}.

version(<<V:16, _/binary>>) ->
    case V of
        258 -> erlang:error(planted_six);
        _ -> {error, version}
    end;
version(_) ->
    {error, short}.

sixteen(<<"sift-erlang-16by", _/binary>>) -> erlang:error(planted_sixteen);
sixteen(_) -> ok.

search(Input) ->
    case binary:match(Input, <<"needle-of-16-byt">>) of
        nomatch -> ok;
        _ -> erlang:error(planted_search)
    end.

hang(<<"HANG", _/binary>>) -> receive after infinity -> hung end;
hang(_) -> ok.
