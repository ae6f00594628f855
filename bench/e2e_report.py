"""The tables of bench/e2e_llm.py: <stem>.json (everything measured), <stem>.md (the table of record) and <stem>.png.

Needs neither torch nor a GPU: `python3 bench/e2e_llm.py --render a.json [--render b.json ...] [--stem S]` rewrites
the .md and .png of earlier runs, merging several runs (e.g. one density per command) into one table.
"""

import json
import os

GB = 1e9

# Issue 16's end-to-end targets (H100, d = 0.5) and the paper's anchors (Llama-2-7B, RTX 4090):
# (density, kind, size, key, op, target, anchor)
TARGETS = (
    (0.5, "ttft", 2048, "ratio", "<=", 1.1, "TTFT of a 2048-token prompt <= 1.1x dense"),
    (0.5, "decode", 1, "speedup", ">=", 1.37, "batch 1 stays >= 1.37x (paper 1.48x, 66.5 -> 98.6 tok/s)"),
    (0.5, "decode", 8, "speedup", ">=", 1.3, "batch 8 >= 1.3x"),
    (0.5, "decode", 32, "speedup", ">=", 1.15, "batch 32 >= 1.15x"),
    (0.5, "memory", None, "mem_ratio", "<=", 0.68, "peak memory (paper 0.653x, 13.59 -> 8.87 GB)"),
    (0.3, "decode", 1, "speedup", ">=", 2.0, "batch 1 (paper 2.27x, 150.8 tok/s)"),
)


def write_all(stem, meta, results, json_too=True):
    if json_too:
        with open(stem + ".json", "w") as f:
            json.dump(dict(meta=meta, results=results), f, indent=1)
    with open(stem + ".md", "w") as f:
        f.write(markdown(meta, results))
    try:
        plot(stem + ".png", meta, results)
    except Exception as e:  # matplotlib missing or headless trouble: the table is what matters
        print("plot skipped: %s" % e, flush=True)


def merge(base, r):
    """Adds run r's prompt lengths and batch sizes of one density to base (the first run's wins where both have
    one), and r's batch-1 figures (fidelity, memory) when base has none."""
    for kind, key in (("ttft", "prompt_len"), ("decode", "batch")):
        have = {x[key] for x in base[kind]}
        base[kind] = sorted(base[kind] + [x for x in r[kind] if x[key] not in have], key=lambda x: x[key])
    if "mem_ratio" not in base and "mem_ratio" in r:
        base.update({k: v for k, v in r.items() if k not in ("ttft", "decode")})


def render(paths, stem=None):
    """Rewrites the .md/.png of one run's .json, or of several merged: by density, and within a density by prompt
    length and batch size (runs split to fit a time limit); the first run's meta, every run's command."""
    meta, results = None, {}
    for p in paths:
        with open(p) as f:
            j = json.load(f)
        if not all("ttft" in r for r in j["results"]):
            raise SystemExit("%s: a JSON of the earlier batch-1 script (examples/llm_decode.py); its .md is its "
                             "table" % p)
        if meta is None:
            meta = dict(j["meta"], argv=[])
        meta["argv"] += j["meta"]["argv"]
        for k in ("densities_requested", "prompt_lens", "batches"):
            meta[k] = sorted(set(meta[k]) | set(j["meta"][k]), reverse=k == "densities_requested")
        for r in j["results"]:
            if r["density"] in results:
                merge(results[r["density"]], r)
            else:
                results[r["density"]] = r
    stem = stem or os.path.splitext(paths[0])[0]
    rows = [results[d] for d in sorted(results, reverse=True)]
    write_all(stem, meta, rows, json_too=len(paths) > 1 or stem != os.path.splitext(paths[0])[0])
    print("wrote %s.md/.png%s" % (stem, " and .json" if len(paths) > 1 else ""))
    return 0


