"""04-live-limiter in a real browser: JupyterLab on loopback, headless Chromium via Playwright.

The test copies the notebook to a temporary directory (so running it never rewrites the
committed one), starts JupyterLab there, opens the notebook in Debian's chromium (Playwright is
pointed at /usr/bin/chromium; nothing is downloaded), runs every cell, clicks the panel's
*flood* and *time the boundary* buttons and reads the counters the page shows, swaps the
algorithm in the dropdown and times the boundary again. It presses play
and waits for virtual time to move, and saves a screenshot to artifacts/browser/.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

import ratelab
from services import chromium, jupyterlab

pytestmark = pytest.mark.service

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = "04-live-limiter.ipynb"
SHOTS = ROOT / "artifacts" / "browser"

KERNEL_IDLE = """() => {
    const app = window.jupyterapp;
    const panel = app && app.shell.currentWidget;
    const session = panel && panel.sessionContext && panel.sessionContext.session;
    const kernel = session && session.kernel;
    return !!kernel && kernel.connectionStatus === 'connected' && kernel.status === 'idle';
}"""


@pytest.fixture
def lab(tmp_path):
    """JupyterLab serving a copy of 04-live-limiter on a free loopback port; yields its URL."""
    shutil.copy(ROOT / "notebooks" / NOTEBOOK, tmp_path / NOTEBOOK)
    with jupyterlab(tmp_path, NOTEBOOK,
                    env={"MPLBACKEND": "module://matplotlib_inline.backend_inline"}) as url:
        yield url


@pytest.fixture
def browser():
    """Headless Debian chromium, driven by Playwright."""
    with chromium("the browser test drives Debian's chromium") as b:
        yield b


def button(panel, text: str):
    """The panel's button labelled `text`."""
    return panel.locator("button.jupyter-button", has_text=text).first


def counter(panel, name: str) -> str:
    return panel.locator(f".ratelab-{name}").inner_text()


def fits(locator) -> bool:
    """Whether an element's content fits its box (no label cut, no chart cut off)."""
    return locator.evaluate("e => e.scrollWidth <= e.clientWidth + 1")


def overflowing(panel) -> list[str]:
    """The panel's parts that reach past its right edge (empty when everything fits).

    (The panel's own scrollWidth can exceed its clientWidth by its padding although nothing
    shows past its edge, so the edge is what is checked.)"""
    return panel.evaluate("""p => {
        const edge = p.getBoundingClientRect().right + 1;
        return [...p.querySelectorAll('*')].filter(e => e.getBoundingClientRect().right > edge)
            .map(e => e.tagName + '.' + [...e.classList].join('.')).slice(0, 10);
    }""")


NARROW = {"width": 1040, "height": 1000}
"""With the file browser open, JupyterLab leaves a notebook about 750 px of this width."""

PHONE_LIKE = {"width": 680, "height": 1000}
"""With the file browser open, JupyterLab leaves a notebook about 350 px of this width (as
an 800 px window did with a wider file browser)."""


def texts(locator) -> list[str]:
    """The text of each element (SVG text is no HTMLElement: textContent, not innerText)."""
    return locator.evaluate_all("els => els.map(e => e.textContent.trim())")


def xticks(panel) -> list[str]:
    return texts(panel.locator("svg.ratelab-compare-chart g[id^='xtick'] text"))


