#pragma once
// A log density given as a generic lambda, `f(Type<T>{}, q)` of d coordinates, as an
// AutodiffModel: the unit tests of reverse mode and of the functions written on its number
// types (test_reverse.cpp, test_linalg.cpp) differentiate it. Host only (a host lambda).

#include "hmc/core/types.hpp"
#include "hmc/model/autodiff.hpp"

#include <string>
#include <vector>

namespace hmc::autodiff_test {

template <class T>
struct Type {
  using type = T;
};

template <class F>
struct Density : model::AutodiffModel<Density<F> > {
  int d = 0;
  F f;
  Density(int dim, F fn) : d(dim), f(fn) {}
  KOKKOS_INLINE_FUNCTION int dim() const { return d; }
  template <class T, class Q>
  KOKKOS_INLINE_FUNCTION T log_density_t(const Q& q) const {
    return f(Type<T>{}, q);
  }
  int num_params() const { return d; }
  std::vector<std::string> parameter_names() const { return std::vector<std::string>(d, "x"); }
  KOKKOS_INLINE_FUNCTION void constrain(const Row& q, const Row& out) const {
    for (int i = 0; i < d; ++i) out(i) = q(i);
  }
};
template <class F>
Density<F> density(int d, F f) {
  return Density<F>(d, f);
}

}  // namespace hmc::autodiff_test

/// The number type T of a Type<T> tag: `using T = T_OF(tag);` in a generic lambda.
#define T_OF(tag) typename decltype(tag)::type
