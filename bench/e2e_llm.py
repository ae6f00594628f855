#!/usr/bin/env python3
"""End to end: a Llama-2-7B-shaped model served dense and with macko-sparse linears (MackoLinear), in PyTorch.

What a served model does, measured for the dense model and the sparse one at each density:
- time to first token (TTFT): one forward over a prompt of L tokens (--prompt-lens, default 512 and 2048; batch 1,
  so every linear multiplies by n = L columns) and the argmax of the last position. Warm: --prefill-warmup untimed
  prefills first, then the median of --prefill-reps timed ones (CUDA events around the forward; wall-clock time
  with torch.cuda.synchronize before and after is kept too, and the host's time to enqueue the forward: near the
  event time, the GPU waited for Python's launches), the KV cache rewound before each. The prefill runs
  eagerly (no graph, no compile) for dense and sparse alike; with --prefill-graph (the default of --impl own) the
  same forward is also captured in one CUDA graph and its replays timed the same way: the GPU's time for the
  prefill, which the eager one hides where the host's launches take longer (the dense 512-token prefill).
- decode tokens/s at batch b (--batches, default 1, 8, 32): b sequences (prompts of --decode-prompt-len random
  tokens, then --new-tokens greedy tokens each) decoded together, one token per sequence per step, so every linear
  multiplies by n = b columns. The step is captured in a CUDA graph (argmax and KV-cache update inside) and
  replayed; tok/s = b x (new_tokens - 1) / GPU time of the replays (CUDA events, median of --repeats).

The model is built from a config with random weights (nothing is downloaded): transformers' LlamaForCausalLM
(--impl hf, with its StaticCache) or a compact decoder of this file over the same modules (--impl own, the
default). For every density each q/k/v/o/gate/up/down weight is pruned by magnitude, unstructured, per matrix; the
embeddings and lm_head stay dense. "dense" keeps the pruned weights in nn.Linear (cuBLAS); "sparse" puts them in
macko.torch.MackoLinear. With --impl own the default is what an inference engine runs: q/k/v and gate/up fused into
one matrix each (--no-fuse to keep them apart) and the decode step's layer function compiled with torch.compile
before capture (--no-compile), dense and sparse alike.

Fidelity (batch 1): the sparse decode is replayed with the dense run's tokens as input (teacher forcing) for the
first --check-tokens steps and its logits compared with the dense ones (relative error in the 2-norm, < --rtol);
the free-running sparse tokens must equal the dense ones for those steps. The prefill logits of every prompt length
are compared too (reported, not a pass condition).

Memory: "peak" is torch.cuda.max_memory_allocated() over the batch-1 decode run (prefill, capture, generation),
plus, for the sparse model, the bytes of the macko matrices (macko_mat_get_storage), which macko allocates itself.

Run on a GPU machine, with the library built for it:
    MACKO_LIBRARY=build/libmacko.so PYTHONPATH=interfaces/python python3 bench/e2e_llm.py --out bench/results
    ... --preset tiny --prompt-lens 64 --batches 1,4 --new-tokens 20 --densities 0.5   # a smoke test (seconds)
    ... --densities 0.5 --tag d05 ; ... --densities 0.3 --tag d03                       # one density per command
    python3 bench/e2e_llm.py --render a.json --render b.json --stem bench/results/e2e-H100-DATE   # one table
(--render merges by density, and within one by prompt length and batch: parts may also split --batches.)
Writes <stem>.md/.json/.png, stem = --out/e2e-<device>-<date><variant>[-<tag>] (e2e_report.py writes them).
"""

import argparse
import datetime
import gc
import os
import statistics
import sys
import time

import e2e_report

# torch is imported in main(), so that --help and --render run on a machine without it.
torch = None
nn = None

GB = 1e9
TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
PRESETS = {
    "7b": dict(hidden_size=4096, intermediate_size=11008, num_hidden_layers=32, num_attention_heads=32,
               num_key_value_heads=32, vocab_size=32000),
    "tiny": dict(hidden_size=512, intermediate_size=1376, num_hidden_layers=2, num_attention_heads=8,
                 num_key_value_heads=8, vocab_size=32000),
}


def log(*a):
    print(*a, flush=True)


# ---------------------------------------------------------------------------------------------------- the model
def build_model(args):
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(**PRESETS[args.preset], max_position_embeddings=4096, rms_norm_eps=1e-5,
                      tie_word_embeddings=False, initializer_range=0.02)
    if args.layers:
        cfg.num_hidden_layers = args.layers
    cfg._attn_implementation = "sdpa"
    torch.manual_seed(args.seed)
    with torch.device("cuda"):
        model = LlamaForCausalLM._from_config(cfg, dtype=torch.float16)
    model.eval().requires_grad_(False)
    return model


FUSED = {"qkv_proj": ("q_proj", "k_proj", "v_proj"), "gate_up_proj": ("gate_proj", "up_proj")}


