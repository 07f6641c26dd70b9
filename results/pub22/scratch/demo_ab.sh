# README's demo under a pty, the branch and main alternating: demo_ab.sh OUTDIR
for t in pub22 base22; do
  uptime > $1/demo_$t.txt
  (cd /tmp/pub22/run && timeout 400 script -qc "setsid nice -n 10 /work/wt/$t/.venv/bin/remc demo" /dev/null | tr '\r' '\n' | grep -v 'compiling for a budget\|^bound\|running the compiled' >> $1/demo_$t.txt 2>&1)
  uptime >> $1/demo_$t.txt
done
