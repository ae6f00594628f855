#!/usr/bin/env python3
"""End to end: greedy LLM decoding with macko-sparse linear layers inside PyTorch (the paper's End2End table).

A Llama-2-7B-shaped decoder (hidden 4096, intermediate 11008, 32 layers, 32 heads, vocab 32000, fp16) is built from a
config with random weights (nothing is downloaded): transformers' own LlamaForCausalLM with its StaticCache
(--impl hf, the default), or a compact decoder of this file that runs the same modules with its own KV cache
(--impl own). For every density d, every q/k/v/o/gate/up/down weight is pruned by magnitude, unstructured, to d
(per matrix); the embeddings and lm_head stay dense. Then, from a fixed prompt, 100 tokens are generated greedily
twice: with the pruned weights kept dense (cuBLAS) and with them in macko.torch.MackoLinear. The decode step
(one token) is captured in a CUDA graph in both cases, so the timings are of the GPU work, not of Python.

With --impl own, two options make the decoder what an inference engine runs, for dense and sparse alike:
--fuse stacks q/k/v into one qkv_proj and gate/up into one gate_up_proj per layer (each part pruned on its own,
with the unfused run's seed, so the matrices are the same), and --compile runs the decode step's layer function
through torch.compile (inductor, fullgraph; one compilation serves all layers; MackoLinear is the custom op
macko::linear) before the step is captured. The output files get -own / -fused / -compiled in their names.

Memory: "peak" is torch.cuda.max_memory_allocated() over prefill, capture and generation, plus, for the sparse
run, the bytes of the macko matrices (macko_mat_get_storage), which macko allocates itself with cudaMalloc, unseen
by torch's allocator. The dense weight of a layer is freed as soon as the layer is converted, so the sparse peak
holds the sparse model only.

Fidelity: the sparse run is replayed with the dense run's tokens as input (teacher forcing) for the first
--check-tokens steps and its logits compared with the dense ones (relative error in the 2-norm); the free-running
sparse generation must give the same first --check-tokens tokens as the dense one.

Run on a GPU machine, with the library built for it:
    MACKO_LIBRARY=build/libmacko.so PYTHONPATH=interfaces/python python3 examples/llm_decode.py --out results/
    ... --preset tiny --densities 0.5,0.3 --new-tokens 30           # a quick smoke test
    ... --impl own --fuse --compile                                  # engine-like: the table of record
Writes e2e-<device>-<date>.md/.json/.png under --out.
"""

import argparse
import datetime
import gc
import json
import os
import statistics
import sys
import time

import torch
from torch import nn

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


def progress(total, desc):
    try:
        from tqdm import tqdm

        return tqdm(total=total, desc=desc, file=sys.stdout, mininterval=1.0, dynamic_ncols=False, ncols=100)
    except ImportError:
        class Bar:
            def __init__(self):
                self.n = 0

            def update(self, k=1):
                self.n += k
                log("[%s] %d/%d" % (desc, self.n, total))

            def set_postfix_str(self, s):
                log("[%s] %s" % (desc, s))

            def close(self):
                pass

        return Bar()


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
    """transformers' LlamaForCausalLM with its StaticCache (whose length counter lives on the GPU)."""

    name = "transformers LlamaForCausalLM + StaticCache"

    def __init__(self, model, max_len):
        from transformers import StaticCache

        self.model = model
        self.cache = StaticCache(config=model.config, max_cache_len=max_len)

    def forward(self, ids):
        out = self.model(input_ids=ids, past_key_values=self.cache, use_cache=True, logits_to_keep=1)
        return out.logits[:, -1, :]

    def set_len(self, n):
        for layer in self.cache.layers:
            layer.cumulative_length.fill_(n)


