#include "hmc/parallel/decomposition.hpp"

#include <gtest/gtest.h>

TEST(Decomposition, ContiguousBlocksCoverEveryParticleOnce) {
  for (std::int64_t n : {0, 1, 5, 37, 1000, 1025}) {
    for (int ranks : {1, 2, 3, 4, 7, 64}) {
      std::int64_t next = 0, smallest = n, largest = 0;
      for (int r = 0; r < ranks; ++r) {
        const hmc::parallel::Decomposition d{n, ranks, r};
        EXPECT_EQ(d.begin(), next) << "n=" << n << " ranks=" << ranks << " r=" << r;
        EXPECT_EQ(d.count(), d.count_of(r));
        next += d.count();
        smallest = std::min(smallest, d.count());
        largest = std::max(largest, d.count());
      }
      EXPECT_EQ(next, n);
      EXPECT_LE(largest - smallest, 1);
    }
  }
}
