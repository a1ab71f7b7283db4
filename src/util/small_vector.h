// A vector of trivially copyable values that keeps its first N elements inline, for the
// short lists built per instruction (the names in an operand), where a heap allocation each
// time would cost more than the work.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstring>
#include <memory>
#include <type_traits>

namespace ptxforge {

template <typename T, size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "elements are moved bytewise");

 public:
  SmallVector() = default;
  SmallVector(const SmallVector&) = delete;
  SmallVector& operator=(const SmallVector&) = delete;

  void push_back(const T& x) {
    if (size_ == capacity_) grow();
    data_[size_++] = x;
  }
  void clear() { size_ = 0; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& operator[](size_t i) {
    assert(i < size_);
    return data_[i];
  }
  const T& operator[](size_t i) const {
    assert(i < size_);
    return data_[i];
  }
  T& front() { return (*this)[0]; }
  T& back() { return (*this)[size_ - 1]; }

 private:
  void grow() {
    auto bigger = std::make_unique<T[]>(capacity_ * 2);
    std::memcpy(static_cast<void*>(bigger.get()), data_, size_ * sizeof(T));
    heap_ = std::move(bigger);
    data_ = heap_.get();
    capacity_ *= 2;
  }

  T inline_[N];
  std::unique_ptr<T[]> heap_;
  T* data_ = inline_;
  size_t size_ = 0;
  size_t capacity_ = N;
};

}  // namespace ptxforge
