# shellcheck shell=bash disable=SC2154,SC2034
# woff2 (Debian's woff2 source): src/convert_woff2ttf_fuzzer.cc, the harness that ships in the
# tree and that OSS-Fuzz's woff2 project runs: a WOFF2 font decoded to TTF into a string of at
# most 30 MB. woff2's own sources are built with its CMake (OSS-Fuzz uses the Makefile, which
# needs the brotli submodule that Debian's tarball lacks): static, and without
# -no-canonical-prefixes, which OSS-Fuzz strips too. Brotli is Debian's libbrotli-dev, linked
# uninstrumented and statically in every build alike: the decoder's own code is what is measured.
# Sourced by bench/execs, which provides debsrc.sh, the build helpers and the globals they use
# (cache, out, variants, cc, cxx, cflags, link), and reads seeds and dict: hence the two checks
# disabled above.

title_woff2() { echo "woff2 convert_woff2ttf_fuzzer"; }

# woff2_cmake SRC DIR CC CXX FLAGS TARGET...: configures woff2 in a fresh DIR and builds TARGETs,
# the log in DIR/build.log.
woff2_cmake() {
    local src=$1 dir=$2 cc=$3 cxx=$4 flags=$5
    shift 5
    rm -rf "$dir" && mkdir -p "$dir"
    if ! { SIFT_VALUES=0 cmake -S "$src" -B "$dir" -G "Unix Makefiles" \
        -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
        -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
        -DBUILD_SHARED_LIBS=OFF -DCANONICAL_PREFIXES=ON &&
        make -C "$dir" -j2 "$@"; } >"$dir/build.log" 2>&1; then
        echo "bench/execs: woff2's build failed with $cxx in $dir" >&2
        tail -n 20 "$dir/build.log" >&2
        return 1
    fi
}

# woff2_seeds SRC DEST: the tree has no WOFF2 font. Small ones made from Debian's DejaVu fonts:
# each cut down by fontTools' subsetter to three sets of characters (digits, ASCII, Latin-1:
# whole, they compress to 130-260 KB) and compressed by woff2's own woff2_compress, built
# once without instrumentation. Made once: the subsetter takes a while to start, 18 times.
woff2_seeds() {
    local src=$1 dest=$2 tools=$out/woff2-tools-obj work f name set
    [ -d "$dest" ] && return
    # munkres named so that apt need not choose SciPy for python3-fonttools's alternative.
    debsrc_need fonts-dejavu-core fonttools python3-munkres
    if [ ! -x "$tools/woff2_compress" ]; then
        woff2_cmake "$src" "$tools" clang clang++ "-O2" woff2_compress || return 1
    fi
    rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
    work=$(mktemp -d)
    for f in $(dpkg -L fonts-dejavu-core | grep '\.ttf$'); do
        name=$(basename "$f" .ttf)
        for set in digits:U+0030-0039 ascii:U+0020-007E latin1:U+0020-007E,U+00A0-00FF; do
            if ! { pyftsubset "$f" --unicodes="${set#*:}" --output-file="$work/$name-${set%%:*}.ttf" &&
                "$tools/woff2_compress" "$work/$name-${set%%:*}.ttf"; } >>"$work/log" 2>&1; then
                echo "bench/execs: cannot make a WOFF2 seed from $f; the log's last lines:" >&2
                tail -n 20 "$work/log" >&2
                rm -rf "$work"
                return 1
            fi
        done
    done
    find "$work" -name '*.woff2' -size -64k -exec cp {} "$dest.tmp/" \;
    rm -rf "$work"
    if [ -z "$(ls -A "$dest.tmp")" ]; then
        echo "bench/execs: no WOFF2 seed under 64 KiB in $dest.tmp" >&2
        return 1
    fi
    mv "$dest.tmp" "$dest"
}

build_woff2() {
    local src v obj
    debsrc_need dpkg-dev cmake make pkg-config libbrotli-dev
    src=$(debsrc_fetch woff2 "$cache/woff2" src/convert_woff2ttf_fuzzer.cc) || return 1
    for v in "${variants[@]}"; do
        compilers "$v"
        obj=$out/woff2-$v-obj
        if stale "$obj" "$v"; then
            woff2_cmake "$src" "$obj" "$cc" "$cxx" "${cflags[*]}" woff2dec || return 1
            built "$obj"
        fi
        "$cxx" "${link[@]}" -std=c++11 -I"$src/include" "$src/src/convert_woff2ttf_fuzzer.cc" \
            "$obj/libwoff2dec.a" "$obj/libwoff2common.a" -l:libbrotlidec.a -l:libbrotlicommon.a \
            -o "$out/woff2-$v"
    done
    seeds=$out/woff2-seeds
    woff2_seeds "$src" "$seeds" || return 1
    # No dictionary: neither the tree nor OSS-Fuzz's project has one, and AFL++'s otf.dict
    # holds OpenType's tags (tables, features, scripts), which a WOFF2 file gives as one-byte
    # indexes in its table directory or inside its Brotli stream, out of a mutator's reach.
    dict=()
}
