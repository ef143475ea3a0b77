"""report.html: one self-contained page of a run, a suite or a capacity search.

Every command that writes a results directory writes this page beside its report.md,
and ``stagebench report`` draws it again for any directory. The page is read from the
directory's files (:mod:`stagebench.report.data`), drawn with Plotly
(:mod:`stagebench.report.figures`; interactive: zoom, hover values) and laid out by
:mod:`stagebench.report.run`, :mod:`stagebench.report.suite` and
:mod:`stagebench.report.capacity` in the frame of :mod:`stagebench.report.page`, which
loads plotly.js from one copy beside the results directories (or embeds it: a
self-contained page, to be mailed as one file). A suite draws its runs together, and
per-record latencies only as a grid of quantiles, so its page stays small.
"""

import time
from dataclasses import dataclass
from pathlib import Path

from ground import files, rundir
from stagebench.report.capacity import capacity_page
from stagebench.report.curves import capacities_page
from stagebench.report.data import load_run
from stagebench.report.page import document
from stagebench.report.run import run_page
from stagebench.report.suite import suite_page


@dataclass(frozen=True)
class Page:
    path: Path
    bytes: int
    seconds: float

    def describe(self) -> str:
        return f"{self.path} ({self.bytes / 1e6:.1f} MB, written in {self.seconds:.1f} s)"


def write(results_dir: Path, self_contained: bool = False) -> Page:
    """Draw ``results_dir``'s report.html (a run's, a suite's, a capacity search's or a
    set of them),
    with plotly.js embedded when ``self_contained``."""
    began = time.monotonic()
    found = rundir.kind(results_dir)
    if found == "suite":
        title, body = suite_page(results_dir)
    elif found == "capacity":
        title, body = capacity_page(results_dir)
    elif found == "capacities":
        title, body = capacities_page(results_dir)
    else:
        title, body = run_page(load_run(results_dir))
    path = results_dir / rundir.REPORT_HTML
    files.write(path, document(title, body, results_dir, self_contained))
    return Page(path, path.stat().st_size, time.monotonic() - began)
