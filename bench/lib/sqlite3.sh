# shellcheck shell=bash
# SQLite for the bench/ scripts: the amalgamation that bench/build times, and the OSS-Fuzz harness
# that bench/execs runs. Sourced, never run alone. Needs bench/lib/debsrc.sh.

# OSS-Fuzz's build of its sqlite3 project defines these, so that blobs, queries and databases stay
# small enough not to end campaigns out of memory for nothing.
sqlite_defines=(-DSQLITE_MAX_LENGTH=128000000 -DSQLITE_MAX_SQL_LENGTH=128000000
    -DSQLITE_MAX_MEMORY=25000000 -DSQLITE_PRINTF_PRECISION_LIMIT=1048576 -DSQLITE_DEBUG=1
    -DSQLITE_MAX_PAGE_COUNT=16384)

sqlite_fetch() { # CACHE: prints the source folder
    debsrc_fetch sqlite3 "$1/sqlite3" configure
}

# sqlite_amalgamation SRC CACHE: generates sqlite3.c from SRC once, into CACHE/sqlite3-build
# (./configure && make sqlite3.c, which needs tclsh), and prints that folder.
sqlite_amalgamation() {
    local src=$1 out=$2/sqlite3-build
    if [ ! -f "$out/sqlite3.c" ]; then
        debsrc_need tcl
        rm -rf "$out" && mkdir -p "$out"
        (cd "$out" && "$src/configure" >build.log 2>&1 && make sqlite3.c >>build.log 2>&1) || {
            echo "bench: cannot generate sqlite3.c in $out" >&2
            tail -n 20 "$out/build.log" >&2
            rm -f "$out/sqlite3.c"
            return 1
        }
    fi
    echo "$out"
}

# sqlite_lib AMALG OBJ CC FLAGS...: the amalgamation compiled into a fresh OBJ/sqlite3.o.
sqlite_lib() {
    local amalg=$1 obj=$2 cc=$3
    shift 3
    rm -rf "$obj" && mkdir -p "$obj"
    "$cc" "$@" "${sqlite_defines[@]}" -I"$amalg" -c "$amalg/sqlite3.c" -o "$obj/sqlite3.o"
}

# sqlite_fuzzer SRC AMALG OBJ CC CXX OUT FLAGS...: OSS-Fuzz's harness, SRC/test/ossfuzz.c, compiled
# by CC with FLAGS and -fsanitize=fuzzer-no-link, linked by CXX with -fsanitize=fuzzer against
# OBJ/sqlite3.o into OUT.
sqlite_fuzzer() {
    local src=$1 amalg=$2 obj=$3 cc=$4 cxx=$5 out=$6
    shift 6
    "$cc" "$@" -fsanitize=fuzzer-no-link "${sqlite_defines[@]}" -I"$amalg" \
        -c "$src/test/ossfuzz.c" -o "$obj/harness.o"
    "$cxx" "$@" -fsanitize=fuzzer "$obj/harness.o" "$obj/sqlite3.o" -lm -ldl -lpthread -o "$out"
}

# sqlite_seeds SRC DEST: the seeds of OSS-Fuzz's sqlite3 project, the *.test files of the source
# tree (Tcl scripts full of SQL), those under 64 KiB as for the other targets (28 of 1,366 are
# larger, up to 5 MB, and would raise libFuzzer's -max_len to that).
sqlite_seeds() {
    debsrc_copy "$1" "$2" -name '*.test' -size -64k
}

# sqlite_dict DEST: AFL++'s SQL dictionary (Debian's afl++-doc, installed when missing),
# uncompressed into DEST; prints DEST.
sqlite_dict() {
    local d=/usr/share/doc/afl++-doc/afl/dictionaries/sql.dict.gz
    [ -f "$d" ] || debsrc_need afl++-doc
    if [ ! -f "$d" ]; then
        echo "bench: no $d after installing afl++-doc" >&2
        return 1
    fi
    gunzip -c "$d" >"$1"
    echo "$1"
}
