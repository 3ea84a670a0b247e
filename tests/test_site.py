"""`make site`: the course as a static website, built from the executed notebooks (one build).

Jupyter Book 1 (Sphinx + myst-nb + sphinx-book-theme) renders the committed notebooks without
executing them. The test builds the site once into a temporary directory, then checks that
every lesson and student exercise notebook has its page, that no solution is on it, that no
link inside the site is broken, that search has an index, and — in Debian's chromium — that
notebook 04's page shows a figure. The instructor's build (``make site-instructor``) is checked
by its table of contents: the published one plus the solutions. The guides (docs/) and the
reference are checked too: the API pages generated from the docstrings document the public
names, the command-line page shows every subcommand's help, and — without a build — the README
stays a front door of at most 200 lines whose relative links, like those of docs/, resolve.
Skips when jupyter-book is not installed (``pip install -e '.[site]'``), fails under
RATELAB_REQUIRE_SERVICES=1.
"""

from __future__ import annotations

import html.parser
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

import numpy as np
import pytest
import yaml
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

import services

pytestmark = pytest.mark.site

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "artifacts" / "site"
REPOSITORY = "https://github.com/someone/ratelab-fork"  # a clone's address, as a fork has it


def lessons() -> list[Path]:
    """Every lesson notebook, by glob."""
    return sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))


def student_exercises() -> list[Path]:
    """Every exercise notebook as students get it, by glob."""
    return sorted((ROOT / "notebooks" / "exercises" / "student").glob("*.ipynb"))


def solutions() -> list[Path]:
    """Every solution notebook, by glob."""
    return sorted((ROOT / "notebooks" / "exercises").glob("*-solution.ipynb"))


def notebooks() -> list[Path]:
    """Every notebook the published site shows: the lessons and the student exercises."""
    return lessons() + student_exercises()


def configure_module():
    """site/configure.py, imported."""
    return site_module("configure")


def site_module(name: str):
    """A module of site/ (configure.py, docstrings.py), imported."""
    import importlib

    sys.path.insert(0, str(ROOT / "site"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(ROOT / "site"))


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The built site's html directory (built once for this module)."""
    jb = Path(sys.executable).with_name("jupyter-book")
    if not jb.exists():
        if services.required():
            pytest.fail("RATELAB_REQUIRE_SERVICES=1 but jupyter-book is missing "
                        "(pip install -e '.[site]')")
        pytest.skip("jupyter-book is not installed (pip install -e '.[site]')")
    out = tmp_path_factory.mktemp("site")
    config = out / "_config.yml"  # as `make site` writes it, for a clone of REPOSITORY
    env = {**os.environ, "RATELAB_REPOSITORY_URL": REPOSITORY}
    subprocess.run([sys.executable, str(ROOT / "site" / "configure.py"), str(config)],
                   env=env, check=True, capture_output=True)
    start = time.monotonic()
    run = subprocess.run(
        [str(jb), "build", str(ROOT), "--config", str(config),
         "--toc", str(ROOT / "site" / "_toc.yml"), "--path-output", str(out)],
        capture_output=True, text=True, timeout=1200)
    print(f"site built in {time.monotonic() - start:.0f} s")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    (out / "build.log").write_text(run.stdout + run.stderr)  # read by test_the_build_is_clean
    return out / "_build" / "html"


class Links(html.parser.HTMLParser):
    """Every href and src of a page, and every id it defines."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value:
                self.links.append(value)
            if name == "id" and value:
                self.ids.add(value)


def parse(page: Path) -> Links:
    p = Links()
    p.feed(page.read_text(encoding="utf-8", errors="replace"))
    return p


def page_of(site: Path, nb: Path) -> Path:
    """The built page of notebook `nb`."""
    return site / nb.relative_to(ROOT).with_suffix(".html")


def test_every_notebook_has_its_page(site):
    nbs = notebooks()
    assert len(lessons()) >= 10 and len(student_exercises()) >= 5
    for nb in nbs:
        assert page_of(site, nb).is_file(), f"no page for {nb.relative_to(ROOT)}"
    for nb in lessons():
        assert "cell_output" in page_of(site, nb).read_text(), f"{nb.name} shows no outputs"
    for nb in student_exercises():  # the stubs, as a student opens them
        assert "NotImplementedError" in text_of(page_of(site, nb)), f"{nb.name} shows no stub"
    index = (site / "site" / "index.html").read_text()
    for nb in nbs:  # and the front page's contents link to it
        assert nb.relative_to(ROOT).with_suffix(".html").as_posix().split("/")[-1] in index


class Text(html.parser.HTMLParser):
    """A page's text, its tags (the highlighter's spans) taken out."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data):
        self.parts.append(data)


