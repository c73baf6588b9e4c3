#!/usr/bin/env bash
# Sleeps up to $1 s (less once nothing runs), then says where the final run stands; with `pack`,
# puts what there is under $OUT.
set -u
D=/tmp/final
end=$(( $(date +%s) + ${1:-0} ))
while [ $(date +%s) -lt $end ] && pgrep -f "scripts/(shards|mutants).sh" > /dev/null; do sleep 5; done
echo "started $(cat $D/started) now $(date -u); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "running: shards.sh $(pgrep -fc 'scripts/shards.sh'), mutants.sh $(pgrep -fc 'scripts/mutants.sh'), tilepipe $(pgrep -c tilepipe)"
for s in sa sb; do echo "== $s"; sort $D/$s/summary.txt 2>/dev/null; done
for n in m1 m2 m3 m4 m5 m6; do echo "== $n"; grep -E "^===|^  (check|run|clean)|got through|exit" $D/$n.log 2>/dev/null | cut -c1-200; done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
if [ "${2:-}" = pack ]; then
  for s in sa sb; do [ -e $D/$s.tgz ] || tar -C $D/$s -czf $D/$s.tgz .; cp $D/$s.tgz $OUT/; done
  tar -C $D -czf $OUT/mutants.tgz m1.log m2.log m3.log m4.log m5.log m6.log m1 m2 m3 m4 m5 m6 --exclude='k-*' 2>/dev/null
  cp $D/info.txt $D/split.txt $OUT/
fi
