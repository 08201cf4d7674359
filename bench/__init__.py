"""Benchmarks: ``python -m bench`` runs them all (one table, results.json, results.png); each
module also runs alone as ``python -m bench.<name>`` and exposes ``run() -> list[dict]``
(rows built by ``bench.harness.row``)."""
