#include "toolchain/ncu.h"

#include <gtest/gtest.h>

namespace ptxforge::toolchain {
namespace {

// The shape of `ncu --page source --csv --print-source sass`: a header naming the columns,
// then a row per SASS instruction with its address, text and counters (a second kernel
// repeats the header). Only the named columns are read; others may come and go.
constexpr std::string_view kPage =
    "\"Address\",\"Source\",\"Warp Stall Sampling (All Samples)\",\"Instructions Executed\",\"Thread Instructions Executed\","
    "\"Predicated-On Thread Instructions Executed\"\n"
    "\"7f0000000000\",\"MOV R1, c[0x0][0x28]\",\"0\",\"256\",\"8192\",\"8192\"\n"
    "\"7f0000000010\",\"HMMA.16816.F32 R4, R8, R12, R4\",\"3\",\"1,024\",\"32768\",\"32768\"\n"
    "\"7f0000000020\",\"@!P0 HMMA.16816.F32 R16, R8, R14, R16\",\"1\",\"1024\",\"32768\",\"0\"\n"
    "\"7f0000000030\",\"LDSM.16.M88.4 R8, [R2]\",\"0\",\"512\",\"16384\",\"16384\"\n"
    "\"Address\",\"Source\",\"Instructions Executed\",\"Predicated-On Thread Instructions Executed\"\n"
    "\"7f0000001000\",\"@P1 UTMALDG.2D [UR8], [UR4]\",\"2\",\"2\"\n";

TEST(NcuSourceCounters, SumsEachOpcodeOverRowsAndKernels) {
  auto c = parse_source_counters_csv(kPage);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->at("HMMA.16816.F32").warp_executions, 2048u) << "thousands separators are read";
  EXPECT_EQ(c->at("HMMA.16816.F32").predicated_on, 32768u) << "a row whose predicate was always off adds nothing on";
  EXPECT_EQ(counts_for(*c, "HMMA").predicated_on, 32768u);
  EXPECT_EQ(counts_for(*c, "LDSM").warp_executions, 512u);
  EXPECT_EQ(counts_for(*c, "UTMALDG").predicated_on, 2u) << "the second kernel's header moves the columns";
  EXPECT_EQ(counts_for(*c, "UTMA").predicated_on, 0u) << "a prefix matches at a dot only";
  EXPECT_EQ(counts_for(*c, "HGMMA").warp_executions, 0u);
}

TEST(NcuSourceCounters, APageWithoutTheColumnsIsAnError) {
  auto c = parse_source_counters_csv("==PROF== Disconnected\n\"Address\",\"Source\"\n\"7f\",\"MOV R1, R2\"\n");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("Predicated-On Thread Instructions Executed"), std::string::npos) << c.error().message;
  EXPECT_FALSE(parse_source_counters_csv("").ok());
  // A second kernel whose header lacks a column does not read the first kernel's positions.
  std::string two = std::string(kPage) + "\"Address\",\"Source\",\"Instructions Executed\"\n\"7f2\",\"HMMA.16816.F32 R1\",\"9\"\n";
  auto c2 = parse_source_counters_csv(two);
  ASSERT_TRUE(c2.ok());
  EXPECT_EQ(c2->at("HMMA.16816.F32").warp_executions, 2048u);
}

TEST(NcuProfileArgv, ProfilesTheNamedEntriesOnlyAndRunsTheWorker) {
  auto argv = ncu_profile_argv("/cuda/bin/ncu", "/tmp/r", {"hgemm", "a.b$c"}, 2, {"/bin/worker", "--serve"});
  std::string joined;
  for (auto& a : argv) joined += a + " ";
  EXPECT_NE(joined.find("--kernel-name-base mangled --kernel-name regex:^(hgemm|a\\.b\\$c)$ --launch-count 2"), std::string::npos) << joined;
  EXPECT_NE(joined.find("--clock-control none --section SourceCounters"), std::string::npos) << joined;
  EXPECT_NE(joined.find("--log-file /tmp/r.log"), std::string::npos) << "ncu's own lines stay off the worker's replies";
  EXPECT_EQ(argv.back(), "--serve");
  EXPECT_EQ(argv[argv.size() - 2], "/bin/worker");
}

}  // namespace
}  // namespace ptxforge::toolchain
