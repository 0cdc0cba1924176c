# shellcheck shell=bash disable=SC2034,SC2154
# HarfBuzz shaping, for bench/execs: sourced, never run alone. The harness is the one that ships
# in Debian's harfbuzz source, test/fuzzing/hb-shape-fuzzer.cc (OSS-Fuzz's hb-shape-fuzzer): the
# input as a font, shaping a fixed string and then its own last 64 bytes as UTF-32, with variation
# coordinates taken from its tail. The library is built with its own meson as OSS-Fuzz's
# build.sh does (static, experimental API on), without glib, ICU, FreeType, cairo and the tests:
# OSS-Fuzz's -Dfuzzer_ldflags would also compile in src/failing-alloc.c, a failing allocator
# that the Debian source leaves out, so the harness's alloc_state is its own unused dummy and
# no allocation is made to fail. cache, out, variants, cc, cxx, cflags and link are bench/execs's;
# it reads seeds and dict.

title_harfbuzz() { echo "HarfBuzz hb-shape-fuzzer"; }

build_harfbuzz() {
    local src v obj
    debsrc_need dpkg-dev meson ninja-build
    src=$(debsrc_fetch harfbuzz "$cache/harfbuzz" test/fuzzing/hb-shape-fuzzer.cc) || return 1
    for v in "${variants[@]}"; do
        compilers "$v"
        obj=$out/harfbuzz-$v-obj
        if stale "$obj" "$v"; then
            rm -rf "$obj" && mkdir -p "$obj"
            # buildtype plain: our flags alone, without meson's -O and -g.
            if ! { CC=$cc CXX=$cxx CFLAGS="${cflags[*]}" CXXFLAGS="${cflags[*]}" SIFT_VALUES=0 \
                meson setup "$obj" "$src" --buildtype=plain --default-library=static \
                --wrap-mode=nodownload -Dexperimental_api=true -Dglib=disabled \
                -Dgobject=disabled -Dcairo=disabled -Dchafa=disabled -Dicu=disabled \
                -Dfreetype=disabled -Dtests=disabled -Ddocs=disabled -Dintrospection=disabled &&
                ninja -C "$obj" -j2 src/libharfbuzz.a; } >"$obj/build.log" 2>&1; then
                echo "bench/execs: harfbuzz's build failed with $cc in $obj" >&2
                tail -n 20 "$obj/build.log" >&2
                return 1
            fi
            built "$obj"
        fi
        # The harness with the library's own C++ dialect; test/fuzzing/main.cc, the driver for
        # runs without a fuzzer, left out as OSS-Fuzz leaves it out.
        "$cxx" "${link[@]}" -std=c++11 -fno-exceptions -fno-rtti -DHB_EXPERIMENTAL_API \
            -I"$src/src" -I"$obj/src" "$src/test/fuzzing/hb-shape-fuzzer.cc" \
            "$obj/src/libharfbuzz.a" -lm -pthread -o "$out/harfbuzz-$v"
    done
    # The shaping tests' own fonts, those under 64 KiB (175 of 181: TrueType, a collection, a
    # Mac dfont).
    seeds=$out/harfbuzz-seeds
    debsrc_copy "$src/test/shape/data/in-house/fonts" "$seeds" -size -64k
    # None ships in the tree: AFL++'s OpenType dictionary, the tags of the tables, features and
    # scripts that shaping looks up.
    dict=(-dict="$(debsrc_afl_dict otf "$out")")
}
