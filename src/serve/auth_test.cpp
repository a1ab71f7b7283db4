// The service's bearer tokens: the file's rules (comments, blanks, the refusal of a file others
// may read), matching against every token, and ids that never carry the token.
#include "serve/auth.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

namespace ptxforge::serve {
namespace {
namespace fs = std::filesystem;

TEST(Auth, TokenIdIsAShortDigestPrefix) {
  EXPECT_EQ(token_id("abc"), "tok-ba7816bf8f01");
  EXPECT_EQ(token_id("abc").find("abc"), std::string::npos);
  EXPECT_NE(token_id("s3cret-a"), token_id("s3cret-b"));
}

TEST(Auth, CheckMatchesAnyTokenAndNothingElse) {
  TokenSet set({"alpha-token-1", "beta-token-22", "gamma-token-333"});
  EXPECT_EQ(set.size(), 3u);
  EXPECT_EQ(set.check("alpha-token-1"), token_id("alpha-token-1"));
  EXPECT_EQ(set.check("beta-token-22"), token_id("beta-token-22"));
  EXPECT_EQ(set.check("gamma-token-333"), token_id("gamma-token-333"));
  for (auto bad : {"", "alpha-token-", "alpha-token-11", "ALPHA-TOKEN-1", "beta-token-2", "gamma-token-333 ", "x"})
    EXPECT_FALSE(set.check(bad).has_value()) << bad;
  EXPECT_FALSE(TokenSet().check("anything").has_value());
  EXPECT_TRUE(TokenSet().empty());
}

TEST(Auth, BearerHeader) {
  EXPECT_EQ(bearer_token("Bearer abc"), "abc");
  EXPECT_EQ(bearer_token("bearer abc"), "abc");
  EXPECT_EQ(bearer_token("BEARER  abc "), "abc");
  for (auto bad : {"", "Bearer", "Bearer ", "Basic abc", "Bearerabc", "abc", "Bearer a b", "Token abc"})
    EXPECT_FALSE(bearer_token(bad).has_value()) << bad;
}

class TokenFile : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (fs::path(::testing::TempDir()) / ("tokens-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()))).string();
    fs::remove(path_);
  }
  void write(const std::string& text, mode_t mode = 0600) {
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << text;
    ::chmod(path_.c_str(), mode);
  }
  std::string path_;
};

TEST_F(TokenFile, CommentsBlanksAndSpaces) {
  write("# the service's tokens\n\n  first-token  \r\n\t# indented comment\nsecond-token\n   \n");
  auto set = TokenSet::load(path_);
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->size(), 2u);
  EXPECT_TRUE(set->check("first-token").has_value());
  EXPECT_TRUE(set->check("second-token").has_value());
  EXPECT_FALSE(set->check("# the service's tokens").has_value());
  EXPECT_FALSE(set->check("").has_value());
}

TEST_F(TokenFile, ReadableByOthersIsRefused) {
  for (mode_t mode : {0644, 0640, 0604, 0660, 0602}) {
    write("a-token\n", mode);
    auto set = TokenSet::load(path_);
    ASSERT_FALSE(set.ok()) << std::oct << mode;
    EXPECT_NE(set.error().message.find("chmod 600"), std::string::npos);
  }
  write("a-token\n", 0400);
  EXPECT_TRUE(TokenSet::load(path_).ok());
}

TEST_F(TokenFile, EmptyMissingAndBadTokensAreErrors) {
  write("# only a comment\n\n");
  auto set = TokenSet::load(path_);
  ASSERT_FALSE(set.ok());
  EXPECT_NE(set.error().message.find("no token"), std::string::npos);
  write("good-token\ntwo words\n");
  set = TokenSet::load(path_);
  ASSERT_FALSE(set.ok());
  EXPECT_NE(set.error().message.find("line 2"), std::string::npos);
  EXPECT_EQ(set.error().message.find("two words"), std::string::npos);  // never echo a token
  EXPECT_FALSE(TokenSet::load(path_ + "-absent").ok());
  EXPECT_FALSE(TokenSet::load(::testing::TempDir()).ok());  // a folder
}

}  // namespace
}  // namespace ptxforge::serve
