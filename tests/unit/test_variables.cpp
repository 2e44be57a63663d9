// Flat parameter names grouped into ArviZ variables (io/variables.hpp).
#include "hmc/core/errors.hpp"
#include "hmc/io/variables.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using hmc::RunError;
using hmc::StoreLayout;
using hmc::io::group_parameters;
using hmc::io::sanitize_netcdf_name;

StoreLayout layout_of(std::vector<std::string> names,
                      std::vector<std::pair<std::string, std::vector<std::string>>> dims = {}) {
  StoreLayout l;
  l.particles = 2;
  l.draws = 3;
  l.param_names = std::move(names);
  l.dim_names = std::move(dims);
  return l;
}

// The message of the RunError that group_parameters throws, "" if none.
std::string error_of(const StoreLayout& l) {
  try {
    group_parameters(l);
  } catch (const RunError& e) {
    return e.what();
  }
  return "";
}

TEST(Variables, ScalarsVectorsAndMatricesInFirstAppearanceOrder) {
  // transition given column-major and interleaved with the others: columns come back in C order
  const auto vars = group_parameters(
      layout_of({"transition[1,1]", "mu", "transition[2,1]", "p[2]", "transition[1,2]", "p[1]", "transition[2,2]"},
                {{"transition", {"from_state", "to_state"}}}));
  ASSERT_EQ(vars.size(), 3u);
  EXPECT_EQ(vars[0].name, "transition");
  EXPECT_EQ(vars[0].dims, (std::vector<std::string>{"from_state", "to_state"}));
  EXPECT_EQ(vars[0].shape, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(vars[0].columns, (std::vector<int>{0, 4, 2, 6}));
  EXPECT_EQ(vars[1].name, "mu");
  EXPECT_TRUE(vars[1].dims.empty());
  EXPECT_TRUE(vars[1].shape.empty());
  EXPECT_EQ(vars[1].columns, (std::vector<int>{1}));
  EXPECT_EQ(vars[2].name, "p");
  EXPECT_EQ(vars[2].dims, (std::vector<std::string>{"p_dim_0"}));
  EXPECT_EQ(vars[2].shape, (std::vector<std::int64_t>{2}));
  EXPECT_EQ(vars[2].columns, (std::vector<int>{5, 3}));
}

TEST(Variables, HigherRankAndDefaultDims) {
  std::vector<std::string> names;
  for (int i = 1; i <= 2; ++i)
    for (int j = 1; j <= 3; ++j)
      for (int k = 1; k <= 4; ++k)
        names.push_back("a[" + std::to_string(i) + "," + std::to_string(j) + "," + std::to_string(k) + "]");
  const auto vars = group_parameters(layout_of(names));
  ASSERT_EQ(vars.size(), 1u);
  EXPECT_EQ(vars[0].shape, (std::vector<std::int64_t>{2, 3, 4}));
  EXPECT_EQ(vars[0].dims, (std::vector<std::string>{"a_dim_0", "a_dim_1", "a_dim_2"}));
  for (int c = 0; c < 24; ++c) EXPECT_EQ(vars[0].columns[static_cast<std::size_t>(c)], c);
}

TEST(Variables, OtherFormsAreScalarsUnderTheirOwnName) {
  const auto vars = group_parameters(layout_of({"p[0]", "p[01]", "q[a]", "r[1]x", "[1]", "s[]", "t[1,]", "u[-1]"}));
  std::vector<std::string> got;
  for (const auto& v : vars) {
    EXPECT_TRUE(v.shape.empty()) << v.name;
    got.push_back(v.name);
  }
  // "[1]" starts with a character netCDF does not allow first
  EXPECT_EQ(got, (std::vector<std::string>{"p[0]", "p[01]", "q[a]", "r[1]x", "_[1]", "s[]", "t[1,]", "u[-1]"}));
}

TEST(Variables, SanitizesIllegalNetcdfNames) {
  EXPECT_EQ(sanitize_netcdf_name("sigma"), "sigma");
  EXPECT_EQ(sanitize_netcdf_name("a/b"), "a_b");
  EXPECT_EQ(sanitize_netcdf_name("x "), "x_");
  EXPECT_EQ(sanitize_netcdf_name(" x"), "_ x");
  EXPECT_EQ(sanitize_netcdf_name("(x)"), "_(x)");
  EXPECT_EQ(sanitize_netcdf_name("tab\there"), "tab_here");
  EXPECT_EQ(sanitize_netcdf_name(""), "_");
  EXPECT_EQ(sanitize_netcdf_name("\xCF\x83"), "\xCF\x83");  // sigma in UTF-8 is legal
  EXPECT_EQ(sanitize_netcdf_name("a\xFF"), "a_");           // not UTF-8
  const auto vars = group_parameters(layout_of({"a/b", "c/d[1]", "c/d[2]"}));
  ASSERT_EQ(vars.size(), 2u);
  EXPECT_EQ(vars[0].name, "a_b");
  EXPECT_EQ(vars[1].name, "c_d");
  EXPECT_EQ(vars[1].dims, (std::vector<std::string>{"c_d_dim_0"}));
}

TEST(Variables, RejectsNamesThatDoNotFormAnArray) {
  EXPECT_NE(error_of(layout_of({"p[1]", "p[3]"})).find("no 'p[2]'"), std::string::npos);
  EXPECT_NE(error_of(layout_of({"t[1,1]", "t[1,2]", "t[2,1]"})).find("full 2x2 array (no 't[2,2]')"),
            std::string::npos);
  EXPECT_NE(error_of(layout_of({"p[1]", "p[1]"})).find("appears twice"), std::string::npos);
  EXPECT_NE(error_of(layout_of({"s", "s"})).find("appears twice"), std::string::npos);
  EXPECT_NE(error_of(layout_of({"p", "p[1]"})).find("both as a scalar and with indices"), std::string::npos);
  EXPECT_NE(error_of(layout_of({"p[1]", "p"})).find("both as a scalar and with indices"), std::string::npos);
  EXPECT_NE(error_of(layout_of({"p[1]", "p[1,1]"})).find("different numbers of indices"), std::string::npos);
}

TEST(Variables, RejectsBadDimsAndNameClashes) {
  EXPECT_NE(error_of(layout_of({"t[1,1]"}, {{"t", {"only_one"}}})).find("1 dim name"), std::string::npos);
  EXPECT_NE(error_of(layout_of({"t[1,1]"}, {{"t", {"s", "s"}}})).find("uses dim 's' twice"), std::string::npos);
  EXPECT_NE(error_of(layout_of({"a[1]", "b[1]", "b[2]"}, {{"a", {"k"}}, {"b", {"k"}}})).find("dim 'k' has size 1"),
            std::string::npos);
  EXPECT_NE(error_of(layout_of({"chain"})).find("reserved"), std::string::npos);
  EXPECT_NE(error_of(layout_of({"a[1]"}, {{"a", {"draw"}}})).find("reserved"), std::string::npos);
  EXPECT_NE(error_of(layout_of({"a/b", "a_b"})).find("netCDF name 'a_b'"), std::string::npos);
  EXPECT_NE(error_of(layout_of({"k", "a[1]"}, {{"a", {"k"}}})).find("both a parameter and a dim"), std::string::npos);
  // one dim shared by two parameters of the same size is fine
  EXPECT_EQ(error_of(layout_of({"a[1]", "a[2]", "b[1]", "b[2]"}, {{"a", {"k"}}, {"b", {"k"}}})), "");
}

}  // namespace
