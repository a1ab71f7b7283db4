// The kernel generator: the same (seed, count) gives the same bytes, names and sources are
// unique, every family and dtype shows up, and the kernels are CUDA that nvcc accepts (when
// nvcc is installed; a subset covering every family and dtype keeps the test short).
#include "data/generator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include "util/subprocess.h"
#include "util/text.h"

namespace ptxforge::data {
namespace {

// The source with the kernel's name taken out: two kernels that differ only in their names
// are the same kernel.
std::string without_name(const GeneratedKernel& k) {
  std::string s = k.source;
  for (size_t at; (at = s.find(k.name)) != std::string::npos;) s.replace(at, k.name.size(), "KERNEL");
  return s;
}

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

TEST(Generator, SameSeedAndCountGiveIdenticalKernels) {
  const auto a = generate_kernels(42, 70);
  const auto b = generate_kernels(42, 70);
  ASSERT_EQ(a.size(), 70u);
  ASSERT_EQ(b.size(), 70u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].family, b[i].family);
    EXPECT_EQ(a[i].source, b[i].source) << a[i].name;
    EXPECT_EQ(a[i].params, b[i].params) << a[i].name;
  }
}

TEST(Generator, ALongerRunExtendsAShorterOne) {
  const auto short_run = generate_kernels(9, 15);
  const auto long_run = generate_kernels(9, 45);
  ASSERT_EQ(short_run.size(), 15u);
  for (size_t i = 0; i < short_run.size(); ++i) {
    EXPECT_EQ(short_run[i].name, long_run[i].name);
    EXPECT_EQ(short_run[i].source, long_run[i].source);
  }
}

TEST(Generator, DifferentSeedsGiveDifferentKernels) {
  const auto a = generate_kernels(1, 40);
  const auto b = generate_kernels(2, 40);
  std::set<std::string> sources;
  for (const auto& k : a) sources.insert(without_name(k));
  int shared = 0;
  for (const auto& k : b) shared += sources.count(without_name(k)) ? 1 : 0;
  EXPECT_LE(shared, 1) << "two seeds should hardly ever draw the same kernel";
  EXPECT_NE(a[0].source, b[0].source);
}

TEST(Generator, NamesAndSourcesAreUnique) {
  const auto kernels = generate_kernels(7, 200);
  ASSERT_EQ(kernels.size(), 200u);
  std::set<std::string> names, sources;
  for (const auto& k : kernels) {
    EXPECT_TRUE(is_identifier(k.name)) << k.name;
    names.insert(k.name);
    sources.insert(without_name(k));
    // Every kernel the params list is an extern "C" __global__ in the source.
    for (std::string_view entry : split(k.params.at("kernels"), ',')) {
      EXPECT_TRUE(is_identifier(std::string(entry))) << entry;
      EXPECT_NE(k.source.find(std::string(entry) + "("), std::string::npos) << entry;
    }
    EXPECT_TRUE(starts_with(k.params.at("kernels"), k.name));
    EXPECT_NE(k.source.find("extern \"C\" __global__ void "), std::string::npos) << k.name;
    EXPECT_EQ(k.source.find('$'), std::string::npos) << "a template placeholder left in " << k.name;
  }
  EXPECT_EQ(names.size(), kernels.size()) << "names are unique within a call";
  EXPECT_EQ(sources.size(), kernels.size()) << "no two kernels differ only in their names";
}

TEST(Generator, EveryFamilyAndDtypeAppearsIn60) {
  const auto& families = kernel_families();
  const auto& dtypes = kernel_dtypes();
  for (uint64_t seed : {1, 2, 3, 1234567}) {
    std::set<std::string> seen_families, seen_dtypes;
    for (const auto& k : generate_kernels(seed, 60)) {
      EXPECT_NE(std::find(families.begin(), families.end(), k.family), families.end()) << k.family;
      EXPECT_EQ(k.params.at("family"), k.family);
      seen_families.insert(k.family);
      seen_dtypes.insert(k.params.at("dtype"));
    }
    EXPECT_EQ(seen_families, std::set<std::string>(families.begin(), families.end())) << "seed " << seed;
    EXPECT_EQ(seen_dtypes, std::set<std::string>(dtypes.begin(), dtypes.end())) << "seed " << seed;
  }
}

