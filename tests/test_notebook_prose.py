"""No number in a notebook's prose that no output of that notebook printed.

The test reads the stored, executed notebooks (nothing is executed, so it runs in the fast lane)
and, for every number quoted in a markdown cell, looks for it among

- the numbers its **outputs** show: stream text, ``text/plain``, ``text/html`` (tags, scripts
  and styles stripped, as the reader sees the table) and ``text/markdown`` outputs of every
  code cell; and
- the **parameters set in code**: the numeric literals (Python ``NUMBER`` tokens) of the
  notebook's code cells, e.g. ``limit=10`` or ``burst(30, 4.0, 0.2)``.

A prose number *matches* a shown number when a reader would see them as the same figure:

- thousands separators are dropped (``1,000`` is 1000) and a sign is not compared;
- rounding: a prose number with *d* decimals matches a shown value that rounds to it at *d*
  decimals (``0.75 s`` matches a printed ``0.7496``; ``48 %`` matches ``47.99``);
- a prose percentage also matches a printed fraction ×100 (``11.8 %`` matches ``0.118``);
- a scale word after the prose number multiplies it (``400 M`` is 400,000,000; k, M, G,
  thousand, million, billion), and a time in ms or µs also matches the same time printed or
  set in seconds (``50 ms`` matches ``timeout_s=0.05``).

Not checked, because they are not measured figures:

- **numbers written in words** ("twice", "one in ten");
- **names with a digit inside**: a digit joined to a letter, underscore or hyphenated word
  (``p95``, ``c19``, ``UTF-8``, ``M/D/1``, ``gl7.r05``), dotted versions (``3.11.2``);
- **section and heading numbers**: the leading number of a heading line (``## 3. Rate``),
  and numbers right after *section*, *§*, *part*, *notebook*, *exercise*, *RFC* (with the list or
  range that follows: "notebooks 01–09", "sections 2 and 3");
- **notebook numbers**: a two-digit number with a leading zero (``09``), or any number followed
  by a cell reference (``10 c15``);
- **years**: a four-digit number from 1900 to 2099, written without a separator, next to a
  month name or a date (``July 1995``, ``1995-07-01``) or in "in 1995", "(1995)" form;
- link targets and HTML attributes (addresses, file names);
- and each notebook's short :data:`ALLOWED` list, every entry with its reason.

A number is looked for in the whole notebook, not beside its claim: a small number that some
other output happens to show passes (04's old "up to 17 in one second" matched a 17 in another
table; the test caught that sentence by its "166 requests", which nothing printed).

A failure lists every unmatched number with its cell and the sentence around it. The fix is
always to make the prose true to a printed number (or print the number the prose quotes),
never to widen these rules.
"""

from __future__ import annotations

import io
import json
import re
import tokenize
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("[0-9][0-9]-*.ipynb"))

ALLOWED: dict[str, dict[str, str]] = {
    "09": {"429": "the status code Envoy's and AWS API Gateway's documentation say they send "
                  "(c41 cites both): a quoted fact about other software, not a figure of ours"},
}
"""Per notebook, prose numbers that no output shows, each with why that is right."""

SCALE = {"k": 1e3, "thousand": 1e3, "M": 1e6, "million": 1e6, "G": 1e9, "billion": 1e9,
         "ms": 1e-3, "µs": 1e-6, "us": 1e-6}
MONTHS = ("January|February|March|April|May|June|July|August|September|October|November|"
          "December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec")
REFERENCE_WORDS = r"(?:[Ss]ections?|§|[Pp]arts?|[Nn]otebooks?|[Ee]xercises?|RFC)"

NUMBER = re.compile(
    r"(?<![\w.])(?<![A-Za-z][/-])"      # not the tail of a name (c19, M/D/1, UTF-8) or a decimal
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?![\w])(?!\.\d)")                # not the head of a name (4xx, 2nd) or a version (3.11.2)
OUTPUT_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?|\.\d+")


def text_of(cell) -> str:
    return "".join(cell["source"])


def output_texts(cell):
    """The text a reader sees of a code cell's outputs."""
    for out in cell.get("outputs", []):
        if out["output_type"] == "stream":
            yield "".join(out["text"])
        elif out["output_type"] == "error":
            yield out.get("evalue", "")
        else:
            data = out.get("data", {})
            for kind in ("text/plain", "text/markdown"):
                if kind in data:
                    yield "".join(data[kind])
            if "text/html" in data:  # what a reader sees: no tags, no script or style
                shown = re.sub(r"<(script|style)\b.*?</\1>", " ", "".join(data["text/html"]),
                               flags=re.S | re.I)
                yield re.sub(r"<[^>]*>", " ", shown)


def numbers_in(text: str) -> list[float]:
    """Every number a text shows, thousands separators removed."""
    out = []
    for m in OUTPUT_NUMBER.finditer(text):
        try:
            out.append(abs(float(m.group().replace(",", ""))))
        except ValueError:
            continue
    return out


