# shellcheck shell=bash disable=SC2034,SC2154
# FreeType loading and rendering glyphs, for bench/execs: sourced, never run alone. Debian's
# freetype source ships no harness (OSS-Fuzz's are in freetype2-testing), so the harness is ours,
# bench/targets/freetype2_fuzzer.c: each face of a font in memory sized, its first 50 glyphs
# loaded and rendered. The library is built with its own configure, static, without the optional
# libraries (zlib, bzip2, libpng, HarfBuzz, Brotli, librsvg; gzip'd fonts use its bundled
# inflate): FreeType's own code alone is instrumented. cache, out, variants, cc, cflags and link are bench/execs's; it reads seeds and
# dict.

title_freetype2() { echo "FreeType load and render glyphs (ours)"; }

build_freetype2() {
    local src v obj
    debsrc_need dpkg-dev make
    src=$(debsrc_fetch freetype "$cache/freetype" src/base/ftbase.c) || return 1
    for v in "${variants[@]}"; do
        compilers "$v"
        obj=$out/freetype2-$v-obj
        if stale "$obj" "$v"; then
            debsrc_configure freetype2 "$src/configure" "$obj" "$cc" "${cflags[*]}" \
                --disable-shared --enable-static --with-zlib=no --with-bzip2=no --with-png=no \
                --with-harfbuzz=no --with-brotli=no --with-librsvg=no || return 1
            if ! make -C "$obj" -j2 >>"$obj/build.log" 2>&1; then
                echo "bench/execs: freetype2's make failed with $cc in $obj" >&2
                tail -n 20 "$obj/build.log" >&2
                return 1
            fi
            built "$obj"
        fi
        # The configuration headers that configure wrote into $obj, as the library's own
        # objects were compiled with them.
        "$cc" "${link[@]}" -I"$obj" -I"$src/include" -DFT_CONFIG_CONFIG_H='<ftconfig.h>' \
            -DFT_CONFIG_OPTIONS_H='<ftoption.h>' -DFT_CONFIG_MODULES_H='<ftmodule.h>' \
            bench/targets/freetype2_fuzzer.c "$obj/.libs/libfreetype.a" -o "$out/freetype2-$v"
    done
    # The source tree has no fonts: small ones of Debian's font packages, 10-43 KB each (the
    # DejaVu fonts are 250-760 KB): fonts-lyx's TrueType fonts, and URW's Type 1 and CFF
    # (OpenType) fonts under 64 KiB.
    debsrc_need fonts-lyx fonts-urw-base35
    seeds=$out/freetype2-seeds
    debsrc_copy /usr/share/fonts "$seeds" -size -64k \( -path '*/lyx/*.ttf' \
        -o -path '*/urw-base35/*.otf' -o -path '*/urw-base35/*.t1' \)
    # AFL++'s OpenType dictionary: the tags of its tables, features and scripts.
    dict=(-dict="$(debsrc_afl_dict otf "$out")")
}
