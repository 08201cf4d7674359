"""Standalone benchmarks: ``python -m bench.<name>``; each exposes ``run() -> list[dict]``."""