def equal_note(r):
    """'yes', or 'NO' with how close the dense top-2 logits were where the free-running tokens parted."""
    if r["first_check_equal"]:
        return "yes"
    i = r["tokens_equal_prefix"]
    m, d = r.get("dense_margins", []), r.get("max_abs_diff", [])
    if i < len(m):
        return "NO: parted at token %d, where the dense top-2 logits differ by %.4f%s%s" % (
            i + 1, m[i], " (an exact fp16 tie)" if m[i] == 0 else "",
            "; the largest sparse-dense logit difference there is %.4f" % d[i] if i < len(d) else "")
    return "NO"


def lookup(r, kind, size):
    if kind == "memory":
        return r if "mem_ratio" in r else None
    key = "prompt_len" if kind == "ttft" else "batch"
    return next((x for x in r[kind] if x[key] == size), None)


def markdown(meta, results):
    m = meta
    cmds = "; ".join("`%s`" % " ".join(a) for a in m["argv"])
    L = ["# End to end: a Llama-2-7B-shaped model served dense and with macko-sparse linears (%s, %s)" % (
        m["device"], m["date"]), "",
        "- model: %s decoder built from a config with random weights (normal, std 0.02; no download): "
        "%d layers, hidden %d, intermediate %d, %d heads, vocab %d, fp16; %.2f GB of parameters"
        % ("Llama-2-7B-shaped" if m["preset"] == "7b" else "a small (--preset %s)" % m["preset"], m["layers"],
           m["hidden"], m["intermediate"], m["heads"], m["vocab"], m["dense_param_bytes"] / GB),
        "- decoder: %s; attention: SDPA over a static KV cache" % m["decoder"],
        "- pruning: every q/k/v/o/gate/up/down weight (%.3fG values) by magnitude, unstructured, per matrix; "
        "embeddings, lm_head and norms dense" % (m["pruned_weights"] / 1e9),
        "- sparse: those layers in `macko.torch.MackoLinear` (one `macko_Hspmm` with n = the tokens of the call per "
        "linear; encoded on the GPU; device layout %s; %s); dense: the same pruned weights kept dense (nn.Linear, "
        "cuBLAS)"
        % ("TILES (bitmap tiles, `layout='tiles'`)" if m.get("layout") == "tiles" else "ROWS (the MACKO rows)",
           "all on one handle with a workspace of %d MiB given by `Handle.set_workspace` (a torch buffer, in the "
           "peak memory)" % m["workspace_mib"] if m.get("workspace_mib") else "all on one handle with its own 64 MiB "
           "workspace"),
        "- **time to first token**: one eager forward over a prompt of L random tokens (batch 1: every linear "
        "multiplies by n = L columns) and the argmax of its last position, the KV cache rewound before each; median "
        "of %d timed prefills after %d untimed ones (CUDA events around the forward; the wall-clock medians, "
        "between two synchronizes, are in the JSON%s)%s" % (
            m["prefill_reps"], m["prefill_warmup"],
            ", and the host's time to enqueue the forward: near the event time, the prefill waited for Python's "
            "launches" if any("dense_enqueue_ms" in t for r in results for t in r["ttft"]) else "",
            "; **graph**: the same forward and argmax captured in one CUDA graph, its replays timed the same way "
            "(the GPU's time, without Python's launches; 'graph = eager' says its logits were bitwise the eager ones)"
            if any("dense_graph_ms" in t for r in results for t in r["ttft"]) else ""),
        "- **decode**: batch b = b sequences (prompts of %d random tokens) decoded together, one token per sequence "
        "per step (every linear multiplies by n = b columns), %d new tokens each; token 1 from the eager prefill, "
        "tokens 2..%d from replays of one decode step captured in a CUDA graph (argmax and KV-cache update inside); "
        "**tok/s = b x %d / GPU time of those replays** (CUDA events, median of %d generations)"
        % (m["decode_prompt_len"], m["new_tokens"], m["new_tokens"], m["new_tokens"] - 1, m["repeats"]),
        "- peak memory (batch-1 decode): torch.cuda.max_memory_allocated over prefill + capture + generation "
        "(weights, KV cache, activations, graph pool), plus for sparse the macko matrices' bytes "
        "(macko_mat_get_storage; allocated by macko, outside torch's allocator); GB = 1e9 bytes",
        "- fidelity (batch 1): sparse logits with the dense run's tokens as input, first %d tokens (token 1 = "
        "prefill), relative error ||l_sparse - l_dense||_2 / ||l_dense||_2 must be < %g; free-running sparse greedy "
        "tokens must equal the dense ones for the first %d" % (m["check_tokens"], m["rtol"], m["check_tokens"]),
        "- torch %s, transformers %s, macko %s; command%s: %s" % (
            m["torch"], m["transformers"], m["macko"], "s" if len(m["argv"]) > 1 else "", cmds)]
    L += ["- " + n for n in m.get("notes", [])]
    if any(r["ttft"] for r in results):
        # the host's enqueue time: JSONs written since the field was added
        enq = all("dense_enqueue_ms" in t for r in results for t in r["ttft"])
        # the CUDA-graph prefill: JSONs written since --prefill-graph was added, with it on
        gr = all("dense_graph_ms" in t for r in results for t in r["ttft"])
        L += ["", "## Time to first token (ms)", "",
              "| density | prompt tokens | dense ms | sparse ms | sparse / dense | prefill logits rel. err | "
              "top-1 equal |%s%s" % (" host enqueue ms, dense / sparse |" if enq else "",
                                     " graph ms, dense / sparse | graph sparse / dense | graph = eager |" if gr else ""),
              "|---|---|---|---|---|---|---|%s%s" % ("---|" if enq else "", "---|---|---|" if gr else "")]
        for r in results:
            for t in r["ttft"]:
                L.append("| %.2f | %d | %.2f | %.2f | %.2fx | %.1e | %s |%s%s" % (
                    r["density"], t["prompt_len"], t["dense_ms"], t["sparse_ms"], t["ratio"], t["logits_rel_err"],
                    "yes" if t["top1_equal"] else "no",
                    " %.2f / %.2f |" % (t["dense_enqueue_ms"], t["sparse_enqueue_ms"]) if enq else "",
                    " %.2f / %.2f | %.2fx | %s |" % (t["dense_graph_ms"], t["sparse_graph_ms"], t["graph_ratio"],
                                                     "yes" if t["graph_equal"] else "no") if gr else ""))
    if any(r["decode"] for r in results):
        L += ["", "## Decode tokens/s", "",
              "| density | batch | dense tok/s | sparse tok/s | speedup | sequences with the same first %d tokens |"
              % m["check_tokens"], "|---|---|---|---|---|---|"]
        for r in results:
            for x in r["decode"]:
                L.append("| %.2f | %d | %.1f | %.1f | %.2fx | %d / %d |" % (
                    r["density"], x["batch"], x["dense_tok_s"], x["sparse_tok_s"], x["speedup"],
                    x["sequences_equal"], x["batch"]))
    fid = [r for r in results if "mem_ratio" in r]
    if fid:
        L += ["", "## Memory and fidelity (batch-1 decode)", "",
              "| density | achieved | macko eff. density | dense peak GB | sparse peak GB | mem ratio | max logits "
              "rel. err | first %d tokens equal | equal prefix of %d | fidelity |" % (m["check_tokens"],
                                                                                     m["new_tokens"]),
              "|---|---|---|---|---|---|---|---|---|---|"]
        for r in fid:
            L.append("| %.2f | %.4f | %.3f | %.2f | %.2f | %.3fx | %.1e | %s | %d | %s |" % (
                r["density"], r["achieved_density"], r["eff_density"], r["dense_peak"] / GB, r["sparse_peak"] / GB,
                r["mem_ratio"], r["max_rel_err"], equal_note(r), r["tokens_equal_prefix"],
                "ok" if r["fidelity_ok"] else "FAIL"))
        flips = [(r["density"], r["forced_flips"]) for r in fid if r.get("forced_flips")]
        if flips:
            L += ["", "Teacher-forced steps (both runs fed the dense run's tokens) where the sparse argmax differs "
                  "from the dense one: (token, dense top-2 margin, largest |sparse - dense| logit difference at that "
                  "step). Where the margin is below twice that difference, the two correctly rounded computations "
                  "may order the top-2 either way."]
            L += ["- d = %.2f: %s" % (d, ", ".join("(%d, %.4f, %.4f)" % tuple(f) for f in fl)) for d, fl in flips]
    missing = sorted({round(d, 2) for d in m["densities_requested"]} - {round(r["density"], 2) for r in results},
                     reverse=True)
    if missing:
        L += ["", "Not measured (time limit): d = %s." % ", ".join("%.2f" % d for d in missing)]
    byd = {round(r["density"], 2): r for r in results}
    L += ["", "## Targets (issue 16, H100) and the paper's anchors (Llama-2-7B, RTX 4090)", "",
          "| density | check | target | measured | met |", "|---|---|---|---|---|"]
    for d, kind, size, key, op, tgt, what in TARGETS:
        r = byd.get(d)
        x = lookup(r, kind, size) if r else None
        if x is None:
            L.append("| %.2f | %s | %s %.2fx | - | not run |" % (d, what, op, tgt))
            continue
        ok = x[key] <= tgt if op == "<=" else x[key] >= tgt
        L.append("| %.2f | %s | %s %.2fx | %.3fx | %s |" % (d, what, op, tgt, x[key], "yes" if ok else
                                                            "NO (%+.0f%% vs target)" % (100 * (x[key] / tgt - 1))))
    profs = [(r["density"], r.get("profile_dense"), r.get("profile_sparse")) for r in fid if r.get("profile_sparse")]
    if profs:
        L += ["", "## Where the time goes: one batch-1 decode step", ""]
        for d, pd, ps in profs:
            L += [pd or "", "", ps or "", ""]
    if m.get("analysis"):
        L += ["", "## Analysis", ""] + list(m["analysis"])
    if fid:
        L += ["", "## Tokens", "", "Greedy tokens of the first density's dense run (batch 1): `%s`" %
              fid[0]["dense_tokens"]]
    return "\n".join(L) + "\n"


