# shellcheck shell=bash disable=SC2154,SC2034
# JsonCpp (Debian's libjsoncpp source): src/test_lib_json/fuzz.cpp, the harness that ships in the
# tree and that OSS-Fuzz runs as jsoncpp_fuzzer: the input's first four bytes pick the
# CharReader's settings, the rest is parsed. The library is built with its own CMake as OSS-Fuzz
# builds it, static, without its tests. Sourced by bench/execs, which provides debsrc.sh, the
# build helpers and the globals they use (cache, out, variants, cc, cxx, cflags, link), and reads
# seeds and dict: hence the two checks disabled above.

title_jsoncpp() { echo "jsoncpp jsoncpp_fuzzer"; }

# jsoncpp_seeds SRC DEST: the JSON documents of test/data (valid and invalid ones, all under
# 64 KiB), each after four zero bytes: the harness takes its settings from the first four bytes,
# which would otherwise eat the start of every document.
jsoncpp_seeds() {
    local src=$1 dest=$2 f
    debsrc_copy "$src/test/data" "$dest" -name '*.json' -size -64k
    for f in "$dest"/*; do
        { printf '\0\0\0\0' && cat "$f"; } >"$f.tmp" && mv "$f.tmp" "$f"
    done
}

build_jsoncpp() {
    local src v obj
    debsrc_need dpkg-dev cmake make
    src=$(debsrc_fetch libjsoncpp "$cache/libjsoncpp" src/test_lib_json/fuzz.cpp) || return 1
    for v in "${variants[@]}"; do
        compilers "$v"
        obj=$out/jsoncpp-$v-obj
        if stale "$obj" "$v"; then
            rm -rf "$obj" && mkdir -p "$obj"
            # OSS-Fuzz's Release build without Release's -O3: the benchmark's flags alone (and
            # its -DNDEBUG). Static only, and no tests, whose post-build step would run them.
            if ! { SIFT_VALUES=0 cmake -S "$src" -B "$obj" -G "Unix Makefiles" -Wno-dev \
                -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
                -DCMAKE_C_FLAGS="${cflags[*]}" -DCMAKE_CXX_FLAGS="${cflags[*]}" \
                -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE=-DNDEBUG \
                -DBUILD_SHARED_LIBS=OFF -DBUILD_STATIC_LIBS=ON -DBUILD_OBJECT_LIBS=OFF \
                -DJSONCPP_WITH_TESTS=OFF -DJSONCPP_WITH_POST_BUILD_UNITTEST=OFF &&
                make -C "$obj" -j2 jsoncpp_static; } >"$obj/build.log" 2>&1; then
                echo "bench/execs: jsoncpp's build failed with $cxx in $obj" >&2
                tail -n 20 "$obj/build.log" >&2
                return 1
            fi
            built "$obj"
        fi
        "$cxx" "${link[@]}" -std=c++11 -I"$src/include" "$src/src/test_lib_json/fuzz.cpp" \
            "$obj/lib/libjsoncpp.a" -o "$out/jsoncpp-$v"
    done
    seeds=$out/jsoncpp-seeds
    jsoncpp_seeds "$src" "$seeds"
    dict=(-dict="$src/src/test_lib_json/fuzz.dict")
}
