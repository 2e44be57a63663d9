// A read that never returns, for tests, as on a hung network file system: a preloaded
// library (LD_PRELOAD) under which read and pread of a file whose path contains
// HMC_TEST_HUNG_READ wait for ever, through signals (the kernel restarts such a read after
// a handler returns). Only the process ending (a handler that exits, SIGKILL) ends it
// (tests/cli/cli_test.sh, case inputs; docs/testing.md#inputs-that-block).
#include "preload.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace {

constexpr int kMaxFd = 1 << 16;
std::atomic<bool> g_hung[kMaxFd];

using hmc_preload::mode_arg;
using hmc_preload::real;

using OpenFn = int (*)(const char*, int, ...);
using OpenatFn = int (*)(int, const char*, int, ...);
using CloseFn = int (*)(int);
using ReadFn = ssize_t (*)(int, void*, size_t);
using PreadFn = ssize_t (*)(int, void*, size_t, off_t);

bool matches(const char* path) {
  const char* text = std::getenv("HMC_TEST_HUNG_READ");
  return text && text[0] != '\0' && path && std::strstr(path, text);
}

int opened(int fd, const char* path) {
  if (fd >= 0 && fd < kMaxFd) g_hung[fd] = matches(path);
  return fd;
}

[[noreturn]] void hang() {
  for (;;) {
    timespec t{1, 0};
    nanosleep(&t, nullptr);  // interrupted by a handler: sleep on
  }
}

bool hung(int fd) { return fd >= 0 && fd < kMaxFd && g_hung[fd].load(); }

}  // namespace

extern "C" {

int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return opened(real<OpenFn>("open")(path, flags, mode), path);
}
int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return opened(real<OpenFn>("open64")(path, flags, mode), path);
}
int openat(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return opened(real<OpenatFn>("openat")(dirfd, path, flags, mode), path);
}
int openat64(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return opened(real<OpenatFn>("openat64")(dirfd, path, flags, mode), path);
}
int close(int fd) {
  if (fd >= 0 && fd < kMaxFd) g_hung[fd] = false;
  return real<CloseFn>("close")(fd);
}
ssize_t read(int fd, void* buf, size_t n) {
  if (hung(fd)) hang();
  return real<ReadFn>("read")(fd, buf, n);
}
ssize_t pread(int fd, void* buf, size_t n, off_t offset) {
  if (hung(fd)) hang();
  return real<PreadFn>("pread")(fd, buf, n, offset);
}
ssize_t pread64(int fd, void* buf, size_t n, off_t offset) {
  if (hung(fd)) hang();
  return real<PreadFn>("pread64")(fd, buf, n, offset);
}

}  // extern "C"
