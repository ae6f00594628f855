"""Host time per call of a small layer (GPU work of a few us): nn.Linear, MackoLinear, and its product alone through
macko.spmm (the previous forward's route) and through the direct call (_matmul)."""
import time
import torch
import macko
from macko.torch import MackoLinear

torch.manual_seed(0)


def per_call(f, N=3000):
    for _ in range(200):
        f()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(N):
        f()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    return "host %.1f us, with the GPU %.1f us" % ((t1 - t0) / N * 1e6, (t2 - t0) / N * 1e6)


for dt in (torch.float16, torch.bfloat16, torch.float32):
    w = torch.randn(512, 512, device="cuda").to(dt) * (torch.rand(512, 512, device="cuda") < 0.5).to(dt)
    lin = torch.nn.Linear(512, 512, bias=True).cuda().to(dt)
    with torch.no_grad():
        lin.weight.copy_(w)
    lay = MackoLinear.from_linear(lin, dtype=dt)
    x = torch.randn(4, 512, device="cuda").to(dt)
    y = torch.empty(4, 512, device="cuda", dtype=dt)
    with torch.no_grad():
        print(dt, "nn.Linear:", per_call(lambda: lin(x)))
        print(dt, "MackoLinear forward:", per_call(lambda: lay(x)))
        print(dt, "product via macko.spmm:", per_call(lambda: macko.spmm(lay._forward_handle(), lay.matrix, x.t(), y.t())))
        print(dt, "product via the direct call:", per_call(lambda: lay._matmul(x, y)))
