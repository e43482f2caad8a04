#!/usr/bin/env bash
# Create bench/.venv-di-engine: a separate environment with DI-engine 0.5.3, for bench/bench_training.py.
#
# DI-engine's package is also named `ding`, so it must never share an environment with this project.
# Only what its CartPole DQN serial pipeline needs to import and run is installed (DI-engine pins many more
# packages, e.g. wandb and matplotlib, that this pipeline never imports). torch is the same release as in the
# project's venv. DI-engine 0.5.3 uses gym 0.25.1, which breaks on numpy 2, so numpy stays below 2 here.
#
# Usage (from anywhere): bash bench/setup_di_engine.sh [VENV_DIR]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${1:-$here/.venv-di-engine}"
python="${PYTHON:-python3}"

if [[ ! -x "$venv/bin/python" ]]; then
    "$python" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip install --quiet)

"${pip[@]}" "torch==2.13.0"
"${pip[@]}" --no-deps "DI-engine==0.5.3"
"${pip[@]}" \
    "numpy<2" \
    "gym==0.25.1" \
    gymnasium \
    "easydict>=1.9" \
    "DI-treetensor>=0.4.0" \
    "DI-toolkit>=0.1.0" \
    "tensorboardX>=2.2" \
    pyyaml \
    tabulate \
    "click>=7.0.0" \
    cloudpickle \
    "setuptools<=66.1.1" \
    requests \
    "flask<=2.0.3" \
    "werkzeug<=2.0.3" \
    URLObject \
    responses \
    "yapf==0.29.0" \
    enum-tools \
    einops \
    hickle \
    sniffio \
    trueskill \
    mpire \
    pynng \
    redis

# Import check from a neutral directory, so that no other `ding` can shadow DI-engine's.
cd "$(mktemp -d)"
"$venv/bin/python" -I -c "
import importlib.metadata as md
from ding.entry import serial_pipeline
import dizoo.classic_control.cartpole.config.cartpole_dqn_config
print('DI-engine', md.version('DI-engine'), 'ready in $venv')
"
