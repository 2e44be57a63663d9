#pragma once
/// \file
/// \brief Hidden Markov model: K hidden states, categorical or Gaussian emissions, the
/// state paths summed out by the scaled forward algorithm.
///
/// Keeps a hand-written gradient (one backward pass over the stored forward variables, on a
/// team of threads or in the lanes): a recorded forward algorithm would hold some 18 nodes
/// and 36 edges per time step at K = 3, about 216,000 doubles (1.7 MiB) of tape per particle
/// at T = 2,000, against the T·K doubles of forward variables it keeps now.
///
/// Parameters (constrained scale): the transition matrix A (K x K, each row a simplex,
/// Dirichlet(transition_concentration) prior per row), the emissions (categorical: B,
/// K x V, rows simplexes with Dirichlet(emission_concentration) priors; Gaussian: one
/// mean per state, ordered μ_1 < ... < μ_K, Normal(mu_loc_k, mu_scale_k) priors, and a
/// common σ, fixed or half-normal(sigma_scale)), and the initial distribution π
/// (uniform, or a simplex with a Dirichlet(initial_concentration) prior).
///
/// Unconstrained layout of q (dim()):
///   transition rows   K (K - 1)   stick-breaking, row i at i (K - 1)
///   emission          K (V - 1)   categorical: stick-breaking, row k at q_emission + k (V - 1)
///                     K           gaussian: ordered transform of μ
///   sigma             1           only when σ is a parameter: σ = exp(q)
///   initial           K - 1       only when /model/initial is "dirichlet"
/// Constrained layout (constrain(), parameter_names()): transition[i,j] (row-major),
/// emission[k,v] or mu[k], then sigma and initial[k] where they are parameters.
/// The parameter block x that the kernels read (in scratch) has that layout too, with σ
/// and π always present (block_sigma, block_initial).
///
/// K, V, S and N are the members num_states, num_symbols, num_sequences and
/// num_observations; the kernels name the first two K and V locally. The config and data
/// are read by models/hmm_data.hpp into an HmmDescription, which from_config builds the
/// model from: this file holds the model and its kernels.
///
/// Log density = forward-algorithm log-likelihood + log priors + log|J|, up to an
/// additive constant (Dirichlet and Normal normalisers are dropped; the likelihood is
/// exact, Gaussian constants included). For a symmetric Dirichlet(a) on a stick-breaking
/// simplex, log prior + log|J| = a · log|J| exactly, which keeps the prior finite and
/// stable however small an entry gets.
///
/// Memory: every per-particle local array has the compile-time size kMaxStates (16;
/// from_config rejects a larger K): a few K-vectors and the K x K transition matrix
/// (and its gradient), 6 KB at most. log_density(q) builds A and π from q once, then
/// computes the emission probabilities from q as it goes (categorical: O(V) per
/// observation, as it cannot hold the K x V matrix without scratch); it is used only at
/// initialisation, by `hmc diagnose` and in tests. log_density(q, scratch) builds the
/// parameters into block_size scratch doubles (the parameter block x) and runs the forward pass alone on them: the
/// finite differences of `hmc diagnose` use it. log_density_gradient(q, grad,
/// scratch) builds the constrained parameters and their gradients in the particle's
/// scratch row, runs the forward pass keeping the one-step predictions
/// pred_t(k) = P(s_t = k | y_1..y_{t-1}) and 1 / c_t for every t (scratch_size() =
/// 2 (K² + emission + 1 + K) + N (K + 1) doubles: 8,086 for K = 3, V = 10, T = 2000), and
/// one backward pass then accumulates the expected-count gradients: about the cost of a
/// second forward pass.
///
/// On the host, the lane kernel (sampler/lanes.hpp) calls log_density_gradient_lanes
/// instead: the same forward and backward passes for 8 particles at once, one per SIMD
/// lane, on a [param][lane] copy of their parameters in one per-thread buffer (the
/// particles' scratch rows are not used). It keeps pred_t, α_t and 1 / c_t of every
/// step up to kLaneStoreBytes per thread (896 KiB for K = 3, T = 2000; 6.7 MiB for
/// K = 5, T = 10,000), and beyond that checkpoints segments and recomputes them in the
/// backward pass. Lane by lane it performs the scalar gradient's operations in the
/// scalar order, so for categorical emissions it is bitwise log_density_gradient(q,
/// grad, scratch); gaussian emissions use the vector exp (a few ulp apart).

#include "hmc/core/errors.hpp"
#include "hmc/core/pack.hpp"
#include "hmc/core/types.hpp"
#include "hmc/keys/key.hpp"
#include "hmc/model/concept.hpp"
#include "hmc/model/transforms.hpp"
#include "hmm_data.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace hmc::models {

struct Hmm {
  /// Largest number of hidden states (size of the per-particle local arrays).
  static constexpr int kMaxStates = kHmmMaxStates;

  // The model, read from its description (models/hmm_data.hpp).
  int num_states = 0;              ///< K hidden states (at most kMaxStates)
  int num_symbols = 0;             ///< V symbols 0..V-1 (categorical emissions; 0 for gaussian)
  int num_sequences = 0;           ///< S observation sequences
  int num_observations = 0;        ///< N observations in all sequences together
  bool gaussian = false;           ///< gaussian emissions (else categorical)
  bool sigma_free = false;         ///< gaussian: σ is a parameter (else sigma_fixed)
  bool initial_dirichlet = false;  ///< the initial distribution is a parameter (else uniform)
  double sigma_fixed = 1.0;        ///< σ where it is not a parameter (1, unused, for categorical emissions)
  /// Prior settings: the Dirichlet concentrations and the half-normal scale of σ.
  double transition_concentration = 0.0, emission_concentration = 0.0, initial_concentration = 0.0;
  double sigma_scale = 0.0;
  VectorView mu_loc, mu_scale;  ///< gaussian: prior of each state's mean
  Kokkos::View<int*, MemSpace>
      sequence_offsets;                  ///< S + 1: sequence s is [sequence_offsets(s), sequence_offsets(s + 1))
  Kokkos::View<int*, MemSpace> symbols;  ///< N symbols 0..V-1 (categorical)
  VectorView observations;               ///< N observations (gaussian)

  // Layouts (see the file comment); the transition block starts at 0 in each.
  /// Offsets in q (unconstrained): the emission block, σ, the initial distribution.
  int q_emission = 0, q_sigma = 0, q_initial = 0;
  int dim_ = 0;  ///< size of q: dim()
  /// Offsets in constrain()'s output (the draws): the emission block (emission or mu), σ, initial.
  int draw_emission = 0, draw_sigma = 0, draw_initial = 0;
  int num_params_ = 0;  ///< size of constrain()'s output: num_params()
  /// Offsets in the parameter block x (the constrained parameters as the kernels read
  /// them, in scratch): the emission block, σ, the initial distribution (σ and π are
  /// always there, fixed or not).
  int block_emission = 0, block_sigma = 0, block_initial = 0;
  int block_size = 0;          ///< size of x
  int lane_segment_steps = 1;  ///< lane gradient: steps per checkpointed segment
  int lane_segments = 0;       ///< lane gradient: segments of all sequences together

  // The forward pass in parallel time (the team gradient; set_chunks()).
  HmmForward forward_mode = HmmForward::kSequential;  ///< /model/forward
  int chunk_steps = 0;                                ///< steps per chunk (the last of a sequence may be shorter)
  int num_chunks = 0;                                 ///< C: chunks of all sequences together
  int longest_sequence = 0;                           ///< steps of the longest sequence
  Kokkos::View<int*, MemSpace> chunk_start;           ///< C + 1: chunk c is steps [chunk_start(c), chunk_start(c + 1))
  Kokkos::View<int*, MemSpace> chunk_sequence;        ///< C: the sequence of chunk c
  Kokkos::View<int*, MemSpace> sequence_chunks;       ///< S + 1: sequence s is chunks [sequence_chunks(s), ...(s + 1))
  /// Categorical: the symbols that occur (num_present_symbols, ascending), and the steps
  /// of each in time order (symbol_times[symbol_offsets(p), symbol_offsets(p + 1))).
  int num_present_symbols = 0;
  Kokkos::View<int*, MemSpace> present_symbols, symbol_offsets, symbol_times;

  int dim() const { return dim_; }
  int num_params() const { return num_params_; }
  /// x (block_size), d log L / dx (block_size), then pred_t(k) (N K) and 1 / c_t (N);
  /// where the team gradient may run (/model/forward parallel or auto), its areas too.
  int scratch_size() const {
    return forward_mode == HmmForward::kSequential ? 2 * block_size + num_observations * num_states + num_observations
                                                   : team_scratch_size();
  }

