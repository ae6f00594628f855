/*
 * methods_macko.cpp -- the method under test: macko_Hspmv / macko_Sspmv (n = 1) or macko_Hspmm / macko_Sspmm
 * (column-major B and C, ld = cols / rows), alpha = 1, beta = 0, on copy k = pool.macko[k] and rot.x[k].
 */
#include "method.h"

Method macko_method(const RowInputs &in)
{
    const RowInputs *p = &in;
    Method m;
    m.name = in.n == 1 ? (in.fp32 ? "macko_Sspmv" : "macko_Hspmv") : (in.fp32 ? "macko_Sspmm" : "macko_Hspmm");
    m.label = m.name;
    m.family = Family::Macko;
    /* The copies are the pool's (made by setup_rotation); nothing per copy here. */
    m.prepare = [](int, size_t *bytes) {
        *bytes = 0;
        return std::string();
    };
    m.launch = [p, name = m.name](int k) {
        const macko_handle_t h = p->cx->macko;
        const macko_operation_t op = MACKO_OPERATION_NON_TRANSPOSE;
        const macko_mat_t A = p->pool->macko[(size_t)k];
        const void *x = p->rot->x[(size_t)k];
        macko_status_t st;
        if (p->n == 1 && p->fp32)
            st = macko_Sspmv(h, op, &p->alpha, A, static_cast<const float *>(x), 1, &p->beta, p->out->as<float>(), 1);
        else if (p->n == 1)
            st = macko_Hspmv(h, op, &p->alpha, A, static_cast<const macko_half *>(x), 1, &p->beta,
                             p->out->as<macko_half>(), 1);
        else if (p->fp32)
            st = macko_Sspmm(h, op, p->n, &p->alpha, A, static_cast<const float *>(x), p->C, &p->beta,
                             p->out->as<float>(), p->R);
        else
            st = macko_Hspmm(h, op, p->n, &p->alpha, A, static_cast<const macko_half *>(x), p->C, &p->beta,
                             p->out->as<macko_half>(), p->R);
        return st == MACKO_STATUS_SUCCESS ? std::string() : macko_error(name.c_str(), st);
    };
    return m;
}
