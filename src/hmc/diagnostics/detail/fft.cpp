#include "hmc/diagnostics/detail/fft.hpp"

#include "hmc/diagnostics/detail/parallel.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace hmc::diagnostics::detail {

namespace {

constexpr double kPi = 3.14159265358979323846;

/// In-place iterative radix-2 FFT, X_k = Σ_j x_j e^{−2πi jk/n}.
class Fft {
 public:
  explicit Fft(int n) : n_(n), rev_(n) {
    int bits = 0;
    while ((1 << bits) < n) ++bits;
    for (int i = 0; i < n; ++i) {
      int r = 0;
      for (int b = 0; b < bits; ++b) r |= ((i >> b) & 1) << (bits - 1 - b);
      rev_[i] = r;
    }
    std::vector<double> cos(n / 2), sin(n / 2);
    for (int k = 0; k < n / 2; ++k) {
      const double a = -2.0 * kPi * k / n;
      cos[k] = std::cos(a);
      sin[k] = std::sin(a);
    }
    // The twiddles of the stage of length len at [len/2 − 1, len − 1), contiguous.
    tw_re_.resize(static_cast<std::size_t>(std::max(1, n - 1)));
    tw_im_.resize(tw_re_.size());
    for (int len = 2; len <= n; len <<= 1) {
      const int half = len / 2, step = n / len;
      for (int j = 0; j < half; ++j) {
        tw_re_[half - 1 + j] = cos[j * step];
        tw_im_[half - 1 + j] = sin[j * step];
      }
    }
  }

  void forward(double* re, double* im) const {
    for (int i = 0; i < n_; ++i)
      if (i < rev_[i]) {
        std::swap(re[i], re[rev_[i]]);
        std::swap(im[i], im[rev_[i]]);
      }
    stages(2, re, im);
  }

  /// forward() of x − mx (real part) and y − my (imaginary part; 0 if y is null),
  /// m ≤ n/2 values zero-padded to n. The inputs land at the bit-reversed
  /// positions, which are even; their odd neighbours hold padding, so the first
  /// stage is x' = x + 0 (as the butterfly computes it: -0 becomes +0) and x.
  void forward_padded(const double* x, double mx, const double* y, double my, int m, double* re, double* im) const {
    for (int i = 0; i < n_ / 2; ++i) {
      const int p = rev_[i];
      const double a = i < m ? x[i] - mx : 0.0;
      const double b = i < m && y != nullptr ? y[i] - my : 0.0;
      re[p] = a + 0.0;
      re[p + 1] = a;
      im[p] = b + 0.0;
      im[p + 1] = b;
    }
    stages(4, re, im);
  }

 private:
  void stages(int first_len, double* re, double* im) const {
    for (int len = first_len; len <= n_; len <<= 1) {
      const int half = len / 2;
#if defined(__SSE2__)
      // Two butterflies at a time: the same IEEE operations as the scalar loop below.
      if (half % 2 == 0) {
        const double* wr = tw_re_.data() + half - 1;
        const double* wi = tw_im_.data() + half - 1;
        for (int start = 0; start < n_; start += len) {
          double* ra = re + start;
          double* rb = ra + half;
          double* ia = im + start;
          double* ib = ia + half;
          for (int j = 0; j < half; j += 2) {
            const __m128d w_r = _mm_loadu_pd(wr + j), w_i = _mm_loadu_pd(wi + j);
            const __m128d b_r = _mm_loadu_pd(rb + j), b_i = _mm_loadu_pd(ib + j);
            const __m128d a_r = _mm_loadu_pd(ra + j), a_i = _mm_loadu_pd(ia + j);
            const __m128d tr = _mm_sub_pd(_mm_mul_pd(b_r, w_r), _mm_mul_pd(b_i, w_i));
            const __m128d ti = _mm_add_pd(_mm_mul_pd(b_r, w_i), _mm_mul_pd(b_i, w_r));
            _mm_storeu_pd(rb + j, _mm_sub_pd(a_r, tr));
            _mm_storeu_pd(ib + j, _mm_sub_pd(a_i, ti));
            _mm_storeu_pd(ra + j, _mm_add_pd(a_r, tr));
            _mm_storeu_pd(ia + j, _mm_add_pd(a_i, ti));
          }
        }
        continue;
      }
#endif
      const double* __restrict wr = tw_re_.data() + half - 1;
      const double* __restrict wi = tw_im_.data() + half - 1;
      for (int start = 0; start < n_; start += len) {
        double* __restrict ra = re + start;
        double* __restrict rb = re + start + half;
        double* __restrict ia = im + start;
        double* __restrict ib = im + start + half;
        for (int j = 0; j < half; ++j) {
          const double tr = rb[j] * wr[j] - ib[j] * wi[j];
          const double ti = rb[j] * wi[j] + ib[j] * wr[j];
          rb[j] = ra[j] - tr;
          ib[j] = ia[j] - ti;
          ra[j] += tr;
          ia[j] += ti;
        }
      }
    }
  }