  /// \brief Settles `auto` for a run of `particles` per rank on an execution space that
  /// runs `concurrency` threads at once: on a device (a GPU) the parallel pass where the
  /// particles would keep at most half the threads busy (kParallelThreadsPerParticle) and the
  /// longest sequence has at least kParallelMinSteps steps, else the sequential one; on the
  /// host always the sequential one, whose draws are the same bits for any thread count
  /// (docs/models.md#hmm). The services call it before the memory check, on every rank
  /// with the same numbers.
  void plan(long particles, long concurrency) {
    if (forward_mode != HmmForward::kAuto) return;
    const bool device = !std::is_same_v<MemSpace, Kokkos::HostSpace>;
    const bool parallel =
        device && particles * kParallelThreadsPerParticle <= concurrency && longest_sequence >= kParallelMinSteps;
    forward_mode = parallel ? HmmForward::kParallel : HmmForward::kSequential;
  }
  static constexpr long kParallelThreadsPerParticle = 2;
  static constexpr int kParallelMinSteps = 64;

  /// \brief Threads of a team that the gradient of one particle can use: the chunks with
  /// /model/forward parallel (or `auto` settled so by plan()), else 0 (one particle per
  /// thread, the sequential pass).
  int gradient_team_size() const { return forward_mode == HmmForward::kParallel ? num_chunks : 0; }

  std::vector<std::string> parameter_names() const {
    const int K = num_states, V = num_symbols;
    std::vector<std::string> names;
    auto idx = [](int a, int b) { return "[" + std::to_string(a + 1) + "," + std::to_string(b + 1) + "]"; };
    for (int i = 0; i < K; ++i)
      for (int j = 0; j < K; ++j) names.push_back("transition" + idx(i, j));
    if (gaussian) {
      for (int k = 0; k < K; ++k) names.push_back("mu[" + std::to_string(k + 1) + "]");
    } else {
      for (int k = 0; k < K; ++k)
        for (int v = 0; v < V; ++v) names.push_back("emission" + idx(k, v));
    }
    if (sigma_free) names.push_back("sigma");
    if (initial_dirichlet)
      for (int k = 0; k < K; ++k) names.push_back("initial[" + std::to_string(k + 1) + "]");
    return names;
  }

  /// \brief Names of the axes of the vector and matrix parameters (netCDF dimensions).
  std::vector<std::pair<std::string, std::vector<std::string>>> dim_names() const {
    return {{"transition", {"from_state", "to_state"}},
            {"emission", {"state", "word"}},
            {"mu", {"state"}},
            {"initial", {"state"}}};
  }

  /// \brief A remark for the user about reading the output ("" when there is none).
  std::string note() const {
    const int K = num_states;
    if (gaussian || K < 2) return "";
    return "state labels can switch between particles: the " + std::to_string(K) +
           " hidden states are exchangeable under the prior, so particles may settle on different orderings of "
           "them and summaries pooled over particles mix the labels (emission gaussian orders the states by mu)";
  }

  // ---- device: helpers ------------------------------------------------------

  /// K, as a compile-time constant where KC > 0: the forward and backward passes are
  /// instantiated for K = 2..6 too (with_states), so their small loops unroll into
  /// registers (4 to 5 times faster for the standard workload on a CPU). Those functions declare
  /// `const int K = states<KC>()`, shadowing the member on purpose.
  template <int KC>
  KOKKOS_INLINE_FUNCTION int states() const {
    return KC > 0 ? KC : num_states;
  }

  /// Calls f(std::integral_constant<int, KC>{}) with KC = K for K = 2..6 (loops over
  /// the states unrolled), KC = 0 (K read at run time) otherwise.
  template <class F>
  KOKKOS_INLINE_FUNCTION static auto with_states(int K, const F& f) {
    switch (K) {
      case 2:
        return f(std::integral_constant<int, 2>{});
      case 3:
        return f(std::integral_constant<int, 3>{});
      case 4:
        return f(std::integral_constant<int, 4>{});
      case 5:
        return f(std::integral_constant<int, 5>{});
      case 6:
        return f(std::integral_constant<int, 6>{});
      default:
        return f(std::integral_constant<int, 0>{});
    }
  }

  KOKKOS_INLINE_FUNCTION static Row sub(const Row& r, int offset) { return Row{r.data + offset * r.stride, r.stride}; }

  /// log|J| of the stick-breaking simplex of n entries from y(0..n-2) (transforms.hpp).
  KOKKOS_INLINE_FUNCTION static double stick_log_jacobian(const Row& y, int n) {
    double lj = 0.0;
    for (int k = 0; k < n - 1; ++k) {
      const double t = y(k) - math::log(static_cast<double>(n - 1 - k));
      lj += math::log_sigmoid(t) + (n - 1 - k) * math::log_sigmoid(-t);
    }
    return lj;
  }

  /// Adds (a - 1) d log|J| / dy: the gradient of the Dirichlet(a) log density
  /// Σ_j (a - 1) log x_j, which equals (a - 1) log|J| of the stick-breaking map.
  KOKKOS_INLINE_FUNCTION static void add_dirichlet_gradient(const Row& y, const Row& g, int n, double a) {
    for (int k = 0; k < n - 1; ++k) {
      const double z = math::sigmoid(y(k) - math::log(static_cast<double>(n - 1 - k)));
      g(k) += (a - 1.0) * ((1.0 - z) - (n - 1 - k) * z);
    }
  }

  /// p[i] as p(i): the lane kernel's [param][lane] arrays read the way a Row is read.
  template <class T>
  struct Indexed {
    T* p;
    KOKKOS_FORCEINLINE_FUNCTION T& operator()(int i) const { return p[i]; }
  };
  template <class T>
  static Indexed<T> sub(const Indexed<T>& r, int offset) {
    return Indexed<T>{r.p + offset};
  }

  /// The larger of a and b (a where a > b); lane by lane for Packs.
  KOKKOS_FORCEINLINE_FUNCTION static double larger(double a, double b) { return a > b ? a : b; }
  template <class P>
  static P larger(const P& a, const P& b) {
    P r;
    HMC_LANES_LOOP r[l] = a[l] > b[l] ? a[l] : b[l];
    return r;
  }

  /// Gaussian densities of observation t in every state (means mu(k), sd sigma) into b,
  /// divided by their largest one (so no state underflows when y_t is far from every
  /// mean); returns the log of that factor, less log σ + ½ log 2π. On doubles, or on
  /// Packs for the lane kernel (whose exp is then the vector one, a few ulp apart).
  template <int KC, class T, class Means>
  KOKKOS_FORCEINLINE_FUNCTION T gaussian_scaled(int t, const Means& mu, const T& sigma, T* b) const {
    const int K = states<KC>();
    const double yt = observations(t);
    T top(-math::infinity());
    for (int k = 0; k < K; ++k) {
      const T z = (yt - mu(k)) / sigma;
      b[k] = -0.5 * z * z;
      top = larger(b[k], top);
    }
    for (int k = 0; k < K; ++k) b[k] = math::exp(b[k] - top);
    return top;
  }

  /// Gaussian densities of observation t in every state, divided by their largest one;
  /// returns the log of that factor.
  template <int KC = 0>
  KOKKOS_INLINE_FUNCTION double gaussian_emission(int t, const Row& mu, double sigma, double* b) const {
    return gaussian_scaled<KC>(t, mu, sigma, b) - math::log(sigma) - 0.5 * math::log(2.0 * math::pi());
  }

  /// Emission probabilities of observation t in every state into b, read from the
  /// parameter block x (a Row, or the lane kernel's Packs as Indexed): categorical: row
  /// y_t of B, returns 0; gaussian: gaussian_scaled.
  template <int KC, class T, class Params>
  KOKKOS_FORCEINLINE_FUNCTION T emission_from_block(int t, const Params& x, T* b) const {
    if (gaussian) return gaussian_scaled<KC>(t, sub(x, block_emission), x(block_sigma), b);
    const int v = symbols(t), K = states<KC>();
    for (int k = 0; k < K; ++k) b[k] = x(block_emission + k * num_symbols + v);
    return T(0.0);
  }

