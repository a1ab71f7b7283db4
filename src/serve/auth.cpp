// Bearer tokens for the service. The token file is read once; only digests stay in memory, and
// a presented token is matched by digest against every token with no early exit, so neither
// the time of an answer nor its content tells a guesser how close a guess was.
#include "serve/auth.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <fstream>
#include <cctype>

namespace ptxforge::serve {
namespace {

std::string id_of(const Digest& d) { return fmt::format("tok-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}", d[0], d[1], d[2], d[3], d[4], d[5]); }

bool visible_ascii(std::string_view s) {
  for (char c : s)
    if (c <= 0x20 || c >= 0x7f) return false;
  return true;
}

}  // namespace

TokenSet::TokenSet(const std::vector<std::string>& tokens) {
  for (auto& t : tokens) digests_.push_back(sha256(t));
}

Result<TokenSet> TokenSet::load(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Error{fmt::format("cannot read token file {}", path)};
  if (!S_ISREG(st.st_mode)) return Error{fmt::format("token file {} is not a regular file", path)};
  if (st.st_mode & (S_IRWXG | S_IRWXO))
    return Error{fmt::format("token file {} may be read or written by group or others: run `chmod 600 {}`", path, path)};
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{fmt::format("cannot read token file {}", path)};
  std::vector<std::string> tokens;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    auto last = line.find_last_not_of(" \t\r");
    std::string token = line.substr(first, last - first + 1);
    // The line number, never the token: an error message may end up in a log.
    if (!visible_ascii(token))
      return Error{fmt::format("token file {}, line {}: a token is one word of visible ASCII characters", path, number)};
    tokens.push_back(std::move(token));
  }
  if (tokens.empty()) return Error{fmt::format("token file {} holds no token (one per line; '#' starts a comment)", path)};
  return TokenSet(tokens);
}

std::optional<std::string> TokenSet::check(std::string_view presented) const {
  Digest d = sha256(presented);
  size_t match = digests_.size();
  for (size_t i = 0; i < digests_.size(); ++i) {
    uint8_t diff = 0;
    for (size_t j = 0; j < d.size(); ++j) diff |= uint8_t(d[j] ^ digests_[i][j]);
    // Branch-free select: every token is compared whichever matched.
    size_t is_match = size_t(diff == 0);
    match = is_match * i + (1 - is_match) * match;
  }
  if (match == digests_.size()) return std::nullopt;
  return id_of(digests_[match]);
}

std::string token_id(std::string_view token) { return id_of(sha256(token)); }

std::optional<std::string_view> bearer_token(std::string_view h) {
  auto space = h.find(' ');
  if (space != 6) return std::nullopt;
  std::string scheme(h.substr(0, 6));
  for (auto& c : scheme) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (scheme != "bearer") return std::nullopt;
  std::string_view token = h.substr(7);
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) token.remove_suffix(1);
  if (token.empty() || !visible_ascii(token)) return std::nullopt;
  return token;
}

}  // namespace ptxforge::serve
