// A full disk for tests, without root: a preloaded library (LD_PRELOAD) that makes
// writes under one directory fail once a byte budget is spent, as a file system that
// fills up, runs over a quota or loses its device does (tests/cli/cli_test.sh, case
// full_disk; docs/testing.md#a-full-disk).
//
//   HMC_TEST_ENOSPC_DIR=DIR      only files opened for writing under DIR (absolute) count
//   HMC_TEST_ENOSPC_AFTER=BYTES  the bytes that may still be written there; then writes
//                                fail (a write that crosses the budget is cut short). With
//                                ENOSPC and EDQUOT only bytes that grow a file count (an
//                                overwrite in place takes no new space)
//   HMC_TEST_ENOSPC_FROM=TEXT[:N] the budget counts from the N-th (default: first) opening
//                                for writing of a file under DIR whose path contains TEXT;
//                                writes before it are not limited
//   HMC_TEST_ENOSPC_ERRNO=NAME   ENOSPC (default), EDQUOT or EIO; with EIO every byte
//                                counts, and fsync and fdatasync fail too once it is spent
//   HMC_TEST_ENOSPC_TRACE=FILE   append "BYTES PATH" to FILE at each open for writing under
//                                DIR: BYTES are those written under DIR before that open
//
// It wraps open, openat, creat (and their 64 variants), close, dup, dup2, dup3, write, pwrite, writev,
// pwritev, fallocate, posix_fallocate, fsync, fdatasync, and fopen for writing, which it
// turns into a stream whose writes go through the wrapped write (glibc's own FILE writes
// do not call the exported write). HDF5's file driver (draws.nc) uses open and pwrite.
// Without HMC_TEST_ENOSPC_DIR it changes nothing.
#include "preload.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr int kMaxFd = 1 << 16;
std::atomic<bool> g_tracked[kMaxFd];
std::atomic<long long> g_written{0};
long long g_budget = -1;  // -1: unlimited
int g_errno = ENOSPC;
char g_dir[4096];
std::size_t g_dir_len = 0;
char g_trace[4096];
char g_from[4096];                  // HMC_TEST_ENOSPC_FROM's TEXT ("": from the start)
long g_from_nth = 1;                // and N
std::atomic<bool> g_started{true};  // whether the budget counts yet
std::atomic<long> g_from_seen{0};

using hmc_preload::mode_arg;
using hmc_preload::real;

using OpenFn = int (*)(const char*, int, ...);
using OpenatFn = int (*)(int, const char*, int, ...);
using CloseFn = int (*)(int);
using WriteFn = ssize_t (*)(int, const void*, size_t);
using PwriteFn = ssize_t (*)(int, const void*, size_t, off_t);
using WritevFn = ssize_t (*)(int, const struct iovec*, int);
using PwritevFn = ssize_t (*)(int, const struct iovec*, int, off_t);
using FallocateFn = int (*)(int, int, off_t, off_t);
using PosixFallocateFn = int (*)(int, off_t, off_t);
using SyncFn = int (*)(int);
using FopenFn = FILE* (*)(const char*, const char*);

/// Reads the environment once (the first wrapped call, or the constructor).
bool active() {
  static const bool on = [] {
    const char* dir = std::getenv("HMC_TEST_ENOSPC_DIR");
    if (!dir || dir[0] != '/' || std::strlen(dir) >= sizeof g_dir) return false;
    std::strcpy(g_dir, dir);
    g_dir_len = std::strlen(g_dir);
    while (g_dir_len > 1 && g_dir[g_dir_len - 1] == '/') g_dir[--g_dir_len] = '\0';
    if (const char* after = std::getenv("HMC_TEST_ENOSPC_AFTER")) g_budget = std::atoll(after);
    if (const char* e = std::getenv("HMC_TEST_ENOSPC_ERRNO")) {
      if (std::strcmp(e, "EDQUOT") == 0) g_errno = EDQUOT;
      if (std::strcmp(e, "EIO") == 0) g_errno = EIO;
    }
    if (const char* t = std::getenv("HMC_TEST_ENOSPC_TRACE"); t && std::strlen(t) < sizeof g_trace) {
      std::strcpy(g_trace, t);
    }
    if (const char* f = std::getenv("HMC_TEST_ENOSPC_FROM"); f && f[0] != '\0' && std::strlen(f) < sizeof g_from) {
      std::strcpy(g_from, f);
      if (char* colon = std::strrchr(g_from, ':')) {
        g_from_nth = std::atol(colon + 1);
        *colon = '\0';
      }
      g_started = false;
    }
    return true;
  }();
  return on;
}

