%% @doc A parser of a small binary format, with a planted bug for the fuzz loop to find.
%%
%% Format: "SF", a version byte (1 or 2), then records of a type byte, a length byte and that
%% many bytes of value. Version 2 adds average records ($A), whose value is a list of bytes;
%% an empty one divides by zero. Each step towards the bug is a branch of its own, so a
%% coverage-guided fuzzer gets there one byte at a time.
-module(sift_example_tlv).

-export([parse/1]).

-spec parse(binary()) -> {ok, list()} | {error, atom()}.
parse(<<$S, Rest/binary>>) -> magic(Rest);
parse(_) -> {error, magic}.

magic(<<$F, Version, Rest/binary>>) -> version(Version, Rest);
magic(_) -> {error, magic}.

version(1, Rest) -> records(v1, Rest, []);
version(2, Rest) -> records(v2, Rest, []);
version(_, _) -> {error, version}.

records(_, <<>>, Acc) ->
    {ok, lists:reverse(Acc)};
records(V, <<Type, Len, Rest/binary>>, Acc) ->
    case Rest of
        <<Value:Len/binary, Tail/binary>> -> records(V, Tail, [record(V, Type, Value) | Acc]);
        _ -> {error, truncated}
    end;
records(_, _, _) ->
    {error, truncated}.

record(v1, Type, Value) -> record(Type, Value);
record(v2, $A, Values) -> {average, average(Values)};
record(v2, Type, Value) -> record(Type, Value).

record($T, Text) ->
    {text, Text};
record($N, Value) ->
    if
        byte_size(Value) =:= 2 -> {number, binary:decode_unsigned(Value)};
        true -> {error, number}
    end;
record(Type, _) ->
    {unknown, Type}.

average(Values) ->
    lists:sum(binary_to_list(Values)) div byte_size(Values).
