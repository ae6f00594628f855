/* The generic bad-argument walker (after rocSPARSE's clients/include/auto_testing_bad_arg.hpp): a valid call is
 * written once as its arguments, each with the wrong values it can take (NULL pointers, misaligned arrays, bad enums,
 * negative or too small sizes and strides, matrices of the wrong type, place or kind), and walk() puts every wrong
 * value in turn into the otherwise valid call. Each such call must fail with that value's status at that argument's
 * 1-based position, with a message "routine: argument N: ..." that names the argument, and leave the outputs as they
 * were (the caller's `untouched` check). refused() makes the same checks for a call the test writes out itself (two
 * bad arguments at once: the first one wins). */
#pragma once

#include "macko.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace ba {

/* A wrong value of one argument: the status it must give, and how the failure report names it. */
template <class T> struct Wrong {
    T value;
    macko_status_t status;
    std::string what;
};

/* One argument of the valid call. */
template <class T> struct Arg {
    const char *name; /* as the messages name it */
    T valid;
    std::vector<Wrong<T>> wrong;
};

constexpr macko_status_t kInvalid = MACKO_STATUS_INVALID_VALUE;

inline Arg<macko_handle_t> handle(macko_handle_t h) { return {"handle", h, {{nullptr, kInvalid, "NULL"}}}; }

/* Held as int: a value outside an enumeration's range may not be stored in an object of its type (C++; UBSan's enum
 * check reports the load), so it becomes a macko_operation_t only in the call. */
inline Arg<int> op(macko_operation_t valid)
{
    return {"op", (int)valid, {{2, kInvalid, "2"}, {-1, kInvalid, "-1"}, {7, kInvalid, "7"}}};
}

/* A scalar passed by pointer (alpha, beta; float, double or void): only NULL is wrong. */
template <class S> Arg<const S *> scalar(const char *name, const S *valid)
{
    return {name, valid, {{nullptr, kInvalid, "NULL"}}};
}

/* A type argument of the generic routines (held as int, as op): values that are no macko_datatype_t
 * (INVALID_VALUE) and types that no supported combination allows there (NOT_SUPPORTED). */
inline Arg<int> type_arg(const char *name, macko_datatype_t valid, std::vector<macko_datatype_t> unsupported)
{
    Arg<int> a{name, (int)valid, {{3, kInvalid, "3"}, {-1, kInvalid, "-1"}}};
    for (macko_datatype_t t : unsupported)
        a.wrong.push_back({(int)t, MACKO_STATUS_NOT_SUPPORTED, "type " + std::to_string((int)t)});
    return a;
}

/* An array of elements of type E: NULL and an address that is not a multiple of the element size are wrong. */
template <class P> Arg<P> array(const char *name, P valid)
{
    using Byte = typename std::conditional<std::is_const<typename std::remove_pointer<P>::type>::value, const char,
                                           char>::type;
    return {name, valid, {{nullptr, kInvalid, "NULL"}, {reinterpret_cast<P>(reinterpret_cast<Byte *>(valid) + 1),
                                                        kInvalid, "misaligned"}}};
}

/* A size, increment, stride or leading dimension with the wrong values the routine's rules give. */
inline Arg<int64_t> size(const char *name, int64_t valid, std::vector<int64_t> wrong)
{
    Arg<int64_t> a{name, valid, {}};
    for (int64_t v : wrong)
        a.wrong.push_back({v, kInvalid, std::to_string(v)});
    return a;
}

/* The matrix A of a compute routine: NULL, of the other value type (none for the generic routines, which take any),
 * on another device (INVALID_VALUE), without a device copy (NOT_INITIALIZED). */
struct Matrices {
    macko_mat_t good = nullptr, other_type = nullptr, elsewhere = nullptr, host_only = nullptr;
};
inline Arg<macko_mat_t> matrix(const Matrices &m)
{
    Arg<macko_mat_t> a{"A",
                       m.good,
                       {{nullptr, kInvalid, "NULL"},
                        {m.elsewhere, kInvalid, "on another device"},
                        {m.host_only, MACKO_STATUS_NOT_INITIALIZED, "not on the device"}}};
    if (m.other_type != nullptr)
        a.wrong.insert(a.wrong.begin() + 1, {m.other_type, kInvalid, "of the other precision"});
    return a;
}

/* What every refused call must satisfy besides status and position. */
struct Rules {
    std::string routine;                                  /* the name the message starts with */
    std::function<void(const std::string &what)> untouched; /* the outputs are as before the call */
};

/* got must be status st at position pos (message "routine: argument pos: ..." naming arg, when pos > 0). */
inline void refused(const Rules &r, macko_status_t got, macko_status_t st, int pos, const char *arg,
                    const std::string &what)
{
    const std::string msg = macko_get_last_error_message();
    EXPECT_EQ(got, st) << what << ": " << msg;
    EXPECT_EQ(macko_get_last_error_position(), pos) << what << ": " << msg;
    if (pos > 0) {
        const std::string head = r.routine + ": argument " + std::to_string(pos) + ": ";
        EXPECT_EQ(msg.compare(0, head.size(), head), 0) << what << ": " << msg;
        EXPECT_NE(msg.find(arg, head.size()), std::string::npos) << what << ": the message names no " << arg << ": "
                                                                  << msg;
    }
    if (r.untouched)
        r.untouched(what);
}

namespace detail {
template <size_t I, class... P, class... T>
void walk_arg(const Rules &r, macko_status_t (*f)(P...), const std::tuple<Arg<T>...> &args)
{
    const auto &a = std::get<I>(args);
    for (const auto &w : a.wrong) {
        std::tuple<T...> values = std::apply([](const Arg<T> &...x) { return std::tuple<T...>(x.valid...); }, args);
        std::get<I>(values) = w.value;
        const macko_status_t got = std::apply([f](const T &...v) { return f(static_cast<P>(v)...); }, values);
        refused(r, got, w.status, (int)I + 1, a.name, std::string(a.name) + " " + w.what);
    }
}

template <class... P, class... T, size_t... I>
void walk(const Rules &r, macko_status_t (*f)(P...), const std::tuple<Arg<T>...> &args, std::index_sequence<I...>)
{
    (walk_arg<I>(r, f, args), ...);
}
} // namespace detail

/* Every wrong value of every argument, one at a time, in signature order. f is the routine; each argument converts to
 * its parameter's type. */
template <class... P, class... T> void walk(const Rules &r, macko_status_t (*f)(P...), const Arg<T> &...args)
{
    static_assert(sizeof...(P) == sizeof...(T), "one Arg per parameter");
    detail::walk(r, f, std::tuple<Arg<T>...>(args...), std::index_sequence_for<T...>{});
}

} // namespace ba
