"""numba's cache of the kernels follows an edit to the limiters they compile.

numba invalidates a cached kernel only when its own file changes; ``kernel_cache.watch`` adds
the digest of the sources a kernel compiles to what numba compares. Shown on a kernel and a
callee written to a temporary folder, in fresh interpreters, as the package's kernels load.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from ratelab import kernel_cache
from ratelab.kernel_cache import KERNEL_FILES, limiters_digest, watch

CALLEE = "def weight(x):\n    return x * {factor}\n"
KERNEL = textwrap.dedent("""\
    import sys
    from numba import njit
    from numba.extending import register_jitable
    from ratelab.kernel_cache import watch
    import callee

    cache = watch([__file__], lambda: open("callee.py").read()) if sys.argv[1] == "watch" else True
    register_jitable(callee.weight)

    @njit(cache=cache)
    def kernel(x):
        return callee.weight(x)

    print(cache, kernel(2.0))
    """)


def run(folder, mode: str) -> str:
    """kernel.py in a fresh interpreter (-B: no .pyc of the callee, whose edits keep its size
    within the second that .pyc stamps record)."""
    out = subprocess.run([sys.executable, "-B", "kernel.py", mode], cwd=folder,
                         capture_output=True, text=True, check=True,
                         env={**os.environ, "NUMBA_CACHE_DIR": ""})
    return out.stdout.strip()


def test_an_edit_to_what_a_kernel_calls_recompiles_it(tmp_path):
    (tmp_path / "kernel.py").write_text(KERNEL)
    (tmp_path / "callee.py").write_text(CALLEE.format(factor=3))
    assert run(tmp_path, "plain") == "True 6.0"
    (tmp_path / "callee.py").write_text(CALLEE.format(factor=5))
    assert run(tmp_path, "plain") == "True 6.0"  # numba alone: the stale machine code
    assert run(tmp_path, "watch") == "True 10.0"  # the digest differs: compiled again
    (tmp_path / "callee.py").write_text(CALLEE.format(factor=7))
    assert run(tmp_path, "watch") == "True 14.0"
    assert run(tmp_path, "watch") == "True 14.0"


def test_a_numba_without_the_hook_compiles_instead_of_caching(monkeypatch):
    monkeypatch.setattr(kernel_cache, "_install", lambda: False)
    monkeypatch.setattr(kernel_cache, "_WATCHED", {})
    with pytest.warns(RuntimeWarning, match="compiled in every process"):
        assert watch(["kernels.py"], lambda: "x") is False


def test_the_package_kernels_are_watched():
    assert kernel_cache.watch_limiters() is True
    for f in KERNEL_FILES:
        assert f.is_file()
        assert kernel_cache._WATCHED[os.path.realpath(f)]() == limiters_digest()


def test_every_cache_numba_may_fall_back_to_compares_the_digest(tmp_path):
    """Where the package's folder is not writable numba falls through to a cache in the
    user's home: that locator, and every other, must compare the sources' digest too."""
    from numba.core import caching

    kernel = tmp_path / "kernel.py"
    kernel.write_text("def kernel(x):\n    return x\n")
    namespace: dict = {}
    exec(compile(kernel.read_text(), str(kernel), "exec"), namespace)
    assert watch([kernel], lambda: "sources v1") is True
    classes = caching.CacheImpl._locator_classes
    assert classes and all(c.__name__.startswith("Watching") for c in classes)
    user_wide = next(c for c in classes if issubclass(c, caching.UserWideCacheLocator))
    locator = user_wide.from_function(namespace["kernel"], str(kernel))
    assert locator.get_source_stamp()[1] == "sources v1"
    elsewhere = tmp_path / "other.py"
    elsewhere.write_text("def other(x):\n    return x\n")
    exec(compile(elsewhere.read_text(), str(elsewhere), "exec"), namespace)
    plain = user_wide.from_function(namespace["other"], str(elsewhere))
    assert plain.get_source_stamp() == caching.UserWideCacheLocator.from_function(
        namespace["other"], str(elsewhere)).get_source_stamp()
