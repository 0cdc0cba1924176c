# shellcheck shell=bash
# The three fuzzers as the campaign benchmarks build and run them (bench/campaign, bench/bugs):
# sourced, never run alone. The caller sets root, build, bins, and calls fuzzers_setup first.

# Flags for sift alone, which a caller may set after sourcing this (fuzz_for).
sift_flags=()

# fuzzers_setup: the packages, sift's build and the compilers' paths.
fuzzers_setup() {
    debsrc_need afl++ gnuplot-nox llvm-14 dpkg-dev zlib1g-dev
    make -s -j2 BUILD="$build"
    sift_cc=$root/$build/bin/sift-cc
    sift_cxx=$root/$build/bin/sift-c++
    llvm_bin=$(llvm-config --bindir 2>/dev/null || echo /usr/lib/llvm-14/bin)
    afl_driver=/usr/lib/afl/libAFLDriver.a
    mkdir -p "$bins"
    export AFL_QUIET=1
}

# compilers VARIANT: sets cc, cxx, cflags (library) and link (harness) for one build of a target.
compilers() {
    case $1 in
    sift) cc=$sift_cc cxx=$sift_cxx cflags=(-O2 -fsanitize=fuzzer-no-link) link=(-fsanitize=fuzzer) ;;
    libfuzzer) cc=clang cxx=clang++ cflags=(-O2 -fsanitize=fuzzer-no-link) link=(-fsanitize=fuzzer) ;;
    aflpp | aflpp-cmplog) cc=afl-clang-fast cxx=afl-clang-fast++ cflags=(-O2) link=("$afl_driver") ;;
    cov)
        cc=clang cxx=clang++ cflags=(-O1 -gline-tables-only -fprofile-instr-generate -fcoverage-mapping)
        link=("$bins/campaign_driver.o" -fprofile-instr-generate)
        ;;
    esac
}

# variant_env VARIANT CMD...: AFL++'s CmpLog build is the same compiler with one variable set.
variant_env() {
    if [ "$1" = aflpp-cmplog ]; then
        shift
        AFL_LLVM_CMPLOG=1 "$@"
    else
        shift
        "$@"
    fi
}

# fuzz_for SECONDS DIR TARGET FUZZER TRIAL: runs the fuzzer until SECONDS have passed, restarted on
# the same corpus if it stops early (libFuzzer and sift stop at their first crash). BINS/TARGET.dict
# is the dictionary; BINS/TARGET.flags, where a target has one, holds flags for sift and libFuzzer;
# the array sift_flags, where the caller sets it, flags for sift alone.
fuzz_for() {
    local secs=$1 dir=$2 t=$3 f=$4 trial=$5
    local deadline=$((SECONDS + secs)) dict=() flags=() afl_timeout=() flag
    [ -s "$bins/$t.dict" ] && dict=(-dict="$bins/$t.dict")
    [ -s "$bins/$t.flags" ] && read -ra flags <"$bins/$t.flags"
    # AFL++'s own limit (1 s, scaled down from the seeds' times) ends its run at the first seed
    # that takes longer: a target that sets -timeout gives AFL++ the same limit.
    for flag in "${flags[@]}"; do
        [[ $flag == -timeout=* ]] && afl_timeout=(-t "$((${flag#-timeout=} * 1000))")
    done
    while ((SECONDS < deadline - 1)); do
        local left=$((deadline - SECONDS))
        case $f in
        sift | libfuzzer)
            local own=()
            [ "$f" = sift ] && own=("${sift_flags[@]}")
            (cd "$dir" && "$bins/$t-$f" -seed="$trial$left" -max_total_time="$left" \
                -print_final_stats=1 -artifact_prefix=crashes/ "${dict[@]}" "${flags[@]}" \
                "${own[@]}" corpus >>log 2>&1) || true
            ;;
        aflpp)
            local in=(-i "$dir/corpus")
            [ -d "$dir/out/default/queue" ] && in=(-i -)
            AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_NO_AFFINITY=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 \
                afl-fuzz "${in[@]}" -o "$dir/out" -s "$trial" -V "$left" "${afl_timeout[@]}" \
                ${dict:+-x "$bins/$t.dict"} -c "$bins/$t-aflpp-cmplog" -- "$bins/$t-aflpp" \
                >>"$dir/log" 2>&1 || true
            ;;
        esac
    done
}

# queue_dir DIR FUZZER: where the fuzzer keeps its corpus.
queue_dir() {
    if [ "$2" = aflpp ]; then echo "$1/out/default/queue"; else echo "$1/corpus"; fi
}

# crash_files DIR FUZZER: the crashing inputs a trial kept, one path a line.
crash_files() {
    if [ "$2" = aflpp ]; then
        find "$1/out/default/crashes" -name 'id:*' 2>/dev/null
    else
        find "$1/crashes" -maxdepth 1 -type f
    fi
}

# deal_trials FN RUN...: runs "FN RUN" for every RUN (its words split), dealt round-robin to JOBS
# queues, one per core from CORE on, so that each queue mixes fuzzers and a drift of the
# machine's load does not favour any one of them.
deal_trials() {
    local fn=$1 q i
    shift
    local all=("$@")
    for ((q = 0; q < jobs; q++)); do
        (
            taskset -cp $(((first_core + q) % $(getconf _NPROCESSORS_ONLN))) $BASHPID >/dev/null
            for ((i = q; i < ${#all[@]}; i += jobs)); do
                # shellcheck disable=SC2086
                "$fn" ${all[i]}
            done
        ) &
    done
    wait
}

median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
