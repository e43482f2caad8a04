#!/usr/bin/env bash
# Print the headless OpenGL backend MuJoCo renders with here (egl or osmesa), installing OSMesa from apt when EGL
# fails and we may. Tests and envs read MUJOCO_GL; ding sets it to egl when it is unset.
set -euo pipefail
cd "$(dirname "$0")/.."
probe='from dm_control import suite; suite.load("cartpole", "balance").physics.render(8, 8)'
if MUJOCO_GL=egl .venv/bin/python -c "$probe" > /dev/null 2>&1; then
  echo egl
  exit 0
fi
if ! MUJOCO_GL=osmesa .venv/bin/python -c "$probe" > /dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libosmesa6 libgl1 > /dev/null
  fi
  if ! MUJOCO_GL=osmesa .venv/bin/python -c "$probe" > /dev/null 2>&1; then
    echo "no headless OpenGL backend: neither EGL nor OSMesa can render (install libegl1 or libosmesa6)" >&2
    exit 1
  fi
fi
echo osmesa
