/*
 * row.cpp -- one row (shape, density, n): every method goes through the same steps, in the order of the list
 * (cuBLAS, cuSPARSE, macko):
 *   1. copy 0: run into the poisoned output; the first method's result is the reference, spot-checked against a
 *      double-precision host product; every other result is compared with it; one launch is timed (the estimate
 *      that sets the counts of a slow method and leaves slow alternatives out);
 *   2. --flush rotate: the copies of every family's inputs (rotate.cpp) and of each method's own state, and a check
 *      that the last copy of each method gives the checked result;
 *   3. the timing series (timer.cu), one per method;
 *   4. the row's columns from the methods' results.
 */
#include "method.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>

namespace {

/* ||reference - host product|| / ||host product|| on 256 entries of the product: for n = 1 the first 256 rows (all
 * rows when fewer) or 256 random ones, for n > 1 256 random (row, column) pairs; each its own random stream. */
double spot_check(const HostCsr &m, const std::vector<unsigned char> &hb, const std::vector<double> &ref, int n,
                  uint64_t cseed)
{
    const int64_t R = m.rows, C = m.cols;
    auto bval = [&](int64_t i) {
        switch (m.t) {
        case MACKO_R_64F: return reinterpret_cast<const double *>(hb.data())[i];
        case MACKO_R_32F: return (double)reinterpret_cast<const float *>(hb.data())[i];
        default: return bits_value(reinterpret_cast<const uint16_t *>(hb.data())[i], m.t);
        }
    };
    auto product = [&](int64_t r, int64_t j) {
        double acc = 0;
        for (int64_t k = m.row_ptr[r]; k < m.row_ptr[r + 1]; ++k)
            acc += m.value(k) * bval(j * C + m.col[k]);
        return acc;
    };
    std::vector<double> got, want;
    if (n == 1) {
        Rng g(cseed, 5, 0);
        for (int i = 0; i < 256 && i < R; ++i) {
            const int64_t r = R <= 256 ? i : (int64_t)g.below((uint64_t)R);
            got.push_back(ref[(size_t)r]);
            want.push_back(product(r, 0));
        }
    } else {
        Rng g(cseed, 7, (uint64_t)n);
        for (int i = 0; i < 256; ++i) {
            const int64_t r = (int64_t)g.below((uint64_t)R), j = (int64_t)g.below((uint64_t)n);
            got.push_back(ref[(size_t)(j * R + r)]);
            want.push_back(product(r, j));
        }
    }
    return rel_l2(got, want);
}

int family_k(const Rotation &rot, Family f)
{
    return f == Family::Blas ? rot.kb : f == Family::Sparse ? rot.ks : rot.km;
}

/* The best timed method of a family (the first of the fastest), or null. */
const Method *fastest(const std::vector<Method> &ms, Family f)
{
    const Method *best = nullptr;
    for (const Method &m : ms)
        if (m.family == f && std::isfinite(m.us) && (!best || m.us < best->us))
            best = &m;
    return best;
}

struct RowRun {
    Ctx &cx;
    const Config &cfg;
    Row &row;
    const std::string &tag;
    DevBuf &out;
    int64_t count; /* entries of the output */
    double tol;
    std::vector<double> ref;                /* the reference result (copy 0) */
    std::vector<unsigned char> macko_bytes; /* macko's checked result (copy 0), raw bytes */

    void poison() { CUDA_OK(cudaMemsetAsync(out.p, 0xFF, out.bytes, cx.stream)); }

    void macko_failed(Method &m, const std::string &status)
    {
        row.status = status;
        m.ok = m.timed = false;
        fprintf(stderr, "\n*** %s: macko %s ***\n\n", tag.c_str(), row.status.c_str());
    }

    /* A baseline that fails or disagrees stops the run (the driver is broken) unless it is an alternative. */
    void baseline_failed(Method &m, const std::string &why)
    {
        if (!m.alternative)
            die("%s: %s: %s", tag.c_str(), m.name.c_str(), why.c_str());
        m.note = "n/a (" + why + ")";
    }

