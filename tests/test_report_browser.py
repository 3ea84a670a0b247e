"""The pages of ``what-if --report`` and ``error-analysis --report`` in Debian's chromium.

Each page is written from a log shipped in data/ (the first 1,000 lines of NASA's July 1995
log), then opened from its file at a phone's width (390 px) and a desktop's (1280 px) with
every request that is not the file itself refused and recorded. At each width: every section
is there and shown, no request left, no console error, every figure decoded and shown at a
readable scale — at least 0.6 of its drawn width, or in a box that scrolls sideways — and
the page itself never wider than the screen. Screenshots go to artifacts/report/.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ratelab.analysis.page import SECTIONS as ERROR_SECTIONS
from ratelab.cli import main
from ratelab.whatif.page import SECTIONS as WHAT_IF_SECTIONS
from services import chromium

pytestmark = pytest.mark.service

SHOTS = Path(__file__).resolve().parent.parent / "artifacts" / "report"
WIDTHS = (390, 1280)
READABLE = 0.6
"""A figure shown narrower than this share of its drawn width has text too small to read."""

LOG = ["--dataset", "nasa-1995-07-clf-sample", "--no-progress"]
PAGES = {
    "what-if": (["what-if", *LOG, "--policy", "token-bucket rate=0.2 capacity=5",
                 "--policy", "sliding-window-counter limit=20 window=60",
                 "--policy", "gcra rate=0.1 burst=4"], WHAT_IF_SECTIONS),
    "error-analysis": (["error-analysis", *LOG], ERROR_SECTIONS),
}

MEASURE = """() => {
    const figures = [...document.querySelectorAll('.figure')].map(box => {
        const img = box.querySelector('img');
        return {natural: img.naturalWidth, shown: img.getBoundingClientRect().width,
                box: box.clientWidth, scroll: box.scrollWidth,
                overflow: getComputedStyle(box).overflowX};
    });
    const tables = [...document.querySelectorAll('.table')].map(box => ({
        box: box.clientWidth, scroll: box.scrollWidth, overflow: getComputedStyle(box).overflowX}));
    return {figures, tables, page: document.documentElement.scrollWidth, screen: innerWidth,
            font: parseFloat(getComputedStyle(document.body).fontSize),
            cell: Math.min(...[...document.querySelectorAll('td')].map(
                td => parseFloat(getComputedStyle(td).fontSize)))};
}"""


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    """Each command's page, written once from the shipped log."""
    folder = tmp_path_factory.mktemp("report")
    out = {}
    for name, (argv, _) in PAGES.items():
        out[name] = folder / f"{name}.html"
        assert main([*argv, "--report", str(out[name])]) == 0
    return out


@pytest.fixture(scope="module")
def browser():
    """Headless Debian chromium, driven by Playwright."""
    with chromium("the report test opens the pages in Debian's chromium") as b:
        yield b


def open_offline(browser, url: str, width: int):
    """(page, requests refused, console errors): `url` opened at `width` px with every request
    but a file's refused and recorded."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    refused, errors = [], []

    def route(r):
        if r.request.url.startswith("file:"):
            r.continue_()
        else:
            refused.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.on("request", lambda q: None if q.url.startswith(("file:", "data:"))
            else refused.append(q.url))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.wait_for_load_state("load")
    return page, refused, errors


def test_the_check_sees_a_request_leave(browser, tmp_path):
    """The recorder is not blind: a page that asks for something off the machine is caught."""
    leaky = tmp_path / "leaky.html"
    leaky.write_text('<!DOCTYPE html><img src="http://127.0.0.1:9/x.png">')
    page, refused, _ = open_offline(browser, leaky.as_uri(), 390)
    page.close()
    assert "http://127.0.0.1:9/x.png" in refused


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", list(PAGES))
def test_the_page_reads_offline_at_a_phones_and_a_desktops_width(browser, pages, name, width):
    from playwright.sync_api import expect

    page, refused, errors = open_offline(browser, pages[name].as_uri(), width)
    try:
        for anchor in PAGES[name][1]:
            section = page.locator(f"section#{anchor}")
            expect(section).to_have_count(1)
            expect(section.locator("h2")).to_be_visible()
            expect(page.locator(f'nav a[href="#{anchor}"]')).to_be_visible()
        got = page.evaluate(MEASURE)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)
    finally:
        page.close()
    assert refused == [] and errors == []
    assert got["page"] <= got["screen"], "the page itself scrolls sideways"
    assert got["font"] >= 14 and got["cell"] >= 12, got
    assert got["figures"], "no figure on the page"
    for f in got["figures"]:
        assert f["natural"] > 0, "a figure was not decoded"
        assert f["shown"] >= READABLE * f["natural"], f
        if f["shown"] > f["box"] + 1:  # wider than its box: the box scrolls to show the rest
            assert f["overflow"] in ("auto", "scroll") and f["scroll"] > f["box"], f
        if width == 1280:
            assert f["shown"] == f["natural"], f  # a desktop shows it at its drawn size
    for t in got["tables"]:
        assert t["scroll"] <= t["box"] + 1 or t["overflow"] in ("auto", "scroll"), t
