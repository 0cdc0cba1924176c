#!/bin/bash
# runs.sh BIN_A BIN_B SEEDS DICT RUNS PAIRS CORE [extra]: fixed execution counts, CPU seconds
a=$1 b=$2 seeds=$3 dict=$4 runs=$5 pairs=$6 core=$7; shift 7
for p in $(seq 1 $pairs); do
  for v in $a $b; do
    d=$(mktemp -d /tmp/expbin/run.XXXX); mkdir $d/c; cp $seeds/* $d/c/
    (cd $d && /usr/bin/time -f "cpu %U %S" taskset -c $core $v -seed=$p -runs=$runs -print_final_stats=1 ${dict:+-dict=$dict} "$@" c > log 2>&1)
    cpu=$(grep -a "^cpu " $d/log | awk '{printf "%.1f", $2+$3}')
    cov=$(grep -a "DONE" $d/log | tail -1 | grep -o "cov: [0-9]*" | awk '{print $2}')
    ft=$(grep -a "DONE" $d/log | tail -1 | grep -o "ft: [0-9]*" | awk '{print $2}')
    corp=$(grep -a "DONE" $d/log | tail -1 | grep -o "corp: [0-9]*/[0-9a-zA-Z]*" | awk '{print $2}')
    echo "pair $p $(basename $v) cpu_s $cpu cov $cov ft $ft corp $corp"
    rm -rf $d
  done
done