    /* Step 1 for one method. */
    void check_copy0(Method &m, const HostCsr &mat, const std::vector<unsigned char> &hb, uint64_t cseed)
    {
        size_t bytes = 0;
        std::string why = m.prepare(0, &bytes);
        m.copy_bytes = bytes;
        if (why.empty()) {
            poison();
            why = m.launch(0);
        }
        if (!why.empty()) {
            if (m.family == Family::Macko)
                macko_failed(m, "FAIL " + why);
            else
                baseline_failed(m, why);
            return;
        }
        if (m.family == Family::Macko) {
            const cudaError_t ce = cudaStreamSynchronize(cx.stream);
            if (ce != cudaSuccess)
                die("%s: %s left a CUDA error: %s", tag.c_str(), m.name.c_str(), cudaGetErrorString(ce));
            macko_bytes = raw_bytes(out, cx.stream);
        }
        std::vector<double> y = to_host(out, count, cfg.type, cx.stream);
        if (ref.empty()) {
            ref = std::move(y);
            row.err_cublas_ref = m.err = spot_check(mat, hb, ref, row.n, cseed);
            if (!(m.err <= tol))
                die("%s: %s disagrees with the host reference (rel. err %.3g): the driver is broken", tag.c_str(),
                    m.name.c_str(), m.err);
        } else {
            m.err = rel_l2(y, ref);
            if (m.family == Family::Macko)
                row.err_macko = m.err;
            if (!(m.err <= tol)) {
                if (m.family == Family::Macko)
                    macko_failed(m, strf("FAIL check: rel. err %.3g > %.0e", m.err, tol));
                else
                    baseline_failed(m, strf("wrong: rel. err %.3g", m.err));
                return;
            }
        }
        if (m.family == Family::Sparse)
            row.err_cusparse = std::max(std::isfinite(row.err_cusparse) ? row.err_cusparse : 0.0, m.err);
        m.ok = m.timed = true;
        m.once = once_us(cx.stream, [&](int k) { return m.launch(k).empty(); });
    }

    /* Step 2's check for one method: its last copy gives the checked result (macko: the same bytes). */
    void check_last_copy(Method &m, const Rotation &rot)
    {
        const int last = family_k(rot, m.family) - 1;
        poison();
        const std::string why = m.launch(last);
        if (m.family == Family::Macko) {
            if (!why.empty())
                macko_failed(m, "FAIL " + why + strf(" (copy %d)", last));
            else if (raw_bytes(out, cx.stream) != macko_bytes)
                macko_failed(m, strf("FAIL check: copy %d gives other bytes than copy 0", last));
            return;
        }
        const double e = why.empty() ? rel_l2(to_host(out, count, cfg.type, cx.stream), ref) : INFINITY;
        if (!(e <= tol))
            die("%s: %s on copy %d disagrees with copy 0 (rel. err %.3g%s%s)", tag.c_str(), m.name.c_str(), last, e,
                why.empty() ? "" : "; ", why.c_str());
    }

    /* Step 2. */
    void rotate(std::vector<Method> &ms, Pool &pool, Rotation &rot, size_t x_bytes)
    {
        Method &mk = ms.back();
        size_t sp_per_copy = 0;
        bool sparse = false;
        for (const Method &m : ms)
            if (m.timed && m.family == Family::Sparse) {
                sp_per_copy += round_up(m.copy_bytes, kCopyAlign) + kAllocSlack;
                sparse = true;
            }
        std::string why, macko_fail;
        if (setup_rotation(pool, rot, cx.env->l2, x_bytes, sparse, mk.ok, sp_per_copy, why, macko_fail)) {
            for (Method &m : ms) {
                if (!m.timed || m.family == Family::Macko)
                    continue;
                for (int k = 1; k < family_k(rot, m.family) && rot.on; ++k) {
                    size_t bytes = 0;
                    const std::string w = m.prepare(k, &bytes);
                    if (!w.empty()) {
                        rot.on = false;
                        why = strf("%s on copy %d: %s", m.name.c_str(), k, w.c_str());
                    }
                }
            }
        }
        if (!macko_fail.empty())
            macko_failed(mk, "FAIL " + macko_fail + " (making the copies for --flush rotate)");
        if (rot.on)
            for (Method &m : ms)
                if (m.timed)
                    check_last_copy(m, rot);
        if (rot.on) {
            row.flush = "rotate";
            row.k_blas = rot.kb;
            row.k_sp = rot.ks;
            row.k_macko = mk.ok ? rot.km : 0;
            return;
        }
        rot.kb = rot.ks = rot.km = 0;
        row.flush = "write-fallback";
        if (row.ok())
            row.status = "ok (write flush)";
        fprintf(stderr, "%s: warning: --flush rotate: %s; this row uses the write flush\n", tag.c_str(), why.c_str());
    }

    /* Step 3. */
    void time(std::vector<Method> &ms, const Rotation &rot)
    {
        for (Method &m : ms) {
            if (!m.timed)
                continue;
            const Counts c = counts_for(m.once, cfg.warmup, cfg.iters);
            m.us = cx.timer.median_us(family_k(rot, m.family), c, [&](int k) { return m.launch(k).empty(); });
            m.iters = c.iters;
            if (m.alternative)
                m.note = fmt_num(m.us, "%.1f");
            if (std::isfinite(m.us))
                continue;
            if (m.family != Family::Macko)
                die("%s: %s failed during timing", tag.c_str(), m.name.c_str());
            row.status = "FAIL " + m.launch(0);
        }
    }
};

} // namespace

