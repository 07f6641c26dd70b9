#!/bin/bash
# fit.device_floor against the unmodified graph's need and a plan at 0.95x (approx, 20 s) on each model
for m in zoo_mobilenet zoo_resnet50 zoo_unet zoo_gpt2 zoo_vgg16 tv/lraspp_mobilenet_v3_large_train tv/mobilenet_v3_large_train tv/efficientnet_v2_s_train; do
  HOME=/tmp/lead19/home nice /work/wt/lead/.venv/bin/python /work/wt/lead/results/lead19/scripts/held_check.py $m.onnx 0.95 20 2>&1 | tail -1
done
