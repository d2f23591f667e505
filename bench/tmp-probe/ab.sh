#!/bin/bash
# usage: ab.sh <base-root> <rounds> <size>
cd /work/main/bench
for r in $(seq 1 $2); do
  b=$(PROBE_ROOT=$1 node --import ./lib/ts-register.mjs tmp-probe/ab-insert.ts $3)
  n=$(PROBE_ROOT=/work/main node --import ./lib/ts-register.mjs tmp-probe/ab-insert.ts $3)
  echo "base $b new $n"
done
