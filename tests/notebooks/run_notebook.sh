#!/usr/bin/env bash
# Executes one notebook headless, as the test suite does (tests/CMakeLists.txt, label `notebook`):
#   tests/notebooks/run_notebook.sh NOTEBOOK.ipynb TRAINCAST_PYTHON_DIR OUT_DIR
# TRAINCAST_PYTHON_DIR: the folder holding the built `traincast` package (build/release/python).
# Fails (non-zero) on any cell error or when the notebook writes no PNG; exits 77 (CTest
# SKIP_RETURN_CODE) with a message when Jupyter or the notebooks' Python packages are missing
# (tools/setup installs them: jupyter-nbconvert, python3-ipykernel, python3-matplotlib, python3-pandas).
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 NOTEBOOK.ipynb TRAINCAST_PYTHON_DIR OUT_DIR" >&2
  exit 2
fi
nb=$(realpath "$1")
pydir=$(realpath "$2")
out=$3
if ! jupyter_bin=$(command -v jupyter) || ! "$jupyter_bin" nbconvert --version >/dev/null 2>&1; then
  echo "SKIP: jupyter nbconvert is not installed (run tools/setup, or apt-get install jupyter-nbconvert python3-ipykernel)"
  exit 77
fi
# The Python that runs jupyter (its shebang) must also have the notebooks' packages and a kernel.
python=$(head -1 "$jupyter_bin" | sed -n 's/^#!\s*//p' | awk '{print $1}')
[ -x "$python" ] || python=python3
if ! "$python" -c 'import ipykernel, matplotlib, pandas' 2>/dev/null; then
  echo "SKIP: $python lacks ipykernel, matplotlib or pandas (apt-get install python3-ipykernel python3-matplotlib python3-pandas)"
  exit 77
fi
mkdir -p "$out"
out=$(realpath "$out")
name=$(basename "$nb" .ipynb)
rm -f "$out/$name"*.png
export TRAINCAST_PYTHON="$pydir" TRAINCAST_NOTEBOOK_OUT="$out" TRAINCAST_SOURCE_DIR="$(dirname "$(dirname "$nb")")"
export MPLCONFIGDIR="$out/.matplotlib" JUPYTER_RUNTIME_DIR="$out/.jupyter-runtime" PYDEVD_DISABLE_FILE_VALIDATION=1
cd "$(dirname "$nb")"
"$jupyter_bin" nbconvert --to notebook --execute --ExecutePreprocessor.timeout=300 \
  --output-dir "$out" --output "$name.executed.ipynb" "$nb"
pngs=$(ls "$out/$name"*.png 2>/dev/null || true)
if [ -z "$pngs" ]; then
  echo "FAIL: $name wrote no PNG under $out" >&2
  exit 1
fi
echo "$name: wrote" $pngs
