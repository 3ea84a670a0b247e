"""Write the site's build configuration: `site/_config.yml` plus the repository it is built from,
and for the instructor's build its table of contents.

The repository button and Binder's launch button need the public address of the repository,
which a clone knows and the committed configuration cannot: a fork builds its own site with
its own links. The address comes from ``RATELAB_REPOSITORY_URL`` when set, otherwise from
``git remote get-url origin`` when that is a GitHub repository (Binder launches GitHub
repositories). Without one, the site is built without those two buttons, and this says so in
one line: a button to a made-up address would be a broken link on every page.

    python site/configure.py build/site/_config.yml

The published site shows the exercises as students get them (site/_toc.yml). The instructor's
build adds the solution notebooks: ``--instructor`` writes, beside the configuration, a
``_toc.yml`` that is the published one plus a part of solutions (:func:`instructor_toc`), and
marks the title, so that a page of answers is never mistaken for the course's:

    python site/configure.py build/site-instructor/_config.yml --instructor

It also writes the two reference parts that are generated, never hand-kept, into
``site/_generated/`` (ignored by git, rewritten by every build):

- ``api/``: the API reference, one page per package of ``ratelab`` (the top-level modules on
  the ``ratelab`` page), found by walking the package (:func:`modules`), each module an
  ``automodule`` directive that Sphinx's autodoc fills from the docstrings (:func:`api_pages`).
  An object is documented once, under its public name (:func:`home`): ``make`` as
  ``ratelab.limiters.make``, not again under ``ratelab.limiters`` 's ``base`` or ``ratelab``.
- ``cli/``: each subcommand's ``--help``, from the parser ``ratelab.cli.parser()`` builds, as a
  code block that ``docs/cli.md`` includes under the subcommand's section (:func:`cli_pages`).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import pkgutil
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
GENERATED = HERE / "_generated"
"""Where the generated reference pages go (``site/.gitignore`` keeps them out of git)."""
SOLUTIONS_GLOB = "notebooks/exercises/*-solution"
"""The solution notebooks, as a table of contents globs them (the instructor's build only)."""

GITHUB = re.compile(r"^(?:https://github\.com/|git@github\.com:|ssh://git@github\.com/)"
                    r"(?P<owner>[\w.-]+)/(?P<name>[\w.-]+?)(?:\.git)?/?$")


def github_url(remote: str) -> str | None:
    """The https address of a GitHub remote in any of git's spellings, else None.

    >>> github_url("git@github.com:someone/ratelab.git")
    'https://github.com/someone/ratelab'
    >>> github_url("/srv/git/ratelab") is None
    True
    """
    match = GITHUB.match(remote.strip())
    return f"https://github.com/{match['owner']}/{match['name']}" if match else None


def repository_url(root: Path) -> str | None:
    """``RATELAB_REPOSITORY_URL``, else the clone's ``origin`` when it is on GitHub, else None."""
    given = os.environ.get("RATELAB_REPOSITORY_URL", "").strip()
    if given:
        if not given.startswith("https://"):
            raise ValueError(f"RATELAB_REPOSITORY_URL must be an https address, got {given!r}")
        return given.rstrip("/")
    try:
        remote = subprocess.run(["git", "-C", str(root), "remote", "get-url", "origin"],
                                capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None  # not a clone, or a clone with no origin
    return github_url(remote)


def configure(config: dict, url: str | None) -> dict:
    """The configuration with the repository's address, or without the buttons that need one."""
    config = dict(config)
    html = dict(config.get("html", {}))
    if url:
        config["repository"] = {**config.get("repository", {}), "url": url}
        html["use_repository_button"] = True
    else:
        config.pop("repository", None)
        config.pop("launch_buttons", None)
        html["use_repository_button"] = False
    config["html"] = html
    return config


def instructor_toc(toc: dict) -> dict:
    """The published table of contents with a last part of solution notebooks."""
    part = {"caption": "Solutions (instructor only)", "chapters": [{"glob": SOLUTIONS_GLOB}]}
    return {**toc, "parts": [*toc["parts"], part]}


def instructor_config(config: dict) -> dict:
    """The configuration with a title that says the build holds the solutions."""
    return {**config, "title": f"{config['title']} (instructor's build, with solutions)"}


# ------------------------------------------------------------------ the API reference

SKIPPED = {
    "__main__": "running it is running the command (``python -m``): importing it would too",
}
"""Modules left out of the API reference by their last name, and why."""


@dataclass
class Module:
    """One module of the package as the API reference sees it."""

    name: str
    package: bool = False         # a package (it has modules of its own)
    module: object | None = None  # None when it was not imported
    skipped: str = ""             # why it is not documented ("" when it is)
    exclude: list[str] = field(default_factory=list)  # members documented at their home
    elsewhere: list[tuple[str, str]] = field(default_factory=list)  # (role, public name)
    own: list[str] = field(default_factory=list)  # members whose home is here, for a summary


def modules(package: str = "ratelab") -> list[Module]:
    """Every module of `package`, walked (``pkgutil.walk_packages``) and imported, in order.

    A module that cannot be imported is kept with the reason (its missing optional package,
    or the error), so that the reference says what it leaves out instead of failing the build.
    """
    sys.path.insert(0, str(ROOT))  # the checkout's package, even where it is not installed
    try:
        top = importlib.import_module(package)
    finally:
        sys.path.remove(str(ROOT))
    found = [Module(package, True, top)]
    failed: set[str] = set()
    for info in pkgutil.walk_packages(top.__path__, package + ".", onerror=failed.add):
        m = Module(info.name, info.ispkg)
        last = info.name.rsplit(".", 1)[-1]
        if last in SKIPPED:
            m.skipped = SKIPPED[last]
        elif any(info.name.startswith(f + ".") for f in failed):
            m.skipped = "its package does not import (above)"
        else:
            try:
                m.module = importlib.import_module(info.name)
            except ModuleNotFoundError as e:
                if e.name and not e.name.startswith(package):
                    m.skipped = f"needs `{e.name}`, an optional package not installed here"
                else:
                    m.skipped = f"does not import: {type(e).__name__}: {e}"
            except Exception as e:  # a module mid-move, a bug: say so, document the rest
                m.skipped = f"does not import: {type(e).__name__}: {e}"
        found.append(m)
    return found


def documentable(obj) -> bool:
    """Whether `obj` is a class or function: an object with one home (data may be shared)."""
    return inspect.isclass(obj) or inspect.isfunction(obj)


def public_names(m: Module) -> list[str]:
    """What ``automodule :members:`` documents of `m`: its ``__all__``, else what it defines."""
    names = getattr(m.module, "__all__", None)
    if names is not None:
        return [n for n in names if hasattr(m.module, n)]
    return [n for n, v in vars(m.module).items()
            if not n.startswith("_") and getattr(v, "__module__", None) == m.name]


def home(obj, exporters: list[str]) -> str:
    """The module an object is documented under: the shallowest package of its own that lists
    it in ``__all__`` (the root ``ratelab`` only re-exports), else the module defining it."""
    defined = obj.__module__
    own = [e for e in exporters if "." in e and defined.startswith(e + ".")]
    return min(own, key=lambda e: (e.count("."), e)) if own else defined


def assign_homes(found: list[Module]) -> None:
    """Fill each module's ``exclude``, ``elsewhere`` and ``own`` (see :class:`Module`)."""
    exporters: dict[int, list[str]] = {}
    objects: dict[int, object] = {}
    for m in found:
        if m.module is not None and hasattr(m.module, "__all__"):
            for n in public_names(m):
                obj = getattr(m.module, n)
                if documentable(obj):
                    exporters.setdefault(id(obj), []).append(m.name)
                    objects[id(obj)] = obj
    documented = {m.name for m in found if m.module is not None}
    for m in found:
        if m.module is None:
            continue
        for n in public_names(m):
            obj = getattr(m.module, n)
            if inspect.ismodule(obj):
                m.exclude.append(n)  # a subpackage: it has a section of its own
                continue
            if not documentable(obj):
                continue
            where = home(obj, exporters.get(id(obj), []))
            if where == m.name:
                if inspect.getdoc(obj):  # autodoc leaves an undocumented one out
                    m.own.append(n)
            elif where in documented:
                m.exclude.append(n)
                role = "class" if inspect.isclass(obj) else "func"
                m.elsewhere.append((role, f"{where}.{obj.__name__}"))
        # what it defines but re-exports under a package's name
        for n, obj in vars(m.module).items():
            if (n not in m.exclude and not n.startswith("_") and documentable(obj)
                    and obj.__module__ == m.name):
                where = home(obj, exporters.get(id(obj), []))
                if where != m.name and where in documented:
                    m.exclude.append(n)
                    role = "class" if inspect.isclass(obj) else "func"
                    if (role, f"{where}.{obj.__name__}") not in m.elsewhere:
                        m.elsewhere.append((role, f"{where}.{obj.__name__}"))


def module_section(m: Module, level: int) -> str:
    """A module's part of its page: a heading, then autodoc's automodule directive — the
    docstring, a table of what the module is home to, a line naming where the rest is
    documented, and the members."""
    lines = [f"{'#' * level} `{m.name}`", "", "```{eval-rst}", f".. automodule:: {m.name}",
             "   :members:"]
    if m.exclude:
        lines.append("   :exclude-members: " + ", ".join(sorted(set(m.exclude))))
    if m.own:
        lines += ["", "   .. autosummary::", ""] + [f"      {n}" for n in m.own]
    if m.elsewhere:
        refs = ", ".join(f":{role}:`~{name}`" for role, name in sorted(m.elsewhere,
                                                                         key=lambda r: r[1]))
        lines += ["", f"   Documented under their public names: {refs}."]
    lines += ["```", ""]
    return "\n".join(lines)


def page_of(m: Module) -> str:
    """The page `m` is on: its top-level package's, or ``ratelab``'s for a top-level module."""
    parts = m.name.split(".")
    if len(parts) > 2 or (len(parts) == 2 and m.package):
        return ".".join(parts[:2])
    return parts[0]


def api_pages(found: list[Module]) -> dict[str, str]:
    """File name → MyST text of each API page (one per package), and of the reference's index."""
    assign_homes(found)
    pages: dict[str, list[Module]] = {}
    for m in found:
        pages.setdefault(page_of(m), []).append(m)
    out = {}
    for page, members in pages.items():
        title = (f"# `{page}` and its top-level modules" if page == "ratelab" else f"# `{page}`")
        text = [title, ""]
        for m in members:
            if m.module is None:
                text += [f"## `{m.name}`", "", f"Not documented here: {m.skipped}.", ""]
            else:
                section = module_section(m, 2)
                text.append(section.split("\n", 2)[2] if m.name == page else section)
        out[f"{page}.md"] = "\n".join(text)
    skipped = [m for m in found if m.skipped]
    index = ["# API reference", "",
             "Generated from the docstrings by Sphinx's autodoc when the site is built: one page "
             "per package of `ratelab`, found by walking it (the top-level modules are on the "
             "`ratelab` page), so a module that moves moves here too. Each class and function is "
             "documented once, under its public name — its package's, when the package lists it "
             "in `__all__` — and the module that defines it links there.", ""]
    index += [f"- [`{p}`]({p}.md)" for p in sorted(pages)] + [""]
    if skipped:
        index += ["## Not documented here", "", "| module | why |", "|---|---|"]
        index += [f"| `{m.name}` | {m.skipped.replace('|', '/')} |" for m in skipped] + [""]
    out["index.md"] = "\n".join(index)
    return out


# ------------------------------------------------------------------ the CLI reference

def subcommands(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parsers of `p`'s subcommands by name, in the order ``--help`` lists them.

    ratelab's parsers (``ratelab.cli.support.Parser``) keep them in their documented
    ``commands`` attribute. argparse has no public way to reach them on any other parser: the
    one private access (``_actions``, ``_SubParsersAction``) is here, and only here.
    """
    commands = getattr(p, "commands", None)
    if commands is None:
        commands = next((a.choices for a in p._actions  # private: see the docstring
                         if isinstance(a, argparse._SubParsersAction)), {})
    seen, out = set(), {}
    for name, sub in commands.items():  # an alias maps to a parser already listed
        if id(sub) not in seen:
            seen.add(id(sub))
            out[name] = sub
    return out


def help_block(p: argparse.ArgumentParser) -> str:
    """`p`'s ``--help``, as it prints at 88 columns, in a fenced block that shows the command."""
    columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "88"  # argparse wraps to the terminal; a page has none
    try:
        text = p.format_help().rstrip()
    finally:
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns
    fence = "````" if "```" in text else "```"
    return f"{fence}text\n$ {p.prog} --help\n{text}\n{fence}\n"


INCLUDE = re.compile(r"^```\{include\} \.\./site/_generated/cli/(?P<key>[\w-]+)\.md$", re.M)


def cli_pages(top: argparse.ArgumentParser, included: set[str]) -> tuple[dict[str, str], list[str]]:
    """File name → text of each subcommand's help, and the subcommands docs/cli.md lacks.

    ``NAME.md`` holds ``ratelab NAME --help`` and the help of each of its actions that has no
    section of its own (``NAME-ACTION.md``, written for every action); ``ratelab.md`` the
    top-level help; ``others.md`` a section for each subcommand that docs/cli.md does not
    include, so that the page lists every subcommand whatever the hand-written part says.
    """
    out = {"ratelab.md": help_block(top)}
    missing = []
    for name, sub in subcommands(top).items():
        actions = subcommands(sub)
        for action, nested in actions.items():
            out[f"{name}-{action}.md"] = help_block(nested)
        out[f"{name}.md"] = "\n".join([help_block(sub)] + [
            help_block(nested) for action, nested in actions.items()
            if f"{name}-{action}" not in included])
        if name not in included and not any(f"{name}-{a}" in included for a in actions):
            missing.append(name)
    others = ["### Other subcommands", ""]
    if missing:
        others += ["Subcommands that have no section above yet; their help:", ""]
        for name in missing:
            others += [f"#### `ratelab {name}`", "", out[f"{name}.md"]]
    else:
        others += ["None: every subcommand has its section above.", ""]
    out["others.md"] = "\n".join(others)
    return out, missing


def write_tree(folder: Path, files: dict[str, str]) -> None:
    """`folder` holding exactly `files` (name → text): stale pages of moved modules go."""
    tmp = folder.with_name(folder.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name, text in files.items():
        (tmp / name).write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    old = folder.with_name(folder.name + f".old{os.getpid()}")
    if folder.exists():
        folder.rename(old)
    tmp.rename(folder)
    shutil.rmtree(old, ignore_errors=True)


def generate_reference() -> list[str]:
    """Write site/_generated/api and site/_generated/cli; the lines worth telling the builder."""
    notes = []
    found = modules()
    write_tree(GENERATED / "api", api_pages(found))
    documented = sum(m.module is not None for m in found)
    notes.append(f"site: API reference: {documented} modules documented, "
                 f"{len(found) - documented} left out (listed on its index page)")
    for m in found:
        if m.skipped.startswith("does not import"):
            notes.append(f"site: warning: {m.name} {m.skipped}")
    from ratelab.cli import parser

    included = set(INCLUDE.findall((ROOT / "docs" / "cli.md").read_text(encoding="utf-8")))
    pages, missing = cli_pages(parser(), included)
    write_tree(GENERATED / "cli", pages)
    if missing:
        notes.append(f"site: docs/cli.md has no section for: {', '.join(missing)} "
                     f"(their help is under 'Other subcommands')")
    return notes


def with_local_extensions(config: dict) -> dict:
    """The configuration with this folder's Sphinx extensions loaded: :mod:`docstrings`
    (plain-prose docstrings), :mod:`scaffolding` (no nbval markers on the pages),
    :mod:`webpage` (navigation that works on a phone, nothing from the network, numbered
    lessons) and :mod:`figures` (a figure too wide for the column shown as tiles that wrap).

    Jupyter Book reads a local extension's folder relative to the configuration file, which
    this script writes anywhere (build/site/, a test's temporary folder): so it is absolute.
    """
    sphinx = dict(config.get("sphinx", {}))
    sphinx["local_extensions"] = {**sphinx.get("local_extensions", {}), "docstrings": str(HERE),
                                  "scaffolding": str(HERE), "webpage": str(HERE),
                                  "figures": str(HERE)}
    return {**config, "sphinx": sphinx}


def main(argv: list[str]) -> int:
    instructor = "--instructor" in argv
    argv = [a for a in argv if a != "--instructor"]
    if len(argv) != 1:
        print("usage: python site/configure.py OUT.yml [--instructor]", file=sys.stderr)
        return 2
    config = yaml.safe_load((HERE / "_config.yml").read_text())
    try:
        url = repository_url(HERE.parent)
    except ValueError as error:
        print(f"site: {error}", file=sys.stderr)
        return 2
    out = Path(argv[0])
    out.parent.mkdir(parents=True, exist_ok=True)
    config = with_local_extensions(configure(config, url))
    if instructor:
        config = instructor_config(config)
        toc = instructor_toc(yaml.safe_load((HERE / "_toc.yml").read_text()))
        (out.parent / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False))
        print(f"site: the instructor's build, with the solutions: {out.parent / '_toc.yml'}")
    out.write_text(yaml.safe_dump(config, sort_keys=False))
    for note in generate_reference():
        print(note)
    if url:
        print(f"site: repository and Binder buttons point at {url}")
    else:
        print("site: no GitHub origin and no RATELAB_REPOSITORY_URL: built without the "
              "repository and Binder buttons")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
