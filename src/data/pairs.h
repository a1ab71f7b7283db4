// CUDA source → PTX pairs for training: each source compiled for several targets and flag
// sets — by NVRTC in this process, or by nvcc where NVRTC cannot (host code, the C++ standard
// library's headers, a flag NVRTC does not take) — each PTX labelled with what ptxas makes of it (resources per function, or its
// error), the kernels' signatures, and a hash of the normalised PTX that drops duplicates.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "toolchain/ptxas.h"
#include "util/result.h"

namespace ptxforge::data {

struct SourceUnit {
  std::string id;      // stable across runs: a path relative to its folder, or a generated name
  std::string origin;  // "folder:<dir>", "generator", ...
  std::string family;  // the generator's family, "" for a file
  std::string text;    // the CUDA translation unit
};

// automatic: NVRTC, and nvcc for a unit or flag set NVRTC cannot compile; or only one of them.
enum class Compiler { automatic, nvrtc, nvcc };

struct PairOptions {
  std::vector<std::string> archs{"sm_80", "sm_90", "sm_90a"};
  std::vector<std::string> flags{"-O3", "-G", "-lineinfo"};
  Compiler compiler = Compiler::automatic;
};

struct KernelSignature {
  std::string name;
  std::vector<std::string> params;  // ".u64", ".f32", ".align 8 .b8[16]" ...
};

struct Pair {
  std::string source_id, origin, family, arch, flags;
  std::string compiler;  // "nvrtc" or "nvcc"
  std::string cuda, ptx;
  std::vector<KernelSignature> kernels;
  std::vector<toolchain::FunctionResources> resources;
  bool assembles = false;
  std::string ptxas_error;  // its first error when it does not
  std::string hash;         // of the normalised PTX (16 hex digits)
};

// FNV-1a over the PTX without comments, blank lines or runs of blanks.
std::string normalised_ptx_hash(std::string_view ptx);

// Every .cu file under `dir` (sorted), ids relative to it.
Result<std::vector<SourceUnit>> read_source_folder(const std::string& dir);

struct PairStats {
  int compiled = 0, nvcc_failed = 0, duplicates = 0, not_assembled = 0;
  int by_nvrtc = 0, by_nvcc = 0;  // compiled PTX (duplicates included) by each compiler
  std::vector<std::string> problems;  // nvcc's errors, one line each
};

// Compiles every unit for every (arch, flags); a duplicate of an earlier PTX is dropped.
Result<std::vector<Pair>> make_pairs(const std::vector<SourceUnit>& units, const PairOptions& o, PairStats& stats);

// Fills the kernels' signatures and what ptxas makes of p.ptx for p.arch at this -O level
// (resources, or its first error).
Status label_with_ptxas(Pair& p, int opt_level = 3);
// The same for each of `pairs`, several ptxas processes at once (one per hardware thread);
// the first error, if any, is returned once every process has finished.
Status label_all_with_ptxas(std::vector<Pair>& pairs, int opt_level = 3);

std::string pair_json(const Pair& p);  // one JSONL line

}  // namespace ptxforge::data
