// Who may use the service: bearer tokens read from a file at start. A token is never stored,
// logged or handed to the core; a run carries the token's id (a short prefix of its SHA-256),
// which is enough to keep clients' idempotency keys and in-flight limits apart.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"
#include "util/sha256.h"

namespace ptxforge::serve {

using Digest = Sha256Digest;

class TokenSet {
 public:
  // The token file: one token per line; blank lines and lines starting with '#' are skipped,
  // spaces around a token are trimmed. Refused (an error naming the file): a file group or
  // others may read, a file with no token, a token with a character outside visible ASCII.
  static Result<TokenSet> load(const std::string& path);
  // Tests: a set over given tokens.
  explicit TokenSet(const std::vector<std::string>& tokens);
  // TokenSet({"a", "b"}): without it two literals would pick vector's iterator-pair constructor.
  TokenSet(std::initializer_list<std::string> tokens) : TokenSet(std::vector<std::string>(tokens)) {}
  TokenSet() = default;

  bool empty() const { return digests_.empty(); }
  size_t size() const { return digests_.size(); }
  // The id of the presented token when it is one of the set, else nullopt. The comparison
  // takes the same time whichever token matches, where they differ, and how long they are:
  // both sides are hashed, and every token's digest is compared in full.
  std::optional<std::string> check(std::string_view presented) const;

 private:
  std::vector<Digest> digests_;
};

// "tok-" and the first 12 hex digits of the token's SHA-256.
std::string token_id(std::string_view token);

// The token of an "Authorization: Bearer <token>" header value (the scheme in any case), or
// nullopt when the header is not of that form.
std::optional<std::string_view> bearer_token(std::string_view authorization);

}  // namespace ptxforge::serve
