// A bump allocator for trees that live and die together (the PTX AST): allocation is a
// pointer increment, and nothing is freed until the arena goes. Only trivially destructible
// objects go in, so no destructor ever has to walk the tree.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <type_traits>
#include <vector>

namespace ptxforge {

class Arena {
 public:
  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  void* allocate(size_t bytes, size_t align) {
    size_t pad = (align - reinterpret_cast<uintptr_t>(cur_) % align) % align;
    if (bytes + pad > left_) return allocate_slow(bytes, align);
    char* p = cur_ + pad;
    cur_ = p + bytes;
    left_ -= bytes + pad;
    return p;
  }

  // Uninitialised room for n objects of T (the caller constructs them).
  template <typename T>
  T* allocate_array(size_t n) {
    static_assert(std::is_trivially_destructible_v<T>, "arena objects are never destroyed");
    if (n == 0) return nullptr;
    return static_cast<T*>(allocate(sizeof(T) * n, alignof(T)));
  }

  // Copies of n objects from p, owned by the arena.
  template <typename T>
  T* copy_array(const T* p, size_t n) {
    static_assert(std::is_trivially_copyable_v<T>, "arena arrays are copied bytewise");
    T* out = allocate_array<T>(n);
    // Most lists are short; a copy of known size is inlined where a call to memcpy is not.
    switch (n) {
      case 0: break;
      case 1: std::memcpy(static_cast<void*>(out), p, sizeof(T)); break;
      case 2: std::memcpy(static_cast<void*>(out), p, 2 * sizeof(T)); break;
      case 3: std::memcpy(static_cast<void*>(out), p, 3 * sizeof(T)); break;
      default: std::memcpy(static_cast<void*>(out), p, n * sizeof(T)); break;
    }
    return out;
  }

  std::string_view copy(std::string_view s) { return {copy_array(s.data(), s.size()), s.size()}; }

  size_t bytes_reserved() const { return reserved_; }

 private:
  void* allocate_slow(size_t bytes, size_t align) {
    size_t block = std::max<size_t>(next_block_, bytes + align);
    next_block_ = std::min<size_t>(next_block_ * 2, size_t{1} << 22);
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(block));
    reserved_ += block;
    cur_ = blocks_.back().get();
    left_ = block;
    void* p = allocate(bytes, align);
    assert(p);
    return p;
  }

  std::vector<std::unique_ptr<char[]>> blocks_;
  char* cur_ = nullptr;
  size_t left_ = 0;
  size_t next_block_ = size_t{1} << 14;
  size_t reserved_ = 0;
};

}  // namespace ptxforge