  /// Emission probabilities computed from q on demand (log_density: no scratch).
  struct EmissionFromQ {
    const Hmm* m;
    Row q;
    Row mu;  ///< the K ordered means (gaussian)
    double sigma;
    KOKKOS_INLINE_FUNCTION double operator()(int t, double* b) const {
      if (m->gaussian) return m->gaussian_emission(t, mu, sigma, b);
      // log B(k, v) = Σ_{u<v} log(1 - z_u) + log z_v (no z_v for the last symbol).
      const int v = m->symbols(t), V = m->num_symbols;
      double top = -math::infinity();
      for (int k = 0; k < m->num_states; ++k) {
        const Row yk = sub(q, m->q_emission + k * (V - 1));
        double lb = 0.0;
        for (int u = 0; u <= v && u < V - 1; ++u) {
          const double s = yk(u) - math::log(static_cast<double>(V - 1 - u));
          lb += u < v ? math::log_sigmoid(-s) : math::log_sigmoid(s);
        }
        b[k] = lb;
        top = lb > top ? lb : top;
      }
      for (int k = 0; k < m->num_states; ++k) b[k] = math::exp(b[k] - top);
      return top;
    }
  };

  /// Emission probabilities read from the parameter block x (emission_from_block).
  template <int KC>
  struct EmissionFromScratch {
    const Hmm* m;
    Row x;
    KOKKOS_INLINE_FUNCTION double operator()(int t, double* b) const {
      const double top = m->emission_from_block<KC>(t, x, b);
      return m->gaussian ? top - math::log(x(m->block_sigma)) - 0.5 * math::log(2.0 * math::pi()) : top;
    }
  };

  // ---- device and host: the steps of the recurrences ------------------------
  //
  // The forward and backward steps below are the one implementation of the recursions:
  // templated on the value type T, they run on doubles in forward() and backward() (one
  // particle) and on Packs of kLanes particles in forward_backward_lanes(), which so
  // performs, lane by lane, the scalar operations in the scalar order.

  /// c_t = Σ_k pred_t(k) b_t(k): the normaliser of the forward step at t.
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static T forward_normaliser(int K, const T* pred, const T* b) {
    T c(0.0);
    for (int k = 0; k < K; ++k) c += pred[k] * b[k];
    return c;
  }

  /// The rest of the forward step, given inv_c = 1 / c_t: α_t = pred_t ∘ b_t / c_t into
  /// `alpha`, then the next prediction pred_{t+1} = α_t A into `pred` (A: K x K, row-major).
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static void forward_advance(int K, T* pred, const T* b, const T& inv_c, const T* A,
                                                          T* alpha) {
    for (int k = 0; k < K; ++k) alpha[k] = pred[k] * b[k] * inv_c;
    for (int k = 0; k < K; ++k) pred[k] = T(0.0);
    for (int i = 0; i < K; ++i)
      for (int j = 0; j < K; ++j) pred[j] += alpha[i] * A[i * K + j];
  }

  /// The backward step at t, with w_t(j) = b_t(j) β_t(j) / c_t (β scaled so that α_t ∘ β_t
  /// is the posterior of s_t):
  ///   d log L / db_t(j)  = pred_t(j) β_t(j) / c_t   (categorical: into dB(j, y_t) in gx),
  ///   gaussian: γ_t(j) = pred_t(j) w_t(j) weighs d log N(y_t | μ_j, σ) / d(μ_j, σ) (μ into
  ///     gx, σ into g_sigma; inv_var = 1 / σ²),
  /// then, where t is not the first step of its sequence (alpha_prev = α_{t-1}, b_prev =
  /// b_{t-1}):
  ///   d log L / dA_ij   += α_{t-1}(i) w_t(j) (into g_A),   β_{t-1}(i) = Σ_j A_ij w_t(j),
  /// and b_cur ← b_prev; at the first step (alpha_prev null): d log L / dπ_j += w_1(j).
  /// `beta` and `b_cur` hold β_t and b_t on entry, β_{t-1} and b_{t-1} on return; `w` is
  /// room for K values; `pred(j)` is pred_t(j), `x(i)` and `gx(i)` the parameter block and
  /// its gradient.
  template <int KC, class T, class Pred, class Params, class Grads>
  KOKKOS_FORCEINLINE_FUNCTION void backward_step(int t, const T& inv_c, const Pred& pred, const T* alpha_prev,
                                                 const T* b_prev, const T* A, const Params& x, const T& inv_var,
                                                 T* beta, T* b_cur, T* w, T* g_A, const Grads& gx, T& g_sigma) const {
    const int K = states<KC>();
    for (int j = 0; j < K; ++j) w[j] = b_cur[j] * beta[j] * inv_c;
    if (gaussian) {
      const double yt = observations(t);
      for (int j = 0; j < K; ++j) {
        const T gamma = pred(j) * w[j], dy = yt - x(block_emission + j);
        gx(block_emission + j) += gamma * dy * inv_var;
        g_sigma += gamma * (dy * dy * inv_var - 1.0);
      }
    } else {
      const int v = symbols(t);
      for (int j = 0; j < K; ++j) gx(block_emission + j * num_symbols + v) += pred(j) * beta[j] * inv_c;
    }
    if (alpha_prev) {
      for (int i = 0; i < K; ++i) {
        T acc(0.0);
        for (int j = 0; j < K; ++j) {
          g_A[i * K + j] += alpha_prev[i] * w[j];
          acc += A[i * K + j] * w[j];
        }
        beta[i] = acc;
      }
      for (int k = 0; k < K; ++k) b_cur[k] = b_prev[k];
    } else {
      for (int j = 0; j < K; ++j) gx(block_initial + j) += w[j];
    }
  }

  /// Scaled forward steps t0..t1-1 from pred = pred_{t0}: α_t = pred_t ∘ b_t / c_t with
  /// c_t = Σ_k pred_t(k) b_t(k), so log L = Σ_t log c_t (the c_t are multiplied up into
  /// `product` and their log added to `ll` only when the product gets small: one log per
  /// ~hundreds of steps instead of one per step). `A` (K x K, row-major) is a local copy.
  /// When `store` has data, writes pred_t(k) at t K + k and 1 / c_t at N K + t. Leaves
  /// pred_{t1} in `pred`; returns false where some c_t is not positive (an impossible
  /// observation).
  template <int KC, class Emission>
  KOKKOS_INLINE_FUNCTION bool forward_steps(int t0, int t1, double* pred, const double* A, const Emission& emission,
                                            const Row& store, double& ll, double& product) const {
    const int K = states<KC>();
    double alpha[kMaxStates], b[kMaxStates];
    for (int t = t0; t < t1; ++t) {
      ll += emission(t, b);
      const double c = forward_normaliser(K, pred, b);
      if (!(c > 0.0)) return false;
      const double inv_c = 1.0 / c;
      if (store.data) {
        for (int k = 0; k < K; ++k) store(t * K + k) = pred[k];
        store(num_observations * K + t) = inv_c;
      }
      forward_advance(K, pred, b, inv_c, A, alpha);
      // Keep the running product of the c_t (each <= 1 up to rounding) in (1e-200, ~1].
      if (c < 1e-100) {
        ll += math::log(c);
      } else {
        product *= c;
        if (product < 1e-200) {
          ll += math::log(product);
          product = 1.0;
        }
      }
    }
    return true;
  }

  /// Scaled forward pass over every sequence (forward_steps from pred_1 = π); returns log L,
  /// -inf where some c_t is not positive. `pi` (K) and `A` (K x K) are local copies.
  template <int KC, class Emission>
  KOKKOS_INLINE_FUNCTION double forward(const double* pi, const double* A, const Emission& emission,
                                        const Row& store) const {
    const int K = states<KC>();
    double pred[kMaxStates];
    double ll = 0.0, product = 1.0;
    for (int s = 0; s < num_sequences; ++s) {
      for (int k = 0; k < K; ++k) pred[k] = pi[k];
      if (!forward_steps<KC>(sequence_offsets(s), sequence_offsets(s + 1), pred, A, emission, store, ll, product))
        return -math::infinity();
    }
    return ll + math::log(product);
  }

