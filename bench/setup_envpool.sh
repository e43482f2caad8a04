#!/usr/bin/env bash
# Create bench/.venv-envpool: a separate environment with envpool 1.2.5, for bench/bench_atari.py.
#
# envpool is a peer measured by the benchmark, never a dependency of the project: the project's code and tests
# never import it. envpool 1.2.5 is the last release with a wheel for Python 3.11 (Linux x86_64); it brings its
# own ALE and ROMs. The benchmark drives it from a child process started with this venv's python
# (bench/peer_child.py), which needs only envpool and NumPy.
#
# Usage (from anywhere): bash bench/setup_envpool.sh [VENV_DIR]
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/peer_venv.sh" envpool "${1:-}" -- "envpool==1.2.5" numpy

# Import check from a neutral directory: build two Pong envs and step them once.
cd "$(mktemp -d)"
"$venv/bin/python" -I -c "
import importlib.metadata as md
import numpy as np
import envpool
env = envpool.make('Pong-v5', env_type='gymnasium', num_envs=2, batch_size=2)
obs, _ = env.reset()
obs, *_ = env.step(np.zeros(2, dtype=np.int32))
assert obs.shape == (2, 4, 84, 84) and obs.dtype == np.uint8, (obs.shape, obs.dtype)
env.close()
print('envpool', md.version('envpool'), 'ready in $venv')
"
