# shellcheck shell=bash
# zlib for the bench/ scripts, as bench/campaign and bench/execs build it: sourced, never run
# alone. Needs bench/lib/debsrc.sh.

zlib_fetch() { # CACHE: prints the source folder
    debsrc_fetch zlib "$1/zlib" inflate.c
}

# zlib_lib SRC OBJ CC FLAGS...: the library's .c files compiled directly into OBJ/libz.a.
zlib_lib() {
    local src=$1 obj=$2 cc=$3
    shift 3
    rm -rf "$obj" && mkdir -p "$obj"
    printf '%s\n' adler32 compress crc32 deflate infback inffast inflate inftrees trees uncompr \
        zutil | xargs -P 2 -I{} "$cc" "$@" -I"$src" -c "$src/{}.c" -o "$obj/{}.o"
    ar rcs "$obj/libz.a" "$obj"/*.o
}

# zlib_seeds SRC DEST: gzip streams of a few of zlib's own files at levels 1 and 9, each behind
# the byte with which bench/campaign_zlib.c picks the round trip's level and strategy; and one
# empty stream.
zlib_seeds() {
    local src=$1 dest=$2 i=0 f level
    rm -rf "$dest" && mkdir -p "$dest"
    for f in README ChangeLog zlib.h adler32.c; do
        for level in 1 9; do
            { printf '%b' "\\x$(printf %02x $((i * 7 % 50)))" && gzip -c -$level <"$src/$f"; } \
                >"$dest/$f-$level.gz"
            i=$((i + 1))
        done
    done
    { printf '\x06' && gzip -c </dev/null; } >"$dest/empty.gz"
}
