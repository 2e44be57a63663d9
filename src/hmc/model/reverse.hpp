#pragma once
/// \file
/// \brief Reverse-mode automatic differentiation: a recording (tape) of one log density's
/// computation in memory the caller owns, and its backward pass.
///
/// `Var<S>` is a value (S = double: one particle; S = Pack: a block of kLanes particles that
/// run the same control flow) and the index of the node that made it. Every operation on
/// Vars appends one node to the tape with one edge per operand that is not a constant: the
/// operand's node and the partial derivative of the result with respect to it, computed
/// when the node is recorded. A whole density of hmc/distributions (a `_sum` over a data View, a
/// GLM over a design matrix) is one node whose edges carry its analytic partials. The
/// backward pass walks the nodes once in reverse, `adj[parent] += partial * adj[node]`, so
/// a gradient costs a small constant times one evaluation whatever the dimension.
///
/// Memory: a tape holds at most `nodes` nodes and `edges` edges, in storage laid out by
/// TapeLayout: adjoints and partials as S, parent indices and node ends as doubles (exact
/// below 2^53). The storage is one particle's scratch row (double, strided: coalesced on a
/// GPU) or one thread's block of Packs (lanes); nothing is allocated while recording. A
/// tape that runs out of room stops recording and says so (`overflow`): the caller then
/// computes the gradient another way (hmc/model/autodiff.hpp: forward mode). A tape with
/// no storage counts nodes and edges (TapeLayout::measure, when a model is prepared).
///
/// Constants (`Var<S>(1.0)`, data) have no node (id < 0) and record nothing.

#include "hmc/core/kokkos_shim.hpp"
#include "hmc/core/pack.hpp"

#include <type_traits>

namespace hmc {
namespace ad {

/// \brief Sizes of a tape: its capacity and the place of each of its arrays in its storage.
struct TapeLayout {
  int nodes = 0;  ///< capacity in nodes (the inputs included)
  int edges = 0;  ///< capacity in edges

  /// Storage in doubles for S = double: adjoints (nodes + 1, the last a sink for the edges of
  /// constant operands of a vector node), partials, parents, node ends.
  KOKKOS_INLINE_FUNCTION long doubles() const { return 2L * nodes + 2L * edges + 1; }
  /// Storage in Packs for S = Pack: nodes + 1 adjoints and edges partials, then the
  /// indices, kLanes per Pack.
  KOKKOS_INLINE_FUNCTION long packs() const {
    const long values = static_cast<long>(nodes) + 1 + edges;
    return values + (static_cast<long>(nodes) + edges + kLanes - 1) / kLanes;
  }
  /// A capacity with room above a measured count (control flow that depends on q may record
  /// somewhat more elsewhere; beyond that the caller falls back).
  static TapeLayout with_room(int nodes, int edges) {
    return TapeLayout{nodes + nodes / 4 + 16, edges + edges / 4 + 16};
  }
};

/// \brief Where a tape keeps its numbers: `value(k)`, the k-th S, and `index(k)`, the k-th
/// double of the same storage.
template <class S>
struct TapeStorage;

template <>
struct TapeStorage<double> {
  double* data = nullptr;
  std::ptrdiff_t stride = 1;
  KOKKOS_INLINE_FUNCTION double& value(long k) const { return data[k * stride]; }
  KOKKOS_INLINE_FUNCTION double& index(long k) const { return data[k * stride]; }
  KOKKOS_INLINE_FUNCTION std::ptrdiff_t value_stride() const { return stride; }
};

template <>
struct TapeStorage<Pack> {
  Pack* data = nullptr;
  HMC_PACK_FUNCTION Pack& value(long k) const { return data[k]; }
  HMC_PACK_FUNCTION double& index(long k) const { return data[k / kLanes][static_cast<int>(k % kLanes)]; }
  HMC_PACK_FUNCTION std::ptrdiff_t value_stride() const { return 1; }
};

/// \brief The recording of one evaluation.
template <class S>
struct Tape {
  TapeStorage<S> store;
  int max_nodes = 0, max_edges = 0;
  int nodes = 0, edges = 0;
  bool overflow = false;
  long partial0 = 0, parent0 = 0, end0 = 0;  ///< offsets of the arrays (value units, then doubles)

