# e2e.sh over Moccasin's n=100 (0.8 twice, 0.9) and own seeds at 0.8: branch (ROOT_PROBING_LEVEL=1) against main's 2
S=/work/wt/pub21/results/pub21/scratch; M=/work/wt/moccasin-src/data/random_layered_n100_w0.27_nlv0.75_ed0.2_scd0.14.json; G=/tmp/pub21/g
echo "### moccasin n100 0.8"; bash $S/e2e.sh $M 0.8 2 - cpsat.ROOT_PROBING_LEVEL=2
echo "### moccasin n100 0.9"; bash $S/e2e.sh $M 0.9 1 - cpsat.ROOT_PROBING_LEVEL=2
for s in 2004 2005 2009 2006 2001 2003; do echo "### own seed $s 0.8"; TL=${TL:-60} bash $S/e2e.sh $(ls $G/*seed$s.json) 0.8 1 - cpsat.ROOT_PROBING_LEVEL=2; done