  /// Backward steps t1-1 down to t0 of a sequence that starts at `first` (backward_step
  /// at every t) over the stored forward quantities: pred_t and 1 / c_t are read from
  /// `store`, α_{t-1} is recomputed from them (bitwise the forward pass's). `beta` holds
  /// β_{t1-1} on entry. `A` is the local copy of the transition matrix; d log L / dA is
  /// added to the local `g_A`, d log L / dσ · σ to g_sigma, the rest into `grads_at(t)`,
  /// the gradient block as backward_step writes it at step t.
  template <int KC, class GradsAt>
  KOKKOS_INLINE_FUNCTION void backward_steps(int first, int t0, int t1, const double* A, double* g_A, const Row& x,
                                             const GradsAt& grads_at, const Row& store, double* beta,
                                             double& g_sigma) const {
    const int K = states<KC>();
    double w[kMaxStates], b_cur[kMaxStates] = {}, b_prev[kMaxStates] = {}, alpha_prev[kMaxStates];
    const EmissionFromScratch<KC> emission{this, x};
    const double sigma = x(block_sigma), inv_var = 1.0 / (sigma * sigma);
    emission(t1 - 1, b_cur);
    for (int t = t1 - 1; t >= t0; --t) {
      const double inv_c = store(num_observations * K + t);
      const bool has_prev = t > first;
      if (has_prev) {
        emission(t - 1, b_prev);
        const double inv_c_prev = store(num_observations * K + t - 1);
        for (int i = 0; i < K; ++i) alpha_prev[i] = store((t - 1) * K + i) * b_prev[i] * inv_c_prev;
      }
      backward_step<KC>(t, inv_c, sub(store, t * K), has_prev ? alpha_prev : nullptr, b_prev, A, x, inv_var, beta,
                        b_cur, w, g_A, grads_at(t), g_sigma);
    }
  }

  /// Backward pass over every sequence from its last step (β_T = 1). d log L / dA goes to
  /// the local `g_A`, the rest is added into gx (both zeroed by the caller).
  template <int KC>
  KOKKOS_INLINE_FUNCTION void backward(const double* A, double* g_A, const Row& x, const Row& gx,
                                       const Row& store) const {
    const int K = states<KC>();
    double beta[kMaxStates];
    double g_sigma = 0.0;
    const auto grads_at = [&gx](int) { return gx; };
    for (int s = 0; s < num_sequences; ++s) {
      for (int k = 0; k < K; ++k) beta[k] = 1.0;
      const int first = sequence_offsets(s);
      backward_steps<KC>(first, first, sequence_offsets(s + 1), A, g_A, x, grads_at, store, beta, g_sigma);
    }
    gx(block_sigma) += g_sigma / x(block_sigma);
  }

  /// log L, and its gradient into g_A and gx where log L is finite.
  template <int KC>
  KOKKOS_INLINE_FUNCTION double forward_backward(const double* pi, const double* A, double* g_A, const Row& x,
                                                 const Row& gx, const Row& store) const {
    const double ll = forward<KC>(pi, A, EmissionFromScratch<KC>{this, x}, store);
    if (math::isfinite(ll)) backward<KC>(A, g_A, x, gx, store);
    return ll;
  }

  /// Writes the constrained parameters x (scratch layout) from q; returns log prior + log|J|.
  KOKKOS_INLINE_FUNCTION double materialise(const Row& q, const Row& x) const {
    const int K = num_states, V = num_symbols;
    double lp = 0.0;
    for (int i = 0; i < K; ++i)
      lp += transition_concentration * transform::simplex_forward(sub(q, i * (K - 1)), sub(x, i * K), K);
    if (gaussian) {
      lp += transform::ordered_forward(sub(q, q_emission), sub(x, block_emission), K);
      for (int k = 0; k < K; ++k) {
        const double z = (x(block_emission + k) - mu_loc(k)) / mu_scale(k);
        lp -= 0.5 * z * z;
      }
    } else {
      for (int k = 0; k < K; ++k)
        lp += emission_concentration *
              transform::simplex_forward(sub(q, q_emission + k * (V - 1)), sub(x, block_emission + k * V), V);
    }
    if (sigma_free) {
      const double sg = math::exp(q(q_sigma)), z = sg / sigma_scale;
      x(block_sigma) = sg;
      lp += -0.5 * z * z + q(q_sigma);
    } else {
      x(block_sigma) = sigma_fixed;
    }
    if (initial_dirichlet) {
      lp += initial_concentration * transform::simplex_forward(sub(q, q_initial), sub(x, block_initial), K);
    } else {
      for (int k = 0; k < K; ++k) x(block_initial + k) = 1.0 / K;
    }
    return lp;
  }

  // ---- device: the model interface -----------------------------------------

  /// \brief log L(q): the forward-algorithm log-likelihood alone (no prior, no Jacobian).
  KOKKOS_INLINE_FUNCTION double log_likelihood(const Row& q) const {
    const int K = num_states;
    double pi[kMaxStates], A[kMaxStates * kMaxStates], mu[kMaxStates];
    for (int i = 0; i < K; ++i) transform::simplex_forward(sub(q, i * (K - 1)), Row{A + i * K, 1}, K);
    if (initial_dirichlet) {
      transform::simplex_forward(sub(q, q_initial), Row{pi, 1}, K);
    } else {
      for (int k = 0; k < K; ++k) pi[k] = 1.0 / K;
    }
    if (gaussian) transform::ordered_forward(sub(q, q_emission), Row{mu, 1}, K);
    const EmissionFromQ emission{this, q, Row{mu, 1}, sigma_free ? math::exp(q(q_sigma)) : sigma_fixed};
    return forward<0>(pi, A, emission, Row{nullptr, 0});
  }

  KOKKOS_INLINE_FUNCTION double log_density(const Row& q) const {
    const int K = num_states, V = num_symbols;
    double lp = 0.0;
    for (int i = 0; i < K; ++i) lp += transition_concentration * stick_log_jacobian(sub(q, i * (K - 1)), K);
    if (gaussian) {
      double mu[kMaxStates];
      lp += transform::ordered_forward(sub(q, q_emission), Row{mu, 1}, K);
      for (int k = 0; k < K; ++k) {
        const double z = (mu[k] - mu_loc(k)) / mu_scale(k);
        lp -= 0.5 * z * z;
      }
    } else {
      for (int k = 0; k < K; ++k)
        lp += emission_concentration * stick_log_jacobian(sub(q, q_emission + k * (V - 1)), V);
    }
    if (sigma_free) {
      const double z = math::exp(q(q_sigma)) / sigma_scale;
      lp += -0.5 * z * z + q(q_sigma);
    }
    if (initial_dirichlet) lp += initial_concentration * stick_log_jacobian(sub(q, q_initial), K);
    const double total = lp + log_likelihood(q);
    return math::isnan(total) ? -math::infinity() : total;
  }

  /// \brief Doubles that log_density(q, scratch) uses: the constrained parameters x.
  int log_density_scratch_size() const { return block_size; }

  /// \brief log p(q) as log_density(q), with the parameters built once into `scratch`
  /// (log_density_scratch_size() doubles) and the forward pass alone run on them: the
  /// emission probabilities are read, not recomputed from q per observation (O(K²) per
  /// step instead of O(K V) logs; 30 to 50 times faster for K = 5, V = 20). The same
  /// arithmetic as the value of log_density_gradient. The gradient check (`hmc diagnose`)
  /// evaluates its finite differences with it; the sampler does not call it.
  KOKKOS_INLINE_FUNCTION double log_density(const Row& q, const Row& scratch) const {
    const int K = num_states;
    const double lp_prior = materialise(q, scratch);
    double pi[kMaxStates], A[kMaxStates * kMaxStates];
    for (int k = 0; k < K; ++k) pi[k] = scratch(block_initial + k);
    for (int k = 0; k < K * K; ++k) A[k] = scratch(k);
    const Row none{nullptr, 0};
    const double ll = with_states(K, [&](auto kc) {
      constexpr int KC = decltype(kc)::value;
      return forward<KC>(pi, A, EmissionFromScratch<KC>{this, scratch}, none);
    });
    const double total = lp_prior + ll;
    return math::isnan(total) ? -math::infinity() : total;
  }

  /// The gradient needs the forward quantities of every time step: the scratch form
  /// (scratch_size() doubles per particle, see model/concept.hpp).
  KOKKOS_INLINE_FUNCTION double log_density_gradient(const Row& q, const Row& grad, const Row& scratch) const {
    const int K = num_states;
    const Row x = scratch, gx = sub(scratch, block_size), store = sub(scratch, 2 * block_size);
    for (int j = 0; j < dim_; ++j) grad(j) = 0.0;
    const double lp_prior = materialise(q, x);
    // Local copies of π and A: the inner loops then run on memory that no Row aliases.
    double pi[kMaxStates], A[kMaxStates * kMaxStates], g_A[kMaxStates * kMaxStates];
    for (int k = 0; k < K; ++k) pi[k] = x(block_initial + k);
    for (int k = 0; k < K * K; ++k) {
      A[k] = x(k);
      g_A[k] = 0.0;
    }
    for (int j = 0; j < block_size; ++j) gx(j) = 0.0;
    const double ll = with_states(K, [&](auto kc) {
      constexpr int KC = decltype(kc)::value;
      return forward_backward<KC>(pi, A, g_A, x, gx, store);
    });
    const double lp = lp_prior + ll;
    if (!math::isfinite(lp)) return -math::infinity();
    for (int k = 0; k < K * K; ++k) gx(k) = g_A[k];
    chain(q, x, gx, grad);
    return lp;
  }

