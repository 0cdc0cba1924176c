# shellcheck shell=bash disable=SC2154,SC2034
# pcre2 (Debian's pcre2 source): src/pcre2_fuzzsupport.c, the harness that ships in the tree and
# that OSS-Fuzz runs as pcre2_fuzzer (it compiles the input as a pattern and matches it against
# itself, with options drawn from the input, through the interpreter and the DFA matcher).
# Sourced by bench/execs, which provides debsrc.sh, the build helpers and the globals they use
# (cache, out, variants, cc, cflags, link), and reads seeds and dict: hence the two checks
# disabled above.

title_pcre2() { echo "pcre2 pcre2_fuzzer"; }

# Configured as OSS-Fuzz's build.sh configures it (fuzz support, \C forbidden, match limits of
# 1000 so that one input cannot run for long), static. Only the 8-bit library and the harness's
# archive are made: pcre2test and pcre2grep would be linked by the compiler under test for no use.
# The harness is linked as OSS-Fuzz links it, from the archive the project's Makefile makes, with
# its entry point named undefined: AFL++'s driver declares LLVMFuzzerTestOneInput weak, so that
# nothing else pulls the harness out of the archive and afl-clang-fast's build calls address 0.
build_pcre2() {
    local src v obj
    debsrc_need dpkg-dev make
    src=$(debsrc_fetch pcre2 "$cache/pcre2" src/pcre2_fuzzsupport.c) || return 1
    for v in "${variants[@]}"; do
        compilers "$v"
        obj=$out/pcre2-$v-obj
        if stale "$obj" "$v"; then
            debsrc_configure pcre2 "$src/configure" "$obj" "$cc" "${cflags[*]}" --disable-shared \
                --enable-fuzz-support --enable-never-backslash-C --with-match-limit=1000 \
                --with-match-limit-depth=1000 || return 1
            if ! make -C "$obj" -j2 libpcre2-8.la .libs/libpcre2-fuzzsupport.a \
                >>"$obj/build.log" 2>&1; then
                echo "bench/execs: pcre2's make failed with $cc in $obj" >&2
                tail -n 20 "$obj/build.log" >&2
                return 1
            fi
            built "$obj"
        fi
        "$cc" "${link[@]}" -Wl,--undefined=LLVMFuzzerTestOneInput \
            "$obj/.libs/libpcre2-fuzzsupport.a" \
            "$obj/.libs/libpcre2-8.a" -o "$out/pcre2-$v"
    done
    seeds=$out/pcre2-seeds
    pcre2_seeds "$src" "$seeds"
    dict=(-dict="$(debsrc_afl_dict regexp "$out")")
}

# pcre2_seeds SRC DEST: patterns of the test suite, one a file, bare (the harness takes the whole
# input as the pattern): those written on one line as /PATTERN/MODIFIERS in testdata/testinput*,
# up to 64 bytes, each once, spread evenly over the files to about 300 of the 4,000-odd.
pcre2_seeds() {
    local src=$1 dest=$2
    rm -rf "$dest" && mkdir -p "$dest"
    awk -v dest="$dest" '
        /^\/.*\/[^\/]*$/ {
            p = $0
            sub(/^\//, "", p)
            sub(/\/[^\/]*$/, "", p)
            if (p == "" || length(p) > 64 || (p in seen)) next
            seen[p] = 1
            n++
            pat[n] = p
            name[n] = FILENAME
            sub(/.*\//, "", name[n])
            name[n] = name[n] "-" FNR
        }
        END {
            step = int((n + 299) / 300)
            for (i = 1; i <= n; i += step) {
                f = dest "/" name[i]
                printf "%s", pat[i] >f
                close(f)
            }
        }' "$src"/testdata/testinput*
}
