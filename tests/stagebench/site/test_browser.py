"""The site in a real browser (Debian's headless Chromium, as report.html's test opens it):
the overview and a series page load without a console error, draw their traces, mark the
step, and switch the x-axis to commits."""

import pytest

from stagebench.site.build import build
from stagebench.site.pages import OVERVIEW
from tests.stagebench.report.test_browser import _open, browser  # noqa: F401 (a fixture)
from tests.stagebench.site.histories import stepped

pytestmark = pytest.mark.browser
LAYOUT = "return document.getElementById('p50').layout"


def test_the_site_draws_the_series_marks_the_step_and_switches_to_commits(browser, tmp_path):  # noqa: F811
    stepped(tmp_path)
    build(tmp_path, tmp_path / "site")
    assert _open(browser, tmp_path / "site" / OVERVIEW, tmp_path / "overview.png") == [1]
    page = tmp_path / "site" / "spark-join-builtin.html"
    assert _open(browser, page, tmp_path / "series.png") == [3, 3]
    [shape] = browser.execute_script(LAYOUT)["shapes"]
    assert shape["x0"] == "2026-11-13T12:00:00Z"  # the step's run, a day after the 12th
    browser.execute_script(
        "const axis = document.getElementById('axis'); axis.value = 'commit';"
        "axis.dispatchEvent(new Event('change'))"
    )
    layout = browser.execute_script(LAYOUT)
    assert layout["xaxis"]["type"] == "category" and layout["shapes"][0]["x0"] == "c012"