def fuse_projections(model):
    """Replaces q/k/v by one qkv_proj and gate/up by one gate_up_proj per layer (rows stacked in that order), as
    inference engines do (one GEMV instead of three / two). The weights are filled by fill_and_prune per original
    matrix, so the fused model holds exactly the unfused one's pruned matrices."""
    for layer in model.model.layers:
        for parent in (layer.self_attn, layer.mlp):
            for fused, parts in FUSED.items():
                if not all(hasattr(parent, a) for a in parts):
                    continue
                lins = [getattr(parent, a) for a in parts]
                assert all(l.bias is None for l in lins), "fused projections without bias only"
                f = nn.Linear(lins[0].in_features, sum(l.out_features for l in lins), bias=False, device="meta",
                              dtype=lins[0].weight.dtype)
                f = f.to_empty(device=lins[0].weight.device).requires_grad_(False)
                for a in parts:
                    delattr(parent, a)
                setattr(parent, fused, f)
                setattr(parent, fused + "_split", [l.out_features for l in lins])
    torch.cuda.empty_cache()


def target_linears(model):
    """[(name, parent module, attribute, parts)] of the weights to prune, in a fixed order; parts: [(seed, first
    row, end row)] per original matrix (one part unless fused), each pruned on its own with its own seed."""
    out = []
    for i, layer in enumerate(model.model.layers):
        for parent in (layer.self_attn, layer.mlp):
            for attr in TARGETS:
                if hasattr(parent, attr):
                    n = getattr(parent, attr).weight.shape[0]
                    out.append(("layers.%d.%s" % (i, attr), parent, attr,
                                [(1000 + 16 * i + TARGETS.index(attr), 0, n)]))
            for fused, names in FUSED.items():
                if hasattr(parent, fused):
                    parts, r0 = [], 0
                    for a, n in zip(names, getattr(parent, fused + "_split")):
                        parts.append((1000 + 16 * i + TARGETS.index(a), r0, r0 + n))
                        r0 += n
                    out.append(("layers.%d.%s" % (i, fused), parent, fused, parts))
    return out


def fill_and_prune(lin, parts, density, std):
    """The base weight of every part of this layer (a seeded normal, identical for every density) pruned to
    `density`, part by part: the round(density * numel) largest magnitudes are kept (values tied with the threshold
    are kept too)."""
    for seed, r0, r1 in parts:
        w = lin.weight[r0:r1]
        g = torch.Generator(device=w.device)
        g.manual_seed(seed)
        w.normal_(0.0, std, generator=g)
        if density < 1.0:
            w.masked_fill_(magnitude_mask(w, density), 0.0)
    return int(torch.count_nonzero(lin.weight))


def magnitude_mask(w, density):
    """True where a weight is pruned: below the magnitude of the round(density * numel)-th largest one.

    For fp16 the threshold comes from a histogram of the magnitudes' bit patterns (for non-negative halves the
    bit pattern orders like the value): exactly the set torch.kthvalue gives, at a fraction of its cost on 45M
    values. Other dtypes use kthvalue."""
    keep = max(1, int(round(density * w.numel())))
    a = w.detach().abs().reshape(-1)
    if a.dtype == torch.float16:
        bits = a.view(torch.int16).to(torch.int32)
        at_least = torch.bincount(bits, minlength=1 << 15).flip(0).cumsum(0).flip(0)  # [b] = #(bits >= b)
        b = int(torch.nonzero(at_least >= keep).max())
        return (bits < b).view(w.shape)
    thr = torch.kthvalue(a.float(), a.numel() - keep + 1).values
    return (a.float() < thr).view(w.shape)


# ---------------------------------------------------------------------------------------------------- decoders
class HFRunner:
    """transformers' LlamaForCausalLM with its StaticCache (whose length counter lives on the GPU; its batch size
    is taken from the first forward)."""

    name = "transformers LlamaForCausalLM + StaticCache"

    def __init__(self, model, max_len, batch):
        import inspect

        from transformers import StaticCache

        self.model = model
        kw = dict(config=model.config, max_cache_len=max_len)
        if "max_batch_size" in inspect.signature(StaticCache.__init__).parameters:  # older transformers
            kw["max_batch_size"] = batch
        self.cache = StaticCache(**kw)

    def forward(self, ids, layer_step=None):
        out = self.model(input_ids=ids, past_key_values=self.cache, use_cache=True, logits_to_keep=1)
        return out.logits[:, -1, :]

    def set_len(self, n):
        for layer in self.cache.layers:
            layer.cumulative_length.fill_(n)