class OwnRunner:
    """A compact Llama decoder over the same modules (RMSNorm, RoPE, SDPA with a static KV cache, SwiGLU)."""

    name = "own compact decoder over the transformers modules"

    def __init__(self, model, max_len):
        cfg = model.config
        self.m = model.model
        self.head = model.lm_head
        dev, dt = self.m.embed_tokens.weight.device, self.m.embed_tokens.weight.dtype
        self.nh, self.nkv = cfg.num_attention_heads, cfg.num_key_value_heads
        self.hd = cfg.hidden_size // self.nh
        shape = (1, self.nkv, max_len, self.hd)
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
        """Logits of the last position; layer_step: the function run per layer (_layer_step, or its compiled form)."""
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
    q_len = x.shape[1]
    at, mlp = layer.self_attn, layer.mlp
    x = x + prev_mlp
    h = layer.input_layernorm(x)
    if hasattr(at, "qkv_proj"):
        q, k, v = at.qkv_proj(h).split(at.qkv_proj_split, dim=-1)
    else:
        q, k, v = at.q_proj(h), at.k_proj(h), at.v_proj(h)
    q = q.view(1, q_len, nh, hd).transpose(1, 2)
    k = k.view(1, q_len, nkv, hd).transpose(1, 2)
    v = v.view(1, q_len, nkv, hd).transpose(1, 2)
    q = q * cos + _rot(q) * sin
    k = k * cos + _rot(k) * sin
    kc.index_copy_(2, positions, k)
    vc.index_copy_(2, positions, v)
    o = nn.functional.scaled_dot_product_attention(q, kc, vc, attn_mask=mask, enable_gqa=nkv != nh)
    x = x + at.o_proj(o.transpose(1, 2).reshape(1, q_len, nh * hd))
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


# ---------------------------------------------------------------------------------------------------- generation
_SIDE = None


def generate(model, args, prompt, force=None, profile_name=None):
    """Prefill (eager), capture one decode step in a CUDA graph, then: a fidelity pass of check-1 replays
    (teacher-forced by `force` when given) and args.repeats timed passes of new_tokens-1 replays.
    Returns a dict of results; peak memory is measured from the call on."""
    global _SIDE
    dev = torch.device("cuda")
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    n_new, n_check, plen = args.new_tokens, min(args.check_tokens, args.new_tokens), prompt.shape[1]
    runner = RUNNERS[args.impl](model, plen + n_new + 8)
    # the decode step: the runner's forward, or its torch.compile'd form (the prefill always runs eagerly)
    if args.compile:
        layer_step = compiled_layer_step()

        def decode(x):
            return runner.forward(x, layer_step)
    else:
        decode = runner.forward
    cur = torch.cuda.current_stream()
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
    with torch.no_grad():
        # prefill, timed (eager: includes Python)
        ev[0].record()
        logits0 = runner.forward(prompt)
        ev[1].record()
        t0 = logits0.argmax(-1).view(1, 1)
        torch.cuda.synchronize()
        prefill_ms = ev[0].elapsed_time(ev[1])
        ids = t0.clone()
        tokbuf = torch.zeros(n_new, dtype=torch.long, device=dev)
        counter = torch.ones(1, dtype=torch.long, device=dev)

        def step():
            logits = decode(ids)
            nxt = logits.argmax(-1).view(1, 1)
            ids.copy_(nxt)
            tokbuf.index_copy_(0, counter, nxt.view(1))
            counter.add_(1)
            return logits

        # warm-up of the step on a side stream (as torch.cuda.graph asks), then capture
        if _SIDE is None:  # one for the whole run: torch keeps a cuBLAS workspace (64 MiB here) per stream
            _SIDE = torch.cuda.Stream()
        side = _SIDE
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
            tokbuf[0] = t0.view(())

        # fidelity pass: logits of the first n_check tokens (0 = prefill)
        reset()
        check_logits = [logits0.float().clone()]
        for k in range(n_check - 1):
            if force is not None:
                ids.copy_(force[k].view(1, 1))
            graph.replay()
            check_logits.append(logits.float().clone())
        check_logits = torch.cat(check_logits)

        # timed passes: new_tokens - 1 replays each (token 0 came from the prefill)
        times = []
        for _ in range(args.repeats):
            reset()
            ev[0].record()
            for _ in range(n_new - 1):
                graph.replay()
            ev[1].record()
            torch.cuda.synchronize()
            times.append(ev[0].elapsed_time(ev[1]))
        tokens = tokbuf.tolist()

        prof_text = None
        if profile_name:
            prof_text = profile_step(graph, reset, profile_name)

        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated()
    # the graph, the KV cache and the buffers go with this frame (the next call collects and empties the cache)
    decode_ms = statistics.median(times)
    return dict(tokens=tokens, check_logits=check_logits.cpu(), prefill_ms=prefill_ms, decode_ms=decode_ms,
                decode_ms_all=times, decode_tok_s=(n_new - 1) / (decode_ms / 1e3),
                e2e_tok_s=n_new / ((decode_ms + prefill_ms) / 1e3), peak_torch=peak, profile=prof_text,
                warm_s=warm_s)


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


