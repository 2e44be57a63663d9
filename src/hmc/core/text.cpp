#include "hmc/core/text.hpp"

namespace hmc {

using nlohmann::json;

namespace {

/// The first `n` bytes of `s`, moved back to a character boundary, plus "...".
std::string cut(const std::string& s, std::size_t n) {
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n) + "...";
}

}  // namespace

std::string dump_text(const json& v, int indent) { return v.dump(indent, ' ', false, json::error_handler_t::replace); }

std::string shown(const json& v, std::size_t max_chars) {
  std::string s;
  if ((v.is_array() || v.is_object()) && v.size() > 8) {
    // Only the first entries: the rest could be large.
    json head = v.is_array() ? json::array() : json::object();
    int n = 0;
    for (auto it = v.begin(); it != v.end() && n < 4; ++it, ++n) {
      if (v.is_array())
        head.push_back(*it);
      else
        head[it.key()] = *it;
    }
    s = dump_text(head);
    s.insert(s.size() - 1, ",... (" + std::to_string(v.size()) + " entries)");
  } else {
    s = dump_text(v);
  }
  return s.size() > max_chars ? cut(s, max_chars - 3) : s;
}

std::string printable(const std::string& s, std::size_t max_chars) {
  std::string out;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  for (std::size_t i = 0; i < n && out.size() < max_chars;) {
    const unsigned char c = p[i];
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    bool ok = len > 0 && i + len <= n;
    for (std::size_t k = 1; ok && k < len; ++k) ok = (p[i + k] & 0xC0) == 0x80;
    if (ok && len == 2) ok = c >= 0xC2;  // no overlong forms
    if (ok && len == 3) ok = !(c == 0xE0 && p[i + 1] < 0xA0) && !(c == 0xED && p[i + 1] >= 0xA0);
    if (ok && len == 4) ok = !(c == 0xF0 && p[i + 1] < 0x90) && !(c == 0xF4 && p[i + 1] >= 0x90) && c <= 0xF4;
    if (!ok) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
      continue;
    }
    if (len == 1 && (c < 0x20 || c == 0x7F))
      out += ' ';
    else
      out.append(s, i, len);
    i += len;
  }
  if (out.size() >= max_chars && max_chars > 3) out = cut(out, max_chars - 3);
  return out;
}

}  // namespace hmc
