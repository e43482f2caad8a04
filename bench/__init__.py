"""Benchmarks of ding's env managers against their peers (run as modules; never CI gates)."""
