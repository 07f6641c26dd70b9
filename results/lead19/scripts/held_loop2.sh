#!/bin/bash
# plans at 1.03 x fit.device_floor: a plan predicted below the floor would disprove it
for m in zoo_mobilenet zoo_resnet50 zoo_unet zoo_gpt2 zoo_vgg16; do
  HOME=/tmp/lead19/home nice /work/wt/lead/.venv/bin/python /work/wt/lead/results/lead19/scripts/held_check.py $m.onnx f1.03 20 2>&1 | tail -1
done
