#!/bin/bash
# remc run of a few compiled plans under a cap of their budget, with --compare
R=/work/wt/any20/.venv/bin/remc
S=/tmp/any20/side
run() { # dir side i budget model out
  HOME=$S/$1/home_$2 nice -n 10 timeout 500 $R run $S/$1/$2_$3.onnx --plan $S/$1/$2_$3.plan --mem-limit $4 --compare $5 --iters 2 > $6 2>&1; echo rc=$? >> $6
}
run swinE base 3 384042060 /tmp/any20/swin_t_train.onnx /work/wt/any20/results/any20/run_swinE_base3.txt
run swinCM2 branch 1 380723379 /tmp/any20/swin_t_train.onnx /work/wt/any20/results/any20/run_swinCM2_branch1.txt
run effB branch 1 294138490 /tmp/any20/efficientnet_v2_s_train.onnx /work/wt/any20/results/any20/run_effB_branch1.txt
run effB base 1 294365434 /tmp/any20/efficientnet_v2_s_train.onnx /work/wt/any20/results/any20/run_effB_base1.txt
