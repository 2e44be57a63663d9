#pragma once
/// \file
/// \brief A fast 64-bit checksum for the files hmc writes to resume from (tiles,
/// checkpoints): it detects truncated or corrupted files, it is not cryptographic.

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace hmc::io {

/// \brief Running checksum: feed bytes with update(), read value(). The result depends
/// only on the byte sequence, not on how it was split into calls.
class Checksum {
 public:
  void update(const void* data, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    // Finish a partial word first, then whole 8-byte words.
    while (n > 0 && fill_ != 0) {
      push_byte(*p++);
      --n;
    }
    while (n >= 8) {
      std::uint64_t w;
      std::memcpy(&w, p, 8);
      mix(w);
      p += 8;
      n -= 8;
    }
    while (n > 0) {
      push_byte(*p++);
      --n;
    }
  }
  std::uint64_t value() const {
    std::uint64_t h = h_;
    if (fill_ != 0) {
      h ^= partial_ * 0x9E3779B97F4A7C15ull;
      h ^= h >> 31;
    }
    h ^= length_;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 27;
    return h;
  }

 private:
  void mix(std::uint64_t w) {
    h_ = (h_ ^ w) * 0x9E3779B97F4A7C15ull;
    h_ ^= h_ >> 29;
    length_ += 8;
  }
  void push_byte(unsigned char c) {
    partial_ |= static_cast<std::uint64_t>(c) << (8 * fill_);
    ++length_;
    if (++fill_ == 8) {
      length_ -= 8;  // mix() counts the word
      mix(partial_);
      partial_ = 0;
      fill_ = 0;
    }
  }
  std::uint64_t h_ = 0x84222325CBF29CE4ull, partial_ = 0, length_ = 0;
  int fill_ = 0;
};

}  // namespace hmc::io