def code_literals(source: str) -> list[float]:
    """The numeric literals of a code cell (IPython magics and shell lines left out)."""
    lines = [ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!"))]
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline):
            if tok.type == tokenize.NUMBER:
                try:
                    out.append(abs(float(tok.string.replace("_", "").rstrip("jJ"))))
                except ValueError:
                    out.append(abs(float(int(tok.string.replace("_", ""), 0))))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        out.extend(numbers_in(source))
    return out


def shown(nb) -> list[float]:
    """The numbers a notebook shows or sets: its outputs' numbers and its code's literals."""
    values = []
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            for text in output_texts(cell):
                values.extend(numbers_in(text))
            values.extend(code_literals(text_of(cell)))
    return values


def readable(markdown: str) -> str:
    """The prose of a markdown cell: link targets, HTML tags and images removed."""
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", " ", markdown)   # images
    text = re.sub(r"\]\([^)]*\)", "]", text)                 # link targets
    text = re.sub(r"<[^>]*>", " ", text)                      # HTML tags and their attributes
    text = re.sub(r"\w+://\S+", " ", text)                    # bare addresses
    return text.replace("\u2212", "-").replace("\u202f", " ").replace("\u00a0", " ")


def exempt_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the prose whose numbers are references, headings or years."""
    spans = []
    numlist = r"\d+(?:\.\d+)*(?:\s*(?:,|–|-|—|and|or|to)\s*\d+(?:\.\d+)*)*"
    patterns = [
        rf"^\s*#+\s*{numlist}",                                    # "## 3. Rate"
        rf"{REFERENCE_WORDS}\s*{numlist}",                          # "section 4", "§5"
        r"(?<![\w.])0\d(?![\d.])",                                  # "09": a notebook
        r"(?<![\w.])\d+(?=\s*c\d)",                                 # "10 c15": a cell
        rf"(?:{MONTHS})\.?\s+(?:\d{{1,2}},?\s+)?(?:19|20)\d\d",     # "July 1995"
        r"(?:19|20)\d\d-\d\d(?:-\d\d)?",                            # "1995-07-01"
        r"(?:\b[Ii]n|\b[Ss]ince|\b[Uu]ntil|\()\s*(?:19|20)\d\d\b",  # "in 1995", "(2017)"
    ]
    for pattern in patterns:
        for m in re.finditer(pattern, text, flags=re.MULTILINE):
            spans.append(m.span())
    return spans


def quoted(markdown: str):
    """(number as written, value, decimals, is_percent, sentence) for each checked prose number."""
    text = readable(markdown)
    spans = exempt_spans(text)
    for m in NUMBER.finditer(text):
        start, end = m.span("num")
        if any(a <= start and end <= b for a, b in spans):
            continue
        raw = m.group("num")
        after = text[end:end + 12]
        value = float(raw.replace(",", ""))
        decimals = len(raw.split(".")[1]) if "." in raw else 0
        percent = bool(re.match(r"\s?%", after))
        scale = re.match(r"\s?(k|thousand|M|million|G|billion|ms|µs|us)\b", after)
        sentence = text[max(0, start - 50):end + 30].replace("\n", " ")
        factor = SCALE[scale.group(1)] if scale else 1.0
        yield raw, value, decimals, percent, factor, sentence


def matches(value: float, decimals: int, percent: bool, scale: float, values) -> bool:
    """Whether a reader would see the prose number among the shown values."""
    half = 0.5 * 10 ** -decimals * (1 + 1e-9)
    targets = [(value * scale, half * scale)]
    if scale != 1:  # printed with the same word ("50 ms", "400 M") or in base units
        targets.append((value, half))
    for v in values:
        for t, tolerance in targets:
            if abs(v - t) <= tolerance or (percent and abs(v * 100 - t) <= tolerance):
                return True
    return False


def unmatched(nb, name: str) -> list[str]:
    """One line per prose number of `nb` that nothing in `nb` shows (empty when all match)."""
    values = shown(nb)
    allowed = ALLOWED.get(name, {})
    problems = []
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        for raw, value, decimals, percent, scale, sentence in quoted(text_of(cell)):
            if raw in allowed or matches(value, decimals, percent, scale, values):
                continue
            problems.append(f"{name} c{index}: {raw}{' %' if percent else ''} "
                            f"is shown by no output — …{sentence}…")
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_number_in_the_prose_is_printed(path):
    problems = unmatched(json.loads(path.read_text()), path.stem[:2])
    assert not problems, "\n".join(problems)


def test_an_unprinted_number_fails():
    """The check can fail: a prose number no output shows is reported, a printed one is not."""
    nb = {"cells": [
        {"cell_type": "code", "source": ["x = 12\n"], "outputs": [
            {"output_type": "stream", "name": "stdout", "text": ["166 requests, 0.7496 s\n"]}]},
        {"cell_type": "markdown", "source": [
            "## 2. Results\n166 requests in 0.75 s, up to 17 in one second (x = 12), as in "
            "section 3 and 09 c4, in July 1995 — 1,660 % of nothing."]},
    ]}
    problems = unmatched(nb, "99")
    assert [p.split(" is shown")[0] for p in problems] == ["99 c1: 17", "99 c1: 1,660 %"]
    for allowed in ALLOWED.values():
        assert all(reason.strip() for reason in allowed.values()), "every exception says why"