  /// Adds to grad (zeroed by the caller) d log p / dq from d log L / dx in gx (the
  /// transition block holding d log L / dA): the chain rule through the transforms
  /// (which add d log|J| / dq), then the priors.
  KOKKOS_INLINE_FUNCTION void chain(const Row& q, const Row& x, const Row& gx, const Row& grad) const {
    const int K = num_states, V = num_symbols;
    for (int i = 0; i < K; ++i) {
      const Row qi = sub(q, i * (K - 1)), gi = sub(grad, i * (K - 1));
      transform::simplex_backward(qi, sub(x, i * K), sub(gx, i * K), gi, K);
      add_dirichlet_gradient(qi, gi, K, transition_concentration);
    }
    if (gaussian) {
      for (int k = 0; k < K; ++k)
        gx(block_emission + k) -= (x(block_emission + k) - mu_loc(k)) / (mu_scale(k) * mu_scale(k));
      transform::ordered_backward(sub(q, q_emission), sub(x, block_emission), sub(gx, block_emission),
                                  sub(grad, q_emission), K);
    } else {
      for (int k = 0; k < K; ++k) {
        const Row qk = sub(q, q_emission + k * (V - 1)), gk = sub(grad, q_emission + k * (V - 1));
        transform::simplex_backward(qk, sub(x, block_emission + k * V), sub(gx, block_emission + k * V), gk, V);
        add_dirichlet_gradient(qk, gk, V, emission_concentration);
      }
    }
    if (sigma_free) {
      const double sg = x(block_sigma);
      grad(q_sigma) += (gx(block_sigma) - sg / (sigma_scale * sigma_scale)) * sg + 1.0;
    }
    if (initial_dirichlet) {
      transform::simplex_backward(sub(q, q_initial), sub(x, block_initial), sub(gx, block_initial),
                                  sub(grad, q_initial), K);
      add_dirichlet_gradient(sub(q, q_initial), sub(grad, q_initial), K, initial_concentration);
    }
  }

  KOKKOS_INLINE_FUNCTION void constrain(const Row& q, const Row& out) const {
    const int K = num_states, V = num_symbols;
    for (int i = 0; i < K; ++i) transform::simplex_forward(sub(q, i * (K - 1)), sub(out, i * K), K);
    if (gaussian) {
      transform::ordered_forward(sub(q, q_emission), sub(out, draw_emission), K);
    } else {
      for (int k = 0; k < K; ++k)
        transform::simplex_forward(sub(q, q_emission + k * (V - 1)), sub(out, draw_emission + k * V), V);
    }
    if (sigma_free) out(draw_sigma) = math::exp(q(q_sigma));
    if (initial_dirichlet) transform::simplex_forward(sub(q, q_initial), sub(out, draw_initial), K);
  }

  // ---- device: the forward pass in parallel time, on a Kokkos team ----------
  //
  // `/model/forward parallel`: one particle's gradient on a team of threads. Each sequence
  // is cut into chunks of chunk_steps consecutive steps (set_chunks: about √T), and with
  // the maps N_t = diag(b_t) A the forward recursion pred_{t+1} ∝ pred_t N_t becomes an
  // associative product over chunks:
  //   1. every chunk c of steps t0..t1-1 forms G_c = diag(b_t0) A diag(b_t0+1) ... A
  //      diag(b_t1-1), normalised to sum 1 after every factor (only its direction is used);
  //   2. per sequence, the chunks' first predictions in order: pred_t0 of the next chunk ∝
  //      pred_t0 G_c A, normalised to sum 1 (as the sequential pred_t sums to 1);
  //   3. every chunk runs the sequential forward steps from its pred_t0 (forward_steps),
  //      storing pred_t and 1 / c_t as the sequential pass does, and its part of log L;
  //   4. per sequence, the chunks' last backward vectors from the end: β_{t1-1} of the
  //      previous chunk ∝ A G_c β_{t1-1}, from β_T = 1;
  //   5. every chunk runs the sequential backward steps (backward_steps) from its β_{t1-1},
  //      scaled so that Σ_k α_{t1-1}(k) β_{t1-1}(k) = 1 (the sequential pass's scaling),
  //      into its own partial sums of the gradient;
  //   6. the partial sums are added up in chunk order (categorical emissions: per symbol,
  //      over its steps in time order).
  // Chunks, not threads, fix the arithmetic: the result is the same for any team size, and
  // equals the sequential pass's to rounding (tests/unit/test_hmm_parallel.cpp, 1e-12 relative).
  // The work is about twice the sequential pass's (G_c costs K³ per step, not K²); the
  // latency on a team of C = T / chunk_steps threads about 4 √T steps instead of 2 T.

  /// Offsets in the scratch row of the team gradient's areas (after the sequential
  /// gradient's x, gx and store): d log L / db_t (categorical, N K), G_c (C K²), β
  /// directions (C K), log L per chunk (C), gradient partial sums per chunk (C
  /// team_partial_size()), and one slot for log prior + log|J|.
  KOKKOS_INLINE_FUNCTION int team_db() const { return 2 * block_size + num_observations * (num_states + 1); }
  KOKKOS_INLINE_FUNCTION int team_products() const {
    return team_db() + (gaussian ? 0 : num_observations * num_states);
  }
  KOKKOS_INLINE_FUNCTION int team_betas() const { return team_products() + num_chunks * num_states * num_states; }
  KOKKOS_INLINE_FUNCTION int team_ll() const { return team_betas() + num_chunks * num_states; }
  KOKKOS_INLINE_FUNCTION int team_partials() const { return team_ll() + num_chunks; }
  /// A chunk's partial sums: d log L / dA (K²), d / dπ (K), d / dμ (K), d / dσ · σ (1).
  KOKKOS_INLINE_FUNCTION int team_partial_size() const { return num_states * (num_states + 2) + 1; }
  KOKKOS_INLINE_FUNCTION int team_prior() const { return team_partials() + num_chunks * team_partial_size(); }
  /// Doubles of scratch of the team gradient: the sequential gradient's and its own.
  int team_scratch_size() const { return team_prior() + 1; }

  /// The gradient block at step t of a chunk, as backward_step writes it: categorical
  /// emissions into d log L / db_t(j) (zeroed here), π and μ into the chunk's partial sums.
  struct ChunkGrads {
    Row db_t, partial;
    int block_emission, block_initial, num_symbols, K;
    bool gaussian;
    KOKKOS_FORCEINLINE_FUNCTION double& operator()(int i) const {
      if (i >= block_initial) return partial(K * K + i - block_initial);
      if (gaussian) return partial(K * K + K + i - block_emission);
      return db_t((i - block_emission) / num_symbols);
    }
  };

  /// Step 1: G_c of chunk c into `g` (K x K, row-major). Not formed for the only chunk of
  /// a sequence, which neither scan reads (the forward scan reads every chunk but a
  /// sequence's last, the backward scan every chunk but its first).
  template <int KC, class Emission>
  KOKKOS_INLINE_FUNCTION void chunk_product(int c, const double* A, const Emission& emission, const Row& g) const {
    const int s = chunk_sequence(c);
    if (sequence_chunks(s + 1) - sequence_chunks(s) == 1) return;
    const int K = states<KC>();
    double G[kMaxStates * kMaxStates], H[kMaxStates * kMaxStates], b[kMaxStates];
    const int t0 = chunk_start(c), t1 = chunk_start(c + 1);
    emission(t0, b);
    for (int i = 0; i < K; ++i)
      for (int j = 0; j < K; ++j) G[i * K + j] = i == j ? b[i] : 0.0;
    for (int t = t0 + 1; t < t1; ++t) {
      emission(t, b);
      double total = 0.0;
      for (int i = 0; i < K; ++i)
        for (int j = 0; j < K; ++j) {
          double s = 0.0;
          for (int k = 0; k < K; ++k) s += G[i * K + k] * A[k * K + j];
          H[i * K + j] = s * b[j];
          total += H[i * K + j];
        }
      const double inv = total > 0.0 ? 1.0 / total : 0.0;
      for (int k = 0; k < K * K; ++k) G[k] = H[k] * inv;
    }
    for (int k = 0; k < K * K; ++k) g(k) = G[k];
  }

