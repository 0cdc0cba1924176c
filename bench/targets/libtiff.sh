# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154 # cache, out, variants, cc, cxx, cflags, link, seeds, dict: bench/execs's
# libtiff's tiff_read_rgba_fuzzer for bench/execs (sourced, never run alone): the harness is
# contrib/oss-fuzz/tiff_read_rgba_fuzzer.cc of Debian's tiff source, built as the tree's own
# contrib/oss-fuzz/build.sh does: the static libtiff and libtiffxx by CMake, the harness linked
# with both. That script also links zlib, libjpeg-turbo, jbigkit and liblzma, which it builds or
# installs itself; here every external codec is off, so that all the code a run executes is
# libtiff's, instrumented, and the build needs nothing beyond CMake: the built-in codecs (CCITT,
# PackBits, LZW, ThunderScan, NeXT, LogLuv) remain, and images in the other compressions end
# in libtiff's error path for a codec that is not configured.

title_libtiff() { echo "libtiff tiff_read_rgba_fuzzer"; }

build_libtiff() {
    local src v obj
    debsrc_need dpkg-dev cmake
    src=$(debsrc_fetch tiff "$cache/tiff" contrib/oss-fuzz/tiff_read_rgba_fuzzer.cc) || return 1
    for v in "${variants[@]}"; do
        compilers "$v"
        obj=$out/libtiff-$v-obj
        if stale "$obj" "$v"; then
            rm -rf "$obj" && mkdir -p "$obj"
            if ! { SIFT_VALUES=0 cmake -S "$src" -B "$obj" -G "Unix Makefiles" \
                -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
                -DCMAKE_C_FLAGS="${cflags[*]}" -DCMAKE_CXX_FLAGS="${cflags[*]}" \
                -DBUILD_SHARED_LIBS=OFF -Dtiff-tools=OFF -Dtiff-tests=OFF -Dtiff-contrib=OFF \
                -Dtiff-docs=OFF -Dzlib=OFF -Dlibdeflate=OFF -Dpixarlog=OFF -Djpeg=OFF \
                -Dold-jpeg=OFF -Djbig=OFF -Dlzma=OFF -Dzstd=OFF -Dwebp=OFF -Dlerc=OFF &&
                make -C "$obj" -j2 tiffxx; } >"$obj/build.log" 2>&1; then
                echo "bench: libtiff's build failed with $cc in $obj" >&2
                tail -n 20 "$obj/build.log" >&2
                return 1
            fi
            built "$obj"
        fi
        "$cxx" "${link[@]}" -std=c++11 -I"$src/libtiff" -I"$obj/libtiff" \
            "$src/contrib/oss-fuzz/tiff_read_rgba_fuzzer.cc" "$obj/libtiff/libtiffxx.a" \
            "$obj/libtiff/libtiff.a" -lm -o "$out/libtiff-$v"
    done
    # OSS-Fuzz's seeds are the .tif files of AFL's testcases archive, which the tree lacks; its
    # own test images (under 64 KiB, the limit of the other targets) stand in for them.
    seeds=$out/libtiff-seeds
    debsrc_copy "$src" "$seeds" -path "$src/test/*" \( -name '*.tif' -o -name '*.tiff' \) -size -64k
    # AFL's TIFF dictionary, as Debian's afl++-doc ships it.
    dict=(-dict="$(debsrc_afl_dict tiff "$out")")
}
