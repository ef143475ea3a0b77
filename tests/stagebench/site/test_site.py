"""The site built from made-up histories: a step marked at its run with the commits and
versions that differ across it, none on a flat series, links and commands per point."""

import json
import re

from stagebench.site.build import build
from stagebench.site.pages import CAPACITY, OVERVIEW, SUITES
from tests.stagebench.site.histories import STEP_AT, flat, stepped


def _data(page):
    """The JSON a page draws."""
    found = re.search(r'<script type="application/json" id="site-data">(.*?)</script>',
                      page.read_text(), re.S)  # fmt: skip
    return json.loads(found.group(1).replace("<\\/", "</"))


def test_a_step_is_marked_at_its_run_with_the_commits_and_versions_across_it(tmp_path):
    runs = stepped(tmp_path)
    (runs[3] / "report.html").write_text("<html></html>")
    site = build(tmp_path, tmp_path / "site")
    assert site.steps == 2  # p50 and p99 step together
    data = _data(tmp_path / "site" / "spark-join-builtin.html")
    [step] = data["steps"]["p50"]
    assert step["index"] == STEP_AT and step["id"] == runs[STEP_AT].name
    assert step["before_id"] == runs[STEP_AT - 1].name and not step["provisional"]
    assert abs(step["change"] - 0.4) < 0.05
    assert step["differs"] == ["commit: c011 → c012", "version pyspark: 4.3.0 → 4.4.0"]
    points = data["points"]
    assert points[3]["link"] == f"../{runs[3].name}/report.html" and points[4]["link"] is None
    assert points[STEP_AT]["version"] == "4.4.0" and points[STEP_AT]["commit"] == "c012"
    assert points[0]["checkout"] == "git checkout c000"
    assert points[0]["command"].startswith("stagebench run --stage join --engine spark --impl")
    overview = (tmp_path / "site" / OVERVIEW).read_text()
    assert "spark-join-builtin.html" in overview
    assert re.search(rf"last p50 \+\d+% at {runs[STEP_AT].name}", overview)
    assert not (tmp_path / "site" / SUITES).exists() and not (tmp_path / "site" / CAPACITY).exists()
    assert site.pages == 2 and site.bytes > 4e6  # plotly.js, once


def test_a_flat_series_has_no_step(tmp_path):
    flat(tmp_path)
    assert build(tmp_path, tmp_path / "site").steps == 0
    data = _data(tmp_path / "site" / "spark-join-builtin.html")
    assert data["steps"] == {"p50": [], "p99": []} and len(data["points"]) == 20
    assert "No step" in (tmp_path / "site" / "spark-join-builtin.html").read_text()
