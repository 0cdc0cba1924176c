# shellcheck shell=bash
# libwebp built with its own configure, for the bench/ scripts: sourced, never run alone. Needs
# bench/lib/debsrc.sh.

libwebp_fetch() { # CACHE: prints the source folder
    debsrc_need dpkg-dev
    debsrc_fetch libwebp "$1/libwebp" tests/fuzzer/advanced_api_fuzzer.c
}

# libwebp_lib SRC DIR CC CFLAGS: configures libwebp in a fresh DIR for compiler CC (static, no
# image format libraries, no viewers) and builds the two libraries the decoding fuzzers link:
# DIR/src/.libs/libwebp.a and DIR/sharpyuv/.libs/libsharpyuv.a.
libwebp_lib() {
    local src=$1 dir=$2 cc=$3
    debsrc_configure libwebp "$src/configure" "$dir" "$cc" "$4" --disable-shared --disable-png \
        --disable-jpeg --disable-tiff --disable-gif --disable-wic --disable-gl --disable-sdl ||
        return 1
    if ! { make -C "$dir/sharpyuv" -j2 && make -C "$dir/src" -j2; } >>"$dir/build.log" 2>&1; then
        echo "bench: libwebp's make failed with $cc in $dir" >&2
        tail -n 20 "$dir/build.log" >&2
        return 1
    fi
}

# libwebp_fuzzer SRC DIR CC OUT FLAGS...: tests/fuzzer/advanced_api_fuzzer.c linked with the
# libraries built in DIR, with the include paths of the fuzzers' own makefile.unix.
libwebp_fuzzer() {
    local src=$1 dir=$2 cc=$3 out=$4
    shift 4
    "$cc" "$@" -I"$src/src" -I"$src" "$src/tests/fuzzer/advanced_api_fuzzer.c" \
        "$dir/src/.libs/libwebp.a" "$dir/sharpyuv/.libs/libsharpyuv.a" -lpthread -lm -o "$out"
}

# libwebp_seeds SRC DEST: the small WebP images of the source tree (under 64 KiB: the two
# 1.3 MB images of webp_js/ would set libFuzzer's -max_len).
libwebp_seeds() {
    debsrc_copy "$1" "$2" -name '*.webp' -size -64k
}
