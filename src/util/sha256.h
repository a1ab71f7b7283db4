// SHA-256 (FIPS 180-4), written out since the project needs a cryptographic hash in two
// places and no library for one: the pin on a task's committed reference PTX (the digest
// sha256sum prints) and the service's bearer tokens (only their digests are kept).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace ptxforge {

using Sha256Digest = std::array<uint8_t, 32>;
Sha256Digest sha256(std::string_view data);
// The digest as 64 lowercase hex digits, as sha256sum prints it.
std::string sha256_hex(std::string_view data);

}  // namespace ptxforge
