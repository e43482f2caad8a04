#!/usr/bin/env bash
# Create bench/.venv-tianshou: a separate environment with tianshou 2.0.1, for bench/bench_managers.py.
#
# tianshou is a peer measured by the benchmark, never a dependency of the project: the project's code and tests never
# import it. torch comes only through the project's constraints.txt (the CPU build; a looser request pulls a
# multi-GB CUDA build). The benchmark drives tianshou's ShmemVectorEnv and SubprocVectorEnv from a child process
# started with this venv's python (bench/peer_child.py), which also imports bench/synthetic_core.py, the synthetic
# env every contender steps.
#
# Usage (from anywhere): bash bench/setup_tianshou.sh [VENV_DIR]
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/peer_venv.sh" tianshou "${1:-}" -- "tianshou==2.0.1" numpy gymnasium

# Check from a neutral directory: both vector envs step CartPole and the synthetic env through the child's pools.
cd "$(mktemp -d)"
"$venv/bin/python" -I -c "
import importlib.metadata as md, sys
import numpy as np
sys.path.insert(0, '$here')
import peer_pools
for mode in ('shmem', 'subproc'):
    for env in ({'gym_id': 'CartPole-v1'}, {'synthetic': {'step_cost_us': 10}}):
        pool = peer_pools.TianshouPool({'mode': mode, 'env': env, 'n': 2, 'seed': 0})
        for _ in range(300):
            assert pool.step(np.zeros(2, np.int64)) == 2
        pool.close()
print('tianshou', md.version('tianshou'), 'with torch', md.version('torch'), 'ready in $venv')
"
