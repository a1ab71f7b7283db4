// Helpers of the engine's kernel tests (machine_test.cpp, machine_sync_test.cpp): a module
// parsed and lowered, buffers filled and read back, parameters as bytes.
#pragma once

#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "emu/engine.h"
#include "ptx/front_end.h"

namespace ptxforge::emu {

struct Built {
  ptx::CheckResult checked;
  std::unique_ptr<Machine> m;
  std::optional<Finding> finding;
};

inline Built build(std::string_view text) {
  Built b{ptx::check_source(text), nullptr, std::nullopt};
  EXPECT_TRUE(b.checked.ok());
  auto r = Machine::create(b.checked.module);
  if (auto* f = std::get_if<Finding>(&r)) b.finding = *f;
  else b.m = std::move(std::get<std::unique_ptr<Machine>>(r));
  return b;
}

inline ParamBytes u64p(uint64_t v) { ParamBytes p(8); std::memcpy(p.data(), &v, 8); return p; }
inline ParamBytes u32p(uint32_t v) { ParamBytes p(4); std::memcpy(p.data(), &v, 4); return p; }
inline ParamBytes f32p(float v) { ParamBytes p(4); std::memcpy(p.data(), &v, 4); return p; }

inline uint64_t floats(Machine& m, const std::string& name, const std::vector<float>& v) {
  uint64_t a = m.alloc(name, v.size() * 4, Init::written);
  m.write(a, {reinterpret_cast<const uint8_t*>(v.data()), v.size() * 4});
  return a;
}
template <typename T>
std::vector<T> get(Machine& m, uint64_t a, size_t n) {
  auto bytes = m.read(a, n * sizeof(T));
  std::vector<T> out(n);
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

inline std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

inline const char* kHeader = ".version 8.0\n.target sm_80\n.address_size 64\n";

}  // namespace ptxforge::emu
