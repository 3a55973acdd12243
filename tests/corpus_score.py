"""Score the real-excerpt corpus: what each excerpt's annotation says against what the tool recovers.

    .venv/bin/python tests/corpus_score.py              # every excerpt
    .venv/bin/python tests/corpus_score.py 160-189 022  # id ranges and single ids

One row per excerpt (groups, generations, epochs, root cause: ✓ or what differed), then the totals per
client family. tests/test_corpus_real.py asserts the same comparisons excerpt by excerpt.
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).parent))

from rebalance_doctor import analyze, load
from rebalance_doctor.analysis.model import Analysis

from support import FIXTURES

CORPUS = FIXTURES / "corpus"


def annotated_group(name: str) -> str:
    """'GROUP-NAME (anonymised by reporter)' → 'GROUP-NAME': the annotation's remark is not part of the id."""
    return name.rsplit(" (", 1)[0] if name.endswith(")") and " (" in name else name


def diagnosed_cause(analysis: Analysis) -> str:
    """The root cause the report leads with, in the vocabulary of rebalance causes (schema.CAUSES)."""
    verdict = analysis.verdict
    return verdict.root_cause if verdict else "unknown"


@dataclass
class Score:
    case: Path
    client: str
    groups: tuple[set, set]
    generations: tuple[set, set]
    epochs: tuple[set, set]
    cause: tuple[str, str]
    lines: tuple[int, int]
    undecided_lines: list[int]

    def ok(self, name: str) -> bool:
        expected, found = getattr(self, name)
        return expected == found

    @property
    def all_ok(self) -> bool:
        return all(self.ok(n) for n in ("groups", "generations", "epochs", "cause", "lines")) and not self.undecided_lines


def score(case: Path) -> Score:
    meta = yaml.safe_load(case.read_text())
    annotation = meta["annotation"]
    log = case.with_suffix(".log")
    logs = load([str(log)])
    events = logs.events
    analysis = analyze(events)
    found_groups = set(events["group_id"].drop_nulls().to_list())
    found_generations = set(events["generation"].drop_nulls().to_list())
    found_epochs = set(events["group_epoch"].drop_nulls().to_list()) | set(events["member_epoch"].drop_nulls().to_list())
    event_lines = set()
    for first, raw in events.select("line", "raw").iter_rows():  # a record's continuation lines are part of its event
        event_lines.update(range(first, first + raw.count("\n") + 1))
    undecided = [n for n in annotation.get("decisive_lines") or [] if n not in event_lines]
    return Score(
        case,
        meta.get("client", meta.get("side", "?")),
        ({annotated_group(g) for g in annotation["group_ids"]}, found_groups),
        (set(annotation["generations"]), found_generations),
        (set(annotation.get("epochs") or []), found_epochs if annotation.get("epochs") is not None else set()),
        (annotation["root_cause"], diagnosed_cause(analysis)),
        (len(log.read_bytes().splitlines()), logs.lines_read),
        undecided,
    )


def _selected(arguments: list[str]) -> list[Path]:
    cases = sorted(CORPUS.glob("*.yaml"))
    if not arguments:
        return cases
    wanted: set[int] = set()
    for argument in arguments:
        low, _, high = argument.partition("-")
        wanted.update(range(int(low), int(high or low) + 1))
    return [c for c in cases if int(c.name[:3]) in wanted]


def main(arguments: list[str]) -> int:
    totals: dict[str, Counter] = defaultdict(Counter)
    for case in _selected(arguments):
        try:
            result = score(case)
        except Exception as error:  # a crash is a finding of the scorer, not the end of it
            print(f"{case.stem}: CRASH {type(error).__name__}: {error}")
            totals["?"]["crash"] += 1
            continue
        marks = []
        for name in ("groups", "generations", "epochs", "cause"):
            expected, found = getattr(result, name)
            totals[result.client][name] += result.ok(name)
            if not result.ok(name):
                marks.append(f"{name}: want {sorted(expected) if isinstance(expected, set) else expected} got "
                             f"{sorted(found) if isinstance(found, set) else found}")
        if result.undecided_lines:
            marks.append(f"decisive lines not events: {result.undecided_lines}")
        if not result.ok("lines"):
            marks.append(f"lines read {result.lines[1]} of {result.lines[0]}")
        totals[result.client]["excerpts"] += 1
        print(f"{case.stem}: {'✓' if not marks else '; '.join(marks)}")
    print()
    everything: Counter = Counter()
    for client, counts in sorted(totals.items()):
        everything.update(counts)
        n = counts["excerpts"]
        print(f"{client:14} {n:3} excerpts  groups {counts['groups']}/{n}  generations {counts['generations']}/{n}  "
              f"epochs {counts['epochs']}/{n}  causes {counts['cause']}/{n}")
    n = everything["excerpts"]
    print(f"{'all':14} {n:3} excerpts  groups {everything['groups']}/{n}  generations {everything['generations']}/{n}  "
          f"epochs {everything['epochs']}/{n}  causes {everything['cause']}/{n}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