def text_of(page: Path) -> str:
    """The text a reader sees on `page`."""
    p = Text()
    p.feed(page.read_text(encoding="utf-8", errors="replace"))
    return "".join(p.parts)


def answer_lines() -> list[str]:
    """Lines of the reference answers that their stubs leave out (the bodies)."""
    from ratelab.exercises import NAMES, module
    from ratelab.exercises.build import stub_source

    out = []
    for name in NAMES:
        source = str(module(name).solution())
        stub = set(stub_source(source).splitlines())
        out += [line.strip() for line in source.splitlines()
                if line not in stub and len(line.strip()) > 30 and not line.strip().startswith("#")]
    return out


def test_the_published_site_holds_no_solution(site):
    for nb in solutions():
        assert not page_of(site, nb).exists(), f"{nb.name} is published"
    lines = answer_lines()
    assert len(lines) >= 26  # two or more body lines for each exercise
    pages = sorted((site / "notebooks" / "exercises").rglob("*.html"))  # (lessons show code
    assert len(pages) == len(student_exercises())  # of their own: 06 shows the Lua script)
    shown = {p: text_of(p) for p in pages}
    leaks = [f"{p.relative_to(site)}: {line}" for p, text in shown.items() for line in lines
             if line in text]
    assert not leaks, "\n".join(leaks[:10])
    assert "Solutions" not in (site / "site" / "index.html").read_text()


def test_the_instructor_build_adds_the_solutions_to_the_published_contents(tmp_path):
    configure = configure_module()
    published = yaml.safe_load((ROOT / "site" / "_toc.yml").read_text())
    globs = [c["glob"] for part in published["parts"] for c in part["chapters"] if "glob" in c]
    matched = [p for g in globs for p in ROOT.glob(g + ".ipynb")]
    assert sorted(matched) == sorted(notebooks())  # the lessons and the stubs, no solution
    assert not any(p.name.endswith("-solution.ipynb") for p in matched)
    run = subprocess.run([sys.executable, str(ROOT / "site" / "configure.py"),
                          str(tmp_path / "_config.yml"), "--instructor"],
                         capture_output=True, text=True, check=True)
    assert "instructor" in run.stdout
    toc = yaml.safe_load((tmp_path / "_toc.yml").read_text())
    assert toc["parts"][:-1] == published["parts"] and toc["root"] == published["root"]
    extra = [c["glob"] for c in toc["parts"][-1]["chapters"]]
    assert sorted(p for g in extra for p in ROOT.glob(g + ".ipynb")) == solutions()
    config = yaml.safe_load((tmp_path / "_config.yml").read_text())
    assert "with solutions" in config["title"]
    assert configure.instructor_toc(published) == toc
    make = subprocess.run(["make", "-n", "site-instructor"], cwd=ROOT, capture_output=True,
                          text=True)
    assert make.returncode == 0 and "--instructor" in make.stdout, make.stdout + make.stderr


