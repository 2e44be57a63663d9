// Config validation: every failure is one line naming the key; defaults are filled;
// --set values are typed; docs/config.md documents every key.
#include "hmc/app/models.hpp"
#include "hmc/core/errors.hpp"
#include "hmc/io/config.hpp"
#include "hmc/io/run_config.hpp"
#include "hmc/keys/key.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using nlohmann::json;

json minimal() { return {{"model", {{"name", "coin_toss"}, {"data", {{"tosses", {{1, 0}}}}}}}}; }

void validate(json& c) { hmc::io::validate_config(c, hmc::app::registry().catalog(), "/nonexistent"); }

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
  hmc::io::validate_config(c, hmc::app::registry().catalog(), "/some/where");
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

std::string read_doc(const std::string& name) {
  std::ifstream in(std::string(HMC_SOURCE_DIR) + "/" + name);
  EXPECT_TRUE(in) << name << " missing";
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The key rows ("| `/..." lines) of `text`, in order.
std::vector<std::string> key_rows(const std::string& text) {
  std::vector<std::string> rows;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("| `/", 0) == 0) rows.push_back(line);
  return rows;
}

/// The "## NAME" sections of docs/models.md, by name.
std::map<std::string, std::string> doc_sections(const std::string& text) {
  std::map<std::string, std::string> out;
  std::size_t at = text.find("\n## ");
  while (at != std::string::npos) {
    const std::size_t name_end = text.find('\n', at + 4);
    const std::size_t next = text.find("\n## ", name_end);
    out[text.substr(at + 4, name_end - at - 4)] =
        text.substr(name_end, next == std::string::npos ? next : next - name_end);
    at = next;
  }
  return out;
}

std::vector<std::string> rows_of(const std::vector<hmc::keys::KeySpec>& keys) {
  std::vector<std::string> rows;
  for (const auto& k : keys) rows.push_back(hmc::keys::markdown_row(k));
  return rows;
}

// docs/config.md's key rows are the generic keys' rows as the key builder writes them
// (`hmc --list-keys`), all of them and no others, in the schema's order.
TEST(Docs, ConfigTablesAreTheGenericKeys) {
  const auto catalog = hmc::app::registry().catalog();
  const auto generic = hmc::io::generic_keys(catalog.models, catalog.formats);
  EXPECT_EQ(key_rows(read_doc("docs/config.md")), rows_of(generic))
      << "docs/config.md: paste the generic rows of `hmc --list-keys`";
}

// docs/models.md has one section per model of the registry (and "Adding a model"), and
// each section's key rows are that model's keys.
TEST(Docs, ModelSectionsAreTheRegistry) {
  const std::string doc = read_doc("docs/models.md");
  auto sections = doc_sections(doc);
  for (const auto& m : hmc::app::registry().infos()) {
    ASSERT_TRUE(sections.count(m.name)) << "docs/models.md has no section \"## " << m.name << "\"";
    EXPECT_EQ(key_rows(sections[m.name]), rows_of(m.keys()))
        << "docs/models.md#" << m.name << ": paste the rows of `hmc --list-keys` for " << m.name;
    EXPECT_NE(doc.find("| `" + m.name + "` |"), std::string::npos)
        << "docs/models.md: the table at the top has no row for " << m.name;
    sections.erase(m.name);
  }
  sections.erase("Adding a model");
  for (const auto& [name, text] : sections)
    ADD_FAILURE() << "docs/models.md: section \"## " << name << "\" is no model";
  // The table at the top: one row per model, no more.
  std::size_t rows = 0;
  std::stringstream in(doc.substr(0, doc.find("\n## ")));
  for (std::string line; std::getline(in, line);)
    if (line.rfind("| `", 0) == 0) ++rows;
  EXPECT_EQ(rows, hmc::app::registry().infos().size()) << "docs/models.md: the table at the top";
}

// The `hmc --list-models` lines shown in docs/cli.md are lines it prints.
TEST(Docs, ListModelsExampleIsReal) {
  const std::string doc = read_doc("docs/cli.md");
  const auto at = doc.find("$ hmc --list-models\n");
  ASSERT_NE(at, std::string::npos);
  std::stringstream in(doc.substr(at + 20, doc.find("\n$ ", at + 20) - at - 20));
  int shown = 0;
  for (std::string line; std::getline(in, line); ++shown) {
    bool found = false;
    for (const auto& m : hmc::app::registry().infos()) found = found || line == m.name + "\t" + m.summary;
    EXPECT_TRUE(found) << "docs/cli.md shows a --list-models line hmc does not print: " << line;
  }
  EXPECT_GT(shown, 0);
}

// /output/formats: a list of the build's draw formats, one of them as a string, or
// "both"; RunConfig holds the list.
TEST(Config, OutputFormatsAreAList) {
  const auto formats_of = [](json value) {
    json c = minimal();
    c["output"]["formats"] = std::move(value);
    validate(c);
    return hmc::io::run_config(c).output.formats;
  };
  using Names = std::vector<std::string>;
  EXPECT_EQ(formats_of("netcdf"), Names{"netcdf"});
  EXPECT_EQ(formats_of("csv"), Names{"csv"});
  EXPECT_EQ(formats_of("both"), (Names{"netcdf", "csv"}));
  EXPECT_EQ(formats_of(json::array({"csv", "netcdf"})), (Names{"csv", "netcdf"}));
  json c = minimal();
  validate(c);
  EXPECT_EQ(c["output"]["formats"], json::array({"netcdf"}));
  EXPECT_EQ(hmc::io::run_config(c).output.formats, Names{"netcdf"});
  for (const json& bad : {json("hdf5"), json::array(), json::array({"netcdf", "netcdf"}), json::array({"both"}),
                          json::array({1}), json(3)}) {
    json b = minimal();
    b["output"]["formats"] = bad;
    EXPECT_NE(config_error(b).find("/output/formats"), std::string::npos) << bad.dump();
  }
}

// RunConfig: every generic key's default, from the schema, for a config that leaves it out.
TEST(Config, RunConfigTakesTheSchemasDefaults) {
  json c = minimal();
  validate(c);
  const auto r = hmc::io::run_config(c);
  EXPECT_EQ(r.model, "coin_toss");
  EXPECT_EQ(r.sampler.particles, 1024);
  EXPECT_EQ(r.sampler.warmup, 500);
  EXPECT_EQ(r.sampler.seed, 1u);
  EXPECT_EQ(r.sampler.progress_every, 100);
  EXPECT_EQ(r.output.checkpoint_every, 100);
  EXPECT_EQ(r.run.rank_timeout_s, 600.0);
  EXPECT_EQ(r.diagnostics.max_draws, 8388608);
  EXPECT_FALSE(r.init_values_given);
  // A recorded config of an older hmc lacks sections: their defaults, too.
  json old = c;
  old.erase("run");
  EXPECT_EQ(hmc::io::run_config(old).run.rank_timeout_s, 600.0);
  json big = minimal();
  big["seed"] = 18446744073709551615ull;
  validate(big);
  EXPECT_EQ(hmc::io::run_config(big).sampler.seed, 18446744073709551615ull);
}

}  // namespace
