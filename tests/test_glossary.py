"""docs/glossary.md: every term the course uses, each with the notebook that teaches it.

Cheap checks, no site build: the entries are in order and each links to a lesson; every link
resolves; the terms the course is built on are there; every term a quiz question names is an
entry (or one of its other names), and appears in the text of that question's own notebook —
the light check that a question is about its own lesson.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import yaml

from ratelab.exercises import quiz
from ratelab.exercises.quizcells import GLOSSARY_LINK, markdown_source

ROOT = Path(__file__).resolve().parent.parent
GLOSSARY = ROOT / "docs" / "glossary.md"
ENTRY = re.compile(r"^\*\*(?P<names>[^*]+)\*\*(?: \((?P<aliases>[^)]*)\))? — (?P<body>.*)$")
LINK = re.compile(r"\]\(([^)\s]+)\)")

REQUIRED = (
    "token bucket", "capacity", "refill rate", "leaky bucket", "policing", "shaping",
    "fixed window", "calendar-aligned", "sliding log", "half-open window",
    "sliding window counter", "estimate mode", "admission mode", "GCRA", "TAT",
    "emission interval", "nginx limit_req", "burst", "delay=N", "nodelay", "excess",
    "count_rejected", "ticks", "Retry-After", "RateLimit headers", "429 Too Many Requests",
    "fail-open", "fail-closed", "INCR", "Lua script", "EVALSHA", "check-then-act race",
    "clock skew", "retry storm", "jitter", "full jitter", "utilisation", "M/M/1", "M/D/1",
    "Lindley's recursion",
)
"""Terms the course cannot be read without (the issue that asked for the glossary names them)."""


def entries() -> list[dict]:
    """Each entry: its names (the bold ones, then the bracketed others), body and links."""
    found, current = [], None
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        match = ENTRY.match(line)
        if match:
            names = [n.strip() for n in match["names"].split(", ")]
            aliases = re.findall(r"\*([^*]+)\*", match["aliases"] or "")
            current = {"names": names, "aliases": aliases, "body": match["body"]}
            found.append(current)
        elif line.strip() and not line.startswith("#") and current is not None:
            current["body"] += " " + line.strip()
        elif not line.strip() or line.startswith("#"):
            current = None
    for entry in found:
        entry["links"] = LINK.findall(entry["body"])
    return found


def index() -> dict[str, dict]:
    """Every name and other name of every entry, lower case, to its entry."""
    return {name.lower(): e for e in entries() for name in e["names"] + e["aliases"]}


def words(text: str) -> str:
    """`text` as the term search reads it: lower case, hyphens and underscores as spaces."""
    return re.sub(r"[-_]", " ", text.lower())


def mentions(text: str, name: str) -> bool:
    """Whether `text` names `name` as a word (a plural too): "TAT" in "the TAT", not "state"."""
    return re.search(rf"(?<![\w/]){re.escape(words(name))}(?:s|es)?(?![\w/])", words(text)) \
        is not None


def notebook_text(lesson: str) -> str:
    """A teaching notebook's markdown and code, as written (not its outputs)."""
    (path,) = (ROOT / "notebooks").glob(f"{lesson}-*.ipynb")
    return "\n".join("".join(c["source"]) for c in json.loads(path.read_text())["cells"])


def test_the_glossary_is_found_and_parsed():
    found = entries()
    assert len(found) >= 60
    assert any(e["names"] == ["false allow", "false reject"] for e in found)
    assert index()["sliding window log"]["names"] == ["sliding log"]


def test_every_entry_links_to_the_lesson_that_teaches_it_and_every_link_resolves():
    broken, unlinked = [], []
    for entry in entries():
        lessons = [link for link in entry["links"] if "/notebooks/" in link]
        if not lessons:
            unlinked.append(entry["names"][0])
        for link in entry["links"]:
            url = urlsplit(link)
            if url.scheme or url.netloc:
                continue
            target = (GLOSSARY.parent / unquote(url.path)).resolve()
            if not target.is_file():
                broken.append(f"{entry['names'][0]} → {link}")
        for link in lessons:  # the link's text is the lesson's number
            number = re.search(r"/notebooks/(\d\d)-", link).group(1)
            assert f"[{number}]({link})" in entry["body"], (entry["names"][0], link)
    assert not broken, broken
    assert not unlinked, f"entries that name no lesson: {unlinked}"


def test_the_entries_are_in_order_and_short():
    names = [e["names"][0] for e in entries()]
    assert names == sorted(names, key=words), "keep the glossary in alphabetical order"
    long = [e["names"][0] for e in entries()
            if len(re.sub(r"\(\[.*?\)\)|\[[^]]*\]\([^)]*\)", "", e["body"]).split()) > 70]
    assert not long, f"entries longer than a sentence or two: {long}"


def test_the_terms_the_course_is_built_on_are_defined():
    known = index()
    missing = [term for term in REQUIRED if term.lower() not in known]
    assert not missing, missing


def test_every_term_a_quiz_names_is_in_the_glossary_and_in_its_own_notebook():
    known = index()
    for lesson in quiz.lessons():
        text = notebook_text(lesson)
        for q in quiz.lesson(lesson):
            for term in q.terms:
                assert term.lower() in known, f"{q.name} names {term!r}, which the glossary lacks"
                entry = known[term.lower()]
                names = entry["names"] + entry["aliases"]
                assert any(mentions(text, name) for name in names), \
                    f"{q.name} is about {term!r}, which notebook {lesson} never mentions"


def test_the_term_search_reads_words_not_parts_of_words():
    assert mentions("the TAT moves", "TAT") and not mentions("the state moves", "TAT")
    assert mentions("sliding-window-counter limit=60", "sliding window counter")
    assert mentions("reference limiters", "reference limiter")
    assert not mentions("the fixed windows' count", "sliding window counter")


def test_the_glossary_is_on_the_site_once_and_the_readme_points_at_it():
    toc = (ROOT / "site" / "_toc.yml").read_text()
    assert toc.count("file: docs/glossary") == 1
    assert yaml.safe_load(toc)  # still a table of contents
    assert "(docs/glossary.md)" in (ROOT / "README.md").read_text()


def test_the_quiz_cells_link_the_glossary_by_a_path_that_resolves_from_a_lesson():
    assert f"]({GLOSSARY_LINK})" in markdown_source()
    assert (ROOT / "notebooks" / GLOSSARY_LINK).resolve() == GLOSSARY
