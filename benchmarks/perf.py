"""Speed benchmarks for agent_memory. Run by hand: python3 benchmarks/perf.py

Prints the median of many runs for each operation, and its ratio to the target
set in the issues. Numbers depend on the machine; the README records them.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import agent_memory as am  # noqa: E402

FACT_200 = (
    "Project uses Postgres 15 on port 5432 via docker compose; run `make test` before pushing. "
    "Staging deploys go out on Fridays through GitHub Actions on the ubuntu-22.04 runner image."
)[:200].ljust(200, ".")


def median_us(func, runs: int, setup=None) -> float:
    """Median wall time of ``func()`` in microseconds; ``setup()`` runs untimed before each call."""
    times = []
    for _ in range(runs):
        if setup:
            setup()
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def report(name: str, value_us: float, target_us: float | None = None, unit: str = "us") -> None:
    shown = value_us / 1000 if unit == "ms" else value_us
    target = ""
    if target_us is not None:
        goal = target_us / 1000 if unit == "ms" else target_us
        verdict = "ok" if value_us <= target_us else "OVER"
        target = f"   target < {goal:g} {unit}   ratio {value_us / target_us:.2f}  {verdict}"
    print(f"{name:<58} {shown:9.3f} {unit}{target}")


def bench_scan() -> None:
    assert len(FACT_200) == 200
    am.scan_content(FACT_200)
    report("scan_content, 200-character fact", median_us(lambda: am.scan_content(FACT_200), 20_000), 30)


def fill(store: am.FactStore, target: str, limit: int, headroom: int) -> None:
    i = 0
    while store._usage(target)[0] < limit - headroom:
        store.add(target, f"Service {i} listens on port {8000 + i} and logs to /var/log/svc{i}.log")
        i += 1


def bench_fact_store_add() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = am.FactStore(tmp)
        fill(store, "env", am.DEFAULT_FACTS_LIMIT_ENV, 200)
        counter = iter(range(10**9))
        new = ""

        def make_room():
            nonlocal new
            if new:
                store.remove("env", new)
            new = f"Cache {next(counter)} is warmed by `make warm` nightly"

        value = median_us(lambda: store.add("env", new), 300, setup=make_room)
        used, limit = store._usage("env")
        report(f"FactStore.add near the cap ({used}/{limit} chars), durable", value, 2500, "ms")


def bench_import() -> None:
    """Start-up cost of the import, with bytecode cached as in any installed package."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, PYTHONPYCACHEPREFIX=cache)
        env.pop("PYTHONDONTWRITEBYTECODE", None)

        def run(code: str) -> float:
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], cwd=HERE.parent, env=env, check=True)
            return time.perf_counter() - start

        run("import agent_memory")  # writes the bytecode cache
        bare, loaded = [], []
        for _ in range(21):
            bare.append(run("pass"))
            loaded.append(run("import agent_memory"))
    added = (statistics.median(loaded) - statistics.median(bare)) * 1e6
    report("import agent_memory, added to interpreter start-up", added, 15_000, "ms")


def main() -> None:
    print(f"Python {sys.version.split()[0]} on {sys.platform}; medians")
    bench_scan()
    bench_fact_store_add()
    bench_import()


if __name__ == "__main__":
    main()
