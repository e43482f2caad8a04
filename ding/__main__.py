"""``python -m ding ARGS``: the ``ding`` command line (:mod:`ding.entry.cli`), as the console script runs it."""

import sys

from ding.entry.cli import main

if __name__ == "__main__":
    sys.exit(main())
