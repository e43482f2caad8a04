"""The one-env step-cost benchmark: every row plays real envs, and its tables compute the ratios to gymnasium's."""

from __future__ import annotations

import pytest

from bench.bench_managers import measure_cell
from bench.bench_step_cost import BASELINE, VARIANTS, StepCostEnv, main, play, step_table, targets
from bench.contenders import CARTPOLE, Contender


@pytest.mark.parametrize("key", list(VARIANTS))
def test_every_row_plays_its_env_across_episode_ends(key: str) -> None:
    play(key, 300)  # random actions: CartPole episodes end after about 22 steps, so this resets many times


def test_tables_give_ratios_to_the_bare_gymnasium_step() -> None:
    keys = [BASELINE, "ding_int"]
    contenders: list[Contender] = [StepCostEnv(VARIANTS[k]) for k in keys]
    results = measure_cell(CARTPOLE, 1, None, 1, 0.05, 0.01, contenders=contenders)
    counts = {BASELINE: 1000.0, "ding_int": 1100.0}
    text = step_table(results, keys, counts)
    assert "| 1.00× | 1.0k | 1.00× |" in text and "| 1.1k | 1.10× |" in text
    (row,) = targets(results, counts)
    assert "1.10× its instructions" in row[1] and row[2] in ("yes", "no")


def test_unknown_rows_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--variants", "ding_nope"])
    assert "unknown row(s) ['ding_nope']" in capsys.readouterr().err
