"""Start real services (redis-server, nginx, haproxy, JupyterLab, Debian's chromium) for tests,
on free loopback ports.

A missing service skips its test with a clear reason — unless RATELAB_REQUIRE_SERVICES=1
(set by .ci/run, which installs them), where a missing service fails the test instead.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest


def required() -> bool:
    """Whether a missing service must fail the test rather than skip it."""
    return os.environ.get("RATELAB_REQUIRE_SERVICES") == "1"


def need(binary: str, why: str = "") -> str:
    """The path of `binary`, or skip (fail under RATELAB_REQUIRE_SERVICES=1) when absent."""
    path = shutil.which(binary) or next(
        (p for p in (f"/usr/sbin/{binary}", f"/usr/bin/{binary}") if os.access(p, os.X_OK)), None
    )
    if path:
        return path
    reason = f"{binary} is not installed{': ' + why if why else ''} (apt-get install it)"
    if required():
        pytest.fail(f"RATELAB_REQUIRE_SERVICES=1 but {reason}")
    pytest.skip(reason)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, timeout_s: float = 10.0) -> None:
    """Block until something accepts on 127.0.0.1:`port`, or fail naming the process."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args[0]} exited with {proc.returncode} before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{proc.args[0]} did not listen on port {port} within {timeout_s} s")


@contextmanager
def running(cmd: list[str], port: int, cwd: Path | None = None, *, env: dict | None = None,
            log: Path | None = None, timeout_s: float = 10.0):
    """Run `cmd` until the block ends; yield once it listens on `port`.

    Its output goes to the file `log` (or nowhere): never to a pipe nobody reads, which a
    chatty server would fill and block on.
    """
    out = open(log, "w") if log else subprocess.DEVNULL
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, proc, timeout_s)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if log:
            out.close()


@contextmanager
def redis_server():
    """A fresh redis-server on a free loopback port, no persistence; yields its URL."""
    binary = need("redis-server")
    port = free_port()
    cmd = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
           "--appendonly", "no", "--protected-mode", "yes"]
    with running(cmd, port):
        yield f"redis://127.0.0.1:{port}/0"


@contextmanager
def nginx_server(http_conf: str, files: dict[str, str], tmp: Path):
    """nginx (master off, foreground) on a free loopback port, in the prefix directory `tmp`.

    `http_conf` is the inside of the http block, with ``{port}`` where the server listens and
    ``{root}`` for the document root; `files` maps paths under the root to their content.
    Yields the base URL. The error log is named with -e, so nginx never opens its default.
    """
    binary = need("nginx")
    port = free_port()
    root = tmp / "html"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    temp = tmp / "temp"
    temp.mkdir(exist_ok=True)
    body = http_conf.replace("{port}", str(port)).replace("{root}", str(root))
    conf = tmp / "nginx.conf"
    conf.write_text(f"""
daemon off;
master_process off;
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log notice;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
{body}
}}
""")
    cmd = [binary, "-p", str(tmp), "-c", str(conf), "-e", str(tmp / "error.log")]
    with running(cmd, port):
        yield f"http://127.0.0.1:{port}"


@contextmanager
def haproxy_server(frontends: dict[str, str], tmp: Path, *, lua: str = ""):
    """HAProxy (foreground, one thread) with one frontend per entry of `frontends`, each on a
    free loopback port; yields {name: base URL}.

    Each value is the inside of a ``frontend`` section (its rules); the helper adds the bind
    line. One thread, as the HAProxyRate model assumes (threads race on a counter's rotation).
    `lua`, when given, is a Lua script loaded at start (``lua-load``; a HAProxy built without
    Lua skips the test, or fails it under RATELAB_REQUIRE_SERVICES=1). The server's output goes
    to `tmp`/haproxy.log.
    """
    binary = need("haproxy")
    globals_ = ""
    if lua:
        features = subprocess.run([binary, "-vv"], capture_output=True, text=True).stdout
        if "+LUA" not in features.split():
            reason = "haproxy is built without Lua (+LUA in haproxy -vv): the test needs it"
            if required():
                pytest.fail(f"RATELAB_REQUIRE_SERVICES=1 but {reason}")
            pytest.skip(reason)
        (tmp / "haproxy.lua").write_text(lua)
        globals_ = f"    lua-load {tmp / 'haproxy.lua'}\n"
    ports = {name: free_port() for name in frontends}
    sections = "\n".join(f"frontend {name}\n    bind 127.0.0.1:{ports[name]}\n{body}\n"
                         for name, body in frontends.items())
    conf = tmp / "haproxy.cfg"
    conf.write_text(f"""global
    nbthread 1
    maxconn 4096
{globals_}
defaults
    mode http
    timeout connect 5s
    timeout client 10s
    timeout server 10s

{sections}""")
    log = tmp / "haproxy.log"
    with running([binary, "-db", "-f", str(conf)], next(iter(ports.values())), log=log) as proc:
        for port in ports.values():
            wait_for_port(port, proc)
        yield {name: f"http://127.0.0.1:{port}" for name, port in ports.items()}


CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]
"""Debian's chromium headless with no network of its own: without the background-networking
flags it tries Google's hosts at every start, refused on a closed network."""


@contextmanager
def chromium(why: str):
    """Headless Debian chromium, driven by Playwright (never `playwright install`); skips (or
    fails, under RATELAB_REQUIRE_SERVICES=1) without chromium or the playwright package."""
    executable = need("chromium", why)
    try:
        from playwright.sync_api import sync_playwright  # the test extra; say so if missing
    except ImportError:
        if required():
            pytest.fail("RATELAB_REQUIRE_SERVICES=1 but the playwright package is missing")
        pytest.skip("the playwright package is not installed (pip install -e '.[test]')")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS,
                                    headless=True)
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def jupyterlab(root: Path, notebook: str, env: dict | None = None):
    """JupyterLab serving the folder `root` on a free loopback port, with its settings, runtime
    and workspaces in `root`/home and no news toast; yields the URL that opens `notebook`.
    `env` is added to the server's environment."""
    port, token = free_port(), secrets.token_hex(16)
    home = root / "home"
    env = os.environ | {"JUPYTER_CONFIG_DIR": str(home / "config"),
                        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
                        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
                        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"), **(env or {})}
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1",
           f"--port={port}", f"--ServerApp.root_dir={root}",
           f"--IdentityProvider.token={token}", "--LabApp.expose_app_in_browser=True",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--allow-root"]
    news = home / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    news.parent.mkdir(parents=True)
    news.write_text('{"fetchNews": "false"}')  # no "get news?" toast over the page
    with running(cmd, port, root, env=env, log=home / "lab.log", timeout_s=240):
        yield f"http://127.0.0.1:{port}/lab/tree/{notebook}?token={token}"
