%% @doc Instruments loaded modules without their sources: the abstract code in a beam's
%% debug_info (as cover compiles modules) goes through sift_cov_transform, is compiled and
%% loaded in place of the module; restore/1 loads the original beam back.
%%
%%   ok = sift_beam:instrument(uri_string),
%%   ... fuzz ...
%%   ok = sift_beam:restore(uri_string).
%%
%% Any module compiled with debug_info can be instrumented (OTP's own and rebar3's builds are),
%% except the preloaded ones and those sift itself runs on (sift_cov). Sticky modules (kernel,
%% stdlib) are unstuck while instrumented. A module instrumented twice is instrumented again
%% from its original beam, so options can change.
-module(sift_beam).

-export([instrument/1, instrument/2, restore/1, instrumented/0]).

%% The original beam of each instrumented module, for restore/1.
-define(KEY(Mod), {?MODULE, Mod}).

-type error() :: {error, {atom(), module()} | {compile, module(), term()}}.

-spec instrument(module()) -> ok | error().
instrument(Mod) ->
    instrument(Mod, []).

%% @doc Instruments Mod with sift_cov_transform's Options ({sift_cov_size, N} and so on).
-spec instrument(module(), list()) -> ok | error().
instrument(Mod, Options) ->
    case original(Mod) of
        {ok, {Bin, File, _Sticky} = Orig} ->
            case forms(Mod, Bin) of
                {ok, Forms} ->
                    case [F || {function, _, '$sift_probes', 0, _} = F <- Forms] of
                        [] -> compile_and_load(Mod, File, Forms, Options, Orig);
                        _ -> {error, {already_instrumented, Mod}}
                    end;
                {error, _} = E ->
                    E
            end;
        {error, _} = E ->
            E
    end.

%% @doc Loads Mod's original beam back. An error when Mod is not instrumented by instrument/2.
-spec restore(module()) -> ok | error().
restore(Mod) ->
    case persistent_term:get(?KEY(Mod), undefined) of
        undefined ->
            {error, {not_instrumented, Mod}};
        {Bin, File, Sticky} ->
            %% Loading a module from a sticky folder makes it sticky again.
            Sticky andalso code:unstick_mod(Mod),
            _ = code:purge(Mod),
            {module, Mod} = code:load_binary(Mod, File, Bin),
            _ = code:purge(Mod),
            Sticky andalso code:stick_mod(Mod),
            persistent_term:erase(?KEY(Mod)),
            ok
    end.

%% @doc The modules instrumented now.
-spec instrumented() -> [module()].
instrumented() ->
    lists:sort([M || {?KEY(M), _} <- persistent_term:get()]).

original(Mod) ->
    Refused = [sift_cov | erlang:pre_loaded()],
    case persistent_term:get(?KEY(Mod), undefined) of
        _ when is_atom(Mod) =:= false ->
            {error, {not_a_module, Mod}};
        undefined ->
            case lists:member(Mod, Refused) of
                true ->
                    {error, {refused, Mod}};
                false ->
                    %% Only a loaded module tells whether it is sticky.
                    _ = code:ensure_loaded(Mod),
                    case beam(Mod) of
                        {ok, Bin, File} -> {ok, {Bin, File, code:is_sticky(Mod)}};
                        error -> {error, {no_beam, Mod}}
                    end
            end;
        Orig ->
            {ok, Orig}
    end.

%% The beam the module was loaded from, wherever it lies, or else the one the code path holds.
beam(Mod) ->
    File = code:which(Mod),
    case is_list(File) andalso filename:extension(File) =:= ".beam" andalso file:read_file(File) of
        {ok, Bin} ->
            {ok, Bin, File};
        _ ->
            case code:get_object_code(Mod) of
                {Mod, Bin, Found} -> {ok, Bin, Found};
                error -> error
            end
    end.

%% The module's abstract code, from its debug_info chunk (OTP 20 and later) or the older
%% abstract_code chunk.
forms(Mod, Bin) ->
    case beam_lib:chunks(Bin, [debug_info]) of
        {ok, {Mod, [{debug_info, {debug_info_v1, Backend, Data}}]}} ->
            case Backend:debug_info(erlang_v1, Mod, Data, []) of
                {ok, Forms} -> {ok, Forms};
                {error, _} -> {error, {no_debug_info, Mod}}
            end;
        _ ->
            case beam_lib:chunks(Bin, [abstract_code]) of
                {ok, {Mod, [{abstract_code, {raw_abstract_v1, Forms}}]}} -> {ok, Forms};
                _ -> {error, {no_debug_info, Mod}}
            end
    end.

compile_and_load(Mod, File, Forms0, Options, {_, _, Sticky} = Orig) ->
    %% The abstract code is what the module's parse transforms made already: they must not
    %% run again.
    Forms = [case F of
                 {attribute, A, compile, Opts} -> {attribute, A, compile, drop_transforms(Opts)};
                 _ -> F
             end || F <- Forms0],
    case sift_cov_transform:parse_transform(Forms, Options) of
        {error, Es, _} ->
            {error, {compile, Mod, Es}};
        Instrumented ->
            case compile:noenv_forms(Instrumented, [binary, return_errors, no_spawn_compiler_process]) of
                {ok, Mod, Bin} ->
                    Sticky andalso code:unstick_mod(Mod),
                    _ = code:purge(Mod),
                    case code:load_binary(Mod, File, Bin) of
                        {module, Mod} ->
                            persistent_term:put(?KEY(Mod), Orig),
                            ok;
                        {error, Why} ->
                            Sticky andalso code:stick_mod(Mod),
                            {error, {Why, Mod}}
                    end;
                {error, Es, _} ->
                    {error, {compile, Mod, Es}}
            end
    end.

drop_transforms(Opts) when is_list(Opts) ->
    [O || O <- Opts, not is_tuple(O) orelse element(1, O) =/= parse_transform];
drop_transforms({parse_transform, _}) ->
    [];
drop_transforms(Opt) ->
    Opt.
