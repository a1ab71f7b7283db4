// libcurl is loaded at the first LLM request, not linked (llm/curl_library.h): a machine without
// it must get an error that says what to install, and a library that is not libcurl must not
// be taken for it.
#include "llm/curl_library.h"

#include <gtest/gtest.h>

namespace ptxforge::llm {
namespace {

TEST(CurlLibrary, MissingLibraryNamesThePackageToInstall) {
  auto r = load_curl_library({"libcurl-not-installed.so.99"});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("cannot load libcurl"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("libcurl-not-installed.so.99"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("install libcurl4"), std::string::npos) << r.error().message;
}

TEST(CurlLibrary, ALibraryWithoutCurlsFunctionsIsRefused) {
  auto r = load_curl_library({"libm.so.6"});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("lacks curl_global_init"), std::string::npos) << r.error().message;
}

TEST(CurlLibrary, TheInstalledLibraryLoadsAndWorks) {
  auto lib = curl_library();
  ASSERT_TRUE(lib) << lib.error().message;
  const CurlLibrary& curl = **lib;
  EXPECT_STREQ(curl.easy_strerror(CURLE_OK), "No error");
  CURL* h = curl.easy_init();
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(curl.easy_setopt(h, CURLOPT_URL, "http://127.0.0.1:1/"), CURLE_OK);
  curl.easy_cleanup(h);
  // Loaded once: a second call hands back the same table.
  EXPECT_EQ(*curl_library(), *lib);
}

}  // namespace
}  // namespace ptxforge::llm
