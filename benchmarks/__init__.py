"""Throughput and latency benchmarks of the service, each next to the limit it could reach.

`python -m benchmarks` measures, in one run, hands per second through HTTP against a real
`casino-war serve`, the limits of the stack underneath (pgbench, a raw SQLite transaction,
a do-nothing Litestar endpoint), ledger postings, audit replay and simulation, and prints
every figure as a ratio to its limit. See docs/performance.md.
"""
