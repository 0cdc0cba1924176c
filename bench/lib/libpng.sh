# shellcheck shell=bash
# libpng as OSS-Fuzz builds it (contrib/oss-fuzz/build.sh), for the bench/ scripts: sourced,
# never run alone. Needs bench/lib/debsrc.sh.

libpng_fetch() { # CACHE: prints the source folder
    debsrc_need zlib1g-dev
    debsrc_fetch libpng1.6 "$1/libpng" contrib/oss-fuzz/libpng_read_fuzzer.cc
}

# libpng_conf SRC CONF: one pnglibconf.h for every build, in CONF: no stdio, warnings or writing.
libpng_conf() {
    local src=$1 conf=$2
    [ -f "$conf/pnglibconf.h" ] && return
    rm -rf "$conf" && mkdir -p "$conf/scripts"
    cp "$src"/scripts/{options.awk,dfn.awk} "$conf/scripts/"
    cp "$src"/pngconf.h "$src"/pngusr.dfa "$conf/"
    sed -e "s/option STDIO/option STDIO disabled/" \
        -e "s/option WARNING /option WARNING disabled/" \
        -e "s/option WRITE enables WRITE_INT_FUNCTIONS/option WRITE disabled/" \
        "$src/scripts/pnglibconf.dfa" >"$conf/scripts/pnglibconf.dfa"
    make -s -C "$conf" -f "$src/scripts/pnglibconf.mak" CC=clang AWK=awk pnglibconf.h 2>/dev/null
}

# libpng_lib SRC CONF OBJ CC FLAGS...: the library's .c files compiled directly into OBJ/libpng16.a.
libpng_lib() {
    local src=$1 conf=$2 obj=$3 cc=$4
    shift 4
    rm -rf "$obj" && mkdir -p "$obj"
    printf '%s\n' png pngerror pngget pngmem pngpread pngread pngrio pngrtran pngrutil pngset \
        pngtrans pngwio pngwrite pngwtran pngwutil |
        xargs -P 2 -I{} "$cc" "$@" -I"$conf" -I"$src" -c "$src/{}.c" -o "$obj/{}.o"
    ar rcs "$obj/libpng16.a" "$obj"/*.o
}

# libpng_seeds SRC DEST: OSS-Fuzz's seed corpus, every PNG of the source tree but the known crashers.
libpng_seeds() {
    debsrc_copy "$1" "$2" -name '*.png' ! -path '*crashers*'
}
