// Config validation: every failure is one line naming the key; defaults are filled;
// --set values are typed; docs/config.md documents every key.
#include "hmc/io/config.hpp"
#include "hmc/io/errors.hpp"
#include "registry.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace {

using nlohmann::json;

json minimal() { return {{"model", {{"name", "coin_toss"}, {"data", {{"tosses", {{1, 0}}}}}}}}; }

void validate(json& c) {
  hmc::io::validate_config(c, hmc::models::model_names(), hmc::models::model_keys, "/nonexistent");
}

std::string config_error(json c) {
  try {
    validate(c);
  } catch (const hmc::ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "message must be one line: " << msg;
    return msg;
  }
  ADD_FAILURE() << "no ConfigError for " << c.dump();
  return "";
}

TEST(Config, FillsDefaults) {
  json c = minimal();
  validate(c);
  EXPECT_EQ(c["sampler"]["particles"], 1024);
  EXPECT_EQ(c["sampler"]["init"]["strategy"], "uniform");
  EXPECT_EQ(c["model"]["priors"]["a"], 1.0);
  EXPECT_EQ(c["output"]["dir"], "output");
  EXPECT_EQ(c["seed"], 1);
}

TEST(Config, UnknownKeyNamesItAndTheClosestValidKey) {
  json c = minimal();
  c["sampler"]["particle"] = 10;
  const auto msg = config_error(c);
  EXPECT_NE(msg.find("unknown key /sampler/particle "), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean /sampler/particles?"), std::string::npos) << msg;

  json d = minimal();
  d["sampler"]["init"]["radias"] = 1;
  EXPECT_NE(config_error(d).find("did you mean /sampler/init/radius?"), std::string::npos);

  json e = minimal();
  e["sede"] = 1;
  EXPECT_NE(config_error(e).find("did you mean /seed?"), std::string::npos);
}

TEST(Config, ModelKeysBelongToTheirModel) {
  json c = minimal();
  c["model"]["spring_constants"] = {1, 2};
  EXPECT_NE(config_error(c).find("unknown key /model/spring_constants"), std::string::npos);
}

TEST(Config, WrongTypeNamesTheKey) {
  json c = minimal();
  c["sampler"]["particles"] = "many";
  EXPECT_NE(config_error(c).find("/sampler/particles must be an integer"), std::string::npos);
  json d = minimal();
  d["sampler"]["step_size"] = true;
  EXPECT_NE(config_error(d).find("/sampler/step_size must be a number"), std::string::npos);
  json e = minimal();
  e["sampler"] = 3;
  EXPECT_NE(config_error(e).find("/sampler must be an object"), std::string::npos);
}

TEST(Config, OutOfRangeNamesTheKey) {
  json c = minimal();
  c["sampler"]["step_size"] = -0.1;
  EXPECT_NE(config_error(c).find("/sampler/step_size must be > 0"), std::string::npos);
  json d = minimal();
  d["sampler"]["particles"] = 0;
  EXPECT_NE(config_error(d).find("/sampler/particles must be >= 1"), std::string::npos);
  json e = minimal();
  e["log"]["level"] = "loud";
  EXPECT_NE(config_error(e).find("/log/level must be one of"), std::string::npos);
  json f = minimal();
  f["seed"] = -1;
  EXPECT_NE(config_error(f).find("/seed must be >= 0"), std::string::npos);
}

TEST(Config, ModelNameIsRequiredAndChecked) {
  EXPECT_NE(config_error(json{{"sampler", json::object()}}).find("missing required key /model"), std::string::npos);
  EXPECT_NE(config_error(json{{"model", json::object()}}).find("missing required key /model/name"), std::string::npos);
  EXPECT_NE(config_error(json{{"model", {{"name", "coin"}}}}).find("/model/name must be one of coin_toss"),
            std::string::npos);
}

TEST(Config, IntegralFloatsAreIntegers) {
  json c = minimal();
  c["sampler"]["particles"] = 4096.0;
  validate(c);
  EXPECT_EQ(c["sampler"]["particles"].get<long>(), 4096);
  c["sampler"]["particles"] = 4096.5;
  EXPECT_NE(config_error(c).find("must be an integer"), std::string::npos);
}

TEST(Config, SetParsesJsonElseString) {
  json c = minimal();
  hmc::io::apply_override(c, "sampler.particles=4096");
  hmc::io::apply_override(c, "output.dir=out/a");
  hmc::io::apply_override(c, "model.priors.a=2.5");
  hmc::io::apply_override(c, "log.level=\"debug\"");
  EXPECT_TRUE(c["sampler"]["particles"].is_number_integer());
  EXPECT_EQ(c["sampler"]["particles"], 4096);
  EXPECT_EQ(c["output"]["dir"], "out/a");
  EXPECT_EQ(c["model"]["priors"]["a"], 2.5);
  EXPECT_EQ(c["log"]["level"], "debug");
  validate(c);  // and the result validates like a file

  hmc::io::apply_override(c, "sampler.particles=many");
  EXPECT_NE(config_error(c).find("/sampler/particles must be an integer"), std::string::npos);
}

TEST(Config, SetRejectsMalformedAssignments) {
  json c = minimal();
  EXPECT_THROW(hmc::io::apply_override(c, "sampler.particles"), hmc::ConfigError);
  EXPECT_THROW(hmc::io::apply_override(c, "=3"), hmc::ConfigError);
  EXPECT_THROW(hmc::io::apply_override(c, "sampler..x=3"), hmc::ConfigError);
  c["seed"] = 1;
  EXPECT_THROW(hmc::io::apply_override(c, "seed.x=3"), hmc::ConfigError);
}

TEST(Config, RelativeDataPathIsRelativeToTheConfigFile) {
  json c = minimal();
  c["model"]["data"] = "data/x.json";
  hmc::io::validate_config(c, hmc::models::model_names(), hmc::models::model_keys, "/some/where");
  EXPECT_EQ(c["model"]["data"], "/some/where/data/x.json");
}

TEST(Config, MissingDataFileIsADataErrorNamingTheFile) {
  json c = minimal();
  c["model"]["data"] = "/no/such/file.json";
  validate(c);
  try {
    hmc::io::load_data(c);
    FAIL() << "no DataError";
  } catch (const hmc::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("/no/such/file.json"), std::string::npos) << e.what();
  }
}

