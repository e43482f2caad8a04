#!/usr/bin/env bash
# Create bench/.venv-di-engine: a separate environment with DI-engine 0.5.3, for bench/bench_training.py (CartPole
# DQN) and bench/bench_memory.py (Pong DQN).
#
# DI-engine's package is also named `ding`, so it must never share an environment with this project.
# Only what its CartPole and Pong DQN serial pipelines need to import and run is installed (DI-engine pins many
# more packages, e.g. wandb and matplotlib, that these pipelines never import). torch is the same release as in the
# project's venv. DI-engine 0.5.3 uses gym 0.25.1, which breaks on numpy 2, so numpy stays below 2 here.
# Its Atari envs need ale-py 0.8.1 (the last release gym 0.25 can make envs from) and OpenCV; ale-py 0.8 ships no
# ROMs, so the ROMs of ale-py 0.12.1 (the project's release, which bundles them) are downloaded and imported with
# ale-py 0.8's own `ale-import-roms`.
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
    redis \
    "ale-py==0.8.1" \
    "opencv-python-headless<4.11"

# ROMs for ale-py 0.8.1: those inside the ale-py 0.12.1 wheel, imported (checksums checked) by ale-import-roms.
roms="$(mktemp -d)"
"$venv/bin/python" -m pip download --quiet --no-deps --only-binary=:all: --dest "$roms" "ale-py==0.12.1"
"$venv/bin/python" -c "
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + '/ale_py-0.12.1-*.whl')[0]
with zipfile.ZipFile(wheel) as archive:
    for name in archive.namelist():
        if name.startswith('ale_py/roms/') and name.endswith('.bin'):
            archive.extract(name, sys.argv[1])
" "$roms"
"$venv/bin/ale-import-roms" "$roms/ale_py/roms" > /dev/null
rm -rf "$roms"

# Import check from a neutral directory, so that no other `ding` can shadow DI-engine's.
cd "$(mktemp -d)"
"$venv/bin/python" -I -c "
import importlib.metadata as md
from ding.entry import serial_pipeline
import dizoo.classic_control.cartpole.config.cartpole_dqn_config
import dizoo.atari.config.serial.pong.pong_dqn_config
import gym
env = gym.make('PongNoFrameskip-v4')
env.reset()
env.close()
print('DI-engine', md.version('DI-engine'), 'with ale-py', md.version('ale-py'), 'ready in $venv')
"
