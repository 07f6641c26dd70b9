#!/usr/bin/env bash
# On the GPU test machine (../shared/gpu/README.md): install onnxruntime-gpu from the five pieces in
# /tmp/ortgpu-pieces, the wheels in .whl/ (lark, highspy for Python 3.12) and remc, then run "$@" with
# them on PYTHONPATH. Run from the repository root. REMC_SRC names another source tree to install remc
# from (e.g. a `git archive` of one commit, so that uncommitted edits in the checkout do not travel).
set -euo pipefail
# A warm machine keeps /tmp between calls: install onnxruntime-gpu and the wheels only once.
if [ ! -d /tmp/ortgpu/onnxruntime ]; then
  name=$(cat .ortgpu/name)
  cat /tmp/ortgpu-pieces/p[0-4] > "/tmp/$name"
  echo "$(cat .ortgpu/sha256)  /tmp/$name" | sha256sum -c - >/dev/null
  python3 -m pip install -q --no-deps --no-index --target /tmp/ortgpu "/tmp/$name"
  python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
fi
src=$(cd "${REMC_SRC:-.}" && pwd)
rm -rf /tmp/remcsite  # remc itself: always this call's source tree
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/remcsite "$src"
export PYTHONPATH=/tmp/ortgpu:/tmp/site:/tmp/remcsite
export REPO="$src" PLANS="$PWD/.gpuplans"
cd /tmp  # ./remc in the checkout would shadow the installed package
"$@"