__attribute__((constructor)) void init() { active(); }

/// Whether `path` (relative to `dirfd` or the working directory) is under the directory.
bool under_dir(int dirfd, const char* path) {
  if (!active() || !path) return false;
  char full[8192];
  if (path[0] == '/') {
    std::snprintf(full, sizeof full, "%s", path);
  } else {
    char base[4096];
    if (dirfd == AT_FDCWD) {
      if (!getcwd(base, sizeof base)) return false;
    } else {
      char link[64];
      std::snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
      const ssize_t n = readlink(link, base, sizeof base - 1);
      if (n <= 0) return false;
      base[n] = '\0';
    }
    std::snprintf(full, sizeof full, "%s/%s", base, path);
  }
  return std::strncmp(full, g_dir, g_dir_len) == 0 && (full[g_dir_len] == '/' || full[g_dir_len] == '\0');
}

bool writable(int flags) { return (flags & O_ACCMODE) != O_RDONLY; }

void track(int fd, const char* path) {
  if (fd < 0 || fd >= kMaxFd) return;
  g_tracked[fd] = true;
  if (!g_started && std::strstr(path, g_from) && ++g_from_seen == g_from_nth) {
    g_written = 0;
    g_started = true;
  }
  if (g_trace[0] != '\0') {
    const int t = real<OpenFn>("open")(g_trace, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (t >= 0) {
      char line[8400];
      const int n = std::snprintf(line, sizeof line, "%lld %s\n", g_written.load(), path);
      if (n > 0) real<WriteFn>("write")(t, line, static_cast<size_t>(n) < sizeof line ? n : sizeof line - 1);
      real<CloseFn>("close")(t);
    }
  }
}

bool tracked(int fd) { return fd >= 0 && fd < kMaxFd && g_tracked[fd].load(); }

/// The bytes of a write of `n` at `offset` (-1: the file position) to `fd` that take
/// new space: with ENOSPC and EDQUOT those past the end of the file, as a file system
/// that overwrites in place allocates nothing for the rest; with EIO all of them.
long long growth(int fd, size_t n, off_t offset) {
  if (g_errno == EIO) return static_cast<long long>(n);
  struct stat st {};
  if (fstat(fd, &st) != 0) return static_cast<long long>(n);
  if (offset < 0) offset = (fcntl(fd, F_GETFL) & O_APPEND) ? st.st_size : lseek(fd, 0, SEEK_CUR);
  const long long end = static_cast<long long>(offset) + static_cast<long long>(n);
  return end > st.st_size ? end - (offset > st.st_size ? offset : st.st_size) : 0;
}

/// How many of `n` bytes to `fd` at `offset` may be written: n when untracked or within
/// the budget, fewer at its end, -1 (errno set) when it is spent.
ssize_t allowance(int fd, size_t n, off_t offset) {
  if (!tracked(fd) || g_budget < 0 || n == 0 || !g_started) return static_cast<ssize_t>(n);
  const long long grows = growth(fd, n, offset);
  if (grows == 0) return static_cast<ssize_t>(n);
  const long long left = g_budget - g_written.load();
  if (left <= 0) {
    errno = g_errno;
    return -1;
  }
  if (grows <= left) return static_cast<ssize_t>(n);
  return static_cast<ssize_t>(static_cast<long long>(n) - (grows - left));  // up to the budget
}

void count(int fd, ssize_t done) {
  if (tracked(fd) && done > 0 && g_started) g_written += done;
}

bool spent(int fd) { return tracked(fd) && g_started && g_budget >= 0 && g_written.load() >= g_budget; }

ssize_t counted_write(int fd, const void* buf, size_t n) {
  const ssize_t allowed = allowance(fd, n, -1);
  if (allowed < 0) return -1;
  const ssize_t done = real<WriteFn>("write")(fd, buf, static_cast<size_t>(allowed));
  count(fd, done);
  return done;
}

int open_common(int dirfd, const char* path, int flags, mode_t mode, bool at) {
  const int fd = at ? real<OpenatFn>("openat")(dirfd, path, flags, mode) : real<OpenFn>("open")(path, flags, mode);
  if (fd >= 0 && fd < kMaxFd) {
    g_tracked[fd] = false;
    if (writable(flags) && under_dir(at ? dirfd : AT_FDCWD, path)) track(fd, path);
  }
  return fd;
}

// A FILE opened for writing under the directory: its writes go through counted_write.
ssize_t cookie_read(void* c, char* buf, size_t n) {
  return read(static_cast<int>(reinterpret_cast<intptr_t>(c)), buf, n);
}
ssize_t cookie_write(void* c, const char* buf, size_t n) {
  // As glibc's own streams do: write until all is written or a write fails (errno set
  // by it); a short count is the stream's error.
  size_t done = 0;
  while (done < n) {
    const ssize_t w = counted_write(static_cast<int>(reinterpret_cast<intptr_t>(c)), buf + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  return static_cast<ssize_t>(done);
}
int cookie_seek(void* c, off64_t* offset, int whence) {
  const off64_t at = lseek64(static_cast<int>(reinterpret_cast<intptr_t>(c)), *offset, whence);
  if (at < 0) return -1;
  *offset = at;
  return 0;
}
int cookie_close(void* c) {
  const int fd = static_cast<int>(reinterpret_cast<intptr_t>(c));
  if (fd >= 0 && fd < kMaxFd) g_tracked[fd] = false;
  return real<CloseFn>("close")(fd);
}

FILE* fopen_common(const char* path, const char* mode, const char* name) {
  const bool plus = std::strchr(mode, '+') != nullptr;
  const char kind = mode[0];
  if (kind == 'r' && !plus) return real<FopenFn>(name)(path, mode);
  if (!under_dir(AT_FDCWD, path)) return real<FopenFn>(name)(path, mode);
  int flags = plus ? O_RDWR : (kind == 'r' ? O_RDONLY : O_WRONLY);
  if (kind == 'w') flags |= O_CREAT | O_TRUNC;
  if (kind == 'a') flags |= O_CREAT | O_APPEND;
  if (std::strchr(mode, 'x')) flags |= O_EXCL;
  if (std::strchr(mode, 'e')) flags |= O_CLOEXEC;
  const int fd = open_common(AT_FDCWD, path, flags, 0666, false);
  if (fd < 0) return nullptr;
  cookie_io_functions_t io{cookie_read, cookie_write, cookie_seek, cookie_close};
  FILE* f = fopencookie(reinterpret_cast<void*>(static_cast<intptr_t>(fd)), mode, io);
  if (!f) cookie_close(reinterpret_cast<void*>(static_cast<intptr_t>(fd)));
  return f;
}

}  // namespace

extern "C" {

int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return open_common(AT_FDCWD, path, flags, mode, false);
}
int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return open_common(AT_FDCWD, path, flags, mode, false);
}
int openat(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return open_common(dirfd, path, flags, mode, true);
}
int openat64(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return open_common(dirfd, path, flags, mode, true);
}
int creat(const char* path, mode_t mode) {
  return open_common(AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, mode, false);
}
int creat64(const char* path, mode_t mode) {
  return open_common(AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, mode, false);
}

int close(int fd) {
  if (fd >= 0 && fd < kMaxFd) g_tracked[fd] = false;
  return real<CloseFn>("close")(fd);
}

using DupFn = int (*)(int);
using Dup2Fn = int (*)(int, int);
using Dup3Fn = int (*)(int, int, int);

int dup(int fd) {
  const int copy = real<DupFn>("dup")(fd);
  if (copy >= 0 && copy < kMaxFd) g_tracked[copy] = tracked(fd);
  return copy;
}
int dup2(int fd, int to) {
  const int copy = real<Dup2Fn>("dup2")(fd, to);
  if (copy >= 0 && copy < kMaxFd) g_tracked[copy] = tracked(fd);
  return copy;
}
int dup3(int fd, int to, int flags) {
  const int copy = real<Dup3Fn>("dup3")(fd, to, flags);
  if (copy >= 0 && copy < kMaxFd) g_tracked[copy] = tracked(fd);
  return copy;
}

ssize_t write(int fd, const void* buf, size_t n) { return counted_write(fd, buf, n); }

ssize_t pwrite(int fd, const void* buf, size_t n, off_t offset) {
  const ssize_t allowed = allowance(fd, n, offset);
  if (allowed < 0) return -1;
  const ssize_t done = real<PwriteFn>("pwrite")(fd, buf, static_cast<size_t>(allowed), offset);
  count(fd, done);
  return done;
}
ssize_t pwrite64(int fd, const void* buf, size_t n, off64_t offset) {
  return pwrite(fd, buf, n, static_cast<off_t>(offset));
}

ssize_t writev(int fd, const struct iovec* iov, int iovcnt) {
  if (!tracked(fd)) return real<WritevFn>("writev")(fd, iov, iovcnt);
  // one vector at a time, each within the budget
  ssize_t total = 0;
  for (int i = 0; i < iovcnt; ++i) {
    const ssize_t done = counted_write(fd, iov[i].iov_base, iov[i].iov_len);
    if (done < 0) return total > 0 ? total : -1;
    total += done;
    if (static_cast<size_t>(done) < iov[i].iov_len) break;
  }
  return total;
}
ssize_t pwritev(int fd, const struct iovec* iov, int iovcnt, off_t offset) {
  if (!tracked(fd)) return real<PwritevFn>("pwritev")(fd, iov, iovcnt, offset);
  ssize_t total = 0;
  for (int i = 0; i < iovcnt; ++i) {
    const ssize_t done = pwrite(fd, iov[i].iov_base, iov[i].iov_len, offset + total);
    if (done < 0) return total > 0 ? total : -1;
    total += done;
    if (static_cast<size_t>(done) < iov[i].iov_len) break;
  }
  return total;
}

int fallocate(int fd, int mode, off_t offset, off_t len) {
  if (spent(fd)) {
    errno = g_errno;
    return -1;
  }
  return real<FallocateFn>("fallocate")(fd, mode, offset, len);
}
int fallocate64(int fd, int mode, off64_t offset, off64_t len) { return fallocate(fd, mode, offset, len); }
int posix_fallocate(int fd, off_t offset, off_t len) {
  if (spent(fd)) return g_errno;  // returns the error, errno untouched
  return real<PosixFallocateFn>("posix_fallocate")(fd, offset, len);
}
int posix_fallocate64(int fd, off64_t offset, off64_t len) { return posix_fallocate(fd, offset, len); }

int fsync(int fd) {
  if (g_errno == EIO && spent(fd)) {
    errno = EIO;
    return -1;
  }
  return real<SyncFn>("fsync")(fd);
}
int fdatasync(int fd) {
  if (g_errno == EIO && spent(fd)) {
    errno = EIO;
    return -1;
  }
  return real<SyncFn>("fdatasync")(fd);
}

FILE* fopen(const char* path, const char* mode) { return fopen_common(path, mode, "fopen"); }
FILE* fopen64(const char* path, const char* mode) { return fopen_common(path, mode, "fopen64"); }

}  // extern "C"
