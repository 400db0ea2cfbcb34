"""How well merge-on-write decides fact writes without an LLM. Run by hand:

    python3 benchmarks/merge_quality.py [data.jsonl ...]

Each data file (default: every fact_writes*.jsonl here) holds
profile records, an existing memory file each, and write records, a new fact
labelled "restate" (it says what entry `match` says), "update" (it changes a
value of entry `match`) or "distinct". For the original package's scheme and
for ours, at the default thresholds 0.7 / 0.3, this prints the share of writes
decided without the LLM, wrong auto-merges (of distinct facts, of updates, into
the wrong entry) and wrong auto-adds of restatements, per set and over all sets
(the README's last row). With -v it also lists each scheme's mistakes.

The sets were written by different people who never saw the code:
fact_writes.jsonl is the set the features were chosen on; each held-out set
was measured once, untouched, and then served to find bugs; the README keeps
each set's first-run figures, the honest ones, beside its current figures.
"""

from __future__ import annotations

import json
import math
import random
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import agent_memory as am  # noqa: E402


class OriginalScheme:
    """A re-creation of the Go package's detector: a vocabulary fitted on the
    existing entries (the new entry's unknown words are dropped), raw term
    counts, and a sparse +-1 random projection (Achlioptas) to 256 dimensions."""

    def __init__(self, dims: int = 256, seed: int = 42) -> None:
        self.dims, self.seed = dims, seed

    @staticmethod
    def tokens(text: str) -> list[str]:
        return re.findall(r"[a-z0-9]+", text.lower())

    def fit(self, corpus: list[str]) -> None:
        self.vocabulary = {word: i for i, word in enumerate(sorted({w for t in corpus for w in self.tokens(t)}))}
        rng = random.Random(self.seed)
        scale = math.sqrt(3.0)
        self.matrix = [[rng.choice((scale, 0.0, 0.0, 0.0, 0.0, -scale)) for _ in range(self.dims)]
                       for _ in self.vocabulary]
        self.corpus = corpus
        self.vectors = [self.embed(text) for text in corpus]

    def embed(self, text: str) -> list[float]:
        vector = [0.0] * self.dims
        for word, count in Counter(self.tokens(text)).items():
            row = self.vocabulary.get(word)
            if row is not None:
                vector = [v + count * m for v, m in zip(vector, self.matrix[row])]
        return vector

    def classify(self, entry: str) -> tuple[str, int, float]:
        query = self.embed(entry)
        sims = [am.cosine(query, vector) for vector in self.vectors]
        best = max(range(len(sims)), key=sims.__getitem__)
        action = "merge" if sims[best] >= 0.7 else "add" if sims[best] <= 0.3 else "judge"
        return action, best, sims[best]


def load(path: Path) -> tuple[dict[str, list[str]], list[dict]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    profiles = {row["profile"]: row["entries"] for row in rows if "entries" in row}
    writes = [row for row in rows if "new" in row]
    return profiles, writes


def tally(detector, profiles: dict[str, list[str]], writes: list[dict]) -> tuple[Counter, list[str]]:
    """How ``detector`` classified each label of ``writes``, and its mistakes, one line each."""
    outcome: Counter = Counter()
    mistakes: list[str] = []
    for write in writes:
        detector.fit(profiles[write["profile"]])
        action, index, similarity = detector.classify(write["new"])
        label = write["label"]
        outcome[label, action] += 1
        outcome[label] += 1
        wrong = (action == "merge" and (label != "restate" or index != write["match"])) or (
            action == "add" and label == "restate")
        if wrong:
            mistakes.append(f"  {label:8} -> {action:5} {similarity:.2f}  {write['new']}  ||  "
                            f"{profiles[write['profile']][index]}")
        if action == "merge" and label == "restate" and index != write["match"]:
            outcome["wrong entry"] += 1
    return outcome, mistakes


def figures(outcome: Counter) -> dict[str, object]:
    """The figures the README gives, from a ``tally`` (or the sum of several)."""
    writes = sum(outcome[label] for label in LABELS)
    decided = sum(outcome[label, action] for label in LABELS for action in ("merge", "add"))
    return {
        "decided without the LLM": decided / writes,
        "decided, updates left out": (decided - outcome["update", "add"]) / (writes - outcome["update"]),
        "wrong auto-merges of distinct facts": outcome["distinct", "merge"],
        "wrong auto-merges of updates": outcome["update", "merge"],
        "restatements merged into the wrong entry": outcome["wrong entry"],
        "wrong auto-adds of restatements": outcome["restate", "add"] / outcome["restate"],
        "sent to the LLM (restate/update/distinct)": "{}/{}/{}".format(
            outcome["restate", "judge"], outcome["update", "judge"], outcome["distinct", "judge"]),
        "updates auto-added (old value kept beside the new)": outcome["update", "add"],
    }


LABELS = ("distinct", "restate", "update")


def set_number(path: Path) -> int:
    """0 for the tuning set, N for held-out N ("fact_writes_holdout.jsonl" is held-out 1)."""
    digits = re.sub(r"\D", "", path.stem)
    return int(digits) if digits else int("holdout" in path.stem)


def main() -> None:
    paths = [Path(arg) for arg in sys.argv[1:] if not arg.startswith("-")] or sorted(
        HERE.glob("fact_writes*.jsonl"), key=set_number)
    verbose = "-v" in sys.argv
    schemes = {"original (Go) scheme": OriginalScheme, "agent_memory": am.MergeDetector}
    totals = {name: Counter() for name in schemes}
    for path in paths:
        profiles, writes = load(path)
        results = {name: tally(make(), profiles, writes) for name, make in schemes.items()}
        for name, (outcome, _) in results.items():
            totals[name] += outcome
        show(path.name, {name: outcome for name, (outcome, _) in results.items()})
        if verbose:
            for name, (_, mistakes) in results.items():
                print(f"  {name} mistakes:")
                print("\n".join(mistakes) or "  none")
    if len(paths) > 1:
        show(f"all {len(paths)} sets", totals)


def show(title: str, outcomes: dict[str, Counter]) -> None:
    first = next(iter(outcomes.values()))
    print(f"\n{title}: {sum(first[label] for label in LABELS)} writes "
          f"({', '.join(f'{first[label]} {label}' for label in LABELS)})")
    print(f"  {'':52}" + "".join(f"{name:>22}" for name in outcomes))
    results = [figures(outcome) for outcome in outcomes.values()]
    for metric in results[0]:
        shown = [f"{c:.1%}" if isinstance(c, float) else str(c) for c in (result[metric] for result in results)]
        print(f"  {metric:52}" + "".join(f"{c:>22}" for c in shown))


if __name__ == "__main__":
    main()
