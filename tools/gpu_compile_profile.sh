#!/usr/bin/env bash
# The ResNet50 b32 compile of gpu_main_check.sh under cProfile (where its time goes). On the GPU machine:
# OUT=<dir> tools/gpu_session.sh bash $PWD/tools/gpu_compile_profile.sh
mkdir -p /tmp/w && cd /tmp/w
python3 -m remc zoo export resnet50 --batch 32 --train -o r50.onnx > /dev/null 2>&1
( time timeout 200 python3 -m cProfile -o /tmp/c.prof -m remc compile r50.onnx --device cuda --budget 1.8GB --strategy approx --time-limit 60 -o r50c.onnx ) > $OUT/compile.txt 2>&1
grep -v "No registered plugin" $OUT/compile.txt > $OUT/compile2.txt
python3 -c "import pstats; s=pstats.Stats('/tmp/c.prof'); s.sort_stats('cumulative').print_stats(70)" > $OUT/prof.txt 2>&1
python3 -c "import pstats; s=pstats.Stats('/tmp/c.prof'); s.sort_stats('tottime').print_stats(30)" > $OUT/prof_tot.txt 2>&1
