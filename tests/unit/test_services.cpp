// The services' small rules: threads per rank, the staging directory's place and
// publishing into an existing folder, and a model whose from_config throws a non-exception.
#include "hmc/core/errors.hpp"
#include "hmc/services/prepare.hpp"
#include "hmc/services/staging.hpp"
#include "hmc/services/threads.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using hmc::services::choose_host_threads;
using hmc::services::CpuInfo;
using hmc::services::HostThreads;

CpuInfo cpu(int affinity, int online, int quota = 0) {
  CpuInfo c;
  c.affinity = affinity, c.online = online, c.quota = quota;
  return c;
}

TEST(HostThreads, AShareOfTheNodesCores) {
  EXPECT_EQ(choose_host_threads(cpu(2, 2), 1, 0, "").threads, 2);
  // More ranks than cores (mpirun -np 4 on 2 cores): one thread each, and said so.
  const HostThreads over = choose_host_threads(cpu(2, 2), 4, 0, "");
  EXPECT_EQ(over.threads, 1);
  EXPECT_TRUE(over.chosen());
  EXPECT_TRUE(over.oversubscribed());
  // Two ranks of a 64-core node, each free to run anywhere: 32 each.
  EXPECT_EQ(choose_host_threads(cpu(64, 64), 2, 0, "").threads, 32);
  EXPECT_FALSE(choose_host_threads(cpu(64, 64), 2, 0, "").oversubscribed());
  // Bound by the launcher to 4 cores (srun --cpus-per-task=4): the mask decides.
  EXPECT_EQ(choose_host_threads(cpu(4, 64), 16, 0, "").threads, 4);
  // Two ranks bound to one 8-core socket each, four ranks on the node's 16 cores: 4 each.
  EXPECT_EQ(choose_host_threads(cpu(8, 16), 4, 0, "").threads, 4);
  // A container's CPU quota (docker --cpus=2) on a 16-core machine.
  EXPECT_EQ(choose_host_threads(cpu(16, 16, 2), 1, 0, "").threads, 2);
  EXPECT_EQ(cpu(16, 16, 2).node_cores(), 2);
}

TEST(HostThreads, TheUsersNumberIsKeptAndChecked) {
  const HostThreads t = choose_host_threads(cpu(2, 2), 4, 2, "OMP_NUM_THREADS");
  EXPECT_EQ(t.threads, 2);
  EXPECT_FALSE(t.chosen());
  EXPECT_TRUE(t.oversubscribed());
  EXPECT_NE(t.describe().find("set by OMP_NUM_THREADS"), std::string::npos);
}

TEST(HostThreads, TheUsersNumberIsFound) {
  std::string source;
  std::vector<char*> args;
  std::string a0 = "hmc", a1 = "--kokkos-num-threads=3", bad = "--kokkos-threads=x";
  ::unsetenv("OMP_NUM_THREADS");
  ::unsetenv("KOKKOS_NUM_THREADS");
  args = {a0.data()};
  EXPECT_EQ(hmc::services::user_host_threads(args, source), 0);
  args = {a0.data(), bad.data()};
  EXPECT_EQ(hmc::services::user_host_threads(args, source), 0);
  args = {a0.data(), a1.data()};
  EXPECT_EQ(hmc::services::user_host_threads(args, source), 3);
  EXPECT_EQ(source, "--kokkos-num-threads");
  ::setenv("OMP_NUM_THREADS", "4,2", 1);
  args = {a0.data()};
  EXPECT_EQ(hmc::services::user_host_threads(args, source), 4);
  EXPECT_EQ(source, "OMP_NUM_THREADS");
  ::setenv("OMP_NUM_THREADS", "2", 1);  // as ctest sets it for this binary
}

/// A fresh directory under the system's temporary one, removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "hmc-services-XXXXXX").string();
    path = ::mkdtemp(t.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

TEST(Staging, InsideAnExistingEmptyOutputDirectory) {
  TempDir t;
  using hmc::services::output_paths;
  const auto beside = output_paths((t.path / "new").string());
  EXPECT_FALSE(beside.in_place);
  EXPECT_EQ(beside.staging, (t.path / "new.partial").string());
  fs::create_directory(t.path / "empty");
  const auto inside = output_paths((t.path / "empty").string() + "/");
  EXPECT_TRUE(inside.in_place);
  EXPECT_EQ(inside.staging, (t.path / "empty" / ".hmc.partial").string());
  // A finished result set: a new run would be beside it (and refused without --overwrite).
  fs::create_directory(t.path / "full");
  write(t.path / "full" / "summary.json", "{}");
  EXPECT_FALSE(output_paths((t.path / "full").string()).in_place);
  EXPECT_THROW(hmc::services::prepare_staging(output_paths((t.path / "full").string()), false), hmc::ConfigError);
}

TEST(Staging, PublishesIntoTheFolderFileByFileAndKeepsIt) {
  TempDir t;
  const fs::path out = t.path / "out";
  fs::create_directory(out);
  const auto p = hmc::services::output_paths(out.string());
  hmc::services::prepare_staging(p, false);
  for (const char* f : {"draws.nc", "particles.csv", "run.json", "summary.json"}) write(fs::path(p.staging) / f, f);
  write(p.checkpoint(), "checkpoint");
  hmc::services::publish(p, false);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(out)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"draws.nc", "particles.csv", "run.json", "summary.json"}));
  EXPECT_FALSE(fs::exists(t.path / "out.partial"));
}

TEST(Staging, AFailedPublishingKeepsTheResultsAndSaysHowToFinish) {
  TempDir t;
  const fs::path out = t.path / "out";
  const auto p = hmc::services::output_paths(out.string());
  hmc::services::prepare_staging(p, false);
  write(fs::path(p.staging) / "summary.json", "{}");
  write(p.checkpoint(), "checkpoint");
  fs::create_directory(out);
  write(out / "notes.txt", "someone else's");  // OUT appeared during the run
  try {
    hmc::services::publish(p, false);
    FAIL() << "publishing over someone else's files";
  } catch (const hmc::RunError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("the complete results are in " + p.staging), std::string::npos) << what;
    EXPECT_NE(what.find("finish with: hmc resume " + out.string()), std::string::npos) << what;
  }
  EXPECT_TRUE(fs::exists(fs::path(p.staging) / "summary.json"));
  EXPECT_TRUE(fs::exists(p.checkpoint()));
  // Once the way is clear, the same publishing succeeds.
  fs::remove(out / "notes.txt");
  hmc::services::publish(p, false);
  EXPECT_TRUE(fs::exists(out / "summary.json"));
  EXPECT_FALSE(fs::exists(p.staging));
}

struct ThrowsAnInt {
  static ThrowsAnInt from_config(const nlohmann::json&, const nlohmann::json&) { throw 42; }
};

TEST(BuildModel, AValueThatIsNotAnExceptionBecomesARunError) {
  hmc::services::RunSpec spec;
  spec.run.model = "throws_an_int";
  try {
    (void)hmc::services::build_model<ThrowsAnInt>(spec);
    FAIL() << "no error";
  } catch (const hmc::RunError& e) {
    EXPECT_NE(std::string(e.what()).find("model throws_an_int: from_config threw a value that is not a std::exception"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
