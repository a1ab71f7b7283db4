// libcurl, loaded with dlopen the first time an LLM provider sends a request. Linked in, it
// and the TLS, Kerberos, LDAP and SSH libraries it needs (some thirty of them) were mapped and
// relocated at the start of every ptxforge process: about 20 ms, most of what a `check` of a
// small module cost. Only the commands that talk to a model pay for it now.
#pragma once

#include <curl/curl.h>

#include <string>
#include <vector>

#include "util/result.h"

namespace ptxforge::llm {

// The libcurl functions http.cpp calls, resolved from the loaded library.
struct CurlLibrary {
  CURLcode (*global_init)(long flags);
  CURL* (*easy_init)();
  CURLcode (*easy_setopt)(CURL* handle, CURLoption option, ...);
  CURLcode (*easy_perform)(CURL* handle);
  CURLcode (*easy_getinfo)(CURL* handle, CURLINFO info, ...);
  void (*easy_cleanup)(CURL* handle);
  const char* (*easy_strerror)(CURLcode code);
  curl_slist* (*slist_append)(curl_slist* list, const char* line);
  void (*slist_free_all)(curl_slist* list);
};

// Loads libcurl once (and runs curl_global_init); later calls give the same answer. An Error
// when no libcurl can be found or it lacks one of the functions, naming the package to install.
Result<const CurlLibrary*> curl_library();

// The first of `names` (sonames or paths) that loads, resolved; what curl_library() uses, with
// its own list. Each call loads anew (the library stays loaded).
Result<CurlLibrary> load_curl_library(const std::vector<std::string>& names);

}  // namespace ptxforge::llm
