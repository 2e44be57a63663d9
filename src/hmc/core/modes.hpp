#pragma once
/// \file
/// \brief The run's modes as enums, each with its one table of config names: the schema's
/// choices (io/schema.cpp), the parsing of a config, and the text written to summary.json
/// and checkpoints all come from these tables.

#include <array>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace hmc {

/// /sampler/init/strategy.
enum class InitStrategy { kUniform, kValues, kPrior };
/// /sampler/adapt/metric, and the metric a run adapted.
enum class MetricKind { kUnit, kDiag, kDense, kFisherDiag, kLowRank };
/// Whether a metric is estimated and applied as a d×d matrix (dense; low_rank, whose diagonal plus leading
/// directions are assembled into one), which /sampler/adapt/metric allows up to sampler::kMaxDenseDim coordinates.
inline bool matrix_metric(MetricKind k) { return k == MetricKind::kDense || k == MetricKind::kLowRank; }
/// /sampler/adapt/trajectory.
enum class TrajectoryKind { kFixed, kChees };
/// /sampler/algorithm: the transition kernel (sampler/kernels.hpp).
enum class Algorithm { kHmc, kNuts, kMams };
/// /sampler/integrator: the integrator of the isokinetic dynamics of `mams`.
enum class Integrator { kLeapfrog, kMcLachlan };

/// The names of a mode's values, in the order the docs list them.
template <class E>
struct ModeNames;

template <>
struct ModeNames<InitStrategy> {
  static constexpr std::array<std::pair<const char*, InitStrategy>, 3> table{
      {{"uniform", InitStrategy::kUniform}, {"values", InitStrategy::kValues}, {"prior", InitStrategy::kPrior}}};
};

template <>
struct ModeNames<MetricKind> {
  static constexpr std::array<std::pair<const char*, MetricKind>, 5> table{{{"unit", MetricKind::kUnit},
                                                                            {"diag", MetricKind::kDiag},
                                                                            {"dense", MetricKind::kDense},
                                                                            {"fisher_diag", MetricKind::kFisherDiag},
                                                                            {"low_rank", MetricKind::kLowRank}}};
};

template <>
struct ModeNames<TrajectoryKind> {
  static constexpr std::array<std::pair<const char*, TrajectoryKind>, 2> table{
      {{"fixed", TrajectoryKind::kFixed}, {"chees", TrajectoryKind::kChees}}};
};

template <>
struct ModeNames<Algorithm> {
  static constexpr std::array<std::pair<const char*, Algorithm>, 3> table{
      {{"hmc", Algorithm::kHmc}, {"nuts", Algorithm::kNuts}, {"mams", Algorithm::kMams}}};
};

template <>
struct ModeNames<Integrator> {
  static constexpr std::array<std::pair<const char*, Integrator>, 2> table{
      {{"leapfrog", Integrator::kLeapfrog}, {"mclachlan", Integrator::kMcLachlan}}};
};

/// \brief The config name of a mode ("dense").
template <class E>
const char* mode_name(E e) {
  for (const auto& [name, value] : ModeNames<E>::table)
    if (value == e) return name;
  return "?";
}

/// \brief The mode a config name stands for; std::invalid_argument for another name (the
/// schema has refused those already).
template <class E>
E parse_mode(const std::string& name) {
  for (const auto& [n, value] : ModeNames<E>::table)
    if (name == n) return value;
  throw std::invalid_argument("no mode named \"" + name + "\"");
}

/// \brief Every name of a mode, for the schema's choices.
template <class E>
std::vector<std::string> mode_names() {
  std::vector<std::string> out;
  for (const auto& entry : ModeNames<E>::table) out.emplace_back(entry.first);
  return out;
}

}  // namespace hmc