  int n_;
  std::vector<int> rev_;
  std::vector<double> tw_re_, tw_im_;
};

}  // namespace

std::vector<double> mean_autocovariance(const Matrix& m, const std::vector<double>& chain_mean) {
  const int n = m.cols;
  int size = 1;
  while (size < 2 * n) size <<= 1;
  const Fft fft(size);
  const auto usize = static_cast<std::size_t>(size);
  const int pairs = (m.rows + 1) / 2;
  const int blocks = std::min(blocks_for(static_cast<std::size_t>(m.rows) * n), pairs);
  // Up to 8 MB of spectra per chunk: few synchronisations, and the sums stream.
  const int chunk = std::max(blocks, std::min(pairs, std::max(1, (1 << 17) / size)));
  std::vector<double> power(usize, 0.0);
  Buffer<double> spectra(static_cast<std::size_t>(chunk) * usize),
      scratch(static_cast<std::size_t>(blocks) * 2 * usize);
  for (int c0 = 0; c0 < pairs; c0 += chunk) {
    const int c1 = std::min(pairs, c0 + chunk);
    run_blocks(blocks, [&](int b) {
      double* re = scratch.data() + static_cast<std::size_t>(b) * 2 * usize;
      double* im = re + usize;
      const auto p0 = static_cast<int>(c0 + block_start(static_cast<std::size_t>(c1 - c0), blocks, b));
      const auto p1 = static_cast<int>(c0 + block_start(static_cast<std::size_t>(c1 - c0), blocks, b + 1));
      for (int pair = p0; pair < p1; ++pair) {
        const int r = 2 * pair;
        const bool both = r + 1 < m.rows;
        fft.forward_padded(m.row(r), chain_mean[r], both ? m.row(r + 1) : nullptr, both ? chain_mean[r + 1] : 0.0, n,
                           re, im);
        double* out = spectra.data() + static_cast<std::size_t>(pair - c0) * usize;
        if (both) {
          // q = (size − k) mod size: 0 for k = 0, size − k after.
          out[0] = 0.5 * (re[0] * re[0] + im[0] * im[0] + re[0] * re[0] + im[0] * im[0]);
          for (int k = 1; k < size; ++k) {
            const int q = size - k;
            out[k] = 0.5 * (re[k] * re[k] + im[k] * im[k] + re[q] * re[q] + im[q] * im[q]);
          }
        } else {
          for (int k = 0; k < size; ++k) out[k] = re[k] * re[k] + im[k] * im[k];
        }
      }
    });
    run_blocks(blocks, [&](int b) {
      const std::size_t k0 = block_start(usize, blocks, b), k1 = block_start(usize, blocks, b + 1);
      for (int pair = c0; pair < c1; ++pair) {
        const double* in = spectra.data() + static_cast<std::size_t>(pair - c0) * usize;
        for (std::size_t k = k0; k < k1; ++k) power[k] += in[k];
      }
    });
  }
  // The summed spectrum is real and even, so the forward transform is the inverse
  // up to the 1/size factor.
  std::vector<double> im(usize, 0.0);
  fft.forward(power.data(), im.data());
  std::vector<double> acov(n);
  const double scale = 1.0 / (static_cast<double>(size) * n * m.rows);
  for (int t = 0; t < n; ++t) acov[t] = power[t] * scale;
  return acov;
}

}  // namespace hmc::diagnostics::detail