def test_live_limiter_in_jupyterlab(lab, browser):
    from playwright.sync_api import expect

    from ratelab.widgets import LiveLimiter, ManualClock

    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    page.set_default_timeout(60_000)
    page.goto(lab)
    page.wait_for_function(KERNEL_IDLE, timeout=90_000)
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    panel = page.locator(".ratelab-live").first
    expect(panel).to_be_visible(timeout=300_000)
    page.wait_for_function(KERNEL_IDLE, timeout=300_000)
    fps_line = page.locator(".jp-OutputArea-output pre", has_text="frames per second in this kernel")
    expect(fps_line.first).to_be_visible()
    print(f"kernel: {fps_line.first.inner_text().strip()}")
    panel.scroll_into_view_if_needed()

    # the fixed window of 10 per second the notebook sets up, untouched so far
    expect(panel.locator(".ratelab-accepted")).to_have_text("0")
    button(panel, "flood").click()
    expect(panel.locator(".ratelab-rejected")).to_have_text("20")
    assert counter(panel, "accepted") == "10"
    assert counter(panel, "max-rolling") == "10"
    expect(panel.locator(".ratelab-xtick").first).to_be_attached()
    flood_ticks = texts(panel.locator(".ratelab-xtick"))
    assert float(flood_ticks[-1]) - float(flood_ticks[0]) <= 2.5  # zoomed on the flood

    button(panel, "time the boundary").click()
    expect(panel.locator(".ratelab-accepted")).to_have_text("30")
    assert counter(panel, "rejected") == "20"
    assert counter(panel, "max-rolling") == "20"  # twice the limit in a rolling second
    assert counter(panel, "max-own") == "10"  # the window's own counter: never over 10
    assert float(counter(panel, "t").split()[0]) == pytest.approx(2.1)
    assert texts(panel.locator(".ratelab-xtick")) != flood_ticks
    assert texts(panel.locator("svg.ratelab-chart .ratelab-xlabel")) == ["virtual time (s)"]
    SHOTS.mkdir(parents=True, exist_ok=True)
    panel.screenshot(path=str(SHOTS / "04-live-limiter-boundary.png"))

    # the dropdown swaps the algorithm: the requests sent so far are replayed on the new one,
    # and the knobs it shares with the old one keep showing what runs
    panel.locator("select").first.select_option("sliding-window-log")
    twin = LiveLimiter("fixed-window", limit=10, window=1.0, clock=ManualClock())
    twin.flood()
    twin.time_boundary()
    twin.algorithm_box.value = "sliding-window-log"
    want = twin.state
    expect(panel.locator(".ratelab-accepted")).to_have_text(str(want["accepted"]))
    assert counter(panel, "rejected") == str(want["rejected"])
    expect(panel.locator(".ratelab-message")).to_contain_text("replayed")
    button(panel, "time the boundary").click()
    twin.time_boundary()
    expect(panel.locator(".ratelab-accepted")).to_have_text(str(twin.state["accepted"]))
    assert counter(panel, "max-rolling") == "10"
    twin.close()

    # play drives virtual time from the browser (3 s of it); count the chart's redraws meanwhile
    page.evaluate("""() => {
        window.__frames = 0;
        const chart = document.querySelector('.ratelab-live svg.ratelab-chart').parentElement;
        new MutationObserver(() => { window.__frames += 1; })
            .observe(chart, {childList: true, subtree: true, characterData: true});
    }""")
    t_before = float(counter(panel, "t").split()[0])
    button(panel, "play").click()
    start = time.monotonic()
    page.wait_for_function(
        "t => parseFloat(document.querySelector('.ratelab-live .ratelab-t').innerText) > t + 3",
        arg=t_before, timeout=30_000)
    frames = page.evaluate("window.__frames")
    elapsed = time.monotonic() - start
    print(f"browser: {frames} chart redraws in {elapsed:.2f} s of play "
          f"({frames / elapsed:.1f} frames/s)")
    assert frames > 0
    button(panel, "pause").click()
    expect(panel.locator(".ratelab-message")).to_contain_text("paused at t =")
    page.screenshot(path=str(SHOTS / "04-live-limiter-page.png"), full_page=False)
    print(f"live panel at 1280 px: {overflowing(panel) or 'nothing overflows'}")

    # below 800 px of notebook (a file browser open): nothing is cut, nothing runs off
    page.set_viewport_size(NARROW)
    page.wait_for_timeout(1000)
    width = page.locator(".jp-NotebookPanel").first.evaluate("e => e.clientWidth")
    print(f"notebook width {width} px")
    assert width < 800
    assert not overflowing(panel), overflowing(panel)
    assert panel.evaluate("""p => p.getBoundingClientRect().right <=
        p.closest('.jp-OutputArea').getBoundingClientRect().right + 1""")
    for label in ("flood", "time the boundary", "reset", "play"):
        assert fits(button(panel, label)), label
    panel.screenshot(path=str(SHOTS / "04-live-limiter-narrow.png"))

    # a notebook about 350 px wide (an 800 px window, its file browser open): the knobs'
    # readouts (a slider's value) once scrolled out of sight there
    page.set_viewport_size(PHONE_LIKE)
    page.wait_for_timeout(1000)
    width = page.locator(".jp-NotebookPanel").first.evaluate("e => e.clientWidth")
    print(f"notebook width {width} px")
    assert width <= 370
    assert not overflowing(panel), overflowing(panel)
    readouts = panel.locator(".widget-readout")
    assert readouts.count() >= 2
    for k in range(readouts.count()):
        assert readouts.nth(k).evaluate("""r => r.getBoundingClientRect().width > 10 &&
            r.getBoundingClientRect().right <= r.closest('.ratelab-live')
                .getBoundingClientRect().right + 1"""), k
    panel.screenshot(path=str(SHOTS / "04-live-limiter-800.png"))


