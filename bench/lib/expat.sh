# shellcheck shell=bash
# expat built with its own autotools, for the bench/ scripts: sourced, never run alone. Needs
# bench/lib/debsrc.sh. Autotools, as Debian builds it: Debian's patches test XML_DTD's value,
# which CMake's configuration leaves empty.

expat_fetch() { # CACHE: prints the source folder, with expat/configure generated
    local src
    debsrc_need autoconf automake libtool dpkg-dev
    src=$(debsrc_fetch expat "$1/expat" expat/lib/xmlparse.c) || return 1
    if [ ! -x "$src/expat/configure" ]; then
        (cd "$src/expat" && ./buildconf.sh) >"$src/buildconf.log" 2>&1 || {
            echo "bench: expat's buildconf.sh failed in $src/expat" >&2
            tail -n 20 "$src/buildconf.log" >&2
            return 1
        }
    fi
    echo "$src"
}

# expat_configure SRC DIR CC CFLAGS: configures the static library in a fresh DIR for compiler
# CC (make -C DIR/lib then builds DIR/lib/.libs/libexpat.a).
expat_configure() {
    debsrc_configure expat "$1/expat/configure" "$2" "$3" "$4" --disable-shared --without-xmlwf \
        --without-examples --without-tests --without-docbook
}

# expat_fuzzer SRC DIR CC OUT FLAGS...: expat's xml_parse_fuzzer.c for UTF-8, as expat's CMake
# builds its fuzzers, linked with the library configured and built in DIR.
expat_fuzzer() {
    local src=$1 dir=$2 cc=$3 out=$4
    shift 4
    "$cc" "$@" -DENCODING_FOR_FUZZING=UTF-8 -I"$src/expat/lib" -I"$dir" \
        "$src/expat/fuzz/xml_parse_fuzzer.c" "$dir/lib/.libs/libexpat.a" -o "$out"
}

# expat_seeds SRC DEST: the small XML files of the source tree (under 64 KiB; the large test
# files are 3-35 MB).
expat_seeds() {
    debsrc_copy "$1" "$2" -name '*.xml' -size -64k
}

# expat_dict: prints the XML dictionary that AFL++ ships (Debian's afl++-doc), installing it.
expat_dict() {
    local d=/usr/share/doc/afl++-doc/afl/dictionaries/xml.dict
    [ -f "$d" ] || debsrc_need afl++-doc
    if [ ! -f "$d" ]; then
        echo "bench: no $d after installing afl++-doc" >&2
        return 1
    fi
    echo "$d"
}
