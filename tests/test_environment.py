"""environment.yml (conda-forge) and pyproject.toml must list the same packages and bounds."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
CONDA_TO_PYPI = {"redis-py": "redis"}  # conda-forge names that differ from PyPI's


def split(requirement: str) -> tuple[str, str]:
    """('name', 'bound') from a requirement such as 'numpy>=1.26'."""
    m = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*(.*?)\s*", requirement)
    return m.group(1).lower(), m.group(2).replace(" ", "")


def pyproject_requirements() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        reqs += extra
    return dict(split(r) for r in reqs) | {"python": project["requires-python"]}


def conda_requirements() -> dict[str, str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    out = {}
    for dep in env["dependencies"]:
        if isinstance(dep, str) and dep != "pip":
            name, bound = split(dep)
            out[CONDA_TO_PYPI.get(name, name)] = bound
    return out


def test_environment_yml_matches_pyproject():
    assert conda_requirements() == pyproject_requirements()


def test_environment_yml_installs_ratelab_editable():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert "-e ." in pip
    assert env["channels"] == ["conda-forge"]


def test_split_reads_names_and_bounds():
    assert split("numpy>=1.26") == ("numpy", ">=1.26")
    assert split("Redis-Py >= 5") == ("redis-py", ">=5")