  /// v ← v / Σ_k v(k) (0/0 where the sum is 0: an impossible observation, which the
  /// forward steps then report).
  KOKKOS_FORCEINLINE_FUNCTION static void normalise(int K, double* v) {
    double total = 0.0;
    for (int k = 0; k < K; ++k) total += v[k];
    for (int k = 0; k < K; ++k) v[k] /= total;
  }

  /// Step 2 for sequence s: pred_t0 of each chunk into the store.
  template <int KC>
  KOKKOS_INLINE_FUNCTION void chunk_predictions(int s, const double* pi, const double* A, const Row& scratch) const {
    const int K = states<KC>();
    const Row store = sub(scratch, 2 * block_size), products = sub(scratch, team_products());
    double v[kMaxStates], w[kMaxStates];
    for (int k = 0; k < K; ++k) v[k] = pi[k];
    const int last = sequence_chunks(s + 1) - 1;
    for (int c = sequence_chunks(s);; ++c) {
      const int t0 = chunk_start(c);
      for (int k = 0; k < K; ++k) store(t0 * K + k) = v[k];
      if (c == last) break;
      const Row g = sub(products, c * K * K);
      for (int j = 0; j < K; ++j) {
        w[j] = 0.0;
        for (int i = 0; i < K; ++i) w[j] += v[i] * g(i * K + j);
      }
      for (int j = 0; j < K; ++j) {
        v[j] = 0.0;
        for (int i = 0; i < K; ++i) v[j] += w[i] * A[i * K + j];
      }
      normalise(K, v);
    }
  }

  /// Step 4 for sequence s: the direction of β_{t1-1} of each chunk.
  template <int KC>
  KOKKOS_INLINE_FUNCTION void chunk_betas(int s, const double* A, const Row& scratch) const {
    const int K = states<KC>();
    const Row products = sub(scratch, team_products()), betas = sub(scratch, team_betas());
    double r[kMaxStates], y[kMaxStates];
    for (int k = 0; k < K; ++k) r[k] = 1.0;
    const int first = sequence_chunks(s);
    for (int c = sequence_chunks(s + 1) - 1;; --c) {
      for (int k = 0; k < K; ++k) betas(c * K + k) = r[k];
      if (c == first) break;
      const Row g = sub(products, c * K * K);
      for (int i = 0; i < K; ++i) {
        y[i] = 0.0;
        for (int j = 0; j < K; ++j) y[i] += g(i * K + j) * r[j];
      }
      for (int i = 0; i < K; ++i) {
        r[i] = 0.0;
        for (int j = 0; j < K; ++j) r[i] += A[i * K + j] * y[j];
      }
      normalise(K, r);
    }
  }

  /// Step 5 for chunk c: its backward steps into its partial sums (and d log L / db_t).
  template <int KC>
  KOKKOS_INLINE_FUNCTION void chunk_backward(int c, const double* A, const Row& x, const Row& scratch) const {
    const int K = states<KC>();
    const Row store = sub(scratch, 2 * block_size), db = sub(scratch, team_db());
    const Row partial = sub(scratch, team_partials() + c * team_partial_size());
    const int s = chunk_sequence(c), first = sequence_offsets(s);
    const int t0 = chunk_start(c), t1 = chunk_start(c + 1);
    double beta[kMaxStates], g_A[kMaxStates * kMaxStates];
    for (int k = 0; k < K; ++k) beta[k] = 1.0;
    if (c + 1 < sequence_chunks(s + 1)) {
      // β_{t1-1} ∝ the scan's direction, with Σ_k α_{t1-1}(k) β_{t1-1}(k) = 1.
      double b[kMaxStates];
      EmissionFromScratch<KC>{this, x}(t1 - 1, b);
      const double inv_c = store(num_observations * K + t1 - 1);
      double dot = 0.0;
      for (int k = 0; k < K; ++k) {
        beta[k] = scratch(team_betas() + c * K + k);
        dot += store((t1 - 1) * K + k) * b[k] * inv_c * beta[k];
      }
      for (int k = 0; k < K; ++k) beta[k] /= dot;
    }
    for (int k = 0; k < K * K; ++k) g_A[k] = 0.0;
    for (int k = K * K; k < team_partial_size(); ++k) partial(k) = 0.0;
    double g_sigma = 0.0;
    const auto grads_at = [&](int t) {
      const Row db_t = sub(db, t * K);
      if (!gaussian)
        for (int j = 0; j < K; ++j) db_t(j) = 0.0;
      return ChunkGrads{db_t, partial, block_emission, block_initial, num_symbols, K, gaussian};
    };
    backward_steps<KC>(first, t0, t1, A, g_A, x, grads_at, store, beta, g_sigma);
    for (int k = 0; k < K * K; ++k) partial(k) = g_A[k];
    partial(K * K + 2 * K) = g_sigma;
  }

  /// log p(q) and its gradient on a team (steps 1-6 above; every thread of the team calls
  /// it and gets the result): the value of log_density_gradient(q, grad, scratch) to
  /// rounding, with team_scratch_size() doubles of scratch.
  template <int KC, class Member>
  KOKKOS_INLINE_FUNCTION double team_gradient(const Member& team, const Row& q, const Row& grad,
                                              const Row& scratch) const {
    const int K = states<KC>();
    const Row x = scratch, gx = sub(scratch, block_size), store = sub(scratch, 2 * block_size);
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      scratch(team_prior()) = materialise(q, x);
      for (int j = 0; j < block_size; ++j) gx(j) = 0.0;
    });
    team.team_barrier();
    double pi[kMaxStates], A[kMaxStates * kMaxStates];
    for (int k = 0; k < K; ++k) pi[k] = x(block_initial + k);
    for (int k = 0; k < K * K; ++k) A[k] = x(k);
    const EmissionFromScratch<KC> emission{this, x};
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, num_chunks), [&](const int c) {
      chunk_product<KC>(c, A, emission, sub(scratch, team_products() + c * K * K));
    });
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, num_sequences),
                         [&](const int s) { chunk_predictions<KC>(s, pi, A, scratch); });
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, num_chunks), [&](const int c) {
      double pred[kMaxStates], ll = 0.0, product = 1.0;
      const int t0 = chunk_start(c);
      for (int k = 0; k < K; ++k) pred[k] = store(t0 * K + k);
      const bool ok = forward_steps<KC>(t0, chunk_start(c + 1), pred, A, emission, store, ll, product);
      scratch(team_ll() + c) = ok ? ll + math::log(product) : -math::infinity();
    });
    team.team_barrier();
    double ll = 0.0;
    for (int c = 0; c < num_chunks; ++c) ll += scratch(team_ll() + c);
    const double lp = scratch(team_prior()) + ll;
    if (!math::isfinite(lp)) return -math::infinity();  // every thread returns here, or none

    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, num_sequences),
                         [&](const int s) { chunk_betas<KC>(s, A, scratch); });
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, num_chunks),
                         [&](const int c) { chunk_backward<KC>(c, A, x, scratch); });
    team.team_barrier();
    const int P = team_partial_size();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, P), [&](const int j) {
      double total = 0.0;
      for (int c = 0; c < num_chunks; ++c) total += scratch(team_partials() + c * P + j);
      if (j < K * K) {
        gx(j) = total;
      } else if (j < K * K + K) {
        gx(block_initial + j - K * K) = total;
      } else if (j < K * K + 2 * K) {
        if (gaussian) gx(block_emission + j - K * K - K) = total;
      } else {
        gx(block_sigma) = total / x(block_sigma);
      }
    });
    if (!gaussian) {
      const Row db = sub(scratch, team_db());
      const int S = num_present_symbols;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, K * S), [&](const int e) {
        const int j = e / S, p = e - j * S;
        double total = 0.0;
        for (int n = symbol_offsets(p); n < symbol_offsets(p + 1); ++n) total += db(symbol_times(n) * K + j);
        gx(block_emission + j * num_symbols + present_symbols(p)) = total;
      });
    }
    team.team_barrier();
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      for (int j = 0; j < dim_; ++j) grad(j) = 0.0;
      chain(q, x, gx, grad);
    });
    team.team_barrier();
    return lp;
  }

  /// \brief The team form of log_density_gradient(q, grad, scratch) (sampler: the team
  /// path, when gradient_team_size() asks for one).
  template <class Member>
  KOKKOS_INLINE_FUNCTION double log_density_gradient(const Member& team, const Row& q, const Row& grad,
                                                     const Row& scratch) const {
    return with_states(num_states, [&](auto kc) {
      constexpr int KC = decltype(kc)::value;
      return team_gradient<KC>(team, q, grad, scratch);
    });
  }

  // ---- host: the gradient of a block of kLanes particles (sampler/lanes.hpp) ----

  /// Packs of the lane kernel's per-thread scratch: x and d log L / dx ([param][lane]),
  /// a checkpoint (pred_t0 and α_{t0-1}, 2 K Packs) per segment of lane_segment_steps steps,
  /// and one segment's pred_t, α_t and 1 / c_t ((2 K + 1) lane_segment_steps Packs).
  int lane_scratch_size() const {
    return 2 * block_size + 2 * num_states * lane_segments + (2 * num_states + 1) * lane_segment_steps;
  }

  // Per-lane scalar work of the lane gradient goes through these out-of-line calls:
  // inlined into a loop over the lanes, it could be vectorised across them (vector exp
  // and log, a few ulp from the scalar ones), and a lane would no longer compute what
  // the scalar gradient computes.
