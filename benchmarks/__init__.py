"""Tether's benchmark suite: ``python -m benchmarks`` (see ``docs/performance.md``).

Every scenario drives a real ``tether serve`` over stdio from this process, with the
scripted provider (or the SDK providers against local fake servers), and reports medians,
95th percentiles and, for comparisons, ratios measured in the same run. Benchmarks report;
the tests assert behaviour.
"""
