# shellcheck shell=bash disable=SC2034,SC2154
# libjpeg-turbo's TurboJPEG decompression, for bench/execs: sourced, never run alone. The harness
# is the one that ships in Debian's libjpeg-turbo source, fuzz/decompress.cc (the project's own
# successor to OSS-Fuzz's libjpeg_turbo_fuzzer, built under that name by fuzz/CMakeLists.txt):
# header, then decompression into four pixel formats of images up to 1 megapixel. The library is
# built with its own CMake as its fuzz/build.sh does for OSS-Fuzz: static, TurboJPEG on, SIMD on
# (nasm assembles it, uninstrumented, in every build alike). cache, out, variants, cc, cxx,
# cflags and link are bench/execs's; it reads seeds and dict.

title_libjpeg() { echo "libjpeg-turbo libjpeg_turbo_fuzzer (fuzz/decompress.cc)"; }

build_libjpeg() {
    local src v obj
    debsrc_need dpkg-dev cmake make nasm
    src=$(debsrc_fetch libjpeg-turbo "$cache/libjpeg-turbo" fuzz/decompress.cc) || return 1
    for v in "${variants[@]}"; do
        compilers "$v"
        obj=$out/libjpeg-$v-obj
        if stale "$obj" "$v"; then
            rm -rf "$obj" && mkdir -p "$obj"
            # RelWithDebInfo without its -O2 -g, as fuzz/build.sh sets it: our flags alone.
            if ! { SIFT_VALUES=0 cmake -S "$src" -B "$obj" -G "Unix Makefiles" \
                -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="${cflags[*]}" \
                -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO=-DNDEBUG \
                -DENABLE_STATIC=1 -DENABLE_SHARED=0 -DWITH_TURBOJPEG=1 -DWITH_SIMD=1 \
                -DREQUIRE_SIMD=1 &&
                make -C "$obj" -j2 turbojpeg-static; } >"$obj/build.log" 2>&1; then
                echo "bench/execs: libjpeg-turbo's build failed with $cc in $obj" >&2
                tail -n 20 "$obj/build.log" >&2
                return 1
            fi
            built "$obj"
        fi
        "$cxx" "${link[@]}" -I"$src" "$src/fuzz/decompress.cc" "$obj/libturbojpeg.a" \
            -o "$out/libjpeg-$v"
    done
    # The four JPEG images of the tree (5-12 KB): two baseline, one arithmetic-coded, one 12-bit
    # (which TurboJPEG 2.1 rejects: its error paths).
    seeds=$out/libjpeg-seeds
    debsrc_copy "$src/testimages" "$seeds" -name '*.jpg' -size -64k
    dict=(-dict="$(debsrc_afl_dict jpeg "$out")")
}