TEST(Generator, ParamsRecordTheKnobs) {
  const auto& dtypes = kernel_dtypes();
  for (const auto& k : generate_kernels(5, 50)) {
    ASSERT_TRUE(k.params.count("dtype")) << k.name;
    EXPECT_NE(std::find(dtypes.begin(), dtypes.end(), k.params.at("dtype")), dtypes.end()) << k.name;
    const int block = std::atoi(k.params.at("block").c_str());
    EXPECT_GE(block, 64) << k.name;
    EXPECT_LE(block, 1024) << k.name;
    EXPECT_TRUE(k.params.count("restrict") && k.params.count("launch_bounds")) << k.name;
  }
  EXPECT_TRUE(generate_kernels(5, 0).empty());
}

// A subset of generate_kernels(1, 40) that holds every family, dtype, output dtype and
// reduction strategy, scan method and stencil rank drawn there; all 40 (about 40 s on two
// busy cores) when PTXFORGE_GENERATOR_COMPILE_ALL is set.
std::vector<GeneratedKernel> compile_subset() {
  auto all = generate_kernels(1, 40);
  if (std::getenv("PTXFORGE_GENERATOR_COMPILE_ALL")) return all;
  std::vector<GeneratedKernel> picked;
  std::set<std::string> covered;
  for (auto& k : all) {
    auto knob = [&](const char* key) { return k.params.count(key) ? k.params.at(key) : ""; };
    const std::string keys[] = {"family:" + k.family, "dtype:" + knob("dtype"), "out:" + knob("out_dtype"),
                                "variant:" + k.family + knob("strategy") + knob("method") + knob("dims")};
    bool adds = false;
    for (const auto& key : keys) adds = covered.insert(key).second || adds;
    if (adds) picked.push_back(std::move(k));
  }
  return picked;
}

TEST(Generator, KernelsCompileWithNvccForSm90a) {
  const std::string nvcc = "/usr/local/cuda/bin/nvcc";
  if (!std::filesystem::exists(nvcc)) GTEST_SKIP() << nvcc << " is not installed";
  auto dir = TempDir::create("ptxforge-generator");
  ASSERT_TRUE(dir.ok()) << dir.error().message;
  const auto kernels = compile_subset();
  std::set<std::string> families, dtypes;
  for (const auto& k : kernels) {
    families.insert(k.family);
    dtypes.insert(k.params.at("dtype"));
  }
  EXPECT_EQ(families.size(), kernel_families().size()) << "the subset covers every family";
  EXPECT_EQ(dtypes.size(), kernel_dtypes().size()) << "the subset covers every dtype";

  std::atomic<size_t> next{0};
  std::mutex mu;
  std::vector<std::string> failures;
  auto worker = [&] {
    for (size_t i; (i = next++) < kernels.size();) {
      const GeneratedKernel& k = kernels[i];
      const std::string cu = dir->path() + "/" + k.name + ".cu", ptx = dir->path() + "/" + k.name + ".ptx";
      std::string problem;
      if (auto w = write_file(cu, k.source); !w.ok()) {
        problem = w.error().message;
      } else if (auto r = run_process({nvcc, "-ptx", "-arch=sm_90a", cu, "-o", ptx}, std::chrono::minutes(3)); !r.ok()) {
        problem = r.error().message;
      } else if (r->exit_code != 0) {
        problem = "nvcc failed:\n" + r->err;
      } else if (auto text = read_file(ptx); !text.ok()) {
        problem = text.error().message;
      } else {
        for (std::string_view entry : split(k.params.at("kernels"), ','))
          if (text->find(".entry " + std::string(entry) + "(") == std::string::npos)
            problem += "no unmangled .entry " + std::string(entry) + " in the PTX\n";
      }
      if (!problem.empty()) {
        std::lock_guard<std::mutex> lock(mu);
        failures.push_back(k.name + ": " + problem + "\n" + k.source);
      }
    }
  };
  const unsigned n = std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < n; ++i) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  for (const auto& f : failures) ADD_FAILURE() << f;
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << kernels.size() << " kernels failed to compile";
}

}  // namespace
}  // namespace ptxforge::data
