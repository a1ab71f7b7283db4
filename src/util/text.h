// Small string helpers shared across modules: edit distance for "did you mean", splitting,
// trimming, and reading whole files with a clear error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace ptxforge {

size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word`, or "" when none is close enough to be a plausible typo.
std::string closest_match(std::string_view word, const std::vector<std::string_view>& candidates);

std::vector<std::string_view> split(std::string_view s, char sep);
std::string_view trim(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);
// `s` is `prefix` or begins with it and a dot: an opcode of an instruction family
// ("mma.sync.aligned.m16n8k16" of "mma.sync"; "mma" is no prefix of "mmax").
bool starts_with_dotted(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);

Result<std::string> read_file(const std::string& path);

// FNV-1a: a small, stable hash for cache keys (not for security).
uint64_t fnv1a(std::string_view data, uint64_t seed = 0xcbf29ce484222325ull);
Status write_file(const std::string& path, std::string_view contents);

}  // namespace ptxforge
