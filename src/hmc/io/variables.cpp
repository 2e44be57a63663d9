#include "hmc/io/variables.hpp"

#include "hmc/core/errors.hpp"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <map>
#include <set>
#include <utility>

namespace hmc::io {

namespace {

constexpr std::size_t kMaxNameBytes = 256;                 // NC_MAX_NAME
constexpr std::int64_t kMaxIndex = std::int64_t{1} << 40;  // far beyond any run, far below overflow

/// Length of the valid UTF-8 sequence starting at s[i], or 0 if there is none.
std::size_t utf8_length(const std::string& s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t n = 0;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF)
    n = 2;
  else if (c >= 0xE0 && c <= 0xEF)
    n = 3;
  else if (c >= 0xF0 && c <= 0xF4)
    n = 4;
  else
    return 0;
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  }
  const auto c1 = static_cast<unsigned char>(s[i + 1]);
  // overlong forms, surrogates and code points above U+10FFFF
  if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F) || (c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 > 0x8F)) {
    return 0;
  }
  return n;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

/// Splits "base[i,j]" into base and 0-based indices; false for any other form.
bool parse_indexed(const std::string& name, std::string& base, std::vector<std::int64_t>& index) {
  const std::size_t open = name.find('[');
  if (open == std::string::npos || open == 0 || name.back() != ']') return false;
  base = name.substr(0, open);
  if (base.find(']') != std::string::npos) return false;
  index.clear();
  std::size_t i = open + 1;
  const std::size_t end = name.size() - 1;
  while (true) {
    std::size_t j = i;
    std::int64_t v = 0;
    while (j < end && name[j] >= '0' && name[j] <= '9') {
      v = v * 10 + (name[j] - '0');
      if (v > kMaxIndex) return false;
      ++j;
    }
    if (j == i || name[i] == '0') return false;  // empty, zero or leading zero
    index.push_back(v - 1);
    if (j == end) return true;
    if (name[j] != ',') return false;
    i = j + 1;
  }
}

std::string join_index(const std::vector<std::int64_t>& index, std::int64_t offset) {
  std::string s;
  for (std::size_t k = 0; k < index.size(); ++k) {
    if (k > 0) s += ',';
    s += std::to_string(index[k] + offset);
  }
  return s;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s;
  for (std::size_t k = 0; k < shape.size(); ++k) s += (k > 0 ? "x" : "") + std::to_string(shape[k]);
  return s;
}

struct Group {
  std::string base;  // flat base as written in the names
  bool scalar = false;
  int scalar_column = -1;
  std::string first_name;                             // for messages
  std::map<std::vector<std::int64_t>, int> elements;  // 0-based index -> column
};

}  // namespace

std::string sanitize_netcdf_name(const std::string& name) {
  std::string out;
  out.reserve(name.size() + 1);
  for (std::size_t i = 0; i < name.size();) {
    const std::size_t n = utf8_length(name, i);
    const auto c = static_cast<unsigned char>(name[i]);
    if (n == 0 || (n == 1 && (c < 0x20 || c == 0x7F || c == '/'))) {
      out += '_';
      ++i;
    } else {
      out.append(name, i, n);
      i += n;
    }
  }
  for (auto it = out.rbegin(); it != out.rend() && is_space(*it); ++it) *it = '_';
  const auto first = out.empty() ? 0u : static_cast<unsigned char>(out[0]);
  const bool first_ok = (first >= 'a' && first <= 'z') || (first >= 'A' && first <= 'Z') ||
                        (first >= '0' && first <= '9') || first == '_' || first >= 0x80;
  if (!first_ok) out.insert(out.begin(), '_');
  return out;
}

