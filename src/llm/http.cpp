#include "llm/http.h"

#include <cstdlib>
#include <fmt/format.h>

#include "llm/curl_library.h"

namespace ptxforge::llm {

namespace {

struct Sink {
  std::string* body;
  size_t cap;
  bool overflow = false;
};

size_t on_body(char* data, size_t size, size_t n, void* user) {
  auto* s = static_cast<Sink*>(user);
  if (s->body->size() + size * n > s->cap) {
    s->overflow = true;
    return 0;  // makes curl stop with CURLE_WRITE_ERROR
  }
  s->body->append(data, size * n);
  return size * n;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* out = static_cast<HttpResponse*>(user);
  std::string line(data, size * n);
  std::string lower;
  for (char c : line) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.rfind("retry-after:", 0) == 0) {
    char* end = nullptr;
    double v = std::strtod(line.c_str() + 12, &end);
    if (end != line.c_str() + 12) out->retry_after_s = v;
  }
  return size * n;
}

}  // namespace

Result<HttpResponse> http_post(const HttpRequest& req) {
  auto lib = curl_library();
  if (!lib) return lib.error();
  const CurlLibrary& curl = **lib;
  CURL* h = curl.easy_init();
  if (!h) return Error{"cannot initialise libcurl"};
  HttpResponse res;
  Sink sink{&res.body, req.max_reply_bytes};
  curl_slist* headers = nullptr;
  for (auto& line : req.headers) headers = curl.slist_append(headers, line.c_str());
  char errbuf[CURL_ERROR_SIZE] = {};
  curl.easy_setopt(h, CURLOPT_URL, req.url.c_str());
  curl.easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl.easy_setopt(h, CURLOPT_POSTFIELDS, req.body.data());
  curl.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  curl.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl.easy_setopt(h, CURLOPT_WRITEDATA, &sink);
  curl.easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl.easy_setopt(h, CURLOPT_HEADERDATA, &res);
  curl.easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(req.timeout.count()));
  curl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 15000L);
  curl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl.easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl.easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
  CURLcode rc = curl.easy_perform(h);
  curl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &res.status);
  curl.slist_free_all(headers);
  curl.easy_cleanup(h);
  if (sink.overflow)
    return Error{fmt::format("the reply from {} is larger than {} MB; refused", req.url, req.max_reply_bytes >> 20)};
  if (rc == CURLE_OPERATION_TIMEDOUT)
    return Error{fmt::format("no reply from {} within {:.0f} s", req.url, static_cast<double>(req.timeout.count()) / 1000)};
  if (rc != CURLE_OK)
    return Error{fmt::format("cannot reach {}: {}", req.url, errbuf[0] ? errbuf : curl.easy_strerror(rc))};
  return res;
}

}  // namespace ptxforge::llm
