#pragma once
/// \file
/// \brief Flat parameter names ("sigma", "p[1]", "transition[1,2]") grouped into
/// array variables, as ArviZ and xarray see them: `transition` with dims
/// (from_state, to_state) and shape (2, 2).

#include "hmc/core/draw_source.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace hmc::io {

/// \brief One array (or scalar) variable made of store columns.
struct Variable {
  std::string name;                 ///< netCDF / xarray name (legal netCDF name)
  std::vector<std::string> dims;    ///< one per axis; empty for a scalar
  std::vector<std::int64_t> shape;  ///< one per axis; empty for a scalar
  std::vector<int> columns;         ///< store column of each element, C order of shape
};

/// \brief Groups the layout's flat parameter names into variables, in order of first
/// appearance.
///
/// A name of the form `base[i]`, `base[i,j]`, ... (indices 1-based decimal integers
/// without sign, spaces or leading zeros, any rank) is element (i-1, j-1, ...) of
/// variable `base`; its shape is the largest index per axis. Its dims are
/// layout.dim_names[base] when given, else ArviZ's defaults `base_dim_0`, `base_dim_1`, ...
/// Any other name is a scalar variable of that name.
///
/// Variable and dim names that are not legal netCDF names are sanitized: every '/',
/// control character (0x00-0x1F, 0x7F) and byte that is not part of valid UTF-8 becomes
/// '_', trailing white space becomes '_', and a name whose first character is not a
/// letter, digit, '_' or a multi-byte UTF-8 character gets a '_' prefixed ("" -> "_").
///
/// Throws RunError, naming the parameter, when the indexed names of one base do not form
/// a full rectangular array (missing element, duplicate, mixed ranks), when a base is
/// used both as a scalar name and with indices, when dim_names has the wrong rank or
/// repeats a dim within one variable, when one dim name is used with two sizes, or when
/// two variables, or a variable and a dim, end up with the same name, or a name is
/// "chain" or "draw" (reserved for the ensemble's dims), or longer than 256 bytes.
std::vector<Variable> group_parameters(const StoreLayout& layout);

/// \brief The variables of the layout's further group k (StoreLayout::groups), with their
/// store columns: one per array, dims as the model named them (else `name_dim_0`, ...),
/// names sanitized as above. Throws RunError naming the group when dims and shape
/// differ in rank, a dim is used with two sizes, or two arrays share a name.
std::vector<Variable> group_arrays(const StoreLayout& layout, std::size_t k);

/// \brief The same checks and names for fixed arrays of one group (observed_data):
/// Variable::columns holds each array's index in `arrays`.
std::vector<Variable> data_variables(const std::vector<DataArray>& arrays, const std::string& group);

/// \brief `name` made a legal netCDF name by the rule of group_parameters.
std::string sanitize_netcdf_name(const std::string& name);

}  // namespace hmc::io
