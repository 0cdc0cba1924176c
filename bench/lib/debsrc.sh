# shellcheck shell=bash
# Debian source packages for the benchmarks: sourced by bench/ scripts, never run alone.

# debsrc_enable PKG: makes apt-get source find PKG. That needs deb-src entries: where there are
# none, they are added from the deb entries, pointing at the same mirrors.
debsrc_enable() {
    apt-cache showsrc "$1" 2>/dev/null | grep -q '^Version:' && return
    local list=/etc/apt/sources.list.d/sift-deb-src.sources f
    : >"$list.tmp"
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] && [ "$f" != "$list" ] || continue
        grep -Eq '^Types:.*\<deb\>' "$f" || continue
        sed -E 's/^Types:.*$/Types: deb-src/' "$f" >>"$list.tmp"
        echo >>"$list.tmp"
    done
    if [ -f /etc/apt/sources.list ]; then
        sed -nE 's/^[[:space:]]*deb[[:space:]]/deb-src /p' /etc/apt/sources.list >"${list%.sources}.list"
        [ -s "${list%.sources}.list" ] || rm -f "${list%.sources}.list"
    fi
    if [ -s "$list.tmp" ]; then mv "$list.tmp" "$list"; else rm -f "$list.tmp"; fi
    apt-get update -q >&2
}

# debsrc_fetch PKG DEST CHECK: unpacks PKG's source into DEST once (DEST/PKG-VERSION) and prints
# that folder; CHECK is a file the tree must hold for an earlier fetch to count.
debsrc_fetch() {
    local pkg=$1 dest=$2 check=$3 src
    src=$(find "$dest" -maxdepth 1 -type d -name "$pkg-*" 2>/dev/null | head -n 1)
    if [ -n "$src" ] && [ -f "$src/$check" ]; then
        echo "$src"
        return
    fi
    command -v dpkg-source >/dev/null || apt-get install -y -q dpkg-dev >&2
    rm -rf "$dest" && mkdir -p "$dest"
    debsrc_enable "$pkg"
    # The newest version first; a mirror that lacks it (a security update not mirrored yet)
    # falls back to the next.
    local v ok=
    for v in "" $(apt-cache showsrc "$pkg" | sed -n 's/^Version: //p' | sort -rV); do
        if (cd "$dest" && apt-get source -q "$pkg${v:+=$v}" >&2); then
            ok=1
            break
        fi
        rm -rf "${dest:?}"/*
    done
    src=$(find "$dest" -maxdepth 1 -type d -name "$pkg-*" | head -n 1)
    if [ -z "$ok" ] || [ -z "$src" ] || [ ! -f "$src/$check" ]; then
        echo "bench: cannot fetch $pkg's source with apt-get source into $dest" >&2
        return 1
    fi
    echo "$src"
}

# debsrc_need PKG...: installs the Debian packages among PKG... that are missing.
debsrc_need() {
    local p missing=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    ((${#missing[@]} == 0)) && return
    local sudo=
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 ||
        { $sudo apt-get update -q >&2 &&
            DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >&2; }
}

# debsrc_copy SRC DEST FIND_TESTS...: copies the files of SRC that find's FIND_TESTS select into
# a fresh DEST, flat, each named after its path (slashes as underscores); quilt's copies of
# patched files (.pc/) left out. Seed corpora from source trees.
debsrc_copy() {
    local src=$1 dest=$2 f
    shift 2
    rm -rf "$dest" && mkdir -p "$dest"
    find "$src" -type f "$@" ! -path '*/.pc/*' -print0 |
        while IFS= read -r -d '' f; do
            cp "$f" "$dest/$(printf '%s' "${f#"$src"/}" | tr / _)"
        done
}

# debsrc_configure NAME CONFIGURE DIR CC CFLAGS ARGS...: runs CONFIGURE, a package's autotools
# script, in a fresh DIR for compiler CC with ARGS, its output in DIR/build.log. Values off
# (SIFT_VALUES=0) while configure links its checks: sift-cc -fsanitize=fuzzer-no-link links no
# runtime for the hooks.
debsrc_configure() {
    local name=$1 configure=$2 dir=$3 cc=$4 cflags=$5
    shift 5
    rm -rf "$dir" && mkdir -p "$dir"
    if ! (cd "$dir" && SIFT_VALUES=0 "$configure" CC="$cc" CFLAGS="$cflags" "$@") \
        >"$dir/build.log" 2>&1; then
        echo "bench: $name's configure failed with $cc in $dir" >&2
        tail -n 20 "$dir/build.log" >&2
        return 1
    fi
}

# debsrc_afl_dict NAME DIR: prints the path of AFL++'s dictionary NAME as Debian's afl++-doc
# ships it (installing the package), unpacked into DIR/NAME.dict where it comes gzipped.
debsrc_afl_dict() {
    local base=/usr/share/doc/afl++-doc/afl/dictionaries/$1.dict
    [ -f "$base" ] || [ -f "$base.gz" ] || debsrc_need afl++-doc
    if [ -f "$base" ]; then
        echo "$base"
    elif [ -f "$base.gz" ] && gunzip -c "$base.gz" >"$2/$1.dict.tmp" && mv "$2/$1.dict.tmp" "$2/$1.dict"; then
        echo "$2/$1.dict"
    else
        echo "bench: no AFL++ dictionary $1 ($base) after installing afl++-doc" >&2
        return 1
    fi
}
