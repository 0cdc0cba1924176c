%% @doc Every construct sift_cov_transform instruments, for its tests. The comments at the ends
%% of lines name the probe the tests expect there.
-module(sift_probe_fixture).

-export([classify/1, sign/1, wait/1, safe_div/2, apply_twice/2, countdown/1]).

classify(N) when is_integer(N) -> %% probe:function:integer
    case N rem 2 of
        0 -> even; %% probe:case:even
        _ -> odd %% probe:case:odd
    end;
classify(_) -> %% probe:function:other
    other.

sign(N) -> %% probe:function:sign
    if
        N > 0 -> positive; %% probe:if:positive
        N < 0 -> negative; %% probe:if:negative
        true -> zero %% probe:if:zero
    end.

wait(Timeout) -> %% probe:function:wait
    receive
        {ping, From} -> From ! pong, pinged %% probe:receive:ping
    after Timeout ->
        timeout %% probe:after
    end.

safe_div(A, B) -> %% probe:function:safe_div
    try A div B of
        Q -> {ok, Q} %% probe:try:ok
    catch
        error:badarith -> {error, badarith} %% probe:catch
    end.

apply_twice(F, X) -> %% probe:function:apply_twice
    Twice = fun(Y) -> F(F(Y)) end, %% probe:fun:twice
    Twice(X).

countdown(N) -> %% probe:function:countdown
    Loop = fun Down(0) -> done; Down(K) -> Down(K - 1) end, %% probe:fun:down0 probe:fun:down
    Loop(N).
