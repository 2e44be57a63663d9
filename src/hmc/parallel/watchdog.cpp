#include "hmc/parallel/watchdog.hpp"

#include "hmc/core/errors.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace hmc::parallel {

namespace detail {
std::atomic<int> g_activity{static_cast<int>(Activity::kWorking)};
std::atomic<std::int64_t> g_since_ns{0};
}  // namespace detail

namespace {

constexpr int kTagBeat = 1;   ///< {activity, idle_ns}
constexpr int kTagBye = 2;    ///< the same; the sender's last message
constexpr int kTagError = 3;  ///< int32 exit code, then the error line (to rank 0)

using detail::now_ns;

double seconds(std::int64_t ns) { return static_cast<double>(ns) * 1e-9; }

std::string no_progress(int rank, double s, const char* why) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "hmc: run error: rank %d made no progress for %.0f s (/run/rank_timeout_s): %s; stopping all ranks",
                rank, s, why);
  return buf;
}

}  // namespace

Watchdog::Watchdog(MPI_Comm comm, double timeout_s, const std::function<void()>* cleanup)
    : comm_(comm), timeout_s_(timeout_s), cleanup_(cleanup) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  // Several heartbeats per timeout, at most one a second: a few bytes per rank and second.
  period_s_ = std::clamp(timeout_s_ / 5.0, 0.01, 1.0);
  peers_.resize(static_cast<std::size_t>(size_));
  const std::int64_t now = now_ns();
  for (auto& p : peers_) p.seen_ns = now;
  thread_ = std::thread([this] { run(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  // Heartbeats are a few bytes (sent eagerly, so complete); let go of any still listed.
  for (auto& p : peers_)
    if (p.request != MPI_REQUEST_NULL) MPI_Request_free(&p.request);
  // The communicator is left to MPI_Finalize: peers may still send to it.
}

void Watchdog::finish() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    goodbye_ = true;
    wake_.notify_all();
    done_.wait(lock, [this] { return finished_ || stop_; });
  }
  if (thread_.joinable()) thread_.join();
  // Every message on comm_ was received (each side read up to the other's goodbye).
  MPI_Comm_free(&comm_);
}

bool Watchdog::forward_error(const std::string& line, int code) {
  if (rank_ == 0) return false;
  std::string buf(sizeof(std::int32_t), '\0');
  const std::int32_t c = code;
  std::memcpy(buf.data(), &c, sizeof c);
  buf += line.substr(0, 4000);
  return MPI_Send(buf.data(), static_cast<int>(buf.size()), MPI_BYTE, 0, kTagError, comm_) == MPI_SUCCESS;
}

void Watchdog::run() {
  bool said_goodbye = false;
  for (;;) {
    const std::int64_t now = now_ns();
    poll(now);
    bool goodbye = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stop_) return;
      goodbye = goodbye_;
    }
    if (goodbye && !said_goodbye) {
      beat(kTagBye);
      said_goodbye = true;
    } else if (!said_goodbye) {
      beat(kTagBeat);
    }
    if (said_goodbye) {
      bool all_left = true;
      for (int r = 0; r < size_; ++r) all_left = all_left && (!peer(r) || peers_[r].left);
      if (all_left) {
        for (auto& p : peers_)
          if (p.request != MPI_REQUEST_NULL) MPI_Wait(&p.request, MPI_STATUS_IGNORE);
        std::lock_guard<std::mutex> lock(mutex_);
        finished_ = true;
        done_.notify_all();
        return;
      }
    }
    check(now);
    std::unique_lock<std::mutex> lock(mutex_);
    wake_.wait_for(lock, std::chrono::duration<double>(said_goodbye ? std::min(period_s_, 0.01) : period_s_),
                   [&] { return stop_ || goodbye_ != goodbye; });
  }
}

void Watchdog::poll(std::int64_t now) {
  for (;;) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, &st);
    if (!flag) return;
    if (st.MPI_TAG == kTagError) {
      int n = 0;
      MPI_Get_count(&st, MPI_BYTE, &n);
      std::string buf(static_cast<std::size_t>(std::max(n, 0)), '\0');
      MPI_Recv(buf.data(), n, MPI_BYTE, st.MPI_SOURCE, kTagError, comm_, MPI_STATUS_IGNORE);
      std::int32_t code = 1;
      if (buf.size() >= sizeof code) std::memcpy(&code, buf.data(), sizeof code);
      fault(buf.size() > sizeof code ? buf.substr(sizeof code) : std::string("hmc: rank ?: error"), code);
    }
    std::int64_t msg[2] = {0, 0};
    MPI_Recv(msg, 2, MPI_INT64_T, st.MPI_SOURCE, st.MPI_TAG, comm_, MPI_STATUS_IGNORE);
    Peer& p = peers_[static_cast<std::size_t>(st.MPI_SOURCE)];
    p.seen_ns = now;
    p.activity = msg[0];
    p.idle_ns = msg[1];
    if (st.MPI_TAG == kTagBye) p.left = true;
  }
}