namespace {

/// Variables of `arrays` in one group: names, dims, shapes checked; columns from `first`
/// on (contiguous, C order) or, with first < 0, the array's index.
std::vector<Variable> array_variables(const std::vector<ArrayShape>& arrays, const std::string& group, int first) {
  std::vector<Variable> out;
  std::map<std::string, std::int64_t> dim_size;
  std::set<std::string> names;
  int column = first;
  const auto fail = [&](const std::string& what) { throw RunError("group " + group + ": " + what); };
  for (std::size_t k = 0; k < arrays.size(); ++k) {
    const ArrayShape& a = arrays[k];
    Variable v;
    v.name = sanitize_netcdf_name(a.name);
    if (v.name.size() > kMaxNameBytes) fail("array name " + v.name + " is longer than 256 bytes");
    if (v.name == "chain" || v.name == "draw" || !names.insert(v.name).second) {
      fail("array name " + v.name + " is reserved or used twice");
    }
    if (!a.dims.empty() && a.dims.size() != a.shape.size()) {
      fail("array " + v.name + " has " + std::to_string(a.dims.size()) + " dim names for a shape of rank " +
           std::to_string(a.shape.size()));
    }
    for (std::size_t d = 0; d < a.shape.size(); ++d) {
      const std::string dim = sanitize_netcdf_name(a.dims.empty() ? a.name + "_dim_" + std::to_string(d) : a.dims[d]);
      if (a.shape[d] < 0) fail("array " + v.name + " has a negative extent");
      if (dim == "chain" || dim == "draw") fail("array " + v.name + " uses the reserved dim " + dim);
      const auto [it, fresh] = dim_size.emplace(dim, a.shape[d]);
      if (!fresh && it->second != a.shape[d])
        fail("dim " + dim + " is used with sizes " + std::to_string(it->second) + " and " + std::to_string(a.shape[d]));
      if (std::find(v.dims.begin(), v.dims.end(), dim) != v.dims.end()) {
        fail("array " + v.name + " repeats dim " + dim);
      }
      v.dims.push_back(dim);
      v.shape.push_back(a.shape[d]);
    }
    if (first >= 0) {
      for (std::int64_t e = 0; e < a.size(); ++e) v.columns.push_back(column++);
    } else {
      v.columns.push_back(static_cast<int>(k));
    }
    out.push_back(std::move(v));
  }
  for (const auto& v : out) {
    if (dim_size.count(v.name) > 0) fail("name " + v.name + " is both an array and a dim");
  }
  return out;
}

}  // namespace

std::vector<Variable> group_arrays(const StoreLayout& layout, std::size_t k) {
  return array_variables(layout.groups[k].arrays, layout.groups[k].name, layout.group_column(k));
}

std::vector<Variable> data_variables(const std::vector<DataArray>& arrays, const std::string& group) {
  std::vector<ArrayShape> shapes;
  for (const auto& a : arrays) {
    if (static_cast<std::int64_t>(a.values.size()) != a.size()) {
      throw RunError("group " + group + ": array " + a.name + " has " + std::to_string(a.values.size()) +
                     " values for its shape");
    }
    shapes.push_back(a);
  }
  return array_variables(shapes, group, -1);
}

