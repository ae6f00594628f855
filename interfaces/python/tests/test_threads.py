"""Threads sharing one matrix: on the host (numpy only) several threads serialize, export, pickle and copy it at
once; on the GPU (skips without torch + CUDA) several threads, each with its own Handle and stream, compute with one
uploaded matrix. ctypes releases the GIL during each call, so the library's routines really run concurrently."""

import copy
import pickle
import threading

import numpy as np
import pytest

import macko
from macko import Matrix

from test_host import random_dense

THREADS = 6


def run_threads(work, n=THREADS):
    """Runs work(i) in n threads started together; re-raises the first failure."""
    barrier = threading.Barrier(n)
    errors = []

    def body(i):
        try:
            barrier.wait()
            work(i)
        except BaseException as e:  # noqa: B902 - reported to the main thread
            errors.append(e)

    ts = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in ts), "a thread hung"
    if errors:
        raise errors[0]


def test_threads_share_a_host_matrix():
    a = random_dense(400, 700, 0.3, np.float16, seed=51)
    A = Matrix.from_dense(a)
    want = A.serialize()
    want_csr = A.to_csr()
    results = [None] * THREADS

    def work(i):
        got = []
        for k in range(8):
            kind = (i + k) % 5
            if kind == 0:
                got.append(A.serialize() == want)
            elif kind == 1:
                got.append(np.array_equal(A.to_dense(), a))
            elif kind == 2:
                got.append(all(np.array_equal(g, w) for g, w in zip(A.to_csr(), want_csr)))
            elif kind == 3:
                got.append(pickle.loads(pickle.dumps(A)).serialize() == want)
            else:
                B = copy.deepcopy(A)
                got.append(B._ptr != A._ptr and B.serialize() == want)
                B.close()
        results[i] = got

    run_threads(work)
    assert all(r is not None and len(r) == 8 and all(r) for r in results), results
    assert A.serialize() == want  # the shared matrix is unchanged


def test_threads_copy_matrices_made_in_other_threads():
    """Matrices built in some threads, copied and closed in others: each copy owns its memory."""
    mats = [Matrix.from_dense(random_dense(60, 80, 0.4, np.float32, seed=60 + i)) for i in range(THREADS)]
    wants = [m.serialize() for m in mats]
    copies = [None] * THREADS

    def work(i):
        j = (i + 1) % THREADS
        copies[i] = copy.copy(mats[j])

    run_threads(work)
    for m in mats:
        m.close()
    for i, c in enumerate(copies):
        assert c.serialize() == wants[(i + 1) % THREADS]


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_gpu_threads_share_an_uploaded_matrix(torch_cuda, dtype):
    """One matrix uploaded once; each thread has its own Handle and torch stream and runs spmv and spmm with it
    many times. Every result equals the single-threaded one bit for bit (the kernels are deterministic)."""
    torch = torch_cuda
    tdt = torch.float16 if dtype == np.float16 else torch.float32
    a = random_dense(1000, 777, 0.3, dtype, seed=52)
    A = Matrix.from_dense(a)
    g = torch.Generator(device="cuda").manual_seed(3)
    xs = [torch.empty(777, device="cuda", dtype=tdt).uniform_(-1, 1, generator=g) for _ in range(THREADS)]
    Xs = [torch.empty(5, 777, device="cuda", dtype=tdt).uniform_(-1, 1, generator=g) for _ in range(THREADS)]
    with macko.Handle() as h:
        A.upload(h)
        torch.cuda.synchronize()
        want_y, want_Y = [], []
        for x, X in zip(xs, Xs):
            y = torch.empty(1000, device="cuda", dtype=tdt)
            Y = torch.empty(5, 1000, device="cuda", dtype=tdt)
            macko.spmv(h, A, x, y)
            macko.spmm(h, A, X.T, Y.T)
            want_y.append(y)
            want_Y.append(Y)
        torch.cuda.synchronize()
        ref = torch.from_numpy(a).cuda().double()
        assert float((want_y[0].double() - ref @ xs[0].double()).norm() / (ref @ xs[0].double()).norm()) < 2e-2
        ok = [0] * THREADS

        def work(i):
            s = torch.cuda.Stream()
            with macko.Handle() as hi, torch.cuda.stream(s):
                for k in range(20):
                    j = (i + k) % THREADS
                    y = torch.full((1000,), float("nan"), device="cuda", dtype=tdt)
                    Y = torch.full((5, 1000), float("nan"), device="cuda", dtype=tdt)
                    macko.spmv(hi, A, xs[j], y)
                    macko.spmm(hi, A, Xs[j].T, Y.T)
                    s.synchronize()
                    assert hi.stream == s.cuda_stream
                    assert torch.equal(y, want_y[j]) and torch.equal(Y, want_Y[j]), (i, k)
                    ok[i] += 1

        run_threads(work)
    assert ok == [20] * THREADS