void Watchdog::beat(int tag) {
  const std::int64_t activity = detail::g_activity.load(std::memory_order_relaxed);
  const std::int64_t idle = now_ns() - detail::g_since_ns.load(std::memory_order_relaxed);
  for (int r = 0; r < size_; ++r) {
    if (!peer(r)) continue;
    Peer& p = peers_[r];
    // A peer that said goodbye still reads until this rank's goodbye: keep beating, so
    // that it does not take this rank's remaining work (rank 0 cleaning up) for a hang.
    if (p.request != MPI_REQUEST_NULL) {
      int done = 0;
      MPI_Test(&p.request, &done, MPI_STATUS_IGNORE);
      if (!done && tag == kTagBeat) continue;  // the last one is still on its way
      if (!done) MPI_Wait(&p.request, MPI_STATUS_IGNORE);
    }
    p.out[0] = activity;
    p.out[1] = idle;
    MPI_Isend(p.out, 2, MPI_INT64_T, r, tag, comm_, &p.request);
  }
}

void Watchdog::check(std::int64_t now) {
  const auto timeout_ns = static_cast<std::int64_t>(timeout_s_ * 1e9);
  // A long gap since the last round means this process was stopped itself (SIGSTOP, and
  // now SIGCONT, e.g. from the abort another rank started): blame nobody for its own
  // absence; every clock starts again, and the checks wait one timeout.
  if (last_check_ns_ != 0 && now - last_check_ns_ > timeout_ns / 2) {
    for (auto& p : peers_) p.seen_ns = now;
    grace_until_ns_ = now + timeout_ns;
  }
  last_check_ns_ = now;
  if (now < grace_until_ns_) return;
  if (rank_ != 0) {
    const Peer& root = peers_[0];
    if (!root.left && now - root.seen_ns > timeout_ns) {
      fault(
          no_progress(0, seconds(now - root.seen_ns), "its process does not respond (stopped, killed or unreachable)"),
          kExitRunError);
    }
    return;
  }
  // Rank 0: heartbeats first (a stopped process's last report is stale), then activity.
  for (int r = 1; r < size_; ++r) {
    const Peer& p = peers_[r];
    if (!p.left && now - p.seen_ns > timeout_ns) {
      fault(no_progress(r, seconds(now - p.seen_ns), "its process does not respond (stopped, killed or unreachable)"),
            kExitRunError);
    }
  }
  bool all_waiting = true;
  std::int64_t least_idle = INT64_MAX;
  std::string left;
  for (int r = 0; r < size_; ++r) {
    std::int64_t activity, idle;
    if (r == 0) {
      activity = detail::g_activity.load(std::memory_order_relaxed);
      idle = now - detail::g_since_ns.load(std::memory_order_relaxed);
    } else {
      const Peer& p = peers_[r];
      if (p.left) {
        left += (left.empty() ? "" : ", ") + std::to_string(r);
        continue;
      }
      activity = p.activity;
      idle = p.idle_ns + (now - p.seen_ns);
    }
    if (activity == static_cast<int>(Activity::kWorking) && idle > timeout_ns) {
      fault(no_progress(r, seconds(idle), "busy without reaching its next MPI call"), kExitRunError);
    }
    if (activity == static_cast<int>(Activity::kReading) && idle > timeout_ns) {
      fault(no_progress(r, seconds(idle), "a read of its input does not return (a hung file system?)"), kExitRunError);
    }
    all_waiting = all_waiting && activity == static_cast<int>(Activity::kWaiting);
    least_idle = std::min(least_idle, idle);
  }
  if (all_waiting && least_idle > timeout_ns) {
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "hmc: run error: no rank made progress for %.0f s (/run/rank_timeout_s): every rank waits for "
                  "the others%s%s; stopping all ranks",
                  seconds(least_idle), left.empty() ? "" : ", and these left the run: rank ", left.c_str());
    fault(buf, kExitRunError);
  }
}

void Watchdog::fault(const std::string& line, int code) {
  const std::string text = line + "\n";
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
  if (rank_ == 0 && cleanup_ && *cleanup_) (*cleanup_)();
  MPI_Abort(comm_, code);
  std::_Exit(code);
}

}  // namespace hmc::parallel
