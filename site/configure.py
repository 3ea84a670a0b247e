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
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
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
    config = configure(config, url)
    if instructor:
        config = instructor_config(config)
        toc = instructor_toc(yaml.safe_load((HERE / "_toc.yml").read_text()))
        (out.parent / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False))
        print(f"site: the instructor's build, with the solutions: {out.parent / '_toc.yml'}")
    out.write_text(yaml.safe_dump(config, sort_keys=False))
    if url:
        print(f"site: repository and Binder buttons point at {url}")
    else:
        print("site: no GitHub origin and no RATELAB_REPOSITORY_URL: built without the "
              "repository and Binder buttons")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
