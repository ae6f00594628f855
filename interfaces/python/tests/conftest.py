"""Test setup: import the package from this source tree (or, with MACKO_TEST_INSTALLED=1, the installed one, as
.ci/run does after installing the wheel); fixtures for GPU tests."""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
if not os.environ.get("MACKO_TEST_INSTALLED"):
    sys.path.insert(0, os.path.dirname(HERE))  # interfaces/python: the package under test, not an installed one

import macko  # noqa: E402

REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


def _torch_cuda():
    try:
        import torch
    except ImportError:
        return None, "torch is not installed"
    if not torch.cuda.is_available():
        return None, "torch sees no CUDA device"
    if not macko.gpu_available():
        return None, "macko_create found no usable CUDA device"
    return torch, None


@pytest.fixture(scope="session")
def torch_cuda():
    """The torch module when torch, a CUDA device and macko_create all work; skips the test otherwise."""
    t, why = _torch_cuda()
    if t is None:
        pytest.skip("GPU test: " + why)
    return t


@pytest.fixture
def handle(torch_cuda):
    with macko.Handle() as h:
        yield h