def test_no_internal_link_is_broken(site):
    pages = sorted(p for p in site.rglob("*.html")
                   if "_static" not in p.relative_to(site).parts)  # theme template fragments
    parsed = {page: parse(page) for page in pages}
    broken = []
    for page, links in parsed.items():
        for link in links.links:
            url = urlsplit(link)
            if url.scheme or url.netloc or link.startswith(("mailto:", "javascript:")):
                continue  # outside the site (Binder, the repository): not ours to check
            target = page if not url.path else (page.parent / unquote(url.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(site)} → {link}")
            elif url.fragment and target.suffix == ".html":
                ids = parsed[target].ids if target in parsed else parse(target).ids
                if unquote(url.fragment) not in ids:
                    broken.append(f"{page.relative_to(site)} → {link} (no such anchor)")
    assert not broken, "\n".join(broken[:20])


def test_search_and_binder_are_configured(site):
    assert (site / "search.html").is_file()
    assert "boundary" in (site / "searchindex.js").read_text()
    config = yaml.safe_load((ROOT / "site" / "_config.yml").read_text())
    assert config["execute"]["execute_notebooks"] == "off"
    assert config["launch_buttons"]["binderhub_url"] == "https://mybinder.org"
    assert "redis-server" in (ROOT / "apt.txt").read_text().split()
    page = (site / "notebooks" / "04-live-limiter.html").read_text()
    assert "mybinder.org/v2/gh/someone/ratelab-fork/main" in page  # Binder launches this clone
    assert f'href="{REPOSITORY}"' in page


def test_the_site_links_only_to_a_repository_it_knows(tmp_path, monkeypatch):
    """No address is made up: a GitHub origin in any spelling, the variable, or no buttons."""
    configure = configure_module()
    base = yaml.safe_load((ROOT / "site" / "_config.yml").read_text())
    assert "url" not in base.get("repository", {}), "the committed configuration names no address"
    for remote in ("https://github.com/a/b.git", "git@github.com:a/b.git",
                   "ssh://git@github.com/a/b", "https://github.com/a/b/"):
        assert configure.github_url(remote) == "https://github.com/a/b", remote
    for remote in ("/srv/git/ratelab", "https://gitlab.com/a/b", "git@github.com:a"):
        assert configure.github_url(remote) is None, remote
    without = configure.configure(base, None)
    assert "repository" not in without and "launch_buttons" not in without
    assert without["html"]["use_repository_button"] is False
    with_url = configure.configure(base, "https://github.com/a/b")
    assert with_url["repository"]["url"] == "https://github.com/a/b"
    assert with_url["launch_buttons"]["binderhub_url"] == "https://mybinder.org"

    monkeypatch.delenv("RATELAB_REPOSITORY_URL", raising=False)
    clone = tmp_path / "clone"  # a clone with a local origin builds without the buttons
    subprocess.run(["git", "init", "-q", str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "remote", "add", "origin", "/srv/git/ratelab"],
                   check=True)
    assert configure.repository_url(clone) is None
    subprocess.run(["git", "-C", str(clone), "remote", "set-url", "origin",
                    "git@github.com:someone/ratelab.git"], check=True)
    assert configure.repository_url(clone) == "https://github.com/someone/ratelab"
    env = {k: v for k, v in os.environ.items() if k != "RATELAB_REPOSITORY_URL"}
    run = subprocess.run([sys.executable, str(ROOT / "site" / "configure.py"),
                          str(tmp_path / "c.yml")],
                         env={**env, "RATELAB_REPOSITORY_URL": "github.com/a/b"},
                         capture_output=True, text=True)
    assert run.returncode == 2 and "RATELAB_REPOSITORY_URL" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


def test_a_page_shows_a_figure_in_chromium(site, chromium):
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / "04-live-limiter.png"
    page = chromium.new_page(viewport={"width": 1280, "height": 1000})
    try:
        page.goto((site / "notebooks" / "04-live-limiter.html").as_uri())
        page.wait_for_load_state("load")
        sizes = page.evaluate("""() => [...document.querySelectorAll('main .cell_output img')]
            .map(i => [i.naturalWidth, i.naturalHeight, i.src.slice(0, 60)])""")
        figure = page.locator("main .cell_output img").first
        figure.scroll_into_view_if_needed()
        page.screenshot(path=str(shot))
    finally:
        page.close()
    assert any(w > 400 and h > 300 for w, h, _ in sizes), sizes  # the Compare snapshot
    assert shot.stat().st_size > 20_000


# ------------------------------------------------------------------ the guides and the reference

README_LINES = 200
"""The README is a front door: what ratelab is, two commands, a tour, where to go next."""


def every_subcommand() -> list[str]:
    """Each subcommand of ``ratelab.cli.parser()`` and each of their actions ("datasets list")."""
    from ratelab.cli import parser

    configure = configure_module()
    names = []
    for name, sub in configure.subcommands(parser()).items():
        names.append(name)
        names += [f"{name} {action}" for action in configure.subcommands(sub)]
    return names


def guides() -> list[Path]:
    """Every page of docs/, by glob."""
    return sorted((ROOT / "docs").glob("*.md"))


def toc_files() -> set[str]:
    """The pages the published table of contents names (``file:`` entries, any depth)."""
    found = set()

    def walk(entries):
        for entry in entries:
            if "file" in entry:
                found.add(entry["file"])
            walk(entry.get("sections", []))

    toc = yaml.safe_load((ROOT / "site" / "_toc.yml").read_text())
    for part in toc["parts"]:
        walk(part["chapters"])
    return found


def test_the_api_reference_documents_the_public_names_once(site):
    api = site / "site" / "_generated" / "api"
    limiters = api / "ratelab.limiters.html"
    assert limiters.is_file(), "no API page for ratelab.limiters"
    ids = {page: parse(page).ids for page in api.glob("*.html")}
    assert "ratelab.limiters.make" in ids[limiters]
    assert "ratelab.limiters.Limiter.allow" in ids[limiters]  # with its methods
    assert "ratelab.replay.replay" in ids[api / "ratelab.replay.html"]
    assert "ratelab.traces.loaders.load_log" in set().union(*ids.values())
    everywhere = [i for page_ids in ids.values() for i in page_ids]
    assert "ratelab.limiters.base.make" not in everywhere  # once, under its public name
    assert "ratelab.make" not in everywhere
    assert "prev x (1 - elapsed/W) + cur" in text_of(limiters)  # a docstring, rendered
    # every module walked that imports has its section (its module target), none is dropped
    configure = configure_module()
    found = configure.modules()
    missing = [m.name for m in found if m.module is not None
               and f"module-{m.name}" not in everywhere]
    assert not missing, f"modules with no section in the API reference: {missing}"
    skipped = {m.name: m.skipped for m in found if m.skipped}
    assert "ratelab.cli.__main__" in skipped  # importing it would run the command
    index = text_of(api / "index.html")
    for name in skipped:  # each left-out module is named, with its reason
        assert name in index


def test_the_cli_reference_shows_every_subcommands_help(site):
    page = text_of(site / "docs" / "cli.html")
    names = every_subcommand()
    assert len(names) >= 17 and "datasets list" in names and "bench ingest" in names
    for name in names:
        assert f"$ ratelab {name} --help" in page and f"usage: ratelab {name}" in page, name
    assert "Other subcommands" in page


def test_every_subcommand_has_its_section_in_the_cli_reference():
    """docs/cli.md: a section per subcommand, each including its generated help; the page's
    fallback ("Other subcommands") is for the build, not a place to leave one."""
    from ratelab.cli import parser

    configure = configure_module()
    text = (ROOT / "docs" / "cli.md").read_text()
    included = set(configure.INCLUDE.findall(text))
    for name, sub in configure.subcommands(parser()).items():
        assert re.search(rf"^### `ratelab {re.escape(name)}[ `]", text, re.M), \
            f"docs/cli.md has no section for ratelab {name}"
        actions = configure.subcommands(sub)
        assert name in included or any(f"{name}-{a}" in included for a in actions), \
            f"docs/cli.md's section for ratelab {name} does not include its help"
    pages, missing = configure.cli_pages(parser(), included)
    assert missing == [] and "None: every subcommand" in pages["others.md"]
    not_generated = {f"{k}.md" for k in included} - set(pages)  # an include of nothing
    assert not not_generated, not_generated


def test_the_guides_and_the_syllabus_are_published(site):
    names = toc_files()
    for page in guides():
        assert f"docs/{page.stem}" in names, f"docs/{page.name} is not in site/_toc.yml"
        assert (site / "docs" / f"{page.stem}.html").is_file(), f"no page for docs/{page.name}"
    assert "notebooks/README" in names and "docs/architecture" in names
    assert "Syllabus" in text_of(site / "notebooks" / "README.html")
    assert len(guides()) >= 12


def test_the_readme_is_a_front_door():
    readme = (ROOT / "README.md").read_text()
    lines = readme.splitlines()
    assert len(lines) <= README_LINES, f"README.md has {len(lines)} lines (at most {README_LINES})"
    for command in ("make lab", "make test"):
        assert command in readme
    links = set(markdown_links(ROOT / "README.md"))
    for page in guides():  # it points at every guide
        assert f"docs/{page.name}" in links, f"README.md does not link to docs/{page.name}"


FENCE = re.compile(r"^(`{3,}|~{3,}).*?^\1\s*$", re.M | re.S)
CODE = re.compile(r"`+[^`\n]*`+")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def markdown_links(page: Path) -> list[str]:
    """The targets of `page`'s Markdown links and images, outside code."""
    text = CODE.sub("", FENCE.sub("", page.read_text(encoding="utf-8")))
    return LINK.findall(text)


def test_markdown_links_are_found_outside_code(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("[a](x.md) `[b](y.md)` ![c](img.png \"t\")\n```\n[d](z.md)\n```\n"
                    "[e](https://example.com) [f](#here)\n")
    assert markdown_links(page) == ["x.md", "img.png", "https://example.com", "#here"]


def test_every_relative_link_in_the_readme_and_the_guides_resolves():
    broken = []
    for page in [ROOT / "README.md", *guides()]:
        for link in markdown_links(page):
            url = urlsplit(link)
            if url.scheme or url.netloc or not url.path:  # outside, or an anchor on the page
                continue
            target = (page.parent / unquote(url.path)).resolve()
            if not target.is_file() or not target.is_relative_to(ROOT):
                broken.append(f"{page.relative_to(ROOT)} → {link}")
    assert not broken, "\n".join(broken)


def test_plain_prose_docstrings_are_read_as_restructuredtext():
    """site/docstrings.py: a docstring's table of names becomes a definition list, commands
    continued with a backslash stay as written, and prose's | and * are not markup."""
    import doctest
    import inspect

    from ratelab.limiters import Decision

    docstrings = site_module("docstrings")
    assert doctest.testmod(docstrings).failed == 0
    lines = docstrings.plain_prose(inspect.getdoc(Decision).splitlines())
    for name in ("allowed", "limit", "remaining", "retry_after", "reset_after", "delay"):
        assert f"``{name}``" in lines, name
    assert not any(line.startswith("allowed ") for line in lines)  # no table left as prose
    retry = lines.index("``retry_after``")
    assert lines[retry + 2].strip().startswith("sent at exactly")  # its continuation, kept
    example = ["Run it:", "", "    ratelab race --strategy lua \\", "        --gateways 4", ""]
    assert docstrings.plain_prose(example)[3:5] == ["    ::", ""]
    assert docstrings.plain_prose(["not a *table*  and 2 * 3"]) == ["not a *table*  and 2 \\* 3"]


def test_the_build_is_clean(site):
    """No warning from Sphinx: a page, a link, a docstring autodoc could not read — each one
    names its file and line."""
    log = re.sub(r"\x1b\[[0-9;]*m", "", (site.parent.parent / "build.log").read_text())
    warnings = [line for line in log.splitlines() if re.search(r"\b(WARNING|ERROR|CRITICAL):", line)]
    assert not warnings, f"{len(warnings)} warnings:\n" + "\n".join(warnings[:20])


def test_a_lesson_page_asks_for_a_prediction_and_shows_no_test_scaffolding(site):
    """The website shows a question's prompt with the measured value folded away, and none of
    the markers nbval reads (``# NBVAL_CHECK_OUTPUT``) or its plain-text "no prediction
    written" lines."""
    lessons = sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
    for nb in lessons:
        text = page_of(site, nb).read_text(encoding="utf-8")
        prose = sum("".join(c["source"]).count("NBVAL_")  # where the prose names the marker
                    for c in json.loads(nb.read_text())["cells"] if c["cell_type"] == "markdown")
        assert text.count("NBVAL_") == prose, f"{nb.name}: a marker for nbval is on its page"
        assert "no prediction written" not in text, nb.name
    page = page_of(site, ROOT / "notebooks" / "01-token-bucket.ipynb").read_text("utf-8")
    prompts = re.findall(r'<div class="ratelab-reveal">(.*?)</div>', page, flags=re.S)
    assert len(prompts) == 2, "01 asks two questions"
    for prompt in prompts:
        before, folded = prompt.split("<details>")
        assert "Your prediction?" in before and "measured" not in before
        assert "show the measured value" in folded and "measured 1" in folded


# ------------------------------------------------------------------ the site in a browser

def site_pages(site: Path) -> list[Path]:
    """Every HTML page of the built site (not the theme's assets, the notebooks' sources, or
    the top index.html, which only redirects to site/index.html)."""
    return sorted(p for p in site.rglob("*.html")
                  if not {"_static", "_sources", "_images", "_downloads"} & set(p.parts)
                  and not p.read_text(encoding="utf-8").startswith("<meta http-equiv=\"Refresh\""))


@pytest.fixture(scope="module")
def chromium():
    """Debian's chromium through Playwright, one browser for the module's tests."""
    with services.chromium("the site is opened in Debian's chromium") as browser:
        yield browser


class Offline:
    """A page of a new browser context with no network: every request that is not for a file
    is recorded (``outside``; it fails), as are console errors and uncaught exceptions
    (``errors``); ``close()`` ends the context."""

    def __init__(self, browser, **context) -> None:
        self.context = browser.new_context(offline=True, **context)
        self.page = self.context.new_page()
        self.outside: list[str] = []
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error"
                     else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: None if r.url.startswith(("file:", "data:", "blob:"))
                     else self.outside.append(r.url))

    def open(self, path: Path):
        """Go to `path` and wait for it to load; the page."""
        self.page.goto(path.as_uri())
        self.page.wait_for_load_state("load")
        return self.page

    def close(self) -> None:
        self.context.close()


PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
DESKTOP = {"viewport": {"width": 1280, "height": 900}}

SCALES = """() => [...document.querySelectorAll('div.cell_output img')]
    .filter(i => i.naturalWidth > 0)
    .map(i => [i.getBoundingClientRect().width / i.naturalWidth, i.naturalWidth])"""
"""Each figure of a page: the width it is shown at over the width it was drawn, and the latter."""


def small_figures(page, name: str) -> list[tuple[str, float, int]]:
    """The figures of the open page shown below figures.SMALLEST of their drawn size."""
    smallest = site_module("figures").SMALLEST
    return [(name, round(scale, 2), drawn) for scale, drawn in page.evaluate(SCALES)
            if scale < smallest]


def test_every_page_works_offline_on_a_phone(site, chromium):
    """The site says it works with no network: on a phone, no page asks for anything outside
    it (the widget manager's CDN scripts once did; the animation player's icon font would),
    none logs an error (``THEBE_JS_URL`` declared twice once did, on every page), and no
    lesson's figure is shrunk until its labels cannot be read (0.3 of its size, once)."""
    pages = site_pages(site)
    assert len(pages) > 40
    browser = Offline(chromium, **PHONE)
    found, small = {}, []
    try:
        for path in pages:
            page = browser.open(path)
            if browser.outside or browser.errors:
                found[str(path.relative_to(site))] = (browser.outside[:3], browser.errors[:3])
                browser.outside.clear()
                browser.errors.clear()
            if path.parent.name == "notebooks":
                small += small_figures(page, path.name)
    finally:
        browser.close()
    assert not found, f"{len(found)} of {len(pages)} pages: {dict(list(found.items())[:5])}"
    assert not small, small


def test_on_a_desktop_figures_are_shown_near_their_size_and_wide_ones_tiled(site, chromium):
    """At 1280 px the text column is about 690 px: the calibration's three panels (1,556 px,
    once in 05, now in the appendix 11) showed at 0.44 of their size. A figure is shown at
    figures.SMALLEST of its size or more; the wide ones as tiles (site/figures.py), each at
    its drawn size."""
    browser = Offline(chromium, **DESKTOP)
    small, tiles = [], []
    try:
        for nb in lessons():
            page = browser.open(page_of(site, nb))
            small += small_figures(page, nb.name)
            tiles += page.evaluate("""() => [...document.querySelectorAll(
                'div.ratelab-tiles img')].map(i => [i.naturalWidth,
                i.getBoundingClientRect().width])""")
    finally:
        browser.close()
    assert not small, small
    assert len(tiles) >= 4, tiles  # the appendix's panels and its legend's pieces
    assert all(drawn <= site_module("figures").FITS and abs(shown - drawn) < 1
               for drawn, shown in tiles), tiles


def test_on_a_phone_the_menu_opens_and_leads_to_a_lesson(site, chromium):
    """pydata-sphinx-theme 0.17 listens on a hidden button, so the menu a phone shows did
    nothing (site/webpage.py forwards it): tap it, see the numbered lessons, open one."""
    browser = Offline(chromium, **PHONE)
    try:
        page = browser.open(site / "site" / "index.html")
        dialog = page.locator("#pst-primary-sidebar-modal")
        assert not dialog.evaluate("d => d.open")
        page.locator(".primary-toggle:visible").first.tap()
        page.wait_for_function(
            "() => document.querySelector('#pst-primary-sidebar-modal').open", timeout=5000)
        lesson = dialog.get_by_role("link", name=re.compile(r"^03 · Windows"))
        assert lesson.is_visible()
        lesson.tap()
        page.wait_for_url("**/notebooks/03-windows.html", timeout=10000)
        assert page.locator("h1").first.inner_text().startswith("03 · Windows")
        assert not browser.errors, browser.errors
    finally:
        browser.close()


def test_on_a_desktop_the_menu_button_collapses_the_sidebar(site, chromium):
    browser = Offline(chromium, **DESKTOP)
    try:
        page = browser.open(site / "notebooks" / "01-token-bucket.html")
        assert page.locator("#pst-primary-sidebar").is_visible()
        page.locator(".primary-toggle:visible").first.click()
        page.wait_for_function("() => document.querySelector('#pst-primary-sidebar')"
                               ".classList.contains('pst-sidebar-hidden')", timeout=5000)
        assert not browser.errors, browser.errors
    finally:
        browser.close()


def test_the_sidebar_numbers_the_lessons_once_each_in_order(site):
    """The syllabus, then lessons 00–10 numbered from their files' names; the home page is
    the site's title above the list, not listed again in it; the site has its icon."""
    page = (site / "notebooks" / "01-token-bucket.html").read_text("utf-8")
    nav = page[page.index("bd-docs-nav"):page.index("</nav>", page.index("bd-docs-nav"))]
    titles = re.findall(r'<a class="(?:current )?reference internal" href="[^"]*">\s*([^<]+?)'
                        r'\s*</a>', nav)
    numbered = [t for t in titles if re.match(r"\d\d · ", t)]
    assert [t[:2] for t in numbered] == [nb.name[:2] for nb in lessons()], titles
    assert titles[0].startswith("Syllabus"), titles[:3]
    home = yaml.safe_load((ROOT / "site" / "_config.yml").read_text())["title"]
    assert home not in titles, titles[:3]
    icon = re.search(r'<link rel="icon" href="([^"]+)"', page)
    assert icon and (site / "notebooks" / icon[1]).resolve().is_file()


def test_the_syllabus_gives_each_lesson_its_time_and_objectives(site):
    """The syllabus (notebooks/README.md) is the first page of the lessons: each lesson it
    lists is on the page with its time and what you will be able to do after it."""
    listed = re.findall(r"^### (\d\d) .*?\((\d+ min[^)]*)\)$",
                        (ROOT / "notebooks" / "README.md").read_text(), flags=re.M)
    assert len(listed) >= 10, listed
    text = " ".join(text_of(site / "notebooks" / "README.html").split())
    for number, minutes in listed:
        assert re.search(rf"{number} [^(]*\({re.escape(minutes)}\)", text), (number, minutes)
    assert text.count("You will be able to") >= len(listed)


def test_no_page_starts_its_code_with_a_kernel_magic(site):
    """``%matplotlib inline`` tells a kernel how to show figures; a page runs nothing, and
    search showed the line as every lesson's snippet (site/scaffolding.py)."""
    assert any("%matplotlib inline" in nb.read_text() for nb in lessons())  # the notebooks do
    for nb in notebooks():
        assert "%matplotlib" not in text_of(page_of(site, nb)), nb.name


def test_the_live_limiters_page_plays_its_animations_with_no_kernel(site, chromium):
    """04's page holds two recordings (ratelab.widgets.animate): the comparison's lanes and
    the live limiter's flood and boundary train. Offline, with no kernel: play moves the
    frames on, pause stops them, the slider scrubs to a frame, and the buttons show icons.
    The live panel itself, which cannot run here, says what it is instead of an empty chart."""
    browser = Offline(chromium, **DESKTOP)
    try:
        page = browser.open(site / "notebooks" / "04-live-limiter.html")
        players = page.locator("div.animation")
        assert players.count() == 2
        for k in range(2):
            player = players.nth(k)
            player.scroll_into_view_if_needed()
            frame = player.locator("img")
            slider = player.locator("input.anim-slider")
            frames = int(slider.evaluate("s => s.max")) + 1
            assert frames >= 12, frames
            assert player.locator("button svg").count() == 9  # the theme's Font Awesome
            first = frame.get_attribute("src")
            player.locator("button[title=Play]").click()
            page.wait_for_function("s => s.value > 0", arg=slider.element_handle(),
                                   timeout=10_000)
            player.locator("button[title=Pause]").click()
            paused = slider.evaluate("s => s.value")
            page.wait_for_timeout(600)  # three frames' time at 5 a second
            assert slider.evaluate("s => s.value") == paused
            slider.fill(str(frames - 1))
            assert frame.get_attribute("src") not in (first, None)
            slider.fill("0")
            assert frame.get_attribute("src") == first
        SHOTS.mkdir(parents=True, exist_ok=True)
        players.nth(1).screenshot(path=str(SHOTS / "04-live-limiter-animation.png"))
        static = page.locator(".ratelab-live-snapshot").first
        assert "Nothing has been sent to it yet" in static.inner_text()
        assert not browser.outside and not browser.errors, (browser.outside, browser.errors)
    finally:
        browser.close()


def test_a_wide_figure_is_cut_at_its_gutters_into_tiles():
    """site/figures.py on a drawn figure: a legend across the top, three panels with titles
    and axis labels under them. The panels are cut apart with their titles and labels; the
    legend at its entries; a figure that fits, or has no gutter, is left whole."""
    figures = site_module("figures")
    fig = Figure(figsize=(15.6, 4.6), dpi=100)
    axes = fig.subplots(1, 3)
    for k, ax in enumerate(axes):
        for s in range(6):
            ax.plot([0, 1, 2], [s, s + k, s * 2], marker="o", label=f"series number {s}")
        ax.set_title(f"panel {k} with a long title")
        ax.set_xlabel("parameter, relative to the found mix")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="upper center", ncols=6,
               frameon=False)  # as the suite draws them (ratelab.plot.STYLE)
    fig.subplots_adjust(top=0.8, wspace=0.3)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    image = np.asarray(canvas.buffer_rgba())
    rows = figures.tiles(image)
    widths = [[x1 - x0 for x0, _, x1, _ in row] for row in rows]
    assert len(rows) == 2 and len(rows[1]) == 3, widths  # the legend, then the three panels
    assert all(w <= figures.FITS for row in widths for w in row), widths
    assert [sum(row) for row in widths] == [image.shape[1]] * 2  # nothing lost, no overlap
    panels = rows[1]
    assert panels[0][1] < 0.25 * image.shape[0] < panels[0][3]  # the titles are with them
    for x0, y0, x1, y1 in panels:
        seam = image[y0:y1, x1 - 1:x1 + 1, :3] if x1 < image.shape[1] else None
        assert seam is None or (seam >= figures.WHITE).all()  # cut through blank paper
    narrow = image[:, :figures.WIDE - 1]
    assert figures.tiles(narrow) == [[(0, 0, narrow.shape[1], narrow.shape[0])]]
    solid = np.zeros((200, 1500, 3), dtype=np.uint8)
    assert figures.tiles(solid) == [[(0, 0, 1500, 200)]]
