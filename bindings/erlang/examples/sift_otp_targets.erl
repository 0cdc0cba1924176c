%% @doc Fuzz targets on OTP modules that sift_erl instruments from their beams, without their
%% sources: any exception is a crash, since each function documents an error return for bad
%% input. zip and erl_tar catch what they raise and return it as {error, _}: a caught
%% exception ({'EXIT', _}) is turned back into a crash, a deliberate throw is not.
%%
%%   erl -noshell -pa build/erlang -eval 'sift_otp_targets:fuzz(zip, #{max_total_time => 60}), halt().'
-module(sift_otp_targets).

-export([targets/0, fuzz/2, target/1, uri/1, inet_address/1]).

%% Name => {Target, modules to instrument}
targets() ->
    #{uri_string => {fun uri/1, [uri_string]},
      inet_parse => {fun inet_address/1, [inet_parse]},
      erl_scan => {fun(B) -> erl_scan:string(latin1(B)) end, [erl_scan]},
      zip => {fun zip/1, [zip]},
      erl_tar => {fun(B) -> uncaught(erl_tar:extract({binary, B}, [memory])) end, [erl_tar]}}.

-spec target(atom()) -> {sift_erl:target(), [module()]}.
target(Name) ->
    maps:get(Name, targets()).

%% @doc Fuzzes target Name with sift_erl's options Opts, its modules instrumented.
fuzz(Name, Opts) ->
    {Target, Modules} = target(Name),
    sift_erl:fuzz(Target, Opts#{instrument => Modules}).

%% parse, and for what parses, recompose and normalize: each returns {error, ...} for bad input.
%% Only valid UTF-8: in OTP 25.2.3 uri_string:parse/1 raises function_clause on any other byte
%% (uri_string:parse(<<"a", 255>>)), which sift_erl finds in a few executions, and which would
%% hide anything deeper.
uri(B) ->
    case unicode:characters_to_binary(B) of
        B -> uri_parsed(B);
        _ -> skipped
    end.

uri_parsed(B) ->
    case uri_string:parse(B) of
        #{} = Map ->
            _ = uri_string:recompose(Map),
            uri_string:normalize(Map);
        {error, _, _} ->
            ok
    end.

inet_address(B) ->
    case inet:parse_address(latin1(B)) of
        {ok, Addr} -> {ok, Addr} = inet:parse_address(inet:ntoa(Addr));
        {error, einval} -> ok
    end.

latin1(B) -> binary_to_list(B).

%% In OTP 25.2.3 zip:unzip/2 of any binary without an end-of-central-directory record returns
%% {error, {'EXIT', {{badmatch, _}, [{zip, binary_io, 2, _} | _]}}}: its way of saying "not a
%% zip archive", which sift_erl finds at once, and which would hide anything deeper.
zip(B) ->
    case zip:unzip(B, [memory]) of
        {error, {'EXIT', {{badmatch, _}, [{zip, binary_io, 2, _} | _]}}} -> not_a_zip;
        Result -> uncaught(Result)
    end.

uncaught({error, {'EXIT', Reason}}) -> erlang:error({caught, Reason});
uncaught(Result) -> Result.
