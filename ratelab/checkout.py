"""Where the course's files are: the checkout (clone) of ratelab that holds notebooks/.

The notebooks, their index in README.md and the exercise notebooks are files of the
repository, not of the installed package. :func:`root` finds the checkout from the working
directory upward (so ``ratelab notebooks`` works in any clone), else the one this package was
installed from in editable mode (``pip install -e .``), and otherwise says in one line what is
missing instead of pointing at a folder that does not exist.
"""

from __future__ import annotations

from pathlib import Path

MARKERS = ("pyproject.toml", "notebooks")
"""What a folder must hold to be a ratelab checkout."""


class NoCheckout(FileNotFoundError):
    """Raised when no ratelab checkout is found (run from a clone of the repository)."""


def is_checkout(folder: Path) -> bool:
    """Whether `folder` is a ratelab checkout: it has pyproject.toml naming ratelab and notebooks/."""
    project = folder / "pyproject.toml"
    return ((folder / "notebooks").is_dir() and project.is_file()
            and 'name = "ratelab"' in project.read_text(encoding="utf-8"))


def root(start: Path | None = None) -> Path:
    """The checkout holding `start` (default: the working directory), else the package's own.

    NoCheckout naming both places looked at when neither is a checkout.
    """
    here = Path.cwd() if start is None else Path(start)
    here = here.resolve()
    for folder in (here, *here.parents):
        if is_checkout(folder):
            return folder
    installed = Path(__file__).resolve().parent.parent
    if is_checkout(installed):
        return installed
    raise NoCheckout(f"no ratelab checkout (a folder with pyproject.toml and notebooks/) at or "
                     f"above {here}, nor at {installed}: run this from a clone of the "
                     f"repository")


def notebooks(start: Path | None = None) -> Path:
    """The checkout's notebooks/ folder."""
    return root(start) / "notebooks"
