#!/usr/bin/env bash
# Create bench/.venv-torchrl: a separate environment with TorchRL 0.14 (and its tensordict), for
# bench/bench_managers.py.
#
# TorchRL is a peer measured by the benchmark, never a dependency of the project: the project's code and tests never
# import it. torch comes only through the project's constraints.txt (the CPU build; a looser request pulls a
# multi-GB CUDA build). The benchmark drives TorchRL's ParallelEnv (of GymEnv / GymWrapper) from a child process
# started with this venv's python (bench/peer_child.py), which also imports bench/synthetic_core.py, the synthetic
# env every contender steps.
#
# Usage (from anywhere): bash bench/setup_torchrl.sh [VENV_DIR]
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/peer_venv.sh" torchrl "${1:-}" -- "torchrl==0.14.1" numpy gymnasium

# Check from a neutral directory: ParallelEnv steps CartPole and the synthetic env through the child's pool.
cd "$(mktemp -d)"
"$venv/bin/python" -I -c "
import importlib.metadata as md, sys
import numpy as np
sys.path.insert(0, '$here')
import peer_pools
if __name__ == '__main__':
    for env in ({'gym_id': 'CartPole-v1'}, {'synthetic': {'step_cost_us': 10}}):
        pool = peer_pools.TorchRLPool({'mode': 'parallel', 'env': env, 'n': 2, 'seed': 0})
        for _ in range(300):
            assert pool.step(np.zeros(2, np.int64)) == 2
        pool.close()
    print('torchrl', md.version('torchrl'), 'with torch', md.version('torch'), 'ready in $venv')
"
