# e2e.sh (checkmate end to end, CPU seconds) on own graphs at 0.8 and 0.9, main's HINT_GROW=0 against 2, 60 s limit
for g in ${SEEDS:-2001 2003 2004 2005 2006 2007 2008 2009 2010}; do for r in $RATIOS; do
  f=$(ls /tmp/pub20/g/*seed$g.json); echo "### $(basename $f) $r"
  TL=60 bash /work/wt/pub20/results/pub20/scratch/e2e.sh $f $r 1 "cpsat.HINT_GROW=0" "cpsat.HINT_GROW=2"
done; done
