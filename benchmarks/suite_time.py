"""The test suite's wall time, counts and slowest tests, from the JUnit XML of whole runs of it.

    python -m pytest -q -n 2 --durations=40 --junitxml=run.xml       # the README's command, plus the report
    python benchmarks/suite_time.py LABEL=run.xml [LABEL=other.xml ...] [--top 15]

Each run's wall time is pytest's own session time (the XML's testsuite `time`: collection included, pip not);
a test's time is its setup, call and teardown together, as --durations lists them one by one. Under pytest-xdist
the test times are each worker's, so they add up to about twice the wall time on 2 workers. The 1-minute load
average of the machine is not in the XML: give it with the run (LABEL is free text). Adds its
runs to benchmarks/results/suite_time.json (a label already there is replaced).
"""

from __future__ import annotations

import argparse
import json
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results" / "suite_time.json"


def summary(path: Path, top: int) -> dict:
    suite = next(ET.parse(path).getroot().iter("testsuite"))
    tests, files = Counter(), Counter()
    for case in suite.iter("testcase"):
        seconds = float(case.get("time", 0))
        tests[f"{case.get('classname')}::{case.get('name')}"] += seconds
        files[case.get("classname")] += seconds
    counts = {k: int(suite.get(k, 0)) for k in ("tests", "skipped", "failures", "errors")}
    counts["passed"] = counts["tests"] - counts["skipped"] - counts["failures"] - counts["errors"]
    return {"wall_s": round(float(suite.get("time")), 1), **counts,
            "test_seconds_total": round(sum(tests.values()), 1),
            "slowest_tests": [[name, round(s, 1)] for name, s in tests.most_common(top)],
            "slowest_files": [[name, round(s, 1)] for name, s in files.most_common(top)]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="LABEL=path/to/junit.xml")
    parser.add_argument("--top", type=int, default=15)
    options = parser.parse_args()
    found = {}
    for run in options.runs:
        label, _, path = run.rpartition("=")
        found[label or path] = summary(Path(path), options.top)
    # earlier runs stay: the file is the suite's history, a run's label replaces only its own entry
    kept = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    RESULTS.write_text(json.dumps({**kept, **found}, indent=1) + "\n")
    for label, run in found.items():
        print(f"{label}: {run['wall_s']} s, {run['passed']} passed, {run['skipped']} skipped, "
              f"{run['failures'] + run['errors']} failed")


if __name__ == "__main__":
    main()