class OwnRunner:
    """A compact Llama decoder over the same modules (RMSNorm, RoPE, SDPA with a static KV cache, SwiGLU), for
    `batch` sequences of equal length (their K/V at the same positions, one mask for all)."""

    name = "own compact decoder over the transformers modules"

    def __init__(self, model, max_len, batch):
        cfg = model.config
        self.m = model.model
        self.head = model.lm_head
        dev, dt = self.m.embed_tokens.weight.device, self.m.embed_tokens.weight.dtype
        self.nh, self.nkv = cfg.num_attention_heads, cfg.num_key_value_heads
        self.hd = cfg.hidden_size // self.nh
        shape = (batch, self.nkv, max_len, self.hd)
        self.k = [torch.zeros(shape, device=dev, dtype=dt) for _ in self.m.layers]
        self.v = [torch.zeros(shape, device=dev, dtype=dt) for _ in self.m.layers]
        self.pos = torch.zeros(1, dtype=torch.long, device=dev)
        theta = getattr(cfg, "rope_theta", None) or cfg.rope_parameters.get("rope_theta", 10000.0)
        inv = 1.0 / (theta ** (torch.arange(0, self.hd, 2, device=dev, dtype=torch.float) / self.hd))
        f = torch.outer(torch.arange(max_len, device=dev, dtype=torch.float), inv)
        emb = torch.cat((f, f), dim=-1)
        self.cos, self.sin = emb.cos().to(dt), emb.sin().to(dt)
        self.kv_idx = torch.arange(max_len, device=dev)

    def forward(self, ids, layer_step=None):
        """Logits of the last position of each sequence, [batch, vocab]; layer_step: the function run per layer
        (_layer_step, or its compiled form)."""
        q_len = ids.shape[1]
        positions = self.pos + torch.arange(q_len, device=ids.device)
        cos, sin = self.cos[positions][None, None], self.sin[positions][None, None]
        mask = (self.kv_idx[None, :] <= positions[:, None])[None, None]
        x = self.m.embed_tokens(ids)
        mlp_out = torch.zeros_like(x)
        step = layer_step or _layer_step
        for i, layer in enumerate(self.m.layers):
            x, mlp_out = step(layer, self.k[i], self.v[i], x, mlp_out, cos, sin, positions, mask, self.nh, self.nkv,
                              self.hd)
        self.pos.add_(q_len)
        x = x + mlp_out
        return self.head(self.m.norm(x[:, -1:, :]))[:, -1, :]

    def set_len(self, n):
        self.pos.fill_(n)