TEST(Config, EditDistance) {
  EXPECT_EQ(hmc::io::edit_distance("particle", "particles"), 1u);
  EXPECT_EQ(hmc::io::edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(hmc::io::edit_distance("", "abc"), 3u);
}

TEST(Config, EveryKeyIsDocumented) {
  std::ifstream in(std::string(HMC_SOURCE_DIR) + "/docs/config.md");
  ASSERT_TRUE(in) << "docs/config.md missing";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  for (const auto& name : hmc::models::model_names()) {
    for (const auto& k : hmc::io::all_keys(hmc::models::model_names(), hmc::models::model_keys, name)) {
      EXPECT_NE(doc.find("`" + k.pointer + "`"), std::string::npos) << k.pointer << " is not in docs/config.md";
    }
  }
}

// The default column of each key's row ("| `/ptr` | type | `default` | ...") is the schema's.
TEST(Config, DocumentedDefaultsAreTheSchemas) {
  std::ifstream in(std::string(HMC_SOURCE_DIR) + "/docs/config.md");
  ASSERT_TRUE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  int compared = 0;
  for (const auto& k : hmc::io::generic_keys(hmc::models::model_names())) {
    if (k.type == hmc::io::KeyType::kSection || k.default_value.is_null()) continue;
    const std::string head = "| `" + k.pointer + "` |";
    const auto row = doc.find(head);
    if (row == std::string::npos) continue;  // EveryKeyIsDocumented reports it
    const auto type_end = doc.find('|', row + head.size());
    const auto default_end = doc.find('|', type_end + 1);
    std::string cell = doc.substr(type_end + 1, default_end - type_end - 1);
    const auto first = cell.find('`'), last = cell.rfind('`');
    if (first == std::string::npos || last == first) continue;  // described in words
    cell = cell.substr(first + 1, last - first - 1);
    const auto parsed = nlohmann::json::parse(cell, nullptr, false);
    ASSERT_FALSE(parsed.is_discarded()) << k.pointer << ": default cell " << cell;
    EXPECT_EQ(parsed, k.default_value) << k.pointer << ": docs/config.md says " << cell;
    ++compared;
  }
  EXPECT_GT(compared, 20);
}

}  // namespace
