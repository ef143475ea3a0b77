"""report.html in a real browser: Debian's headless Chromium through its chromedriver.

The page must load without a console error, every plot must have drawn its traces, and
the numbers on it must be summary.json's and comparison.json's. A screenshot of each
page is saved under the test's temporary directory for a person to look at. Selenium is
given the driver's path, so it downloads nothing.
"""

import json
import os
from pathlib import Path

import pytest

from ground import envvars, rundir
from stagebench.report import html as html_report
from tests.stagebench.results_dirs import make_capacity, make_run, make_suite

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--window-size=1280,1000")  # fmt: skip
DRAWN = """return Array.from(document.querySelectorAll('.js-plotly-plot'))
    .map(plot => (plot.data || []).length)"""

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser():
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    if missing:
        reason = f"{', '.join(missing)} missing: apt-get install chromium chromium-driver"
        if os.environ.get(envvars.TEST_BROWSER) == "required":
            pytest.fail(f"{envvars.TEST_BROWSER}=required, but {reason}")
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(120)
    yield driver
    driver.quit()


def _open(browser, page: Path, screenshot: Path) -> list[int]:
    """Load the page, fail on a SEVERE console entry, save a full-page screenshot; the
    number of traces each plot drew."""
    browser.get(page.as_uri())
    severe = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert severe == [], severe
    height = browser.execute_script("return document.body.scrollHeight")
    browser.set_window_size(1280, min(height, 8000))
    browser.save_screenshot(str(screenshot))
    assert screenshot.stat().st_size > 10_000
    return browser.execute_script(DRAWN)


def _cell(browser, selector: str) -> tuple[str, str]:
    element = browser.find_element("css selector", selector)
    return element.text, element.get_attribute("data-value")


def test_a_fault_runs_page_draws_every_plot_with_the_summary_numbers(browser, tmp_path):
    run_dir = make_run(tmp_path, "join", "0000b001", fault=True)
    page = html_report.write(run_dir)
    traces = _open(browser, page.path, tmp_path / "run.png")
    assert len(traces) == 4 and all(n > 0 for n in traces), traces
    summary = json.loads((run_dir / rundir.SUMMARY).read_text())
    p50 = summary["latency_ms"]["p50"]
    shown, exact = _cell(browser, 'td[data-stat="p50"]')
    assert float(exact) == p50 and float(shown.replace(",", "")) == pytest.approx(p50, abs=5e-4)
    # the CDF's marks carry the same value, as plotly drew them
    names = browser.execute_script(
        "return document.querySelectorAll('.js-plotly-plot')[1].data.map(t => t.name)"
    )
    assert f"p50 {p50:,.3f}".rstrip("0").rstrip(".") + " ms" in names
    assert "broker-kill" in browser.page_source and "recovered 2 s" in browser.page_source


def test_a_suites_page_draws_the_ladder_and_every_run(browser, tmp_path, monkeypatch):
    suite_dir = make_suite(tmp_path, ["floor", "ingest", "join"], 1, monkeypatch)
    traces = _open(browser, suite_dir / rundir.REPORT_HTML, tmp_path / "suite.png")
    assert len(traces) == 5 and all(n > 0 for n in traces), traces
    for row in json.loads((suite_dir / rundir.COMPARISON).read_text())["stages"]:
        shown, exact = _cell(browser, f'td[data-stage="{row["stage"]}"][data-stat="p50"]')
        assert float(exact) == row["p50"], row["stage"]
        assert float(shown.replace(",", "")) == pytest.approx(row["p50"], abs=5e-4)


def test_a_capacity_searchs_page_draws_its_probes_and_chance_of_passing(browser, tmp_path):
    page = html_report.write(make_capacity(tmp_path, fitted=True))
    traces = _open(browser, page.path, tmp_path / "capacity-page.png")
    assert len(traces) == 3 and all(n > 0 for n in traces), traces
    names = browser.execute_script(
        "return document.querySelectorAll('.js-plotly-plot')[1].data.map(t => t.name)"
    )
    assert "capacity: 283 msg/s (95 % interval 193–414)" in names, names
