#include "toolchain/sass.h"

#include <gtest/gtest.h>

namespace ptxforge::toolchain {
namespace {

// Lines in the two tools' shapes: nvdisasm's bare listing and cuobjdump's with the encoding
// comments after each instruction and on a line of their own.
constexpr std::string_view kListing = R"(
	.section	.text.k,"ax",@progbits
	.sectioninfo	@"SHI_REGISTERS=168"
.text.k:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   S2R R0, SR_TID.X ;
        /*0020*/              @!P0 BRA `(.L_x_1) ;
        /*0030*/                   WARPGROUP.ARRIVE ;
        /*0040*/                   HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT, gsb0 ;  /* 0x0000000418187df0 */
                                                                                               /* 0x000fe20008000818 */
        /*0050*/                   HGMMA.64x128x16.F32.BF16 R24, gdesc[UR8], R24, gsb0 ;
        /*0060*/               @P1 SYNCS.ARRIVE.TRANS64.RED.A1T0 RZ, [UR4], RZ ;
.L_x_1:
        /*0070*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*0080*/                   { HADD2 R2, R3, R4 ;
        /*0090*/                   EXIT ;
        /*00a0*/                   BRA 0xa0;
)";

TEST(SassListing, TakesOpcodesWithModifiersAndSkipsEverythingElse) {
  SassListing l = parse_sass_listing(kListing);
  EXPECT_EQ(l.instructions, 11);
  EXPECT_EQ(l.opcodes.at("HGMMA.64x128x16.F32.BF16"), 2);
  EXPECT_EQ(l.opcodes.at("BRA"), 2);  // the guarded one counts under its opcode
  EXPECT_EQ(l.opcodes.at("HADD2"), 1);
  EXPECT_EQ(l.opcodes.count("@!P0"), 0u);
  EXPECT_EQ(l.count("HGMMA"), 2);
  EXPECT_EQ(l.count("SYNCS.ARRIVE"), 1);
  EXPECT_EQ(l.count("SYNCS"), 1);
  EXPECT_EQ(l.count("WARPGROUP.DEPBAR"), 1);
  EXPECT_EQ(l.count("WARPGROUP"), 2);
  EXPECT_EQ(l.count("HGMM"), 0);  // a prefix must end at a dot
  EXPECT_EQ(l.count("S2"), 0);
}

// Two entries and a device function in nvdisasm's shape: `used` calls `helper`, `unused` holds
// the only HGMMA. Launching `used` must not see it.
constexpr std::string_view kFunctions = R"(
	.section	.text.helper,"ax",@progbits
.text.helper:
        /*0000*/                   LDSM.16.M88.4 R4, [R2] ;
        /*0010*/                   RET.REL.NODEC R20 `(used) ;
	.section	.text.unused,"ax",@progbits
.text.unused:
        /*0000*/                   HGMMA.64x256x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT, gsb0 ;
        /*0010*/                   EXIT ;
	.section	.text.used,"ax",@progbits
.text.used:
        /*0000*/                   HMMA.1688.F32 R8, R4, R6, R8 ;
        /*0010*/                   CALL.REL.NOINC `(helper) ;
        /*0020*/              @!P0 CALL.REL.NOINC `(.L_x_4) ;
        /*0030*/                   EXIT ;
	.section	.nv.info.used,"",@"SHT_CUDA_INFO"
        /*0000*/ 	.word	index@(used)
)";

TEST(SassListing, CountsOnlyFunctionsTheLaunchedEntriesReach) {
  SassListing l = parse_sass_listing(kFunctions);
  ASSERT_EQ(l.functions.size(), 3u);
  EXPECT_EQ(l.count("HGMMA"), 1) << "the whole cubin holds it";
  EXPECT_EQ(l.functions.at("used").calls, std::vector<std::string>{"helper"}) << "a local label is no edge";
  auto used = l.reachable_from({"used"}, {"used", "unused"});
  ASSERT_TRUE(used) << used.error().message;
  EXPECT_EQ(used->count("HGMMA"), 0) << "only the unlaunched entry holds it";
  EXPECT_EQ(used->count("HMMA"), 1);
  EXPECT_EQ(used->count("LDSM"), 1) << "the called device function counts";
  auto both = l.reachable_from({"used", "unused"}, {"used", "unused"});
  ASSERT_TRUE(both);
  EXPECT_EQ(both->count("HGMMA"), 1);
  EXPECT_FALSE(l.reachable_from({"missing"}, {"missing"})) << "an entry the listing lacks is an error, not a pass";
}

TEST(SassListing, ACallWithoutANamedTargetReachesEveryDeviceFunctionButNoEntry) {
  std::string text(kFunctions);
  text.replace(text.find("CALL.REL.NOINC `(helper)"), 24, "CALL.REL.NOINC R4");
  SassListing l = parse_sass_listing(text);
  EXPECT_TRUE(l.functions.at("used").calls_unknown);
  auto used = l.reachable_from({"used"}, {"used", "unused"});
  ASSERT_TRUE(used);
  EXPECT_EQ(used->count("LDSM"), 1);
  EXPECT_EQ(used->count("HGMMA"), 0) << "device code cannot call an entry";
  // cuobjdump's headers.
  SassListing c = parse_sass_listing("\t\tFunction : used\n        /*0000*/  HMMA.16816.F32 R8, R4, R6, R8 ;\n"
                                     "\t\tFunction : unused\n        /*0000*/  HGMMA.64x8x16.F32 R8, gdesc[UR4] ;\n");
  ASSERT_EQ(c.functions.size(), 2u);
  EXPECT_EQ(c.reachable_from({"used"}, {"used", "unused"})->count("HGMMA"), 0);
}

TEST(SassListing, EmptyOrForeignTextHasNoInstructions) {
  EXPECT_EQ(parse_sass_listing("").instructions, 0);
  EXPECT_EQ(parse_sass_listing("nvdisasm fatal   : Could not open input file 'x'\n").instructions, 0);
  EXPECT_EQ(parse_sass_listing("/* 0x000fe20008000818 */\n/*zz*/ MOV R1 ;\n/*0010*/ MOV R1\n").instructions, 0);
}

TEST(SassFamilies, ExactRowsComeFirst) {
  auto cp = sass_for_family("cp.async");
  ASSERT_TRUE(cp);
  EXPECT_EQ(*cp, std::vector<std::string_view>{"LDGSTS"});  // not the bulk copies under it
  auto tma = sass_for_family("cp.async.bulk.tensor");
  ASSERT_TRUE(tma);
  EXPECT_EQ(tma->front(), "UTMALDG");
}

TEST(SassFamilies, AGeneralFamilyTakesEveryRowUnderIt) {
  auto mbar = sass_for_family("mbarrier");
  ASSERT_TRUE(mbar);
  EXPECT_EQ(*mbar, (std::vector<std::string_view>{"SYNCS.EXCH", "SYNCS.ARRIVE", "SYNCS.PHASECHK"}));
  auto wgmma = sass_for_family("wgmma");
  ASSERT_TRUE(wgmma);
  EXPECT_NE(std::find(wgmma->begin(), wgmma->end(), "HGMMA"), wgmma->end());
  EXPECT_NE(std::find(wgmma->begin(), wgmma->end(), "WARPGROUP.ARRIVE"), wgmma->end());
}

TEST(SassFamilies, ASpecificFamilyTakesTheLongestRowAboveIt) {
  auto sp = sass_for_family("wgmma.mma_async.sp");
  ASSERT_TRUE(sp);
  EXPECT_EQ(sp->front(), "HGMMA");
  auto mma = sass_for_family("mma.sync.aligned.m16n8k16");
  ASSERT_TRUE(mma);
  EXPECT_EQ(mma->front(), "HMMA");
  auto expect_tx = sass_for_family("mbarrier.arrive.expect_tx");
  ASSERT_TRUE(expect_tx);
  EXPECT_EQ(*expect_tx, std::vector<std::string_view>{"SYNCS.ARRIVE"});
}

TEST(SassFamilies, UnknownFamiliesHaveNoRow) {
  EXPECT_FALSE(sass_for_family("mapa"));
  EXPECT_FALSE(sass_for_family("wgmm"));  // a name must end at a dot to be under a row
  EXPECT_FALSE(sass_for_family("add"));
}

TEST(SassFamilies, EveryRowIsReachableByItsOwnName) {
  for (auto& row : sass_family_table()) {
    auto s = sass_for_family(row.ptx);
    ASSERT_TRUE(s) << row.ptx;
    EXPECT_EQ(*s, row.sass) << row.ptx;
  }
}

}  // namespace
}  // namespace ptxforge::toolchain