Row run_row(Ctx &cx, const HostCsr &mat, uint64_t cseed, Pool &pool, Row row, int n, const std::string &tag)
{
    const Config &cfg = *cx.cfg;
    const size_t tsz = (size_t)cfg.vt().size;
    const int64_t R = row.s.rows, C = row.s.cols;
    const auto t_row = std::chrono::steady_clock::now();
    row.n = n;
    row.macko_bytes = row.storage + (int64_t)tsz * (R + C) * n;

    /* x (n = 1) or B (C x n, column-major): uniform in [-1, 1], each its own random stream. */
    const std::vector<unsigned char> hb =
        n == 1 ? random_operand(cseed, 4, 0, C, cfg.type) : random_operand(cseed, 6, (uint64_t)n, C * n, cfg.type);
    DevBuf d_b(hb.size()), d_out((size_t)R * n * tsz);
    CUDA_OK(cudaMemcpyAsync(d_b.p, hb.data(), d_b.bytes, cudaMemcpyHostToDevice, cx.stream));
    Rotation rot(d_b.p); /* x/B copies rot.x[k]; the matrix copies are pool.*[k]; k = 0: the originals */

    RowInputs in;
    in.cx = &cx;
    in.pool = &pool;
    in.rot = &rot;
    in.out = &d_out;
    in.n = n;
    in.R = R;
    in.C = C;
    in.vt = &cfg.vt();
    std::vector<Method> ms = cublas_methods(in);
    if (cfg.cusparse)
        for (Method &m : cusparse_methods(in))
            ms.push_back(std::move(m));
    ms.push_back(macko_method(in)); /* last: rotate() and the checks rely on it */

    RowRun run{cx, cfg, row, tag, d_out, R * n, cfg.vt().tol, {}, {}};
    const bool encoded = row.ok(); /* macko's matrix was encoded and uploaded */
    for (Method &m : ms) {
        if (m.family == Family::Macko && !encoded) {
            fprintf(stderr, "\n*** %s: macko %s ***\n\n", tag.c_str(), row.status.c_str());
            continue;
        }
        run.check_copy0(m, mat, hb, cseed);
    }
    /* Alternatives: at least one must take the problem; those over 10x slower than the fastest are not timed. */
    double best = INFINITY;
    bool any_alt = false;
    for (const Method &m : ms) {
        any_alt = any_alt || m.alternative;
        if (m.alternative && m.ok)
            best = std::min(best, m.once);
    }
    if (any_alt && !std::isfinite(best)) {
        std::string notes;
        for (const Method &m : ms)
            if (m.alternative)
                notes += (notes.empty() ? "" : "; ") + m.name + ": " + m.note;
        die("%s: no cuSPARSE algorithm accepts the problem (%s)", tag.c_str(), notes.c_str());
    }
    for (Method &m : ms)
        if (m.alternative && m.ok && !(m.once <= 10.0 * best)) {
            m.timed = false;
            if (!cfg.check_only)
                m.note = strf("~%.0f (one run; over 10x the fastest, not timed)", m.once);
        }

    if (cfg.rotate && !cfg.check_only)
        run.rotate(ms, pool, rot, d_b.bytes);
    const auto t_time = std::chrono::steady_clock::now();
    if (!cfg.check_only)
        run.time(ms, rot);
    const double time_s = seconds_since(t_time);

    /* Step 4: the row's columns. */
    if (const Method *b = fastest(ms, Family::Blas)) {
        row.cublas_us = b->us;
        row.cublas_variant = b->label;
        row.iters_blas = b->iters;
    }
    if (const Method *s = fastest(ms, Family::Sparse)) {
        row.cusparse_us = s->us;
        row.cusparse_alg = s->label;
        row.iters_sp = s->iters;
    }
    for (const Method &m : ms) {
        switch (m.slot) {
        case Slot::Gemm: row.gemm_us = m.us; break;
        case Slot::Gemv: row.gemv_us = m.us; break;
        case Slot::SpDefault: row.sp_default_us = m.us; break;
        case Slot::SpAlg2: row.sp_alg2_us = m.us; break;
        case Slot::None: break;
        }
        if (m.family == Family::Macko && std::isfinite(m.us)) {
            row.macko_us = m.us;
            row.iters_macko = m.iters;
        }
        if (m.alternative)
            row.cusparse_algs += strf("%s%s=%s", row.cusparse_algs.empty() ? "" : " ", m.label.c_str(),
                                      m.note.empty() ? "ok" : m.note.c_str());
    }
    CUDA_OK(cudaStreamSynchronize(cx.stream));

    fprintf(stderr,
            "%s: macko %s us (%s cuBLAS %s %s us, %s cuSPARSE %s %s us), rel. err %s; timing %.1f s, row %.1f s\n",
            tag.c_str(), fmt_num(row.macko_us, "%.1f").c_str(), fmt_num(row.vs_cublas(), "%.2fx").c_str(),
            row.cublas_variant.c_str(), fmt_num(row.cublas_us, "%.1f").c_str(),
            fmt_num(row.vs_cusparse(), "%.2fx").c_str(), row.cusparse_alg.c_str(),
            fmt_num(row.cusparse_us, "%.1f").c_str(), fmt_num(row.err_macko, "%.1e").c_str(), time_s,
            seconds_since(t_row));
    return row;
}
