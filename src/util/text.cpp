#include "util/text.h"

#include <algorithm>
#include <cstdint>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace ptxforge {

// Optimal string alignment distance: insertions, deletions, substitutions and adjacent
// transpositions ("mvo" -> "mov" is one edit, as a typist would count it).
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev2(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string closest_match(std::string_view word, const std::vector<std::string_view>& candidates) {
  std::string_view best;
  size_t best_d = SIZE_MAX;
  for (auto c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  // Allow roughly one edit per three characters, at least one.
  size_t limit = std::max<size_t>(1, word.size() / 3);
  if (best_d == 0 || best_d > limit) return "";
  return std::string(best);
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::string_view trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\n' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\n' || s[e - 1] == '\r')) --e;
  return s.substr(b, e - b);
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool starts_with_dotted(std::string_view s, std::string_view prefix) {
  return starts_with(s, prefix) && (s.size() == prefix.size() || s[prefix.size()] == '.');
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"cannot read '" + path + "': " + std::strerror(errno)};
  // A regular file is read in one piece into a string of its size (a string stream would
  // copy a large module several times); anything further (a pipe, a file that grew) after it.
  std::string out;
  std::error_code ec;
  if (auto size = std::filesystem::file_size(path, ec); !ec && size > 0) {
    out.resize(size);
    in.read(out.data(), static_cast<std::streamsize>(size));
    out.resize(static_cast<size_t>(in.gcount()));
  }
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) out.append(chunk, static_cast<size_t>(in.gcount()));
  if (in.bad()) return Error{"error while reading '" + path + "'"};
  return out;
}

Status write_file(const std::string& path, std::string_view contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Error{"cannot write '" + path + "': " + std::strerror(errno)};
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  if (!out) return Error{"error while writing '" + path + "'"};
  return ok_status();
}

uint64_t fnv1a(std::string_view data, uint64_t h) {
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace ptxforge
