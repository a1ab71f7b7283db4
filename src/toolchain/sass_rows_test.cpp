// Confirms every row of the PTX -> SASS table against the real tools: each row names an example
// module in tests/handwritten (a `// sass-rows:` line); ptxas assembles it for sm_90a and
// nvdisasm's listing must hold one of the row's opcodes. Needs ptxas and nvdisasm (or cuobjdump),
// which the GPU machine has; elsewhere only the coverage of the table is checked.
#include <filesystem>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "toolchain/ptxas.h"
#include "toolchain/sass.h"
#include "util/paths.h"
#include "util/text.h"

namespace ptxforge::toolchain {
namespace {

// Row name -> the example files that demonstrate it.
std::map<std::string, std::vector<std::string>> examples() {
  std::map<std::string, std::vector<std::string>> out;
  std::string dir = std::string(PTXFORGE_SOURCE_DIR) + "/tests/handwritten";
  for (auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".ptx") continue;
    auto text = read_file(entry.path().string());
    if (!text) continue;
    for (auto line : split(*text, '\n')) {
      line = trim(line);
      if (!starts_with(line, "// sass-rows:")) continue;
      for (auto word : split(trim(line.substr(13)), ' '))
        if (!trim(word).empty()) out[std::string(trim(word))].push_back(entry.path().string());
    }
  }
  return out;
}

TEST(SassRows, EveryRowHasAnExampleAndEveryExampleARow) {
  auto ex = examples();
  std::set<std::string> rows;
  for (auto& row : sass_family_table()) {
    rows.insert(std::string(row.ptx));
    EXPECT_TRUE(ex.count(std::string(row.ptx))) << "no tests/handwritten example names row " << row.ptx;
  }
  for (auto& [name, files] : ex) EXPECT_TRUE(rows.count(name)) << files.front() << " names " << name << ", not a row";
}

TEST(SassRows, EachRowsExampleBecomesItsOpcodes) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "ptxas not installed";
  if (!find_cuda_tool("nvdisasm") && !find_cuda_tool("cuobjdump")) GTEST_SKIP() << "nvdisasm and cuobjdump not installed";
  std::map<std::string, SassListing> listings;  // one assembly per example file
  for (auto& [row, files] : examples()) {
    auto sass = sass_for_family(row);
    ASSERT_TRUE(sass) << row;
    for (auto& file : files) {
      if (!listings.count(file)) {
        auto text = read_file(file);
        ASSERT_TRUE(text) << file;
        AssembleOptions opts;
        opts.arch = "sm_90a";
        opts.source_name = file;
        auto a = assemble(*text, opts);
        ASSERT_TRUE(a) << a.error().message;
        ASSERT_TRUE(a->ok) << file << ":\n" << a->log;
        auto l = disassemble(a->cubin);
        ASSERT_TRUE(l) << l.error().message;
        listings[file] = *l;
      }
      const SassListing& l = listings[file];
      int found = 0;
      for (auto op : *sass) found += l.count(op);
      std::string all;
      for (auto& [op, n] : l.opcodes) all += op + " ";
      EXPECT_GT(found, 0) << row << ": none of its opcodes in " << file << "'s SASS (" << l.tool << "): " << all;
    }
  }
}

}  // namespace
}  // namespace ptxforge::toolchain