def test_compare_in_jupyterlab(lab, browser):
    """The comparison panel: a preset drives a lane per registry algorithm; their axis and ticks
    change."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    page.set_default_timeout(60_000)
    page.goto(lab)
    page.wait_for_function(KERNEL_IDLE, timeout=90_000)
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    panel = page.locator(".ratelab-compare").first
    expect(panel).to_be_visible(timeout=300_000)
    page.wait_for_function(KERNEL_IDLE, timeout=300_000)
    panel.scroll_into_view_if_needed()
    chart = panel.locator("svg.ratelab-compare-chart")
    lanes = len(ratelab.NAMES)  # every algorithm of the registry, haproxy the eighth
    expect(chart.locator("g[id^='lane-']")).to_have_count(lanes)
    assert texts(chart.locator("#x-label text")) == ["time (s)"]
    assert "requests served" in texts(chart.locator("#y-label text"))[0]
    # the notebook moved this panel on to the boundary preset after showing it
    burst = xticks(panel)
    assert len(burst) >= 4

    button(panel, "flood").click()
    expect(panel.locator(".ratelab-compare-status")).to_contain_text("preset flood",
                                                                      timeout=90_000)
    whole = xticks(panel)
    assert whole != burst and float(whole[-1]) == pytest.approx(10)  # the whole 10 s run
    expect(chart.locator("g[id^='lane-']")).to_have_count(lanes)
    assert panel.locator(".ratelab-compare-table tr").count() == lanes + 1  # a header, a row each

    button(panel, "zoom to the busiest window").click()
    page.wait_for_function("""w => {
        const t = [...document.querySelectorAll(
            '.ratelab-compare svg.ratelab-compare-chart g[id^="xtick"] text')];
        return t.length > 0 && t.map(e => e.textContent).join() !== w.join();
    }""", arg=whole, timeout=60_000)
    zoomed = xticks(panel)
    assert float(zoomed[-1]) - float(zoomed[0]) < 10

    panel.locator(".widget-toggle-button", has_text="nginx").first.click()
    expect(chart.locator("g[id^='lane-']")).to_have_count(lanes - 1, timeout=90_000)
    expect(panel.locator(".ratelab-compare-status")).to_contain_text("Grey: the run before",
                                                                      timeout=90_000)
    SHOTS.mkdir(parents=True, exist_ok=True)
    panel.screenshot(path=str(SHOTS / "04-compare.png"))

    page.set_viewport_size(NARROW)
    page.wait_for_timeout(1000)
    assert not overflowing(panel), overflowing(panel)
    assert panel.evaluate("""p => p.getBoundingClientRect().right <=
        p.closest('.jp-OutputArea').getBoundingClientRect().right + 1""")
    for label in ("run to the end", "zoom to the busiest window", "play"):
        assert fits(button(panel, label)), label
