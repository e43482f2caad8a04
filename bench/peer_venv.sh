# Sourced by bench/setup_<peer>.sh: make (or reuse) the peer's venv and install its pinned packages into it.
#
# Usage, after `set -euo pipefail`: source "$(dirname "${BASH_SOURCE[0]}")/peer_venv.sh" PEER [VENV_DIR] -- REQUIREMENT...
# Sets `here` (bench/) and `venv` (default bench/.venv-PEER). torch, wherever a peer needs it, comes only through the
# project's constraints.txt: a looser request pulls a multi-GB CUDA build.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
peer="$1"
shift
venv="$here/.venv-$peer"
if [[ $# -gt 0 && "$1" != "--" ]]; then  # VENV_DIR, or empty for the default
    [[ -n "$1" ]] && venv="$1"
    shift
fi
[[ "${1:-}" == "--" ]] && shift
python="${PYTHON:-python3}"
if [[ ! -x "$venv/bin/python" ]]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet -c "$here/../constraints.txt" "$@"
