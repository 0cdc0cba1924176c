#!/usr/bin/env bash
# pair.sh BIN_A BIN_B SECONDS "ARGS_A" "ARGS_B" SEEDS [EXTRA...]: A on core 0 and B on core 1 at once, then swapped.
bina=$1; binb=$2; secs=$3; a=$4; b=$5; seeds=$6; shift 6; extra=("$@")
run() { # core bin args tag
  local d; d=$(mktemp -d /dev/shm/pr.XXXX); cp -r "$seeds"/. "$d/"
  # shellcheck disable=SC2086
  taskset -c $1 "$2" $3 "${extra[@]}" -max_total_time=$secs -print_final_stats=1 -close_fd_mask=3 "$d" > /tmp/pair-$4.log 2>&1
  local n bytes; n=$(ls "$d" | wc -l); bytes=$(du -sb "$d" | cut -f1)
  echo "$4 $3: $(grep -o 'stat::[a-z_]*: [0-9]*' /tmp/pair-$4.log | sed 's/stat:://;s/number_of_executed_units/execs/;s/average_exec_per_sec/eps/' | grep -v slowest | tr '\n' ' ') corpus=$n meanB=$((bytes/n)) $(grep -E '^#[0-9]+' /tmp/pair-$4.log | tail -1 | grep -oE 'cov: [0-9]+ ft: [0-9]+')"
  rm -rf "$d"
}
run 0 "$bina" "$a" A & run 1 "$binb" "$b" B & wait
run 0 "$binb" "$b" B2 & run 1 "$bina" "$a" A2 & wait
