# The final side-by-side runs of branch pub22 (afbdb80) against main (base22, d36414c) and Moccasin, from /tmp/pub22/run.
R=/work/wt/pub22/results/pub22
B="setsid nice -n 10 /work/wt/pub22/.venv/bin/python /work/wt/pub22/tools/bench_moccasin.py --moccasin /work/wt/moccasin-src --python /work/wt/moccasin-venv/bin/python --base-python /work/wt/base22/.venv/bin/python --base-label main-d36414c"
$B --tools checkmate-base,checkmate --graphs none --random 250:2209 250:2210 200:2211 --ratios 0.9 --time-limit 60 --out $R/own_large_09_final.json --markdown $R/own_large_09_final.md
$B --tools checkmate-base,checkmate,moccasin --graphs random_layered_n250_ --ratios 0.9 --time-limit 300 --moccasin-timeout 300 --out $R/n250_09_moccasin.json --markdown $R/n250_09_moccasin.md
$B --tools checkmate-base,checkmate,moccasin --graphs VGG16 random_layered_n100_w --ratios 0.8 0.9 --time-limit 60 --moccasin-timeout 60 --out $R/side_small.json --markdown $R/side_small.md
