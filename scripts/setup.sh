#!/usr/bin/env bash
# Set up ding on a fresh machine: a virtualenv in .venv holding ding (editable), the Atari and classic-control
# rendering extras, torch and tensorboard (models, policies, training) and the test tools.
# torch and mujoco come through constraints.txt so they resolve to the builds this project is tested with.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet --constraint constraints.txt --editable ".[atari,classic_control,torch,test]"
