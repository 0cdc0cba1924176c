# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154 # cache, out, variants, cc, cflags, link, seeds, dict: bench/execs's
# libxml2's xml fuzzer for bench/execs (sourced, never run alone): the harness is fuzz/xml.c with
# fuzz/fuzz.c of Debian's libxml2 source, built as OSS-Fuzz's libxml2 project builds it: the
# static library by its own autotools, the two harness files by fuzz/Makefile's rules.

title_libxml2() { echo "libxml2 xml"; }

# libxml2_autogen SRC: regenerates SRC's autotools files once, as OSS-Fuzz's ./autogen.sh does:
# Debian's patches edit Makefile.am files, and the shipped Makefile.in would otherwise ask make
# (maintainer mode is on) to rerun automake in the middle of a build.
libxml2_autogen() {
    local src=$1
    [ -f "$src/.autogen-done" ] && return
    debsrc_need autoconf automake libtool pkg-config
    if ! (cd "$src" && NOCONFIGURE=1 ./autogen.sh) >"$src/autogen.log" 2>&1; then
        echo "bench: libxml2's autogen.sh failed in $src" >&2
        tail -n 20 "$src/autogen.log" >&2
        return 1
    fi
    touch "$src/.autogen-done"
}

# libxml2_seeds GENSEED SRC DEST: OSS-Fuzz's seeds are fuzz/genSeed's output for the test suite,
# which Debian's +dfsg tarball leaves out (test/ is excluded); genSeed here turns the XML files
# that the tree still has into inputs in fuzz.c's format (the parser options, then the document
# and the external entities it loads), one run per file: genSeed names its output after the
# file's base name, and a few base names repeat.
libxml2_seeds() {
    local gen=$1 src=$2 dest=$3 work f name
    rm -rf "$dest" && mkdir -p "$dest"
    work=$(mktemp -d)
    mkdir -p "$work/seed/xml"
    find "$src" -type f \( -name '*.xml' -o -name '*.xsl' -o -name '*.xsd' -o -name '*.rng' \) \
        -size -64k ! -path '*/.pc/*' ! -path "$src/debian/*" -print0 |
        while IFS= read -r -d '' f; do
            name=$(printf '%s' "${f#"$src"/}" | tr / _)
            (cd "$work" && "$gen" xml "$f" >/dev/null 2>&1) || true
            if [ -f "$work/seed/xml/${f##*/}" ]; then mv "$work/seed/xml/${f##*/}" "$dest/$name"; fi
        done
    rm -rf "$work"
    # External DTDs can make a seed larger than its document.
    find "$dest" -type f -size +63k -delete
    if [ -z "$(ls -A "$dest")" ]; then
        echo "bench: libxml2's genSeed wrote no seeds into $dest" >&2
        return 1
    fi
}

build_libxml2() {
    local src v obj
    debsrc_need dpkg-dev
    src=$(debsrc_fetch libxml2 "$cache/libxml2" fuzz/xml.c) || return 1
    libxml2_autogen "$src" || return 1
    for v in "${variants[@]}"; do
        compilers "$v"
        obj=$out/libxml2-$v-obj
        if stale "$obj" "$v"; then
            # OSS-Fuzz's options; zlib and liblzma left out as well: the harness parses from
            # memory, where they are never reached, and the build then does not depend on
            # whether their -dev packages happen to be installed.
            debsrc_configure libxml2 "$src/configure" "$obj" "$cc" "${cflags[*]}" \
                --disable-shared --without-debug --without-http --without-python \
                --without-zlib --without-lzma || return 1
            if ! { make -C "$obj" -j2 libxml2.la && make -C "$obj/fuzz" xml.o fuzz.o; } \
                >>"$obj/build.log" 2>&1; then
                echo "bench: libxml2's make failed with $cc in $obj" >&2
                tail -n 20 "$obj/build.log" >&2
                return 1
            fi
            built "$obj"
        fi
        "$cc" "${link[@]}" "$obj/fuzz/xml.o" "$obj/fuzz/fuzz.o" "$obj/.libs/libxml2.a" \
            -lpthread -lm -o "$out/libxml2-$v"
    done
    # genSeed by fuzz/Makefile's own rule, against the libFuzzer build's library (clang links
    # the standalone runtime that its instrumentation calls).
    obj=$out/libxml2-libfuzzer-obj
    if ! make -C "$obj/fuzz" genSeed >>"$obj/build.log" 2>&1; then
        echo "bench: libxml2's genSeed failed to build in $obj/fuzz" >&2
        tail -n 20 "$obj/build.log" >&2
        return 1
    fi
    seeds=$out/libxml2-seeds
    libxml2_seeds "$obj/fuzz/genSeed" "$src" "$seeds" || return 1
    dict=(-dict="$src/fuzz/xml.dict")
}
