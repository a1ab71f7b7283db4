#include "llm/curl_library.h"

#include <dlfcn.h>

#include <fmt/format.h>
#include <string>
#include <type_traits>
#include <vector>

namespace ptxforge::llm {

namespace {

// Where libcurl is looked for: the runtime's own name first (any libcurl 7.x or 8.x on the
// loader's path), then the library the build was configured against, for a machine where it
// lives outside that path (a prefix the build was pointed at).
std::vector<std::string> candidates() {
  std::vector<std::string> names = {"libcurl.so.4", "libcurl-gnutls.so.4"};
#ifdef PTXFORGE_CURL_LIBRARY
  std::string built = PTXFORGE_CURL_LIBRARY;
  if (auto slash = built.rfind('/'); slash != std::string::npos) names.push_back(built.substr(0, slash + 1) + "libcurl.so.4");
  names.push_back(built);
#endif
  return names;
}

}  // namespace

Result<CurlLibrary> load_curl_library(const std::vector<std::string>& names) {
  void* lib = nullptr;
  std::string first_error;
  for (auto& name : names) {
    lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib) break;
    const char* why = dlerror();
    if (first_error.empty()) first_error = why ? why : name + ": not found";
  }
  if (!lib)
    return Error{fmt::format("cannot load libcurl ({}); the LLM providers need it: install libcurl4 "
                             "(Debian and Ubuntu: apt install libcurl4)", first_error)};
  CurlLibrary c{};
  const char* missing = nullptr;
  auto resolve = [&](const char* name, auto& slot) {
    void* sym = dlsym(lib, name);
    if (!sym && !missing) missing = name;
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(sym);
  };
  resolve("curl_global_init", c.global_init);
  resolve("curl_easy_init", c.easy_init);
  resolve("curl_easy_setopt", c.easy_setopt);
  resolve("curl_easy_perform", c.easy_perform);
  resolve("curl_easy_getinfo", c.easy_getinfo);
  resolve("curl_easy_cleanup", c.easy_cleanup);
  resolve("curl_easy_strerror", c.easy_strerror);
  resolve("curl_slist_append", c.slist_append);
  resolve("curl_slist_free_all", c.slist_free_all);
  if (missing) return Error{fmt::format("the libcurl found lacks {}; install libcurl4 (7.x or 8.x)", missing)};
  if (c.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return Error{"cannot initialise libcurl"};
  return c;
}

Result<const CurlLibrary*> curl_library() {
  // A function-local static: loaded once, thread-safe, as curl_global_init must be.
  static const Result<CurlLibrary> once = load_curl_library(candidates());
  if (!once) return once.error();
  return &once.value();
}

}  // namespace ptxforge::llm
