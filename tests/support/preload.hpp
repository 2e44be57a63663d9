#pragma once
// What the preloaded test libraries (full_disk.cpp, hung_read.cpp) share: the C library's
// own version of a function they wrap, and the mode argument of an open call.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/types.h>

#include <cstdarg>

namespace hmc_preload {

/// The next definition of `name` after the preloaded library's: the C library's.
template <class F>
F real(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

/// The mode of an open(path, flags, ...) call: its third argument where the flags create a file.
inline mode_t mode_arg(int flags, va_list ap) {
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? static_cast<mode_t>(va_arg(ap, int)) : 0;
}

}  // namespace hmc_preload
