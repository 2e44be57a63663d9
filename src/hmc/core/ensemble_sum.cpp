#include "hmc/core/ensemble_sum.hpp"

#include <algorithm>
#include <cmath>

namespace hmc {

Allreduce no_allreduce() {
  return Allreduce{[](double*, int) {}, [](long long*, int) {}};
}

std::vector<double> reproducible_column_sums(const StateView& values, int rows, std::int64_t global_rows,
                                             const Allreduce& allreduce) {
  return ReproducibleSums(allreduce)(values, rows, global_rows);
}

void ReproducibleSums::reserve(int cols) {
  if (static_cast<int>(maxima_.extent(0)) >= cols) return;
  maxima_ = Kokkos::View<double*>("hmc::reduce_max", cols);
  scale_ = Kokkos::View<double*>("hmc::reduce_scale", cols);
  sums_ = Kokkos::View<long long*>("hmc::reduce_sum", cols);
  maxima_h_ = Kokkos::create_mirror_view(maxima_);
  scale_h_ = Kokkos::create_mirror_view(scale_);
  sums_h_ = Kokkos::create_mirror_view(sums_);
}

std::vector<double> ReproducibleSums::operator()(const StateView& values, int rows, std::int64_t global_rows) {
  const int cols = static_cast<int>(values.extent(1));
  reserve(cols);
  const auto maxima = maxima_;
  const auto scale_d = scale_;
  const auto sums = sums_;
  const Allreduce& allreduce = allreduce_;
  using Team = Kokkos::TeamPolicy<ExecSpace>;
  using Member = Team::member_type;

  // 1. Largest magnitude per column: a max is exact whatever the order.
  Kokkos::parallel_for(
      "hmc::column_max", Team(cols, Kokkos::AUTO), KOKKOS_LAMBDA(const Member& team) {
        const int c = team.league_rank();
        double m = 0.0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, rows),
            [&](const int i, double& acc) {
              const double a = math::fabs(values(i, c));
              acc = (math::isfinite(a) && a > acc) ? a : acc;  // non-finite values are left out
            },
            Kokkos::Max<double>(m));
        Kokkos::single(Kokkos::PerTeam(team), [&]() { maxima(c) = m; });
      });
  Kokkos::deep_copy(maxima_h_, maxima);
  const auto& max_h = maxima_h_;
  std::vector<double> global_max(max_h.data(), max_h.data() + cols);
  allreduce.max(global_max.data(), cols);

  // 2. Scale so that every |x| * scale < 2^(62 - log2(rows)): the integer sum cannot overflow.
  const double headroom = 61.0 - std::ceil(std::log2(static_cast<double>(global_rows > 1 ? global_rows : 2)));
  std::vector<double> scale(cols, 0.0);
  const auto& scale_h = scale_h_;
  for (int c = 0; c < cols; ++c) {
    int e = 0;
    std::frexp(global_max[c], &e);  // global_max < 2^e
    // The shift is capped so that the scale stays finite for tiny (even subnormal) maxima.
    scale[c] = global_max[c] > 0.0 && std::isfinite(global_max[c])
                   ? std::ldexp(1.0, std::min(static_cast<int>(headroom) - e, 1000))
                   : 0.0;
    scale_h(c) = scale[c];
  }
  Kokkos::deep_copy(scale_d, scale_h);

  // 3. Integer sums: exact, so independent of the order of the additions.
  Kokkos::parallel_for(
      "hmc::column_sum", Team(cols, Kokkos::AUTO), KOKKOS_LAMBDA(const Member& team) {
        const int c = team.league_rank();
        const double s = scale_d(c);
        long long total = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, rows),
            [&](const int i, long long& acc) {
              const double x = values(i, c) * s;
              acc += math::isfinite(x) ? static_cast<long long>(math::nearbyint(x)) : 0;
            },
            total);
        Kokkos::single(Kokkos::PerTeam(team), [&]() { sums(c) = total; });
      });
  Kokkos::deep_copy(sums_h_, sums);
  const auto& sums_h = sums_h_;
  std::vector<long long> global_sum(sums_h.data(), sums_h.data() + cols);
  allreduce.sum(global_sum.data(), cols);

  std::vector<double> out(cols, 0.0);
  for (int c = 0; c < cols; ++c) out[c] = scale[c] > 0.0 ? static_cast<double>(global_sum[c]) / scale[c] : 0.0;
  return out;
}

}  // namespace hmc