def _rot(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def _layer_step(layer, kc, vc, x, prev_mlp, cos, sin, positions, mask, nh, nkv, hd):
    """One decoder layer of OwnRunner on the residual stream x + prev_mlp (the previous layer's MLP output, zeros
    for the first layer): + attention, then the SwiGLU MLP; writes this step's K/V into kc/vc and returns (the
    residual stream after attention, the MLP output). The MLP's residual add is left to the next layer, where it
    fuses with the input norm when compiled. A free function of its inputs, so that one torch.compile of it serves
    all layers (the layer's modules are inputs, not constants: no recompilation per layer or per density)."""
    b, q_len = x.shape[0], x.shape[1]
    at, mlp = layer.self_attn, layer.mlp
    x = x + prev_mlp
    h = layer.input_layernorm(x)
    if hasattr(at, "qkv_proj"):
        q, k, v = at.qkv_proj(h).split(at.qkv_proj_split, dim=-1)
    else:
        q, k, v = at.q_proj(h), at.k_proj(h), at.v_proj(h)
    q = q.view(b, q_len, nh, hd).transpose(1, 2)
    k = k.view(b, q_len, nkv, hd).transpose(1, 2)
    v = v.view(b, q_len, nkv, hd).transpose(1, 2)
    q = q * cos + _rot(q) * sin
    k = k * cos + _rot(k) * sin
    kc.index_copy_(2, positions, k)
    vc.index_copy_(2, positions, v)
    o = nn.functional.scaled_dot_product_attention(q, kc, vc, attn_mask=mask, enable_gqa=nkv != nh)
    x = x + at.o_proj(o.transpose(1, 2).reshape(b, q_len, nh * hd))
    h = layer.post_attention_layernorm(x)
    if hasattr(mlp, "gate_up_proj"):
        gate, up = mlp.gate_up_proj(h).split(mlp.gate_up_proj_split, dim=-1)
    else:
        gate, up = mlp.gate_proj(h), mlp.up_proj(h)
    return x, mlp.down_proj(nn.functional.silu(gate) * up)


_COMPILED_LAYER = None


def compiled_layer_step():
    """_layer_step under torch.compile (inductor, fullgraph), made once for the whole run."""
    global _COMPILED_LAYER
    if _COMPILED_LAYER is None:
        _COMPILED_LAYER = torch.compile(_layer_step, fullgraph=True, dynamic=False)
    return _COMPILED_LAYER


RUNNERS = {"hf": HFRunner, "own": OwnRunner}


# ---------------------------------------------------------------------------------------------------- measurements
def fresh_memory():
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()


def prefill_run(model, args, prompt):
    """Time to first token for prompt [1, L]: args.prefill_warmup untimed prefills, then args.prefill_reps timed
    ones, each one eager forward over the prompt plus the argmax of its last position, the KV cache rewound to 0
    before it. Returns the medians (CUDA events; wall clock between two synchronizes), every time, the last logits."""
    fresh_memory()
    runner = RUNNERS[args.impl](model, prompt.shape[1] + 8, 1)
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
    ms, wall, enq = [], [], []
    with torch.no_grad():
        for i in range(args.prefill_warmup + args.prefill_reps):
            runner.set_len(0)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            ev[0].record()
            logits = runner.forward(prompt)
            tok = logits.argmax(-1)
            ev[1].record()
            t1 = time.perf_counter()  # the host has enqueued the whole prefill (nothing in it synchronises)
            torch.cuda.synchronize()
            if i >= args.prefill_warmup:
                wall.append(1e3 * (time.perf_counter() - t0))
                enq.append(1e3 * (t1 - t0))
                ms.append(ev[0].elapsed_time(ev[1]))
        # enqueue_ms close to ms: the GPU waited for the host's launches (a host-bound prefill)
        out = dict(ms=statistics.median(ms), wall_ms=statistics.median(wall), enqueue_ms=statistics.median(enq),
                   ms_all=ms, wall_ms_all=wall, enqueue_ms_all=enq, token=int(tok[0]), logits=logits.float().cpu(),
                   peak_torch=torch.cuda.max_memory_allocated())
        if args.prefill_graph:
            out.update(prefill_graph(runner, args, prompt, logits))
    del runner
    return out


def prefill_graph(runner, args, prompt, eager_logits):
    """The same prefill captured in one CUDA graph and replayed (args.prefill_warmup untimed replays, then the median
    of args.prefill_reps timed ones, CUDA events around the replay): the GPU's time for the prefill without the
    host's launches, which bound the eager 512-token dense prefill. graph_equal: the replay's logits are bitwise the
    eager ones (the same kernels on the same inputs)."""
    side, cur = side_stream(), torch.cuda.current_stream()
    runner.set_len(0)
    side.wait_stream(cur)
    with torch.cuda.stream(side):  # warm-up on a side stream, as torch.cuda.graph asks
        runner.forward(prompt).argmax(-1)
    cur.wait_stream(side)
    runner.set_len(0)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        logits = runner.forward(prompt)
        logits.argmax(-1)
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
    ms = []
    for i in range(args.prefill_warmup + args.prefill_reps):
        runner.set_len(0)
        ev[0].record()
        graph.replay()
        ev[1].record()
        torch.cuda.synchronize()
        if i >= args.prefill_warmup:
            ms.append(ev[0].elapsed_time(ev[1]))
    equal = bool(torch.equal(logits.float().cpu(), eager_logits.float().cpu()))
    del graph
    return dict(graph_ms=statistics.median(ms), graph_ms_all=ms, graph_equal=equal)


_SIDE = None


def side_stream():
    """The stream every capture's warm-up runs on: one for the whole run (torch keeps a cuBLAS workspace per stream)."""
    global _SIDE
    if _SIDE is None:
        _SIDE = torch.cuda.Stream()
    return _SIDE


def decode_run(model, args, prompt, force=None, profile_name=None):
    """Decoding of prompt [b, plen]: prefill (eager), one decode step (b tokens) captured in a CUDA graph, then (b = 1)
    a fidelity pass of check-1 replays, teacher-forced by `force` when given, and args.repeats timed passes of
    new_tokens-1 replays. Returns a dict of results; peak memory is measured from the call on."""
    fresh_memory()
    dev = torch.device("cuda")
    b, plen = prompt.shape
    n_new, n_check = args.new_tokens, min(args.check_tokens, args.new_tokens)
    runner = RUNNERS[args.impl](model, plen + n_new + 8, b)
    # the decode step: the runner's forward, or with its layer function torch.compile'd (the prefill runs eagerly)
    layer_step = compiled_layer_step() if args.compile else None
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
    with torch.no_grad():
        logits0 = runner.forward(prompt)
        t0 = logits0.argmax(-1).view(b, 1)
        ids = t0.clone()
        tokbuf = torch.zeros(n_new, b, dtype=torch.long, device=dev)
        counter = torch.ones(1, dtype=torch.long, device=dev)

        def step():
            logits = runner.forward(ids, layer_step)
            nxt = logits.argmax(-1).view(b, 1)
            ids.copy_(nxt)
            tokbuf.index_copy_(0, counter, nxt.view(1, b))
            counter.add_(1)
            return logits

        # warm-up of the step on a side stream (as torch.cuda.graph asks), then capture
        side, cur = side_stream(), torch.cuda.current_stream()
        side.wait_stream(cur)
        t_warm = time.time()
        with torch.cuda.stream(side):
            step()  # compiles the step when args.compile
        side.synchronize()
        warm_s = time.time() - t_warm
        cur.wait_stream(side)
        runner.set_len(plen)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            logits = step()

        def reset():
            runner.set_len(plen)
            ids.copy_(t0)
            counter.fill_(1)
            tokbuf.zero_()
            tokbuf[0] = t0.view(b)

        check_logits = None
        if b == 1:  # fidelity pass: logits of the first n_check tokens (0 = prefill)
            reset()
            check_logits = [logits0.float().clone()]
            for k in range(n_check - 1):
                if force is not None:
                    ids.copy_(force[k].view(1, 1))
                graph.replay()
                check_logits.append(logits.float().clone())
            check_logits = torch.cat(check_logits).cpu()

        times = []  # timed passes: new_tokens - 1 replays each (token 0 came from the prefill)
        for _ in range(args.repeats):
            reset()
            ev[0].record()
            for _ in range(n_new - 1):
                graph.replay()
            ev[1].record()
            torch.cuda.synchronize()
            times.append(ev[0].elapsed_time(ev[1]))
        tokens = tokbuf.t().tolist()  # [b][n_new]
        prof_text = profile_step(graph, reset, profile_name) if profile_name else None
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated()
    # the graph, the KV cache and the buffers go with this frame (the next call collects and empties the cache)
    decode_ms = statistics.median(times)
    return dict(tokens=tokens, check_logits=check_logits, decode_ms=decode_ms, decode_ms_all=times,
                tok_s=b * (n_new - 1) / (decode_ms / 1e3), peak_torch=peak, profile=prof_text, warm_s=warm_s)


def profile_step(graph, reset, name):
    """torch.profiler over 3 graph replays: GPU time per step, by kernel, and by kind of kernel."""
    from torch.profiler import ProfilerActivity, profile

    reset()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            graph.replay()
        torch.cuda.synchronize()
    rows = []
    for e in prof.key_averages():
        t = getattr(e, "device_time_total", None)
        if t is None:
            t = getattr(e, "cuda_time_total", 0)
        if t and "CPU" not in str(getattr(e, "device_type", "")):
            rows.append((e.key, t / 3.0, e.count / 3.0))
    kinds = {}
    for key, t, n in rows:
        k = key.lower()
        if "macko" in k or "spmv" in k or "spmm" in k:
            kind = "macko SpMV (pruned linears)"
        elif any(s in k for s in ("gemv", "gemm", "cutlass", "xmma", "cublas", "splitk", "nvjet")):
            kind = "cuBLAS (linears / lm_head)"
        elif "attention" in k or "fmha" in k or "flash" in k or "sdpa" in k:
            kind = "attention"
        else:
            kind = "elementwise / norm / rope / argmax / copies"
        kinds.setdefault(kind, [0.0, 0.0])
        kinds[kind][0] += t
        kinds[kind][1] += n
    total = sum(v[0] for v in kinds.values())
    lines = ["%s: GPU kernel time per decode step %.1f us (torch.profiler, mean of 3 graph replays)" % (name, total),
             "", "| kind | us / step | kernels / step | share |", "|---|---|---|---|"]
    for kind, (t, n) in sorted(kinds.items(), key=lambda kv: -kv[1][0]):
        lines.append("| %s | %.1f | %.0f | %.1f%% |" % (kind, t, n, 100 * t / max(total, 1e-9)))
    lines += ["", "| kernel | us / step | calls / step |", "|---|---|---|"]
    for key, t, n in sorted(rows, key=lambda r: -r[1])[:16]:
        lines.append("| `%s` | %.1f | %.0f |" % (key[:90].replace("|", "/"), t, n))
    return "\n".join(lines)


def to_sparse(targets, handle, layout="rows"):
    from macko.torch import MackoLinear

    nbytes = 0
    for _, parent, attr, _ in targets:
        lin = getattr(parent, attr)
        ml = MackoLinear(lin.weight, lin.bias, handle=handle, layout=layout)
        setattr(parent, attr, ml)
        lin.weight = None  # the dense copy goes now
        del lin
        nbytes += ml.storage.bytes
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    return nbytes


def to_dense(targets):
    for _, parent, attr, _ in targets:
        ml = getattr(parent, attr)
        lin = nn.Linear(ml.in_features, ml.out_features, bias=False, device="meta", dtype=torch.float16)
        lin = lin.to_empty(device="cuda").requires_grad_(False)
        setattr(parent, attr, lin)
        ml.matrix.close()
    torch.cuda.empty_cache()


# ---------------------------------------------------------------------------------------------------- main
def rel_err(a, b):
    return float((a - b).norm() / b.norm().clamp_min(1e-30))


def equal_prefix(x, y):
    n = 0
    for p, q in zip(x, y):
        if p != q:
            break
        n += 1
    return n


def measure(model, a, prompts, force=None, profile_name=None):
    """Every TTFT and decode measurement of the model as it is (dense or sparse): {L: prefill}, {b: decode}."""
    ttft, dec = {}, {}
    for L, prompt in prompts["prefill"].items():
        ttft[L] = t = prefill_run(model, a, prompt)
        log("  TTFT, %d-token prompt: %.2f ms (wall %.2f ms, host enqueue %.2f ms)" % (L, t["ms"], t["wall_ms"],
                                                                                 t["enqueue_ms"]))
    for b in a.batches:
        dec[b] = r = decode_run(model, a, prompts["decode"][:b], force=force if b == 1 else None,
                                profile_name=profile_name if b == 1 else None)
        log("  decode, batch %d: %.1f tok/s (first step, compile included: %.1f s)" % (b, r["tok_s"], r["warm_s"]))
    return ttft, dec


def graph_fields(dt, st):
    """The CUDA-graph prefill's fields of a TTFT row (empty without --prefill-graph)."""
    if "graph_ms" not in dt or "graph_ms" not in st:
        return {}
    return dict(dense_graph_ms=dt["graph_ms"], sparse_graph_ms=st["graph_ms"], graph_ratio=st["graph_ms"] / dt["graph_ms"],
                dense_graph_ms_all=dt["graph_ms_all"], sparse_graph_ms_all=st["graph_ms_all"],
                graph_equal=dt["graph_equal"] and st["graph_equal"])


def compare(d, nnz, pruned_numel, macko_bytes, conv_s, dense, sparse, a):
    """One density's row of results: TTFT and decode per size, memory and the fidelity checks."""
    (dt, dd), (st, sd) = dense, sparse
    nchk = min(a.check_tokens, a.new_tokens)
    r = dict(density=d, achieved_density=nnz / pruned_numel, nnz=nnz, macko_bytes=macko_bytes,
             eff_density=macko_bytes / (2 * pruned_numel), convert_s=conv_s, ttft=[], decode=[])
    for L in dt:
        r["ttft"].append(dict(prompt_len=L, dense_ms=dt[L]["ms"], sparse_ms=st[L]["ms"],
                              ratio=st[L]["ms"] / dt[L]["ms"], dense_wall_ms=dt[L]["wall_ms"],
                              sparse_wall_ms=st[L]["wall_ms"], dense_enqueue_ms=dt[L]["enqueue_ms"],
                              sparse_enqueue_ms=st[L]["enqueue_ms"], dense_ms_all=dt[L]["ms_all"],
                              sparse_ms_all=st[L]["ms_all"], logits_rel_err=rel_err(st[L]["logits"], dt[L]["logits"]),
                              top1_equal=st[L]["token"] == dt[L]["token"], dense_peak=dt[L]["peak_torch"],
                              sparse_peak=st[L]["peak_torch"] + macko_bytes, **graph_fields(dt[L], st[L])))
    for b in dd:
        same = sum(int(x[:nchk] == y[:nchk]) for x, y in zip(sd[b]["tokens"], dd[b]["tokens"]))
        r["decode"].append(dict(batch=b, dense_tok_s=dd[b]["tok_s"], sparse_tok_s=sd[b]["tok_s"],
                                speedup=sd[b]["tok_s"] / dd[b]["tok_s"], dense_ms_all=dd[b]["decode_ms_all"],
                                sparse_ms_all=sd[b]["decode_ms_all"], dense_peak=dd[b]["peak_torch"],
                                sparse_peak=sd[b]["peak_torch"] + macko_bytes, sequences_equal=same,
                                dense_warm_s=dd[b]["warm_s"], sparse_warm_s=sd[b]["warm_s"]))
    one_d, one_s = dd.get(1), sd.get(1)
    if one_d is not None:  # the fidelity checks and the memory of record: batch 1
        dl, sl = one_d["check_logits"], one_s["check_logits"]
        errs = [rel_err(sl[i], dl[i]) for i in range(nchk)]
        top2 = dl.topk(2, dim=-1).values
        margins = (top2[:, 0] - top2[:, 1]).tolist()  # how close a tie was, per checked step
        forced = sl.argmax(-1).tolist()
        dtok, stok = one_d["tokens"][0], one_s["tokens"][0]
        # the largest |sparse - dense| logit difference per checked step (both fed the same tokens); where the
        # dense top-2 margin is below twice that, rounding alone can swap the top-2
        max_abs = [float((sl[i] - dl[i]).abs().max()) for i in range(nchk)]
        r.update(dense_peak=one_d["peak_torch"], sparse_peak=one_s["peak_torch"] + macko_bytes,
                 mem_ratio=(one_s["peak_torch"] + macko_bytes) / one_d["peak_torch"], max_rel_err=max(errs),
                 rel_errs=errs, dense_margins=margins, max_abs_diff=max_abs,
                 forced_argmax_equal=sum(int(x == y) for x, y in zip(forced, dtok[:nchk])),
                 forced_flips=[[i + 1, margins[i], max_abs[i]] for i in range(nchk) if forced[i] != dtok[i]],
                 tokens_equal_prefix=equal_prefix(stok, dtok), first_check_equal=stok[:nchk] == dtok[:nchk],
                 dense_tokens=dtok, sparse_tokens=stok, profile_dense=one_d["profile"],
                 profile_sparse=one_s["profile"])
        r["fidelity_ok"] = bool(r["first_check_equal"] and r["max_rel_err"] < a.rtol)
    return r


def int_list(s):
    return [int(x) for x in s.split(",") if x]


def main():
    global torch, nn
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--preset", choices=sorted(PRESETS), default="7b")
    p.add_argument("--layers", type=int, default=0, help="override the number of layers")
    p.add_argument("--impl", choices=sorted(RUNNERS), default="own")
    p.add_argument("--fuse", action=argparse.BooleanOptionalAction, default=None,
                   help="q/k/v as one qkv_proj and gate/up as one gate_up_proj per layer (pruned per original "
                        "matrix), dense and sparse alike (--impl own only; its default)")
    p.add_argument("--compile", action=argparse.BooleanOptionalAction, default=None,
                   help="torch.compile the decode step's layer function (inductor, fullgraph) before capture, dense "
                        "and sparse alike; MackoLinear compiles as the custom op macko::linear (--impl own only; its "
                        "default)")
    p.add_argument("--densities", default="0.5,0.3", help="run in this order; the tables are sorted")
    p.add_argument("--layout", choices=("rows", "tiles"), default="rows",
                   help="device layout of the sparse model's MackoLinear matrices (macko_mat_set_layout)")
    p.add_argument("--workspace-mib", type=int, default=0,
                   help="give the sparse layers' handle a workspace of this many MiB (a torch buffer, counted in the "
                        "peak memory; macko.Handle.set_workspace); 0: the handle's own 64 MiB")
    p.add_argument("--prompt-lens", default="512,2048", help="TTFT prompt lengths (comma list; empty: none)")
    p.add_argument("--batches", default="1,8,32", help="decode batch sizes (comma list; 1 carries the fidelity "
                                                       "checks and the memory figures)")
    p.add_argument("--prefill-warmup", type=int, default=2, help="untimed prefills before the timed ones")
    p.add_argument("--prefill-reps", type=int, default=5, help="timed prefills per prompt length (median)")
    p.add_argument("--prefill-graph", action=argparse.BooleanOptionalAction, default=None,
                   help="also time each prefill captured in one CUDA graph (the GPU's time without Python's launches; "
                        "dense and sparse alike; --impl own only; its default)")
    p.add_argument("--decode-prompt-len", type=int, default=16, help="prompt length of the decoded sequences")
    p.add_argument("--new-tokens", type=int, default=100)
    p.add_argument("--check-tokens", type=int, default=20)
    p.add_argument("--repeats", type=int, default=3, help="timed generations per batch size (median)")
    p.add_argument("--rtol", type=float, default=1e-2)
    p.add_argument("--profile", default="0.5,0.3", help="densities to profile one batch-1 decode step at")
    p.add_argument("--deadline-s", type=float, default=0, help="skip the densities left after this many seconds")
    p.add_argument("--seed", type=int, default=20261121)
    p.add_argument("--out", default="bench/results")
    p.add_argument("--tag", default="", help="appended to the output name (e.g. one density per command)")
    p.add_argument("--render", metavar="JSON", action="append",
                   help="only write the .md/.png of earlier runs' .json (several: merged into one table)")
    p.add_argument("--stem", help="with --render: the output path without extension (default: the first JSON's)")
    a = p.parse_args()
    if a.render:
        return e2e_report.render(a.render, a.stem)
    own = a.impl == "own"
    a.fuse = own if a.fuse is None else a.fuse
    a.compile = own if a.compile is None else a.compile
    a.prefill_graph = own if a.prefill_graph is None else a.prefill_graph
    if a.prefill_graph and not own:
        p.error("--prefill-graph needs --impl own (transformers' forward was not made for capture here)")
    if (a.fuse or a.compile) and not own:
        p.error("--fuse and --compile need --impl own (transformers' attention calls q_proj/k_proj/v_proj itself; "
                "the compiled unit is OwnRunner's layer step)")
    dens = [float(x) for x in a.densities.split(",") if x]
    a.prompt_lens, a.batches = int_list(a.prompt_lens), int_list(a.batches)
    if not a.batches and not a.prompt_lens:
        p.error("nothing to measure: --batches and --prompt-lens are both empty")
    if a.prefill_reps < 1 or a.repeats < 1 or a.new_tokens < 2 or min(a.batches + a.prompt_lens + [1]) < 1:
        p.error("--prefill-reps, --repeats, batches and prompt lengths must be >= 1, --new-tokens >= 2")

    import torch as torch_module
    from torch import nn as nn_module

    torch, nn = torch_module, nn_module
    if a.compile:
        import torch._dynamo as dynamo

        for knob in ("recompile_limit", "cache_size_limit"):  # one entry per (dense | sparse) x batch size
            if hasattr(dynamo.config, knob):
                setattr(dynamo.config, knob, 64)
    prof_d = {float(x) for x in a.profile.split(",") if x}

    import macko
    import transformers

    dev_name = torch.cuda.get_device_name(0)
    short = next((w for w in dev_name.replace("-", " ").split() if w[:1] in "HABLV" and any(c.isdigit() for c in w)),
                 "GPU")
    now = datetime.datetime.now(datetime.timezone.utc)
    os.makedirs(a.out, exist_ok=True)
    variant = "".join(("" if a.preset == "7b" else "-" + a.preset, "-hf" if a.impl == "hf" else "",
                       "" if a.fuse == own else ("-fused" if a.fuse else "-unfused"),
                       "" if a.compile == own else ("-compiled" if a.compile else "-eager"),
                       "" if a.layout == "rows" else "-" + a.layout,
                       "-ws%d" % a.workspace_mib if a.workspace_mib else "",
                       "-" + a.tag if a.tag else ""))
    stem = os.path.join(a.out, "e2e-%s-%s%s" % (short, now.strftime("%Y-%m-%d"), variant))
    log("device: %s; torch %s; transformers %s; macko %s from %s" % (
        dev_name, torch.__version__, transformers.__version__, ".".join(map(str, macko.version())),
        macko.library_path()))

    t_build = time.time()
    model = build_model(a)
    if a.fuse:
        fuse_projections(model)
    targets = target_linears(model)
    cfg = model.config
    std = cfg.initializer_range
    g = torch.Generator(device="cpu")
    g.manual_seed(a.seed)
    # decode prompts: row b of the [max batch, plen] draw is sequence b (row 0: the batch-1 prompt); one prompt per
    # prefill length
    prompts = dict(decode=torch.randint(0, cfg.vocab_size, (max(a.batches + [1]), a.decode_prompt_len),
                                        generator=g).cuda(),
                   prefill={L: torch.randint(0, cfg.vocab_size, (1, L), generator=g).cuda() for L in a.prompt_lens})
    dense_param_bytes = sum(t.numel() * t.element_size() for t in model.parameters())
    pruned_numel = sum(getattr(pa, at).weight.numel() for _, pa, at, _ in targets)
    log("model: %d layers, %d pruned matrices (%.3fG weights), %.2f GB of fp16 parameters; built in %.1f s; "
        "decoder: %s" % (cfg.num_hidden_layers, len(targets), pruned_numel / 1e9, dense_param_bytes / GB,
                         time.time() - t_build, RUNNERS[a.impl].name))

    handle = macko.Handle()
    results = []
    meta = dict(device=dev_name, date=now.strftime("%Y-%m-%d %H:%M UTC"), torch=torch.__version__,
                transformers=transformers.__version__, macko=".".join(map(str, macko.version())),
                decoder=RUNNERS[a.impl].name + ("; q/k/v and gate/up fused into one matrix each (dense and sparse)"
                                                 if a.fuse else "") +
                ("; decode step's layer function compiled with torch.compile (inductor, fullgraph=True; embedding, "
                 "final norm and lm_head eager) before capture, dense and sparse alike (MackoLinear as the custom op "
                 "macko::linear)" if a.compile else ""),
                impl=a.impl, fuse=a.fuse, compile=a.compile, preset=a.preset, layout=a.layout, layers=cfg.num_hidden_layers,
                hidden=cfg.hidden_size, intermediate=cfg.intermediate_size, heads=cfg.num_attention_heads,
                vocab=cfg.vocab_size, prompt_lens=a.prompt_lens, batches=a.batches,
                decode_prompt_len=a.decode_prompt_len, new_tokens=a.new_tokens, check_tokens=a.check_tokens,
                repeats=a.repeats, prefill_warmup=a.prefill_warmup, prefill_reps=a.prefill_reps,
                prefill_graph=a.prefill_graph, seed=a.seed,
                rtol=a.rtol, workspace_mib=a.workspace_mib, dense_param_bytes=dense_param_bytes,
                pruned_weights=pruned_numel, argv=[sys.argv], densities_requested=dens)
    t_start = time.time()
    for i, d in enumerate(dens):
        if a.deadline_s and time.time() - t_start > a.deadline_s:
            log("deadline: skipping d=%.2f" % d)
            continue
        t_d = time.time()
        log("[%d/%d] d=%.2f" % (i + 1, len(dens), d))
        with torch.no_grad():
            nnz = sum(fill_and_prune(getattr(pa, at), parts, d, std) for _, pa, at, parts in targets)
        log(" dense:")
        dense = measure(model, a, prompts, profile_name=("dense d=%.2f" % d) if d in prof_d else None)
        if a.workspace_mib:
            # made for the sparse runs only (so the dense peak memory does not hold it), on the current stream; the
            # handle holds it until set_workspace(None) below (set_workspace's contract)
            handle.set_workspace(torch.empty(a.workspace_mib << 20, dtype=torch.uint8, device="cuda"))
        t_conv = time.time()
        macko_bytes = to_sparse(targets, handle, a.layout)
        conv_s = time.time() - t_conv
        log(" sparse (converted in %.1f s):" % conv_s)
        force = torch.tensor(dense[1][1]["tokens"][0], device="cuda") if 1 in dense[1] else None
        sparse = measure(model, a, prompts, force=force,
                         profile_name=("sparse d=%.2f" % d) if d in prof_d else None)
        r = compare(d, nnz, pruned_numel, macko_bytes, conv_s, dense, sparse, a)
        r["seconds"] = time.time() - t_d
        results.append(r)
        to_dense(targets)
        if a.workspace_mib:
            torch.cuda.synchronize()
            handle.set_workspace(None)
        results.sort(key=lambda r: -r["density"])
        e2e_report.write_all(stem, meta, results)  # after every density: an interrupted run keeps what it measured
    ok = all(r.get("fidelity_ok", True) for r in results)
    log("wrote %s.{md,json,png}; fidelity %s" % (stem, "ok" if ok else "FAILED somewhere (see the table)"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
