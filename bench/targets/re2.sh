# shellcheck shell=bash disable=SC2154,SC2034
# RE2 (Debian's re2 source): re2/fuzzing/re2_fuzzer.cc, the harness that ships in the tree and
# that OSS-Fuzz runs: options from the input's last bytes, then a pattern and a text, compiled,
# matched, replaced and analysed within limits on the program's size. The library is built as
# OSS-Fuzz's re2 project builds it: the Makefile's obj/libre2.a target alone. Sourced by
# bench/execs, which provides debsrc.sh, the build helpers and the globals they use (cache, out,
# variants, cc, cxx, cflags, link), and reads seeds and dict: hence the two checks disabled above.

title_re2() { echo "re2 re2_fuzzer"; }

# re2_seeds SRC DEST: the (pattern, text) pairs of re2/testing/search_test.cc's table, the
# searches RE2's own tests run, as inputs in the harness's FuzzedDataProvider format: the pattern
# with its backslashes doubled and ended by a backslash and another character, the text, then
# eleven zero bytes that the harness reads as its options' defaults (UTF-8, case-sensitive...).
re2_seeds() {
    local src=$1 dest=$2
    rm -rf "$dest" && mkdir -p "$dest"
    python3 - "$src/re2/testing/search_test.cc" "$dest" <<'EOF'
import re, sys

literal = r'"((?:[^"\\]|\\.)*)"'
pair = re.compile(r'^\s*\{\s*' + literal + r'\s*,\s*' + literal + r'\s*\},')
simple = {'n': 10, 't': 9, 'r': 13, 'a': 7, 'b': 8, 'f': 12, 'v': 11}

def c_string(s):
    out, i = bytearray(), 0
    while i < len(s):
        c = s[i]
        i += 1
        if c != '\\':
            out += c.encode()
            continue
        c = s[i]
        i += 1
        if c == 'x':
            m = re.match(r'[0-9a-fA-F]+', s[i:])
            i += m.end()
            out.append(int(m.group(), 16) & 255)
        elif c in '01234567':
            m = re.match(r'[0-7]{0,2}', s[i:])
            i += m.end()
            out.append(int(c + m.group(), 8) & 255)
        else:
            out.append(simple.get(c, ord(c)))
    return bytes(out)

seen = set()
for line in open(sys.argv[1], encoding='utf-8'):
    m = pair.match(line)
    if not m:
        continue
    p, t = c_string(m.group(1)), c_string(m.group(2))
    if (p, t) in seen:
        continue
    seen.add((p, t))
    data = p.replace(b'\\', b'\\\\') + b'\\;' + t.replace(b'\\', b'\\\\') + bytes(11)
    with open('%s/search_test-%03d' % (sys.argv[2], len(seen)), 'wb') as f:
        f.write(data)
EOF
    if [ -z "$(ls -A "$dest")" ]; then
        echo "bench: no (pattern, text) pairs found in $src/re2/testing/search_test.cc" >&2
        return 1
    fi
}

build_re2() {
    local src v obj
    debsrc_need dpkg-dev make perl python3 python3-six unicode-data
    src=$(debsrc_fetch re2 "$cache/re2" re2/fuzzing/re2_fuzzer.cc) || return 1
    for v in "${variants[@]}"; do
        compilers "$v"
        obj=$out/re2-$v-obj
        if stale "$obj" "$v"; then
            # The Makefile builds into obj/ beside the sources (its rules compile paths relative
            # to the tree): a copy of the tree for each build. CXXFLAGS replaces the Makefile's
            # -O3 -g; it adds -DNDEBUG itself. REBUILD_TABLES as in debian/rules: the +dfsg
            # tarball leaves out the generated Unicode and Perl class tables, which the
            # Makefile's scripts then make from Debian's unicode-data.
            rm -rf "$obj" && mkdir -p "$obj"
            cp -a "$src" "$obj/re2"
            if ! make -C "$obj/re2" -j2 CXX="$cxx" CXXFLAGS="${cflags[*]}" REBUILD_TABLES=1 \
                obj/libre2.a >"$obj/build.log" 2>&1; then
                echo "bench/execs: re2's make failed with $cxx in $obj" >&2
                tail -n 20 "$obj/build.log" >&2
                return 1
            fi
            built "$obj"
        fi
        "$cxx" "${link[@]}" -I"$src" "$src/re2/fuzzing/re2_fuzzer.cc" "$obj/re2/obj/libre2.a" \
            -lpthread -o "$out/re2-$v"
    done
    seeds=$out/re2-seeds
    re2_seeds "$src" "$seeds" || return 1
    dict=(-dict="$(debsrc_afl_dict regexp "$out")")
}
