#include "hmc/parallel/mpi_context.hpp"

#include "hmc/parallel/traffic.hpp"
#include "hmc/parallel/watchdog.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace hmc::parallel {

MpiContext::MpiContext(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    // MPI_THREAD_MULTIPLE: the watchdog's thread talks to the other ranks while the
    // main thread is inside a collective.
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    owns_init_ = true;
  }
  MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  // The ranks that share this rank's node (its shared-memory domain).
  MPI_Comm node = MPI_COMM_NULL;
  if (MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node) == MPI_SUCCESS &&
      node != MPI_COMM_NULL) {
    MPI_Comm_size(node, &node_size_);
    MPI_Comm_free(&node);
  }
}

MpiContext::~MpiContext() {
  watchdog_.reset();  // its thread ends before MPI does
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  if (owns_init_) MPI_Finalize();
}

std::string MpiContext::broadcast(const std::string& s) const {
  const WaitingForRanks waiting;
  std::uint64_t n = s.size();
  {
    const TimedCollective timed(Collective::kControl, sizeof n);
    MPI_Bcast(&n, 1, MPI_UINT64_T, 0, comm_);
  }
  std::string out = root() ? s : std::string(n, '\0');
  // Chunks keep each count inside int for very large inline data.
  constexpr std::uint64_t kChunk = 1u << 30;
  for (std::uint64_t off = 0; off < n; off += kChunk) {
    const int len = static_cast<int>(n - off < kChunk ? n - off : kChunk);
    const TimedCollective timed(Collective::kControl, len);
    MPI_Bcast(out.data() + off, len, MPI_CHAR, 0, comm_);
  }
  return out;
}

int MpiContext::broadcast(int value) const {
  const WaitingForRanks waiting;
  const TimedCollective timed(Collective::kControl, sizeof value);
  MPI_Bcast(&value, 1, MPI_INT, 0, comm_);
  return value;
}

int MpiContext::max(int value) const {
  if (size_ == 1) return value;
  const WaitingForRanks waiting;
  const TimedCollective timed(Collective::kControl, sizeof value);
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_MAX, comm_);
  return value;
}

long long MpiContext::sum(long long value) const {
  if (size_ == 1) return value;
  const WaitingForRanks waiting;
  const TimedCollective timed(Collective::kControl, sizeof value);
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_LONG_LONG, MPI_SUM, comm_);
  return value;
}

double MpiContext::max_on_root(double value) const {
  double out = value;
  if (size_ > 1) {
    const WaitingForRanks waiting;
    const TimedCollective timed(Collective::kControl, sizeof value);
    MPI_Reduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, 0, comm_);
  }
  return out;
}

Allreduce MpiContext::allreduce() const {
  const MPI_Comm comm = comm_;
  return Allreduce{[comm](double* v, int n) {
                     const WaitingForRanks waiting;
                     const TimedCollective timed(Collective::kReduce, static_cast<std::int64_t>(n) * 8);
                     MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, comm);
                   },
                   [comm](long long* v, int n) {
                     const WaitingForRanks waiting;
                     const TimedCollective timed(Collective::kReduce, static_cast<std::int64_t>(n) * 8);
                     MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_LONG_LONG, MPI_SUM, comm);
                   }};
}

void MpiContext::abort(int code) const {
  if (root() && cleanup_) cleanup_();
  MPI_Abort(comm_, code);
  std::exit(code);
}

void MpiContext::fail(const std::string& line, int code) const {
  if (watchdog_ && !root() && watchdog_->forward_error(line, code)) {
    // Rank 0's watchdog prints the line and ends the job within about one heartbeat.
    const auto give_up =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(5.0 + 2.0 * watchdog_->period_s());
    while (std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  abort(code);
}

bool MpiContext::watch(double timeout_s) const {
  if (size_ == 1 || !(timeout_s > 0.0) || watchdog_) return true;
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  // The same answer on every rank (one library, one init call), so all skip the dup alike.
  if (provided < MPI_THREAD_MULTIPLE) return false;
  MPI_Comm comm = MPI_COMM_NULL;
  {
    const WaitingForRanks waiting;
    MPI_Comm_dup(comm_, &comm);
  }
  detail::g_since_ns.store(detail::now_ns(), std::memory_order_relaxed);
  watchdog_ = std::make_unique<Watchdog>(comm, timeout_s, &cleanup_);
  return true;
}

void MpiContext::unwatch() const {
  if (!watchdog_) return;
  const WaitingForRanks waiting;
  watchdog_->finish();
  watchdog_.reset();
}

std::string mpi_library_version() {
  char buf[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(buf, &len);
  std::string s(buf, static_cast<std::size_t>(len));
  // Open MPI appends build details after the first line/comma; keep the headline.
  const auto cut = s.find_first_of("\n,");
  if (cut != std::string::npos) s.resize(cut);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\0')) s.pop_back();
  return s;
}

}  // namespace hmc::parallel