def plot(path, meta, results):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    for r in results:
        if r["decode"]:
            ax[0].plot([x["batch"] for x in r["decode"]], [x["speedup"] for x in r["decode"]], "o-",
                       label="d = %.2f" % r["density"])
        if r["ttft"]:
            ax[1].plot([t["prompt_len"] for t in r["ttft"]], [t["ratio"] for t in r["ttft"]], "s-",
                       label="d = %.2f" % r["density"])
    sizes = (sorted({x["batch"] for r in results for x in r["decode"]}),
             sorted({t["prompt_len"] for r in results for t in r["ttft"]}))
    for a, ticks, xl, yl in ((ax[0], sizes[0], "decode batch (sequences)", "sparse / dense tokens/s"),
                             (ax[1], sizes[1], "prompt tokens", "TTFT sparse / dense")):
        a.axhline(1.0, color="black", lw=0.8)
        a.set_xscale("log", base=2)
        a.set_xticks(ticks)
        a.set_xticklabels([str(t) for t in ticks])
        a.minorticks_off()
        a.set_xlabel(xl)
        a.set_ylabel(yl)
        a.grid(alpha=0.3, which="both")
        if a.get_legend_handles_labels()[0]:
            a.legend()
    ax[0].set_title("decode (CUDA graph): higher is better")
    ax[1].set_title("time to first token: lower is better")
    fig.suptitle("%s, fp16, MackoLinear vs nn.Linear: %s" % (
        "Llama-2-7B-shaped" if meta["preset"] == "7b" else "--preset " + meta["preset"], meta["device"]))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