#if defined(__GNUC__)
#define HMC_HMM_OUT_OF_LINE __attribute__((noinline))
#else
#define HMC_HMM_OUT_OF_LINE
#endif
  HMC_HMM_OUT_OF_LINE static double lane_log(double x) { return math::log(x); }
  HMC_HMM_OUT_OF_LINE double lane_materialise(const Row& q, const Row& x) const { return materialise(q, x); }
  HMC_HMM_OUT_OF_LINE void lane_chain(const Row& q, const Row& x, const Row& gx, const Row& grad) const {
    chain(q, x, gx, grad);
  }
#undef HMC_HMM_OUT_OF_LINE

  /// Largest store of forward quantities of the lane gradient, per thread: up to it
  /// every step is kept (one forward and one backward pass), beyond it the backward pass
  /// recomputes segments from checkpoints (one more forward pass). On the 2-core Xeon of
  /// docs/performance.md#the-hmm keeping the 7 MB of K = 5, T = 10,000 (served from L3)
  /// beat 1 MiB segments recomputed in L2 by 20 %.
  static constexpr long kLaneStoreBytes = 16L << 20;

  /// Sets the lane gradient's segment length (at least 1 step; the longest sequence
  /// where that is shorter) from the sequence offsets (S + 1, host). Tests shorten it to
  /// exercise the checkpoints.
  void set_lane_segment(long steps, const std::vector<int>& seq_offsets) {
    int longest = 1;
    for (std::size_t s = 0; s + 1 < seq_offsets.size(); ++s)
      longest = std::max(longest, seq_offsets[s + 1] - seq_offsets[s]);
    lane_segment_steps = static_cast<int>(std::max(1L, std::min<long>(steps, longest)));
    lane_segments = 0;
    for (std::size_t s = 0; s + 1 < seq_offsets.size(); ++s)
      lane_segments += (seq_offsets[s + 1] - seq_offsets[s] + lane_segment_steps - 1) / lane_segment_steps;
  }

  /// Cuts the sequences into chunks of `steps` steps (0: ⌈√T⌉ for the longest sequence T)
  /// for the team gradient and uploads the chunk and symbol tables (none with /model/forward
  /// sequential). Tests set other chunk lengths.
  void set_chunks(int steps, const HmmDescription& h) {
    const auto& offsets = h.sequence_offsets;
    longest_sequence = 0;
    for (std::size_t s = 0; s + 1 < offsets.size(); ++s)
      longest_sequence = std::max(longest_sequence, offsets[s + 1] - offsets[s]);
    if (forward_mode == HmmForward::kSequential) return;
    chunk_steps = steps > 0 ? steps : std::max(1, static_cast<int>(std::ceil(std::sqrt(double(longest_sequence)))));
    std::vector<int> start, sequence, seq_chunks{0};
    for (std::size_t s = 0; s + 1 < offsets.size(); ++s) {
      for (int t = offsets[s]; t < offsets[s + 1]; t += chunk_steps) {
        start.push_back(t);
        sequence.push_back(static_cast<int>(s));
      }
      seq_chunks.push_back(static_cast<int>(start.size()));
    }
    start.push_back(offsets.back());
    num_chunks = static_cast<int>(sequence.size());
    chunk_start = to_device_view("hmm::chunk_start", start);
    chunk_sequence = to_device_view("hmm::chunk_sequence", sequence);
    sequence_chunks = to_device_view("hmm::sequence_chunks", seq_chunks);
    if (gaussian) return;
    std::vector<int> count(static_cast<std::size_t>(num_symbols), 0), present, first{0}, times;
    for (int v : h.symbols) ++count[static_cast<std::size_t>(v)];
    std::vector<int> slot(static_cast<std::size_t>(num_symbols), -1);
    for (int v = 0; v < num_symbols; ++v) {
      if (count[v] == 0) continue;
      slot[v] = static_cast<int>(present.size());
      present.push_back(v);
      first.push_back(first.back() + count[v]);
    }
    times.resize(h.symbols.size());
    std::vector<int> next(first.begin(), first.end() - 1);
    for (std::size_t t = 0; t < h.symbols.size(); ++t) times[next[slot[h.symbols[t]]]++] = static_cast<int>(t);
    num_present_symbols = static_cast<int>(present.size());
    present_symbols = to_device_view("hmm::present_symbols", present);
    symbol_offsets = to_device_view("hmm::symbol_offsets", first);
    symbol_times = to_device_view("hmm::symbol_times", times);
  }

  /// Lane l of a [param][lane] block, as a Row.
  template <class P>
  static Row lane_row(P* block, int l) {
    return Row{block[0].lanes() + l, kLanes};
  }

  /// One scaled forward step for every lane (forward()'s step: forward_normaliser, then
  /// forward_advance), keeping pred_t, α_t and 1 / c_t in `row`; c_t into `c`.
  template <class P>
  static void forward_step_lanes(int K, P* pred, const P* b, const P* A, P* alpha, P* row, P& c) {
    c = forward_normaliser(K, pred, b);
    const P inv_c = 1.0 / c;
    for (int k = 0; k < K; ++k) row[k] = pred[k];
    forward_advance(K, pred, b, inv_c, A, alpha);
    for (int k = 0; k < K; ++k) row[K + k] = alpha[k];
    row[2 * K] = inv_c;
  }

  /// forward() then backward() for every lane, with the stored forward quantities
  /// checkpointed: the forward pass keeps pred and α at the start of every segment of
  /// lane_segment_steps steps (`ck`) and one segment's steps (`buf`); the backward pass goes
  /// through the segments of each sequence from its last, recomputing a segment's steps
  /// from its checkpoint (bitwise the values of the forward pass) where it is not the one
  /// held (a single segment per sequence unless the store would pass kLaneStoreBytes).
  /// Returns log L per lane (-inf where some c_t is not positive); d log L / dx goes
  /// into GX (zeroed by the caller), the transition block included.
  template <int KC, class P>
  P forward_backward_lanes(const P* X, P* GX, P* ck, P* buf) const {
    const int K = states<KC>();
    constexpr int KM = KC > 0 ? KC : kMaxStates;
    const int C = lane_segment_steps, R = 2 * K + 1;
    const Indexed<const P> params{X};
    P A[KM * KM], g_A[KM * KM], pi[KM], pred[KM], alpha[KM], b[KM], c;
    for (int k = 0; k < K * K; ++k) {
      A[k] = X[k];
      g_A[k] = P(0.0);
    }
    for (int k = 0; k < K; ++k) {
      pi[k] = X[block_initial + k];
      alpha[k] = P(0.0);
    }
    // Forward: log L as forward() sums it, lane by lane (the c_t multiplied up, their
    // log taken when the product gets small, the rare steps done per lane).
    P ll(0.0), product(1.0), alive(1.0);
    const double gaussian_const = gaussian ? 0.5 * math::log(2.0 * math::pi()) : 0.0;
    P log_sigma(0.0);
    if (gaussian)
      for (int l = 0; l < kLanes; ++l) log_sigma[l] = lane_log(X[block_sigma][l]);
    int seg = 0;
    for (int s = 0; s < num_sequences; ++s) {
      const int first = sequence_offsets(s), end = sequence_offsets(s + 1);
      for (int k = 0; k < K; ++k) pred[k] = pi[k];
      for (int t = first, r = 0; t < end; ++t, ++r) {
        if (r == C) r = 0;
        if (r == 0) {
          P* cp = ck + 2 * K * seg++;
          for (int k = 0; k < K; ++k) {
            cp[k] = pred[k];
            cp[K + k] = alpha[k];
          }
        }
        if (gaussian) {
          ll += emission_from_block<KC>(t, params, b) - log_sigma - gaussian_const;
        } else {
          emission_from_block<KC>(t, params, b);
        }
        forward_step_lanes(K, pred, b, A, alpha, buf + r * R, c);
        const P next = product * c;
        bool rare = false;
        for (int l = 0; l < kLanes; ++l) rare |= alive[l] != 0.0 && !(c[l] >= 1e-100 && next[l] >= 1e-200);
        if (!rare) {
          product = next;
          continue;
        }
        for (int l = 0; l < kLanes; ++l) {
          if (alive[l] == 0.0) continue;
          const double cl = c[l];
          if (!(cl > 0.0)) {
            alive[l] = 0.0;
          } else if (cl < 1e-100) {
            ll[l] += lane_log(cl);
          } else {
            product[l] *= cl;
            if (product[l] < 1e-200) {
              ll[l] += lane_log(product[l]);
              product[l] = 1.0;
            }
          }
        }
      }
    }
    for (int l = 0; l < kLanes; ++l) ll[l] = alive[l] != 0.0 ? ll[l] + lane_log(product[l]) : -math::infinity();

    // Backward: backward_step at every t, segment by segment.
    P beta[KM], w[KM], b_cur[KM], b_prev[KM];
    const P sigma = X[block_sigma], inv_var = 1.0 / (sigma * sigma);
    P g_sigma(0.0);
    int in_buf = seg - 1, base = 0;
    for (int s = 0; s < num_sequences; ++s) {
      const int first = sequence_offsets(s), end = sequence_offsets(s + 1), segments = (end - first + C - 1) / C;
      for (int k = 0; k < K; ++k) beta[k] = P(1.0);
      emission_from_block<KC>(end - 1, params, b_cur);
      for (int m = segments - 1; m >= 0; --m) {
        const int g = base + m, t0 = first + m * C, t1 = t0 + C < end ? t0 + C : end;
        const P* cp = ck + 2 * K * g;
        if (g != in_buf) {
          for (int k = 0; k < K; ++k) pred[k] = cp[k];
          for (int t = t0; t < t1; ++t) {
            emission_from_block<KC>(t, params, b);
            forward_step_lanes(K, pred, b, A, alpha, buf + (t - t0) * R, c);
          }
          in_buf = g;
        }
        for (int t = t1 - 1; t >= t0; --t) {
          const P* row = buf + (t - t0) * R;
          const P* alpha_prev = nullptr;
          if (t > first) {
            emission_from_block<KC>(t - 1, params, b_prev);
            alpha_prev = t > t0 ? buf + (t - 1 - t0) * R + K : cp + K;
          }
          backward_step<KC>(t, row[2 * K], Indexed<const P>{row}, alpha_prev, b_prev, A, params, inv_var, beta, b_cur,
                            w, g_A, Indexed<P>{GX}, g_sigma);
        }
      }
      base += segments;
    }
    GX[block_sigma] += g_sigma / sigma;
    for (int k = 0; k < K * K; ++k) GX[k] = g_A[k];
    return ll;
  }

  /// log p(q) and its gradient for the kLanes particles of a block ([coordinate][lane]),
  /// with `scratch` of lane_scratch_size() Packs: lane by lane what
  /// log_density_gradient(q, grad, scratch) computes, bitwise for categorical emissions
  /// (the vector exp of gaussian emissions is a few ulp from the scalar one). Host only.
  template <class P>
  P log_density_gradient_lanes(const PackRow& q, const PackRow& grad, P* scratch) const {
    const int K = num_states;
    P* X = scratch;
    P* GX = X + block_size;
    P* ck = GX + block_size;
    P* buf = ck + 2 * K * lane_segments;
    P lp_prior;
    for (int j = 0; j < dim_; ++j) grad(j) = P(0.0);
    for (int j = 0; j < block_size; ++j) GX[j] = P(0.0);
    for (int l = 0; l < kLanes; ++l) lp_prior[l] = lane_materialise(lane_row(q.data, l), lane_row(X, l));
    const P ll = with_states(K, [&](auto kc) {
      constexpr int KC = decltype(kc)::value;
      return forward_backward_lanes<KC>(X, GX, ck, buf);
    });
    P lp;
    for (int l = 0; l < kLanes; ++l) {
      lp[l] = lp_prior[l] + ll[l];
      if (!math::isfinite(lp[l])) {
        lp[l] = -math::infinity();
        continue;
      }
      lane_chain(lane_row(q.data, l), lane_row(X, l), lane_row(GX, l), lane_row(grad.data, l));
    }
    return lp;
  }

  // ---- host -----------------------------------------------------------------

  /// \brief q from constrained values in constrain()'s layout (num_params() values).
  std::vector<double> unconstrain(std::vector<double> x) const {
    const int K = num_states, V = num_symbols;
    std::vector<double> q(dim_, 0.0);
    const Row xr{x.data(), 1}, qr{q.data(), 1};
    for (int i = 0; i < K; ++i) transform::simplex_inverse(sub(xr, i * K), sub(qr, i * (K - 1)), K);
    if (gaussian) {
      transform::ordered_inverse(sub(xr, draw_emission), sub(qr, q_emission), K);
    } else {
      for (int k = 0; k < K; ++k)
        transform::simplex_inverse(sub(xr, draw_emission + k * V), sub(qr, q_emission + k * (V - 1)), V);
    }
    if (sigma_free) q[q_sigma] = transform::positive_inverse(x[draw_sigma]);
    if (initial_dirichlet) transform::simplex_inverse(sub(xr, draw_initial), sub(qr, q_initial), K);
    return q;
  }

  /// The config keys (models/hmm_data.hpp).
  static keys::Keys config_keys() { return hmm_config_keys(); }

  /// The model of a config's /model section and its data (read by models/hmm_data.hpp).
  static Hmm from_config(const nlohmann::json& model, const nlohmann::json& data) {
    return from_description(read_hmm(model, data));
  }

  /// The model of a description: its data uploaded to the device, its layouts laid out.
  static Hmm from_description(const HmmDescription& h) {
    Hmm m;
    m.num_states = h.num_states;
    m.num_symbols = h.num_symbols;
    m.gaussian = h.gaussian;
    m.initial_dirichlet = h.initial_dirichlet;
    m.sigma_free = h.sigma_free;
    if (h.gaussian && !h.sigma_free) m.sigma_fixed = h.sigma_fixed;
    m.transition_concentration = h.transition_concentration;
    m.emission_concentration = h.emission_concentration;
    m.initial_concentration = h.initial_concentration;
    m.sigma_scale = h.sigma_scale;
    m.num_sequences = static_cast<int>(h.sequence_offsets.size()) - 1;
    m.num_observations = h.sequence_offsets.back();
    m.sequence_offsets = to_device_view("hmm::offsets", h.sequence_offsets);
    m.symbols = to_device_view("hmm::symbols", h.symbols);
    m.observations = to_device_view("hmm::y", h.observations);
    m.mu_loc = to_device_view("hmm::mu_loc", h.mu_loc);
    m.mu_scale = to_device_view("hmm::mu_scale", h.mu_scale);

    // Layouts (see the file comment).
    const int K = m.num_states;
    const int emit_q = m.gaussian ? K : K * (m.num_symbols - 1), emit_x = m.gaussian ? K : K * m.num_symbols;
    m.q_emission = K * (K - 1);
    m.q_sigma = m.q_emission + emit_q;
    m.q_initial = m.q_sigma + (m.sigma_free ? 1 : 0);
    m.dim_ = m.q_initial + (m.initial_dirichlet ? K - 1 : 0);
    m.draw_emission = K * K;
    m.draw_sigma = m.draw_emission + emit_x;
    m.draw_initial = m.draw_sigma + (m.sigma_free ? 1 : 0);
    m.num_params_ = m.draw_initial + (m.initial_dirichlet ? K : 0);
    m.block_emission = K * K;
    m.block_sigma = m.block_emission + emit_x;
    m.block_initial = m.block_sigma + 1;
    m.block_size = m.block_initial + K;
    if (m.dim_ == 0) throw ConfigError("config error: hmm with these settings has no parameters to sample");
    m.set_lane_segment(kLaneStoreBytes / (64 * (2 * K + 1)), h.sequence_offsets);
    m.forward_mode = h.forward;
    m.set_chunks(0, h);
    return m;
  }
};

}  // namespace hmc::models
