#pragma once
/// \file
/// \brief The rank watchdog (/run/rank_timeout_s): a rank that stops progressing ends
/// the whole job with exit code 4 and one message naming it, instead of a hang.
///
/// Every rank runs a helper thread that exchanges small heartbeat messages with rank 0
/// on a communicator of its own (MPI_THREAD_MULTIPLE). A heartbeat proves that the
/// process runs (SIGSTOP, a dead node or a lost network stop them all) and carries
/// what the rank's main thread is doing (an Activity) and for how long:
///  - kWaiting: inside a collective, waiting for the other ranks. Never at fault.
///  - kWorking: computing between two MPI calls. At fault after the timeout without
///    entering or leaving an MPI call (a loop that does not end).
///  - kSolo: rank 0 alone at work while the others wait (writing blocks and
///    checkpoints, the diagnostics and result files at the end). Exempt: only its
///    heartbeats are checked.
///  - kReading: reading input (a checkpoint, its tiles) with a read that may block (a
///    hung network file system). At fault after the timeout, as kWorking.
/// Rank 0 checks every rank; the other ranks check rank 0's heartbeats. A rank whose
/// heartbeats stop, a working rank idle beyond the timeout, or every rank waiting
/// beyond it (a deadlock, or a rank that left the run early) makes the rank that
/// notices print one line and call MPI_Abort with exit code 4.

#include <atomic>
#include <chrono>
#include <cstdint>

namespace hmc::parallel {

enum class Activity : int { kWorking = 0, kWaiting = 1, kSolo = 2, kReading = 3 };

namespace detail {
/// What this process's main thread is doing, and since when (steady clock, ns).
/// Written by the main thread, read by the watchdog thread.
extern std::atomic<int> g_activity;
extern std::atomic<std::int64_t> g_since_ns;
inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace detail

/// \brief Marks the main thread's activity for the scope; restores the previous one
/// after. Each change counts as progress. Cheap: two relaxed atomic stores and a clock read.
class ScopedActivity {
 public:
  explicit ScopedActivity(Activity a) : previous_(detail::g_activity.load(std::memory_order_relaxed)) {
    set(static_cast<int>(a));
  }
  ~ScopedActivity() { set(previous_); }
  ScopedActivity(const ScopedActivity&) = delete;
  ScopedActivity& operator=(const ScopedActivity&) = delete;

 private:
  static void set(int a) {
    detail::g_since_ns.store(detail::now_ns(), std::memory_order_relaxed);
    detail::g_activity.store(a, std::memory_order_relaxed);
  }
  int previous_;
};

/// \brief For the duration of a collective call.
struct WaitingForRanks : ScopedActivity {
  WaitingForRanks() : ScopedActivity(Activity::kWaiting) {}
};

/// \brief For work that rank 0 does alone while the other ranks wait for it.
struct SoloWork : ScopedActivity {
  SoloWork() : ScopedActivity(Activity::kSolo) {}
};

}  // namespace hmc::parallel

#include <mpi.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace hmc::parallel {

/// \brief The helper thread of one rank (see the file comment). MpiContext::watch()
/// makes one; not for direct use.
class Watchdog {
 public:
  /// `comm`: the watchdog's own communicator (this object frees it). `cleanup` runs on
  /// rank 0 just before it aborts the job.
  Watchdog(MPI_Comm comm, double timeout_s, const std::function<void()>* cleanup);
  /// Stops the thread at once, without the goodbye exchange.
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  /// \brief The end of a run on this rank: says goodbye to its peers and returns once
  /// they said it too. Faults still end the job meanwhile.
  void finish();
  /// \brief Hands an error line to rank 0 (which prints it and aborts the job with
  /// `code`). Not on rank 0. Returns false if it could not be sent.
  bool forward_error(const std::string& line, int code);
  double period_s() const { return period_s_; }

 private:
  struct Peer {
    std::int64_t seen_ns = 0;      ///< when its last message arrived
    std::int64_t activity = 0;     ///< its main thread's Activity then
    std::int64_t idle_ns = 0;      ///< and for how long it had been doing it
    bool left = false;             ///< said goodbye
    std::int64_t out[2] = {0, 0};  ///< our heartbeat to it, in flight
    MPI_Request request = MPI_REQUEST_NULL;
  };
  void run();
  void poll(std::int64_t now);
  void beat(int tag);
  void check(std::int64_t now);
  [[noreturn]] void fault(const std::string& line, int code);
  bool peer(int r) const { return rank_ == 0 ? r != 0 : r == 0; }

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  double timeout_s_;
  double period_s_;
  const std::function<void()>* cleanup_;
  std::vector<Peer> peers_;  ///< indexed by rank; only peer(r) are used
  std::int64_t last_check_ns_ = 0, grace_until_ns_ = 0;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;      ///< under mutex_
  bool goodbye_ = false;   ///< under mutex_: finish() asked for the goodbye exchange
  bool finished_ = false;  ///< under mutex_: the exchange is done
  std::condition_variable done_;
  std::thread thread_;
};

}  // namespace hmc::parallel
