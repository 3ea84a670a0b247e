"""The notebook index: found by glob, titled by each notebook's first heading, README current."""

import json
import subprocess
import sys

import pytest

from ratelab import checkout, index


def write_notebook(path, *sources):
    cells = [{"cell_type": kind, "source": src, "metadata": {}} for kind, src in sources]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                "nbformat_minor": 5}))


def test_titles_come_from_the_first_heading(tmp_path):
    write_notebook(tmp_path / "07-retries.ipynb", ("code", "import x"),
                   ("markdown", "Some intro\n\n## Retry storms ##\n# later"))
    write_notebook(tmp_path / "00-start.ipynb", ("markdown", ["# Start ", "here\n", "text"]))
    write_notebook(tmp_path / "scratch.ipynb", ("markdown", "# Not numbered"))
    entries = index.notebooks(tmp_path)
    assert [(e.number, e.title) for e in entries] == [("00", "Start here"), ("07", "Retry storms")]
    assert index.index_markdown(entries) == (
        "- 00 [Start here](notebooks/00-start.ipynb)\n- 07 [Retry storms](notebooks/07-retries.ipynb)")


def test_a_notebook_without_a_heading_is_named(tmp_path):
    write_notebook(tmp_path / "05-x.ipynb", ("markdown", "no heading"))
    with pytest.raises(ValueError, match="05-x.ipynb"):
        index.notebooks(tmp_path)


def test_readme_section_is_replaced_between_markers():
    readme = f"intro\n{index.BEGIN}\nold\n{index.END}\nrest\n"
    assert index.readme_with_index(readme, "- new") == f"intro\n{index.BEGIN}\n- new\n{index.END}\nrest\n"
    with pytest.raises(ValueError, match="markers"):
        index.readme_with_index("no markers", "- new")


def test_every_numbered_notebook_is_in_the_readme_index():
    readme = (checkout.root() / "README.md").read_text()
    assert index.readme_with_index(readme, index.index_markdown(index.notebooks())) == readme, (
        "README.md's notebook index is stale: run `ratelab index`")
    for path in checkout.notebooks().glob(index.PATTERN):
        assert f"(notebooks/{path.name})" in readme


def test_ratelab_index_check_command():
    result = subprocess.run([sys.executable, "-m", "ratelab.cli", "index", "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "up to date" in result.stdout