# ---------------------------------------------------------------------------------------------------- sparse swap
def to_sparse(targets, handle):
    from macko.torch import MackoLinear

    nbytes = 0
    for _, parent, attr, _ in targets:
        lin = getattr(parent, attr)
        ml = MackoLinear(lin.weight, lin.bias, handle=handle)
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


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--preset", choices=sorted(PRESETS), default="7b")
    p.add_argument("--layers", type=int, default=0, help="override the number of layers")
    p.add_argument("--impl", choices=sorted(RUNNERS), default="hf")
    p.add_argument("--fuse", action="store_true",
                   help="--impl own only: q/k/v as one qkv_proj and gate/up as one gate_up_proj per layer (pruned per "
                        "original matrix, rows stacked), dense and sparse alike")
    p.add_argument("--compile", action="store_true",
                   help="--impl own only: torch.compile the decode step's layer function (inductor, fullgraph; one "
                        "compilation serves every layer) before capturing the step, dense and sparse alike; "
                        "MackoLinear compiles as the custom op macko::linear")
    p.add_argument("--densities", default="0.5,0.3,0.7,0.8,0.6,0.4,0.2,0.1",
                   help="run in this order (the targets first); the table is sorted")
    p.add_argument("--deadline-s", type=float, default=0, help="skip the densities left after this many seconds")
    p.add_argument("--new-tokens", type=int, default=100)
    p.add_argument("--check-tokens", type=int, default=20)
    p.add_argument("--prompt-len", type=int, default=16)
    p.add_argument("--repeats", type=int, default=3, help="timed generations per run (median reported)")
    p.add_argument("--rtol", type=float, default=1e-2)
    p.add_argument("--profile", default="0.5,0.3", help="densities to profile one decode step at (comma list)")
    p.add_argument("--seed", type=int, default=20261121)
    p.add_argument("--out", default="bench/results")
    p.add_argument("--render", metavar="JSON", help="only re-write the .md and .png of an earlier run's .json")
    a = p.parse_args()
    if a.render:
        with open(a.render) as f:
            j = json.load(f)
        write_all(a.render[:-5] if a.render.endswith(".json") else a.render, j["meta"], j["results"], json_too=False)
        return 0
    dens = [float(x) for x in a.densities.split(",") if x]
    if (a.fuse or a.compile) and a.impl != "own":
        p.error("--fuse and --compile need --impl own (transformers' attention calls q_proj/k_proj/v_proj itself; "
                "the compiled unit is OwnRunner's layer step)")
    if a.compile:
        import torch._dynamo as dynamo  # (a plain `import torch._dynamo` would make torch local to main)

        for knob in ("recompile_limit", "cache_size_limit"):  # one entry per (dense | sparse) x runner
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
    variant = "".join(("" if a.preset == "7b" else "-" + a.preset, "-own" if a.impl == "own" else "",
                       "-fused" if a.fuse else "", "-compiled" if a.compile else ""))
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
    prompt = torch.randint(0, cfg.vocab_size, (1, a.prompt_len), generator=g).cuda()
    dense_param_bytes = sum(t.numel() * t.element_size() for t in model.parameters())
    pruned_numel = sum(getattr(pa, at).weight.numel() for _, pa, at, _ in targets)
    log("model: %d layers, %d pruned matrices (%.3fG weights), %.2f GB of fp16 parameters; built in %.1f s; "
        "decoder: %s" % (cfg.num_hidden_layers, len(targets), pruned_numel / 1e9, dense_param_bytes / GB,
                         time.time() - t_build, RUNNERS[a.impl].name))

    # warm-up of cuBLAS/cuDNN/SDPA on the dense model, so the first density's prefill is not a first call
    with torch.no_grad():
        warm = RUNNERS[a.impl](model, a.prompt_len + 8)
        warm.forward(prompt)
        warm.forward(prompt[:, :1])
        del warm
    torch.cuda.synchronize()
    torch.cuda.empty_cache()

    handle = macko.Handle()
    results = []
    meta = dict(device=dev_name, date=now.strftime("%Y-%m-%d %H:%M UTC"), torch=torch.__version__,
                transformers=transformers.__version__, macko=".".join(map(str, macko.version())),
                decoder=RUNNERS[a.impl].name + ("; q/k/v and gate/up fused into one matrix each (dense and sparse)"
                                                 if a.fuse else "") +
                ("; decode step's layer function compiled with torch.compile (inductor, fullgraph=True; embedding, "
                 "final norm and lm_head eager) before capture, dense and sparse alike (MackoLinear as the custom op "
                 "macko::linear)" if a.compile else ""),
                fuse=a.fuse, compile=a.compile, preset=a.preset, layers=cfg.num_hidden_layers,
                hidden=cfg.hidden_size, intermediate=cfg.intermediate_size, heads=cfg.num_attention_heads,
                vocab=cfg.vocab_size, prompt_len=a.prompt_len, new_tokens=a.new_tokens,
                check_tokens=a.check_tokens, repeats=a.repeats, seed=a.seed, rtol=a.rtol,
                dense_param_bytes=dense_param_bytes, pruned_weights=pruned_numel, argv=sys.argv,
                densities_requested=dens, warmup=True)
    bar = progress(len(dens), "densities")
    t_start = time.time()
    for d in dens:
        if a.deadline_s and time.time() - t_start > a.deadline_s:
            log("deadline: skipping d=%.1f" % d)
            continue
        t_d = time.time()
        with torch.no_grad():
            nnz = sum(fill_and_prune(getattr(pa, at), parts, d, std) for _, pa, at, parts in targets)
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        prof = d in prof_d
        dn = generate(model, a, prompt, profile_name=("dense d=%.1f" % d) if prof else None)
        t_conv = time.time()
        macko_bytes = to_sparse(targets, handle)
        conv_s = time.time() - t_conv
        sp = generate(model, a, prompt, force=torch.tensor(dn["tokens"], device="cuda"),
                      profile_name=("sparse d=%.1f" % d) if prof else None)
        sp_forced = sp["check_logits"]
        nchk = min(a.check_tokens, a.new_tokens)
        errs = [rel_err(sp_forced[i], dn["check_logits"][i]) for i in range(nchk)]
        # margin of the dense top-1 over the top-2 at each checked step (how close a tie was)
        top2 = dn["check_logits"].topk(2, dim=-1).values
        margins = (top2[:, 0] - top2[:, 1]).tolist()
        forced_argmax = sp_forced.argmax(-1).tolist()
        # per checked step: the largest |sparse - dense| logit difference (teacher-forced, so both saw the same
        # tokens); where the dense top-2 margin is below twice that, rounding alone can swap the top-2
        max_abs = [float((sp_forced[i] - dn["check_logits"][i]).abs().max()) for i in range(nchk)]
        flips = [[i + 1, margins[i], max_abs[i]] for i in range(nchk) if forced_argmax[i] != dn["tokens"][i]]
        same_prefix = 0
        for x, y in zip(sp["tokens"], dn["tokens"]):
            if x != y:
                break
            same_prefix += 1
        r = dict(density=d, achieved_density=nnz / pruned_numel, nnz=nnz, macko_bytes=macko_bytes,
                 eff_density=macko_bytes / (2 * pruned_numel), convert_s=conv_s,
                 dense_tok_s=dn["decode_tok_s"], sparse_tok_s=sp["decode_tok_s"],
                 speedup=sp["decode_tok_s"] / dn["decode_tok_s"],
                 dense_e2e_tok_s=dn["e2e_tok_s"], sparse_e2e_tok_s=sp["e2e_tok_s"],
                 dense_prefill_ms=dn["prefill_ms"], sparse_prefill_ms=sp["prefill_ms"],
                 dense_decode_ms=dn["decode_ms_all"], sparse_decode_ms=sp["decode_ms_all"],
                 dense_peak=dn["peak_torch"], sparse_peak_torch=sp["peak_torch"],
                 sparse_peak=sp["peak_torch"] + macko_bytes,
                 mem_ratio=(sp["peak_torch"] + macko_bytes) / dn["peak_torch"],
                 max_rel_err=max(errs), rel_errs=errs, dense_margins=margins,
                 forced_argmax_equal=sum(int(x == y) for x, y in zip(forced_argmax, dn["tokens"][:nchk])),
                 max_abs_diff=max_abs, forced_flips=flips,
                 tokens_equal_prefix=same_prefix, first_check_equal=sp["tokens"][:nchk] == dn["tokens"][:nchk],
                 dense_tokens=dn["tokens"], sparse_tokens=sp["tokens"],
                 profile_dense=dn["profile"], profile_sparse=sp["profile"], seconds=time.time() - t_d,
                 dense_warm_s=dn["warm_s"], sparse_warm_s=sp["warm_s"])
        r["fidelity_ok"] = bool(r["first_check_equal"] and r["max_rel_err"] < a.rtol)
        results.append(r)
        log("\nd=%.1f: dense %.1f tok/s, sparse %.1f tok/s (%.2fx); peak %.2f -> %.2f GB (%.3fx); "
            "max logits rel err %.2e; first %d tokens equal: %s (equal prefix %d/%d); convert %.1f s; "
            "first step (compile) %.1f / %.1f s; %.1f s" % (
                d, r["dense_tok_s"], r["sparse_tok_s"], r["speedup"], r["dense_peak"] / GB, r["sparse_peak"] / GB,
                r["mem_ratio"], r["max_rel_err"], nchk, r["first_check_equal"], same_prefix, a.new_tokens,
                conv_s, dn["warm_s"], sp["warm_s"], r["seconds"]))
        to_dense(targets)
        results.sort(key=lambda r: -r["density"])
        write_all(stem, meta, results)  # after every density, so an interrupted run keeps what it measured
        bar.update(1)
    bar.close()
    log("wrote %s.{md,json,png}; fidelity %s" % (stem, "ok" if all(r["fidelity_ok"] for r in results) else
                                                  "FAILED somewhere (see the table)"))
    return 0