std::vector<Variable> group_parameters(const StoreLayout& layout) {
  std::vector<Group> groups;
  std::map<std::string, std::size_t> by_base;
  std::string base;
  std::vector<std::int64_t> index;
  for (int c = 0; c < layout.num_params(); ++c) {
    const std::string& name = layout.param_names[static_cast<std::size_t>(c)];
    const bool indexed = parse_indexed(name, base, index);
    if (!indexed) base = name;
    auto [it, fresh] = by_base.emplace(base, groups.size());
    if (fresh) {
      groups.emplace_back();
      groups.back().base = base;
      groups.back().scalar = !indexed;
      groups.back().first_name = name;
    }
    Group& g = groups[it->second];
    if (g.scalar == indexed) {
      throw RunError("parameter '" + base + "' is named both as a scalar and with indices ('" + g.first_name +
                     "' and '" + name + "')");
    }
    if (!indexed) {
      if (!fresh) throw RunError("parameter name '" + name + "' appears twice");
      g.scalar_column = c;
      continue;
    }
    if (!g.elements.empty() && g.elements.begin()->first.size() != index.size()) {
      throw RunError("parameter '" + base + "' is named with different numbers of indices ('" + g.first_name +
                     "' and '" + name + "')");
    }
    if (!g.elements.emplace(index, c).second) throw RunError("parameter name '" + name + "' appears twice");
  }

  std::vector<Variable> vars;
  vars.reserve(groups.size());
  for (const Group& g : groups) {
    Variable v;
    v.name = sanitize_netcdf_name(g.base);
    if (g.scalar) {
      v.columns = {g.scalar_column};
      vars.push_back(std::move(v));
      continue;
    }
    const std::size_t rank = g.elements.begin()->first.size();
    v.shape.assign(rank, 0);
    for (const auto& e : g.elements) {
      for (std::size_t k = 0; k < rank; ++k) v.shape[k] = std::max(v.shape[k], e.first[k] + 1);
    }
    std::int64_t size = 1;
    for (std::int64_t n : v.shape) size *= n;
    if (size != static_cast<std::int64_t>(g.elements.size())) {
      // the first missing element in C order, for the message
      std::vector<std::int64_t> missing(rank, 0);
      for (const auto& e : g.elements) {
        if (e.first != missing) break;
        for (std::size_t k = rank; k-- > 0;) {
          if (++missing[k] < v.shape[k]) break;
          missing[k] = 0;
        }
      }
      throw RunError("parameter '" + g.base + "': the names do not form a full " + shape_text(v.shape) +
                     " array (no '" + g.base + "[" + join_index(missing, 1) + "]')");
    }
    // std::map orders the index tuples lexicographically: C order
    v.columns.reserve(g.elements.size());
    for (const auto& e : g.elements) v.columns.push_back(e.second);

    const auto named = std::find_if(layout.dim_names.begin(), layout.dim_names.end(),
                                    [&](const auto& d) { return d.first == g.base; });
    if (named != layout.dim_names.end()) {
      if (named->second.size() != rank) {
        throw RunError("parameter '" + g.base + "' has " + std::to_string(rank) + " index(es) but " +
                       std::to_string(named->second.size()) + " dim name(s)");
      }
      for (const std::string& d : named->second) v.dims.push_back(sanitize_netcdf_name(d));
    } else {
      for (std::size_t k = 0; k < rank; ++k) v.dims.push_back(v.name + "_dim_" + std::to_string(k));
    }
    vars.push_back(std::move(v));
  }

  // Names must be unique within the posterior group: variables, their dims and chain/draw.
  std::map<std::string, std::int64_t> dim_size = {{"chain", -1}, {"draw", -1}};
  std::set<std::string> var_names;
  for (const Variable& v : vars) {
    if (v.name.size() > kMaxNameBytes) throw RunError("parameter name '" + v.name + "' is too long for netCDF");
    if (v.name == "chain" || v.name == "draw") {
      throw RunError("parameter name '" + v.name + "' is reserved for the ensemble's dimensions");
    }
    if (!var_names.insert(v.name).second) {
      throw RunError("two parameters are written under the netCDF name '" + v.name + "'");
    }
    std::set<std::string> own;
    for (std::size_t k = 0; k < v.dims.size(); ++k) {
      const std::string& d = v.dims[k];
      if (d.size() > kMaxNameBytes) throw RunError("dim name '" + d + "' is too long for netCDF");
      if (!own.insert(d).second) throw RunError("parameter '" + v.name + "' uses dim '" + d + "' twice");
      auto [it, fresh] = dim_size.emplace(d, v.shape[k]);
      if (it->second < 0) throw RunError("parameter '" + v.name + "': dim name '" + d + "' is reserved");
      if (!fresh && it->second != v.shape[k]) {
        throw RunError("dim '" + d + "' has size " + std::to_string(it->second) + " and, for parameter '" + v.name +
                       "', size " + std::to_string(v.shape[k]));
      }
    }
  }
  for (const auto& d : dim_size) {
    if (d.second >= 0 && var_names.count(d.first) != 0) {
      throw RunError("'" + d.first + "' is the name of both a parameter and a dim");
    }
  }
  return vars;
}

}  // namespace hmc::io
