# shellcheck shell=bash disable=SC2154,SC2034
# lcms2 (Debian's lcms2 source, Little CMS): ICC profile parsing and transform creation through
# bench/targets/lcms2_fuzzer.c, our own harness doing what OSS-Fuzz's cms_transform_fuzzer does
# (the Debian tree ships no harness). Sourced by bench/execs, which provides debsrc.sh, the build
# helpers and the globals they use (cache, out, variants, cc, cflags, link), and reads seeds and
# dict: hence the two checks disabled above.

title_lcms2() { echo "lcms2 cms_transform (ours)"; }

# The library built with its configure, static, as OSS-Fuzz builds it; without the JPEG and TIFF
# libraries, which only its utilities use, so that what is installed does not change the build.
# Only src/ is made: the utilities and test programs would be linked by the compiler under test
# for no use.
build_lcms2() {
    local src v obj
    debsrc_need dpkg-dev make
    src=$(debsrc_fetch lcms2 "$cache/lcms2" src/cmsxform.c) || return 1
    for v in "${variants[@]}"; do
        compilers "$v"
        obj=$out/lcms2-$v-obj
        if stale "$obj" "$v"; then
            debsrc_configure lcms2 "$src/configure" "$obj" "$cc" "${cflags[*]}" --disable-shared \
                --without-jpeg --without-tiff || return 1
            if ! make -C "$obj/src" -j2 >>"$obj/build.log" 2>&1; then
                echo "bench/execs: lcms2's make failed with $cc in $obj" >&2
                tail -n 20 "$obj/build.log" >&2
                return 1
            fi
            built "$obj"
        fi
        "$cc" "${link[@]}" -I"$src/include" bench/targets/lcms2_fuzzer.c \
            "$obj/src/.libs/liblcms2.a" -lm -lpthread -o "$out/lcms2-$v"
    done
    # The ICC profiles of the tree (testbed/ and the plugins' test profiles) under 64 KiB: the
    # larger ones (0.5-2.6 MB) would set libFuzzer's -max_len.
    seeds=$out/lcms2-seeds
    debsrc_copy "$src" "$seeds" \( -iname '*.icc' -o -iname '*.icm' \) -size -64k
    dict=(-dict="$(debsrc_afl_dict icc "$out")")
}
