"""The installed wheel: `import macko` comes from site-packages and loads the libmacko.so inside the package, with no
environment variable; MACKO_LIBRARY still overrides it. Runs only with MACKO_TEST_INSTALLED=1 (.ci/run sets it after
installing the wheel into a fresh virtual environment and running pytest from outside the source tree)."""

import os
import subprocess
import sys

import pytest

import macko
from conftest import REPO

pytestmark = pytest.mark.skipif(not os.environ.get("MACKO_TEST_INSTALLED"),
                                reason="tests the installed package: set MACKO_TEST_INSTALLED=1")


def _pkg_dir():
    return os.path.dirname(os.path.realpath(macko.__file__))


def test_package_comes_from_site_packages():
    assert "site-packages" in _pkg_dir().split(os.sep), macko.__file__
    assert _pkg_dir() != os.path.realpath(os.path.join(REPO, "interfaces", "python", "macko")), macko.__file__


def test_bundled_library_is_loaded():
    assert not os.environ.get("MACKO_LIBRARY")
    assert os.path.realpath(macko.library_path()) == os.path.join(_pkg_dir(), "libmacko.so")


def test_macko_library_overrides_the_bundled_one(tmp_path):
    # A copy of the bundled library elsewhere: loading it proves the override was taken, whatever else is installed.
    other = tmp_path / "libmacko-copy.so"
    other.write_bytes(open(os.path.join(_pkg_dir(), "libmacko.so"), "rb").read())
    env = dict(os.environ, MACKO_LIBRARY=str(other))
    out = subprocess.run([sys.executable, "-c", "import macko; print(macko.library_path())"], env=env,
                         cwd=str(tmp_path), capture_output=True, text=True, check=True).stdout.strip()
    assert out == str(other)
