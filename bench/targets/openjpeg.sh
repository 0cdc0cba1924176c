# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154 # cache, out, variants, cc, cxx, cflags, link, seeds, dict: bench/execs's
# OpenJPEG's JP2 decoding fuzzer for bench/execs (sourced, never run alone): the harness is
# tests/fuzzers/opj_decompress_fuzzer_JP2.cpp of Debian's openjpeg2 source (2.5.0 splits the
# decompression fuzzer in two, _J2K for raw codestreams and _JP2 for the JP2 file format, whose
# decoding takes in the codestream's), built as OSS-Fuzz's openjpeg project builds it: the static
# libopenjp2 by CMake without the codec programs, the harness compiled and linked by
# tests/fuzzers/build_google_oss_fuzzers.sh's command.

title_openjpeg() { echo "openjpeg opj_decompress_fuzzer_JP2"; }

# openjpeg_seeds DEST: OSS-Fuzz's seeds are the conformance and HTJ2K images of the separate
# openjpeg-data repository, which the Debian source does not hold, nor any JPEG 2000 file: these
# are made by Debian's opj_compress (the same 2.5.0, uninstrumented) from two tiny plain-text
# PNM images, one per set of encoder options, to reach the decoder's main variants: reversible
# and irreversible wavelets, tiles, precincts, progression orders, code-block styles, markers.
openjpeg_seeds() {
    local dest=$1 work i opts=() x y
    debsrc_need libopenjp2-tools
    rm -rf "$dest" && mkdir -p "$dest"
    work=$(mktemp -d)
    {
        printf 'P3\n48 40\n255\n'
        for ((y = 0; y < 40; y++)); do
            for ((x = 0; x < 48; x++)); do printf '%d %d %d\n' $((x * 5)) $((y * 6)) $(((x * y * 7) % 256)); done
        done
    } >"$work/rgb.ppm"
    {
        printf 'P2\n32 32\n255\n'
        for ((y = 0; y < 32; y++)); do
            for ((x = 0; x < 32; x++)); do printf '%d\n' $(((x * 8 + y * 5) % 256)); done
        done
    } >"$work/gray.pgm"
    i=0
    # read -a splits each line into options without expanding [16,16] and the like as globs.
    while read -r -a opts; do
        i=$((i + 1))
        if ! opj_compress "${opts[@]}" -o "$dest/seed$i.jp2" >"$work/log" 2>&1; then
            echo "bench: opj_compress failed on: ${opts[*]}" >&2
            tail -n 5 "$work/log" >&2
            rm -rf "$work"
            return 1
        fi
    done <<EOF
-i $work/rgb.ppm
-i $work/gray.pgm
-i $work/rgb.ppm -I -r 20,5
-i $work/rgb.ppm -t 16,16 -n 3 -TP R
-i $work/gray.pgm -n 3 -p RPCL -c [16,16],[8,8],[4,4]
-i $work/rgb.ppm -b 8,8 -M 63
-i $work/gray.pgm -SOP -EPH -p PCRL
-i $work/rgb.ppm -mct 0 -p CPRL -PLT -TLM
-i $work/gray.pgm -ROI c=0,U=2 -q 30,40
-i $work/rgb.ppm -d 3,5 -T 1,2 -t 9,7 -n 2
-i $work/gray.pgm -s 2,2 -n 3 -I -C bench
-i $work/rgb.ppm -p LRCP -r 40,20,10 -n 2 -b 4,64
EOF
    rm -rf "$work"
}

build_openjpeg() {
    local src v obj
    debsrc_need dpkg-dev cmake
    src=$(debsrc_fetch openjpeg2 "$cache/openjpeg2" tests/fuzzers/opj_decompress_fuzzer_JP2.cpp) ||
        return 1
    for v in "${variants[@]}"; do
        compilers "$v"
        obj=$out/openjpeg-$v-obj
        if stale "$obj" "$v"; then
            rm -rf "$obj" && mkdir -p "$obj"
            if ! { SIFT_VALUES=0 cmake -S "$src" -B "$obj" -G "Unix Makefiles" \
                -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="${cflags[*]}" \
                -DBUILD_SHARED_LIBS=OFF -DBUILD_STATIC_LIBS=ON -DBUILD_CODEC=OFF &&
                make -C "$obj" -j2 openjp2; } >"$obj/build.log" 2>&1; then
                echo "bench: openjpeg's build failed with $cc in $obj" >&2
                tail -n 20 "$obj/build.log" >&2
                return 1
            fi
            built "$obj"
        fi
        "$cxx" "${link[@]}" -std=c++11 -I"$src/src/lib/openjp2" -I"$obj/src/lib/openjp2" \
            "$src/tests/fuzzers/opj_decompress_fuzzer_JP2.cpp" "$obj/bin/libopenjp2.a" \
            -lm -lpthread -o "$out/openjpeg-$v"
    done
    seeds=$out/openjpeg-seeds
    openjpeg_seeds "$seeds" || return 1
    dict=()
}
