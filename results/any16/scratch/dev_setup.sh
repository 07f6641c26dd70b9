set -e
pip install -q --no-deps --break-system-packages --target /tmp/site devwheels/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site
pip install -q --no-deps --no-build-isolation --break-system-packages --target /tmp/site2 . 2>&1 | tail -2
export PYTHONPATH=/tmp/site2:/tmp/site
mkdir -p /tmp/r && cd /tmp/r && python3 -c "import remc, ortools, highspy; print('ok')"