def write_all(stem, meta, results, json_too=True):
    if json_too:
        with open(stem + ".json", "w") as f:
            json.dump(dict(meta=meta, results=results), f, indent=1)
    write_md(stem + ".md", meta, results)
    try:
        plot(stem + ".png", meta, results)
    except Exception as e:  # matplotlib missing or headless trouble: the table is what matters
        log("plot skipped: %s" % e)


def equal_note(r):
    """'yes', or 'NO' with how close the dense top-2 logits were where the free-running tokens parted."""
    if r["first_check_equal"]:
        return "yes"
    i = r["tokens_equal_prefix"]
    m = r.get("dense_margins", [])
    d = r.get("max_abs_diff", [])
    if i < len(m):
        return "NO: parted at token %d, where the dense top-2 logits differ by %.4f%s%s" % (
            i + 1, m[i], " (an exact fp16 tie)" if m[i] == 0 else "",
            "; the largest sparse-dense logit difference there is %.4f" % d[i] if i < len(d) else "")
    return "NO"


def write_md(path, meta, results):
    m = meta
    L = ["# End to end: greedy decoding with macko-sparse linears (%s, %s)" % (m["device"], m["date"]), "",
         "- model: Llama-2-7B-shaped decoder built from a config with random weights (normal, std 0.02; no "
         "download): %d layers, hidden %d, intermediate %d, %d heads, vocab %d, fp16; %.2f GB of parameters"
         % (m["layers"], m["hidden"], m["intermediate"], m["heads"], m["vocab"], m["dense_param_bytes"] / GB),
         "- decoder: %s; attention: SDPA over a static KV cache" % m["decoder"],
         "- pruning: every q/k/v/o/gate/up/down weight (%.3fG values) by magnitude, unstructured, per matrix; "
         "embeddings, lm_head and norms dense" % (m["pruned_weights"] / 1e9),
         "- sparse: those layers replaced by `macko.torch.MackoLinear` (one macko_Hspmm call with n = 1, i.e. the "
         "SpMV kernel, per linear per token; encoded on the GPU); dense: the same pruned weights kept dense "
         "(nn.Linear, cuBLAS)",
         "- generation: fixed prompt of %d token ids, %d new tokens greedily, batch 1; token 1 from the (eager) "
         "prefill, tokens 2..%d from replays of one decode step captured in a CUDA graph (argmax and KV-cache "
         "update inside the graph); **tok/s = %d / GPU time of those replays** (CUDA events, median of %d "
         "generations); e2e tok/s also counts the eager prefill" % (m["prompt_len"], m["new_tokens"],
                                                                      m["new_tokens"], m["new_tokens"] - 1,
                                                                      m["repeats"]),
         "- peak memory: torch.cuda.max_memory_allocated over prefill + capture + generation (weights, KV cache, "
         "activations, graph pool), plus for sparse the macko matrices' bytes (macko_mat_get_storage; macko "
         "allocates them with cudaMalloc, outside torch's allocator); GB = 1e9 bytes",
         "- fidelity: sparse logits with the dense run's tokens as input, first %d tokens (token 1 = prefill), "
         "relative error ||l_sparse - l_dense||_2 / ||l_dense||_2 must be < %g; free-running sparse greedy "
         "tokens must equal dense ones for the first %d" % (m["check_tokens"], m["rtol"], m["check_tokens"]),
         "- torch %s, transformers %s, macko %s; command: `%s`" % (m["torch"], m["transformers"], m["macko"],
                                                                  " ".join(m["argv"])),
         ] + ["- " + n for n in m.get("notes", [])] + [
         "",
         "| density | achieved | macko eff. density | dense tok/s | sparse tok/s | speedup | dense peak GB | "
         "sparse peak GB | mem ratio | e2e tok/s dense / sparse | prefill ms dense / sparse | max logits rel err | "
         "first %d tokens equal | equal prefix of %d | fidelity |" % (m["check_tokens"], m["new_tokens"]),
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        L.append("| %.1f | %.4f | %.3f | %.1f | %.1f | %.2fx | %.2f | %.2f | %.3fx | %.1f / %.1f | %.1f / %.1f | "
                 "%.1e | %s | %d | %s |" % (
                     r["density"], r["achieved_density"], r["eff_density"], r["dense_tok_s"], r["sparse_tok_s"],
                     r["speedup"], r["dense_peak"] / GB, r["sparse_peak"] / GB, r["mem_ratio"],
                     r["dense_e2e_tok_s"], r["sparse_e2e_tok_s"], r["dense_prefill_ms"], r["sparse_prefill_ms"],
                     r["max_rel_err"], equal_note(r), r["tokens_equal_prefix"],
                     "ok" if r["fidelity_ok"] else "FAIL"))
    flips = [(r["density"], r["forced_flips"]) for r in results if r.get("forced_flips")]
    if flips:
        L += ["", "Teacher-forced steps (both runs fed the dense run's tokens) where the sparse argmax differs from the "
              "dense one: (token, dense top-2 margin, largest |sparse - dense| logit difference at that step). Where "
              "the margin is below twice that difference, the two correctly rounded computations may order the top-2 "
              "either way."]
        for d, fl in flips:
            L.append("- d = %.1f: %s" % (d, ", ".join("(%d, %.4f, %.4f)" % tuple(f) for f in fl)))
    asked = meta.get("densities_requested")
    if asked is None:  # runs written before the field existed: read it off the command line
        argv = meta.get("argv", [])
        asked = ([float(x) for x in argv[argv.index("--densities") + 1].split(",")] if "--densities" in argv
                 else [0.5, 0.3, 0.7, 0.8, 0.6, 0.4, 0.2, 0.1])
    missing = sorted({round(d, 2) for d in asked} - {round(r["density"], 2) for r in results}, reverse=True)
    if missing:
        L += ["", "Not measured in this run (time limit): d = %s." % ", ".join("%.1f" % d for d in missing)]
    if not meta.get("warmup", False) and results:
        first = "%.1f" % meta.get("first_density", asked[0] if asked else float("nan"))
        L += ["", "The prefill of the first density run (d = %s) includes the first calls of cuBLAS/cuDNN (this run "
              "had no warm-up), so that row's dense prefill and e2e figures are inflated; decode tok/s (the CUDA "
              "graph replays) are unaffected." % first]
    byd = {round(r["density"], 2): r for r in results}
    L += ["", "## Targets (H100) and paper anchors (Llama-2-7B, RTX 4090)", "",
          "| check | target | measured | met |", "|---|---|---|---|"]
    for d, key, tgt, op, paper in ((0.5, "speedup", 1.4, ">=", "1.48x (66.5 -> 98.6 tok/s)"),
                                   (0.5, "mem_ratio", 0.68, "<=", "0.653x (13.59 -> 8.87 GB)"),
                                   (0.3, "speedup", 2.0, ">=", "2.27x (150.8 tok/s)"),
                                   (0.7, "speedup", None, None, "1.11x")):
        r = byd.get(d)
        meas = "-" if r is None else "%.3fx" % r[key]
        if tgt is None or r is None:
            met = "(anchor only)" if r is not None else "not run"
            tgt_s = "paper %s" % paper
        else:
            ok = r[key] >= tgt if op == ">=" else r[key] <= tgt
            met = "yes" if ok else "NO (%+.0f%% vs target)" % (100 * (r[key] / tgt - 1))
            tgt_s = "%s %.2fx (paper %s)" % (op, tgt, paper)
        L.append("| d %.1f %s | %s | %s | %s |" % (d, "tokens/s" if key == "speedup" else "peak memory", tgt_s,
                                                   meas, met))
    profs = [(r["density"], r["profile_dense"], r["profile_sparse"]) for r in results if r["profile_sparse"]]
    if profs:
        L += ["", "## Where the time goes: one decode step", ""]
        for d, pd, ps in profs:
            L += [pd or "", "", ps or "", ""]
    if m.get("analysis"):
        L += ["", "## Analysis", ""] + list(m["analysis"])
    L += ["", "## Tokens", "", "Greedy tokens of the first density's dense run: `%s`" % (
        results[0]["dense_tokens"] if results else [])]
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")


def plot(path, meta, results):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    d = [r["density"] for r in results]
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    ax[0].plot(d, [r["dense_tok_s"] for r in results], "o-", label="dense (cuBLAS), pruned weights")
    ax[0].plot(d, [r["sparse_tok_s"] for r in results], "s-", label="macko (MackoLinear)")
    ax[0].set_xlabel("density")
    ax[0].set_ylabel("decode tokens/s (CUDA graph)")
    ax[0].invert_xaxis()
    ax[0].grid(alpha=0.3)
    ax[0].legend()
    ax[1].plot(d, [r["dense_peak"] / GB for r in results], "o-", label="dense")
    ax[1].plot(d, [r["sparse_peak"] / GB for r in results], "s-", label="macko (torch peak + macko bytes)")
    ax[1].set_xlabel("density")
    ax[1].set_ylabel("peak GPU memory (GB)")
    ax[1].invert_xaxis()
    ax[1].grid(alpha=0.3)
    ax[1].legend()
    fig.suptitle("Llama-2-7B-shaped, fp16, batch 1, %d new tokens: %s" % (meta["new_tokens"], meta["device"]))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