  Tape() = default;
  /// A tape in `store` (no storage: a tape that only counts) for `inputs` input nodes.
  KOKKOS_INLINE_FUNCTION Tape(const TapeStorage<S>& s, const TapeLayout& layout, int inputs)
      : store(s), max_nodes(layout.nodes), max_edges(layout.edges), nodes(inputs), edges(0) {
    const long values = static_cast<long>(max_nodes) + 1;  // adjoints, the sink last
    partial0 = values;
    // Index offsets in doubles: after the S-valued arrays.
    const long doubles_per_value = static_cast<long>(sizeof(S) / sizeof(double));
    parent0 = (values + max_edges) * doubles_per_value;
    end0 = parent0 + max_edges;
    overflow = inputs > max_nodes;
  }

  KOKKOS_INLINE_FUNCTION bool counting() const { return store.data == nullptr; }
  KOKKOS_INLINE_FUNCTION int sink() const { return max_nodes; }

  /// Starts a node of `n` edges; its id, or -1 when the tape is full (`overflow`). The
  /// edges are edges()-n .. edges()-1 after the call.
  KOKKOS_INLINE_FUNCTION int begin_node(int n) {
    if (overflow || nodes >= max_nodes || n > max_edges - edges) {
      overflow = true;
      return -1;
    }
    const int k = nodes++;
    edges += n;
    if (!counting()) store.index(end0 + k) = static_cast<double>(edges);
    return k;
  }
  /// Edge e: from node `parent` (a constant operand: the sink), with `partial`.
  KOKKOS_INLINE_FUNCTION void set_edge(int e, int parent, const S& partial) const {
    if (counting()) return;
    store.index(parent0 + e) = static_cast<double>(parent < 0 ? max_nodes : parent);
    store.value(partial0 + e) = partial;
  }
  KOKKOS_INLINE_FUNCTION S& partial(int e) const { return store.value(partial0 + e); }
  KOKKOS_INLINE_FUNCTION S& adjoint(int k) const { return store.value(k); }

  /// The backward pass from node `result`: afterwards adjoint(i) = ∂result/∂(input i).
  /// `inputs` nodes (0 .. inputs-1) have no edges.
  KOKKOS_INLINE_FUNCTION void backward(int result, int inputs) const {
    for (int k = 0; k <= max_nodes; ++k) {
      if (k == nodes) k = max_nodes;  // the used nodes and the sink
      store.value(k) = S(0.0);
    }
    store.value(result) = S(1.0);
    int e_end = edges;
    for (int k = nodes - 1; k >= inputs; --k) {
      const int e_begin = k > inputs ? static_cast<int>(store.index(end0 + k - 1)) : 0;
      if (k <= result) {
        const S a = store.value(k);
        for (int e = e_begin; e < e_end; ++e) {
          store.value(static_cast<long>(store.index(parent0 + e))) += store.value(partial0 + e) * a;
        }
      }
      e_end = e_begin;
    }
  }
};

/// \brief A value on a tape: `v` and the node that made it (id < 0: a constant).
template <class S>
struct Var {
  using scalar = S;
  S v;
  int id;
  Tape<S>* tape;

  KOKKOS_INLINE_FUNCTION Var() : v(0.0), id(-1), tape(nullptr) {}
  /// A constant: implicit, so that `T x = 1.0;` works for every T.
  KOKKOS_INLINE_FUNCTION Var(double c) : v(c), id(-1), tape(nullptr) {}  // NOLINT(google-explicit-constructor)
  template <class U = S, std::enable_if_t<!std::is_same_v<U, double>, int> = 0>
  KOKKOS_INLINE_FUNCTION Var(const S& c) : v(c), id(-1), tape(nullptr) {}  // NOLINT(google-explicit-constructor)
  KOKKOS_INLINE_FUNCTION Var(const S& value, int node, Tape<S>* t) : v(value), id(node), tape(t) {}

