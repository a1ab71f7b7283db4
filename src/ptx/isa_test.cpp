// Type facts: the width and kind of every type name, the plain scalars decoded from their
// spelling and the rest from the table, and nothing for names that are no PTX type.
#include "ptx/isa.h"

#include <gtest/gtest.h>

namespace ptxforge::ptx {
namespace {

void expect_type(std::string_view name, int bits, char kind) {
  SCOPED_TRACE(std::string(name));
  EXPECT_TRUE(is_type_name(name));
  EXPECT_EQ(type_bits(name), bits);
  EXPECT_EQ(type_kind(name), kind);
}

void expect_no_type(std::string_view name) {
  SCOPED_TRACE(std::string(name));
  EXPECT_FALSE(is_type_name(name));
  EXPECT_EQ(type_bits(name), 0);
  EXPECT_EQ(type_kind(name), 0);
}

TEST(TypeFacts, PlainScalars) {
  for (int bits : {8, 16, 32, 64}) {
    expect_type(".b" + std::to_string(bits), bits, 'b');
    expect_type(".u" + std::to_string(bits), bits, 'u');
    expect_type(".s" + std::to_string(bits), bits, 's');
  }
  expect_type(".b128", 128, 'b');
  for (int bits : {16, 32, 64}) expect_type(".f" + std::to_string(bits), bits, 'f');
}

TEST(TypeFacts, OtherTypesComeFromTheTable) {
  expect_type(".pred", 1, 'p');
  expect_type(".b1", 1, 'b');
  expect_type(".u4", 4, 'u');
  expect_type(".s2", 2, 's');
  expect_type(".bf16", 16, 'f');
  expect_type(".f16x2", 32, 'f');
  expect_type(".e4m3x2", 16, 'f');
  expect_type(".tf32", 32, 'f');
  expect_type(".samplerref", 64, 'o');
}

TEST(TypeFacts, NamesThatAreNoType) {
  for (std::string_view name : {"", ".", ".f8", ".u128", ".s128", ".f128", ".b256", ".b", ".u", ".x32", "u32",
                                ".u32x", ".u032", ".b3", ".e3m2x22", ".global", ".samplerre"})
    expect_no_type(name);
}

}  // namespace
}  // namespace ptxforge::ptx
