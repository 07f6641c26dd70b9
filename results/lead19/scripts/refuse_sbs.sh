#!/bin/bash
# A budget below what every plan holds on the device: main's checkout and this one, the same compile at the same
# moment (each with its own copy of the caches), wall time and the error's last clause. Run from /tmp/lead19/sbs.
# usage: refuse_sbs.sh TAG MODEL BUDGET STRATEGY LIMIT
tag=$1; m=$2; b=$3; s=$4; lim=$5
for who in main lead; do
  R=/work/$( [ $who = main ] && echo main || echo wt/lead )/.venv/bin/remc
  ( /usr/bin/time -f "%e" -o ${tag}_$who.time env HOME=/tmp/lead19/sbs/home_$who $R compile $m --budget $b \
      -o ${tag}_$who.onnx --strategy $s --time-limit $lim > /dev/null 2> ${tag}_$who.err ) &
done
wait
for who in main lead; do
  echo "$tag $who: exit wall $(tail -1 ${tag}_$who.time) s; $(grep -o 'every plan needs at least [0-9]* bytes on the device' ${tag}_$who.err || echo 'no floor clause'); output written: $( [ -f ${tag}_$who.onnx ] && echo yes || echo no)"
done
