# shellcheck shell=bash disable=SC2154,SC2034
# mbedtls (Debian's mbedtls source, 2.28): the X.509 certificate parser through
# programs/fuzz/fuzz_x509crt.c, the harness that ships in the tree and that OSS-Fuzz runs, linked
# with programs/fuzz/common.c as the tree's programs/fuzz/Makefile links every fuzzer (this one
# calls none of it). Sourced by bench/execs, which provides debsrc.sh, the build helpers and the
# globals they use (cache, out, variants, cc, cflags, link), and reads seeds and dict: hence the
# two checks disabled above.

title_mbedtls() { echo "mbedtls fuzz_x509crt"; }

# The library built with its CMake as OSS-Fuzz builds it: static (the default), no tests; no
# programs either, so that nothing but the libraries is linked by the compiler under test (the
# tree's fuzz programs need its FuzzingEngine library; the harness is linked here instead). No
# CMAKE_BUILD_TYPE, as in OSS-Fuzz: the flags are the benchmark's only.
build_mbedtls() {
    local src v obj
    debsrc_need dpkg-dev cmake make
    src=$(debsrc_fetch mbedtls "$cache/mbedtls" programs/fuzz/fuzz_x509crt.c) || return 1
    for v in "${variants[@]}"; do
        compilers "$v"
        obj=$out/mbedtls-$v-obj
        if stale "$obj" "$v"; then
            rm -rf "$obj" && mkdir -p "$obj"
            if ! { SIFT_VALUES=0 cmake -S "$src" -B "$obj" -DCMAKE_C_COMPILER="$cc" \
                -DCMAKE_C_FLAGS="${cflags[*]}" -DENABLE_TESTING=OFF -DENABLE_PROGRAMS=OFF &&
                make -C "$obj" -j2; } >"$obj/build.log" 2>&1; then
                echo "bench/execs: mbedtls's build failed with $cc in $obj" >&2
                tail -n 20 "$obj/build.log" >&2
                return 1
            fi
            built "$obj"
        fi
        "$cc" "${link[@]}" -I"$src/include" "$src/programs/fuzz/fuzz_x509crt.c" \
            "$src/programs/fuzz/common.c" "$obj/library/libmbedx509.a" \
            "$obj/library/libmbedcrypto.a" -o "$out/mbedtls-$v"
    done
    # The test certificates, PEM and DER (the .der include some keys, which the parser rejects
    # early: harmless). No dictionary: neither the tree nor AFL++ has one for ASN.1.
    seeds=$out/mbedtls-seeds
    debsrc_copy "$src/tests/data_files" "$seeds" \( -name '*.crt' -o -name '*.der' \) -size -64k
    dict=()
}