  KOKKOS_INLINE_FUNCTION Var& operator+=(const Var& o);
  KOKKOS_INLINE_FUNCTION Var& operator-=(const Var& o);
  KOKKOS_INLINE_FUNCTION Var& operator*=(const Var& o);
  KOKKOS_INLINE_FUNCTION Var& operator/=(const Var& o);
};

template <class T>
struct is_var : std::false_type {};
template <class S>
struct is_var<Var<S>> : std::true_type {};
template <class T>
inline constexpr bool is_var_v = is_var<std::decay_t<T>>::value;

/// The identity type: keeps a parameter out of template argument deduction.
template <class T>
struct same {
  using type = T;
};
template <class T>
using same_t = typename same<T>::type;

// ---- recording -------------------------------------------------------------------------

/// A node of one operand: value v, ∂v/∂a = da.
template <class S>
KOKKOS_INLINE_FUNCTION Var<S> record(const S& v, const Var<S>& a, const S& da) {
  if (a.id < 0) return Var<S>(v, -1, nullptr);
  const int k = a.tape->begin_node(1);
  if (k < 0) return Var<S>(v, -1, nullptr);
  a.tape->set_edge(a.tape->edges - 1, a.id, da);
  return Var<S>(v, k, a.tape);
}

/// A node of two operands.
template <class S>
KOKKOS_INLINE_FUNCTION Var<S> record(const S& v, const Var<S>& a, const S& da, const Var<S>& b, const S& db) {
  if (a.id < 0) return record(v, b, db);
  if (b.id < 0) return record(v, a, da);
  Tape<S>* t = a.tape;
  const int k = t->begin_node(2);
  if (k < 0) return Var<S>(v, -1, nullptr);
  t->set_edge(t->edges - 2, a.id, da);
  t->set_edge(t->edges - 1, b.id, db);
  return Var<S>(v, k, t);
}

/// A node of n operands given by their ids (< 0: constant, no edge) and partials.
template <class S>
KOKKOS_INLINE_FUNCTION Var<S> record_n(const S& v, Tape<S>* t, int n, const int* ids, const S* partials) {
  if (t == nullptr) return Var<S>(v, -1, nullptr);
  int used = 0;
  for (int j = 0; j < n; ++j) used += ids[j] >= 0 ? 1 : 0;
  if (used == 0) return Var<S>(v, -1, nullptr);
  const int k = t->begin_node(used);
  if (k < 0) return Var<S>(v, -1, nullptr);
  int e = t->edges - used;
  for (int j = 0; j < n; ++j) {
    if (ids[j] >= 0) t->set_edge(e++, ids[j], partials[j]);
  }
  return Var<S>(v, k, t);
}

// ---- arithmetic ------------------------------------------------------------------------

template <class S>
KOKKOS_INLINE_FUNCTION Var<S> operator+(const Var<S>& a) {
  return a;
}
template <class S>
KOKKOS_INLINE_FUNCTION Var<S> operator-(const Var<S>& a) {
  return record(S(-a.v), a, S(-1.0));
}

template <class S>
KOKKOS_INLINE_FUNCTION Var<S> operator+(const Var<S>& a, const Var<S>& b) {
  return record(S(a.v + b.v), a, S(1.0), b, S(1.0));
}
template <class S>
KOKKOS_INLINE_FUNCTION Var<S> operator-(const Var<S>& a, const Var<S>& b) {
  return record(S(a.v - b.v), a, S(1.0), b, S(-1.0));
}
template <class S>
KOKKOS_INLINE_FUNCTION Var<S> operator*(const Var<S>& a, const Var<S>& b) {
  return record(S(a.v * b.v), a, b.v, b, a.v);
}
template <class S>
KOKKOS_INLINE_FUNCTION Var<S> operator/(const Var<S>& a, const Var<S>& b) {
  const S inv = S(1.0) / b.v;
  const S r = a.v * inv;
  return record(r, a, inv, b, S(-r * inv));
}

// A Var with a constant (a double, or an S): one edge.
template <class S>
KOKKOS_INLINE_FUNCTION Var<S> operator+(const Var<S>& a, const same_t<S>& c) {
  return record(S(a.v + c), a, S(1.0));
}
template <class S>
KOKKOS_INLINE_FUNCTION Var<S> operator+(const same_t<S>& c, const Var<S>& a) {
  return record(S(c + a.v), a, S(1.0));
}
template <class S>
KOKKOS_INLINE_FUNCTION Var<S> operator-(const Var<S>& a, const same_t<S>& c) {
  return record(S(a.v - c), a, S(1.0));
}
template <class S>
KOKKOS_INLINE_FUNCTION Var<S> operator-(const same_t<S>& c, const Var<S>& a) {
  return record(S(c - a.v), a, S(-1.0));
}
template <class S>
KOKKOS_INLINE_FUNCTION Var<S> operator*(const Var<S>& a, const same_t<S>& c) {
  return record(S(a.v * c), a, S(c));
}
template <class S>
KOKKOS_INLINE_FUNCTION Var<S> operator*(const same_t<S>& c, const Var<S>& a) {
  return record(S(c * a.v), a, S(c));
}
template <class S>
KOKKOS_INLINE_FUNCTION Var<S> operator/(const Var<S>& a, const same_t<S>& c) {
  const S inv = S(1.0) / S(c);
  return record(S(a.v * inv), a, inv);
}
template <class S>
KOKKOS_INLINE_FUNCTION Var<S> operator/(const same_t<S>& c, const Var<S>& a) {
  const S inv = S(1.0) / a.v;
  const S r = c * inv;
  return record(r, a, S(-r * inv));
}

template <class S>
KOKKOS_INLINE_FUNCTION Var<S>& Var<S>::operator+=(const Var<S>& o) {
  return *this = *this + o;
}
template <class S>
KOKKOS_INLINE_FUNCTION Var<S>& Var<S>::operator-=(const Var<S>& o) {
  return *this = *this - o;
}
template <class S>
KOKKOS_INLINE_FUNCTION Var<S>& Var<S>::operator*=(const Var<S>& o) {
  return *this = *this * o;
}
template <class S>
KOKKOS_INLINE_FUNCTION Var<S>& Var<S>::operator/=(const Var<S>& o) {
  return *this = *this / o;
}

// ---- comparisons: values only, one particle (a Pack has no single truth value) -------------

#define HMC_VAR_COMPARISON(OP)                                                                               \
  KOKKOS_INLINE_FUNCTION bool operator OP(const Var<double>& a, const Var<double>& b) { return a.v OP b.v; } \
  KOKKOS_INLINE_FUNCTION bool operator OP(const Var<double>& a, double b) { return a.v OP b; }               \
  KOKKOS_INLINE_FUNCTION bool operator OP(double a, const Var<double>& b) { return a OP b.v; }
HMC_VAR_COMPARISON(==)
HMC_VAR_COMPARISON(!=)
HMC_VAR_COMPARISON(<)
HMC_VAR_COMPARISON(<=)
HMC_VAR_COMPARISON(>)
HMC_VAR_COMPARISON(>=)
#undef HMC_VAR_COMPARISON

// ---- lane helpers ------------------------------------------------------------------------

/// f applied lane by lane (a Pack) or once (a double).
template <class F>
KOKKOS_INLINE_FUNCTION double lanewise(double x, F f) {
  return f(x);
}
template <class F>
HMC_PACK_FUNCTION Pack lanewise(const Pack& x, F f) {
  Pack r;
  for (int l = 0; l < kLanes; ++l) r[l] = f(x[l]);
  return r;
}

/// f of two arguments, lane by lane.
template <class F>
KOKKOS_INLINE_FUNCTION double lanewise2(double x, double y, F f) {
  return f(x, y);
}
template <class F>
HMC_PACK_FUNCTION Pack lanewise2(const Pack& x, const Pack& y, F f) {
  Pack r;
  for (int l = 0; l < kLanes; ++l) r[l] = f(x[l], y[l]);
  return r;
}

// ---- math functions (the value types' own are hmc::math's) ---------------------------------

template <class S>
KOKKOS_INLINE_FUNCTION Var<S> exp(const Var<S>& x) {
  const S e = math::exp(x.v);
  return record(e, x, e);
}
template <class S>
KOKKOS_INLINE_FUNCTION Var<S> log(const Var<S>& x) {
  return record(S(math::log(x.v)), x, S(S(1.0) / x.v));
}
template <class S>
KOKKOS_INLINE_FUNCTION Var<S> log1p(const Var<S>& x) {
  return record(S(math::log1p(x.v)), x, S(S(1.0) / (S(1.0) + x.v)));
}
template <class S>
KOKKOS_INLINE_FUNCTION Var<S> expm1(const Var<S>& x) {
  return record(S(math::expm1(x.v)), x, S(math::exp(x.v)));
}
template <class S>
KOKKOS_INLINE_FUNCTION Var<S> sqrt(const Var<S>& x) {
  const S s = math::sqrt(x.v);
  return record(s, x, S(S(0.5) / s));
}
template <class S>
KOKKOS_INLINE_FUNCTION Var<S> sin(const Var<S>& x) {
  return record(lanewise(x.v, [](double y) { return math::sin(y); }), x,
                lanewise(x.v, [](double y) { return math::cos(y); }));
}
template <class S>
KOKKOS_INLINE_FUNCTION Var<S> cos(const Var<S>& x) {
  return record(lanewise(x.v, [](double y) { return math::cos(y); }), x,
                lanewise(x.v, [](double y) { return -math::sin(y); }));
}
/// |x|; at x = 0 the derivative from the right (1), as hmc::Dual.
template <class S>
KOKKOS_INLINE_FUNCTION Var<S> fabs(const Var<S>& x) {
  return record(S(math::fabs(x.v)), x, lanewise(x.v, [](double y) { return y < 0.0 ? -1.0 : 1.0; }));
}
/// x^p for a constant p; d/dx = p x^(p-1) (0 for p = 0).
template <class S>
KOKKOS_INLINE_FUNCTION Var<S> pow(const Var<S>& x, double p) {
  if (p == 0.0) return Var<S>(1.0);
  return record(lanewise(x.v, [p](double y) { return math::pow(y, p); }), x,
                lanewise(x.v, [p](double y) { return p * math::pow(y, p - 1.0); }));
}
/// a^y for a constant a > 0.
template <class S>
KOKKOS_INLINE_FUNCTION Var<S> pow(double a, const Var<S>& y) {
  const S v = lanewise(y.v, [a](double t) { return math::pow(a, t); });
  return record(v, y, S(v * math::log(a)));
}
/// x^y, both varying, x > 0.
template <class S>
KOKKOS_INLINE_FUNCTION Var<S> pow(const Var<S>& x, const Var<S>& y) {
  const S v = lanewise2(x.v, y.v, [](double a, double b) { return math::pow(a, b); });
  const S dx = lanewise2(x.v, y.v, [](double a, double b) { return b * math::pow(a, b - 1.0); });
  return record(v, x, dx, y, S(v * math::log(x.v)));
}
/// log σ(x); d/dx = σ(-x).
template <class S>
KOKKOS_INLINE_FUNCTION Var<S> log_sigmoid(const Var<S>& x) {
  return record(S(math::log_sigmoid(x.v)), x, S(math::sigmoid(S(-x.v))));
}
/// σ(x); d/dx = σ(x) σ(-x).
template <class S>
KOKKOS_INLINE_FUNCTION Var<S> sigmoid(const Var<S>& x) {
  const S s = math::sigmoid(x.v);
  return record(s, x, S(s * math::sigmoid(S(-x.v))));
}

KOKKOS_INLINE_FUNCTION bool isfinite(const Var<double>& x) { return math::isfinite(x.v); }
KOKKOS_INLINE_FUNCTION bool isnan(const Var<double>& x) { return math::isnan(x.v); }

}  // namespace ad

using ad::Var;

/// \brief The value of a Var (dropping its node).
template <class S>
KOKKOS_INLINE_FUNCTION S value_of(const ad::Var<S>& x) {
  return x.v;
}

namespace math {
// `math::exp(x)` for x a Var too (hmc/model/dual.hpp has the double and Dual ones).
using ad::cos;
using ad::exp;
using ad::expm1;
using ad::fabs;
using ad::isfinite;
using ad::isnan;
using ad::log;
using ad::log1p;
using ad::log_sigmoid;
using ad::pow;
using ad::sigmoid;
using ad::sin;
using ad::sqrt;
}  // namespace math

}  // namespace hmc
