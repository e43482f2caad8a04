#!/usr/bin/env bash
# Set up ding on a fresh machine: a virtualenv in .venv holding ding (editable) with every suite's extra (Atari,
# classic control rendering, MuJoCo and dm_control, Box2D, the CARLA client), Ray, stable-baselines3, envpool,
# PettingZoo with MPE, torch (a dependency of ding itself) and tensorboard, the test tools (gym 0.26 among them) and
# the documentation tools (Sphinx, Furo, MyST: docs/). torch and mujoco come through constraints.txt so they resolve to
# the builds this project is tested with.
# Headless MuJoCo rendering uses EGL (MUJOCO_GL=egl); when EGL cannot render here, OSMesa is installed from apt
# (as root) and used instead: scripts/mujoco_gl.sh prints the backend that works. As root, the `ip` command
# (iproute2) is installed from apt when missing: the zmq test across two network namespaces needs it.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet --constraint constraints.txt \
  --editable ".[atari,classic_control,mujoco,box2d,carla,ray,sb3,envpool,pettingzoo,tensorboard,test,docs]"
./scripts/mujoco_gl.sh > /dev/null
if [ "$(id -u)" = 0 ] && ! command -v ip > /dev/null && command -v apt-get > /dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq iproute2 > /dev/null || { apt-get update -qq && apt-get install -y -qq iproute2 > /dev/null; }
fi
