"""04-live-limiter in a real browser: JupyterLab on loopback, headless Chromium via Playwright.

The test copies the notebook to a temporary directory (so running it never rewrites the
committed one), starts JupyterLab there, opens the notebook in Debian's chromium (Playwright is
pointed at /usr/bin/chromium; nothing is downloaded), runs every cell, clicks the panel's
*flood* and *time the boundary* buttons and reads the counters the page shows, swaps the
algorithm in the dropdown and times the boundary again. It presses play
and waits for virtual time to move, and saves a screenshot to artifacts/browser/.
"""

from __future__ import annotations

import os
import secrets
import shutil
import sys
import time
from pathlib import Path

import pytest

from services import free_port, need, required, running

pytestmark = pytest.mark.service

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = "04-live-limiter.ipynb"
SHOTS = ROOT / "artifacts" / "browser"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]

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
    port, token = free_port(), secrets.token_hex(16)
    home = tmp_path / "home"
    env = os.environ | {"JUPYTER_CONFIG_DIR": str(home / "config"),
                        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
                        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
                        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
                        "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1",
           f"--port={port}", f"--ServerApp.root_dir={tmp_path}",
           f"--IdentityProvider.token={token}", "--LabApp.expose_app_in_browser=True",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--allow-root"]
    news = home / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    news.parent.mkdir(parents=True)
    news.write_text('{"fetchNews": "false"}')  # no "get news?" toast over the page
    with running(cmd, port, tmp_path, env=env, log=home / "lab.log", timeout_s=60):
        yield f"http://127.0.0.1:{port}/lab/tree/{NOTEBOOK}?token={token}"


@pytest.fixture
def browser():
    """Headless Debian chromium, driven by Playwright (never `playwright install`)."""
    executable = need("chromium", "the browser test drives Debian's chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # declared in the test extra; say so rather than crash
        if required():
            pytest.fail("RATELAB_REQUIRE_SERVICES=1 but the playwright package is missing")
        pytest.skip("the playwright package is not installed (pip install -e '.[test]')")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS, headless=True)
        try:
            yield b
        finally:
            b.close()


def button(panel, text: str):
    """The panel's button labelled `text`."""
    return panel.locator("button.jupyter-button", has_text=text).first


def counter(panel, name: str) -> str:
    return panel.locator(f".ratelab-{name}").inner_text()


def test_live_limiter_in_jupyterlab(lab, browser):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    page.set_default_timeout(60_000)
    page.goto(lab)
    page.wait_for_function(KERNEL_IDLE, timeout=90_000)
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    panel = page.locator(".ratelab-live").first
    expect(panel).to_be_visible(timeout=90_000)
    page.wait_for_function(KERNEL_IDLE, timeout=90_000)
    fps_line = page.locator(".jp-OutputArea-output pre", has_text="frames per second in this kernel")
    expect(fps_line).to_be_visible()
    print(f"kernel: {fps_line.inner_text().strip()}")
    panel.scroll_into_view_if_needed()

    # the fixed window of 10 per second the notebook sets up, untouched so far
    expect(panel.locator(".ratelab-accepted")).to_have_text("0")
    button(panel, "flood").click()
    expect(panel.locator(".ratelab-rejected")).to_have_text("20")
    assert counter(panel, "accepted") == "10"
    assert counter(panel, "max-rolling") == "10"

    button(panel, "time the boundary").click()
    expect(panel.locator(".ratelab-accepted")).to_have_text("30")
    assert counter(panel, "rejected") == "20"
    assert counter(panel, "max-rolling") == "20"  # twice the limit in a rolling second
    assert counter(panel, "max-own") == "10.00"  # the window's own counter: never over 10
    assert float(counter(panel, "t")) == pytest.approx(2.1)
    expect(panel.locator("svg.ratelab-chart line")).to_have_count(51)  # 50 ticks + the limit
    SHOTS.mkdir(parents=True, exist_ok=True)
    panel.screenshot(path=str(SHOTS / "04-live-limiter-boundary.png"))

    # the dropdown swaps the algorithm: the sliding log holds the same train at the limit
    panel.locator("select").first.select_option("sliding-window-log")
    expect(panel.locator(".ratelab-accepted")).to_have_text("0")
    button(panel, "time the boundary").click()
    expect(panel.locator(".ratelab-rejected")).to_have_text("10")
    assert counter(panel, "accepted") == "10"
    assert counter(panel, "max-rolling") == "10"
    expect(panel.locator(".ratelab-inspect")).to_contain_text("log = [10 entries]")

    # play drives virtual time from the browser (3 s of it); count the chart's redraws meanwhile
    page.evaluate("""() => {
        window.__frames = 0;
        const chart = document.querySelector('.ratelab-live svg.ratelab-chart').parentElement;
        new MutationObserver(() => { window.__frames += 1; })
            .observe(chart, {childList: true, subtree: true, characterData: true});
    }""")
    panel.locator(".widget-play button").first.click()
    start = time.monotonic()
    page.wait_for_function(
        "() => parseFloat(document.querySelector('.ratelab-live .ratelab-t').innerText) > 5.2",
        timeout=30_000)
    frames = page.evaluate("window.__frames")
    elapsed = time.monotonic() - start
    print(f"browser: {frames} chart redraws in {elapsed:.2f} s of play "
          f"({frames / elapsed:.1f} frames/s)")
    assert frames > 0
    page.screenshot(path=str(SHOTS / "04-live-limiter-page.png"), full_page=False)
