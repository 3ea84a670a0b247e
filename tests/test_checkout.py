"""The repository's files are found from the working directory up, else from the editable install."""

from pathlib import Path

import pytest

from ratelab import checkout


def fake_checkout(folder: Path) -> Path:
    (folder / "notebooks").mkdir(parents=True)
    (folder / "pyproject.toml").write_text('[project]\nname = "ratelab"\n')
    return folder


def test_a_clone_is_found_from_a_folder_inside_it(tmp_path):
    clone = fake_checkout(tmp_path / "my-clone")
    (clone / "notebooks" / "deep").mkdir()
    assert checkout.root(clone / "notebooks" / "deep") == clone.resolve()
    assert checkout.notebooks(clone) == clone.resolve() / "notebooks"


def test_another_project_is_not_a_checkout(tmp_path):
    other = tmp_path / "other"
    (other / "notebooks").mkdir(parents=True)
    (other / "pyproject.toml").write_text('[project]\nname = "someone-else"\n')
    assert not checkout.is_checkout(other)
    assert checkout.root(other) == Path(checkout.__file__).resolve().parent.parent


def test_without_a_checkout_the_error_says_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.setattr(checkout, "__file__", str(tmp_path / "site-packages" / "ratelab" / "x.py"))
    with pytest.raises(checkout.NoCheckout, match="no ratelab checkout") as e:
        checkout.root(tmp_path)
    assert str(tmp_path) in str(e.value) and isinstance(e.value, FileNotFoundError)
