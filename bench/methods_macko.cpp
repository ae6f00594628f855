/*
 * methods_macko.cpp -- the method under test: macko_Hspmv / _Sspmv / _Dspmv (n = 1) or macko_Hspmm / _Sspmm / _Dspmm
 * (column-major B and C, ld = cols / rows); bf16 through the generic macko_spmv_ex / macko_spmm_ex (16BF A, x and y,
 * compute 32F); alpha = 1, beta = 0, on copy k = pool.macko[k] and rot.x[k].
 */
#include "method.h"

Method macko_method(const RowInputs &in)
{
    const RowInputs *p = &in;
    const macko_datatype_t t = in.vt->type;
    Method m;
    if (t == MACKO_R_16BF)
        m.name = in.n == 1 ? "macko_spmv_ex" : "macko_spmm_ex";
    else
        m.name = strf("macko_%c%s", in.vt->letter, in.n == 1 ? "spmv" : "spmm");
    m.label = m.name;
    m.family = Family::Macko;
    /* The copies are the pool's (made by setup_rotation); nothing per copy here. */
    m.prepare = [](int, size_t *bytes) {
        *bytes = 0;
        return std::string();
    };
    m.launch = [p, t, name = m.name](int k) {
        const macko_handle_t h = p->cx->macko;
        const macko_operation_t op = MACKO_OPERATION_NON_TRANSPOSE;
        const macko_mat_t A = p->pool->macko[(size_t)k];
        const void *x = p->rot->x[(size_t)k];
        const bool v = p->n == 1;
        macko_status_t st;
        switch (t) {
        case MACKO_R_32F:
            st = v ? macko_Sspmv(h, op, &p->alpha, A, static_cast<const float *>(x), 1, &p->beta, p->out->as<float>(),
                                 1)
                   : macko_Sspmm(h, op, p->n, &p->alpha, A, static_cast<const float *>(x), p->C, &p->beta,
                                 p->out->as<float>(), p->R);
            break;
        case MACKO_R_64F:
            st = v ? macko_Dspmv(h, op, &p->alpha_d, A, static_cast<const double *>(x), 1, &p->beta_d,
                                 p->out->as<double>(), 1)
                   : macko_Dspmm(h, op, p->n, &p->alpha_d, A, static_cast<const double *>(x), p->C, &p->beta_d,
                                 p->out->as<double>(), p->R);
            break;
        case MACKO_R_16BF:
            st = v ? macko_spmv_ex(h, op, &p->alpha, A, x, t, 1, &p->beta, p->out->p, t, 1, MACKO_R_32F)
                   : macko_spmm_ex(h, op, p->n, &p->alpha, A, x, t, p->C, &p->beta, p->out->p, t, p->R, MACKO_R_32F);
            break;
        default:
            st = v ? macko_Hspmv(h, op, &p->alpha, A, static_cast<const macko_half *>(x), 1, &p->beta,
                                 p->out->as<macko_half>(), 1)
                   : macko_Hspmm(h, op, p->n, &p->alpha, A, static_cast<const macko_half *>(x), p->C, &p->beta,
                                 p->out->as<macko_half>(), p->R);
        }
        return st == MACKO_STATUS_SUCCESS ? std::string() : macko_error(name.c_str(), st);
    };
    return m;
}
