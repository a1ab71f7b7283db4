// Hash maps and sets for the validator's many small lookups keyed by names (views into the
// module) or pointers: open addressing with linear probing in one array, a cheap hash for short
// names, no allocation until the first insertion. std::unordered_map spends most of a lookup
// hashing with a general-purpose function and following node pointers, and a module of a
// million instructions makes millions of lookups.
//
// Unlike std::unordered_map, an insertion may move every element: pointers and iterators are
// valid only until the next insertion or erase. Iteration order is unspecified.
#pragma once

#include <cassert>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string_view>
#include <utility>
#include <vector>

namespace ptxforge {

// The n (1..8) bytes at p as one integer, with no call to memcpy (whose variable-size form is
// a library call): overlapping fixed-size loads, so different bytes of one length give
// different integers.
inline uint64_t load_short(const char* p, size_t n) {
  assert(n >= 1 && n <= 8);
  if (n == 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    return w;
  }
  if (n >= 4) {
    uint32_t a, b;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + n - 4, 4);
    return a | (uint64_t{b} << 32);
  }
  return uint64_t{static_cast<unsigned char>(p[0])} | uint64_t{static_cast<unsigned char>(p[n / 2])} << 8 |
         uint64_t{static_cast<unsigned char>(p[n - 1])} << 16;
}

// Key equality; names of up to 16 bytes (nearly all) are compared without a library call.
template <typename K>
bool flat_key_equal(const K& a, const K& b) {
  return a == b;
}
inline bool flat_key_equal(std::string_view a, std::string_view b) {
  size_t n = a.size();
  if (n != b.size()) return false;
  if (n == 0) return true;
  if (n <= 8) return load_short(a.data(), n) == load_short(b.data(), n);
  if (n <= 16)
    return load_short(a.data(), 8) == load_short(b.data(), 8) &&
           load_short(a.data() + 8, n - 8) == load_short(b.data() + 8, n - 8);
  return std::memcmp(a.data(), b.data(), n) == 0;
}

// Hashes that spread well over the high bits, which pick the slot.
struct FlatHash {
  static uint64_t mix(uint64_t h) {
    h ^= h >> 32;
    h *= 0xd6e8feb86659fd93ull;
    h ^= h >> 32;
    return h;
  }
  uint64_t operator()(std::string_view s) const {
    const char* p = s.data();
    size_t n = s.size();
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    while (n >= 8) {
      uint64_t w;
      std::memcpy(&w, p, 8);
      h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
      h ^= h >> 29;
      p += 8;
      n -= 8;
    }
    if (n > 0) h = (h ^ load_short(p, n)) * 0x94d049bb133111ebull;
    return mix(h);
  }
  template <typename T>
  uint64_t operator()(T* p) const {
    return mix(reinterpret_cast<uintptr_t>(p) * 0x9e3779b97f4a7c15ull);
  }
};

template <typename K, typename V, typename Hash = FlatHash>
class FlatMap {
 public:
  using value_type = std::pair<K, V>;

  template <bool Const>
  class Iter {
   public:
    using Slot = std::conditional_t<Const, const value_type, value_type>;
    Iter(Slot* at, Slot* end, const uint8_t* used) : at_(at), end_(end), used_(used) { skip(); }
    Slot& operator*() const { return *at_; }
    Slot* operator->() const { return at_; }
    Iter& operator++() {
      ++at_;
      ++used_;
      skip();
      return *this;
    }
    bool operator==(const Iter& o) const { return at_ == o.at_; }
    bool operator!=(const Iter& o) const { return at_ != o.at_; }

   private:
    void skip() {
      while (at_ != end_ && !*used_) ++at_, ++used_;
    }
    Slot* at_;
    Slot* end_;
    const uint8_t* used_;
  };
  using iterator = Iter<false>;
  using const_iterator = Iter<true>;

  FlatMap() = default;
  FlatMap(std::initializer_list<value_type> items) {
    for (auto& [k, v] : items) emplace(k, v);
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() {
    slots_.clear();
    used_.clear();
    size_ = 0;
    shift_ = 64;
  }
  // Room for n elements without growing.
  void reserve(size_t n) {
    size_t cap = 8;
    while (cap * 5 < n * 8) cap *= 2;
    if (cap > slots_.size()) rehash(cap);
  }

  iterator begin() { return {slots_.data(), slots_.data() + slots_.size(), used_.data()}; }
  iterator end() { return {slots_.data() + slots_.size(), slots_.data() + slots_.size(), nullptr}; }
  const_iterator begin() const { return {slots_.data(), slots_.data() + slots_.size(), used_.data()}; }
  const_iterator end() const { return {slots_.data() + slots_.size(), slots_.data() + slots_.size(), nullptr}; }

  iterator find(const K& key) {
    size_t i = index_of(key);
    return i == kNone ? end() : at(i);
  }
  const_iterator find(const K& key) const {
    size_t i = index_of(key);
    return i == kNone ? end() : const_iterator(slots_.data() + i, slots_.data() + slots_.size(), used_.data() + i);
  }
  size_t count(const K& key) const { return index_of(key) == kNone ? 0 : 1; }
  bool contains(const K& key) const { return index_of(key) != kNone; }

  // Inserts (key, value) unless key is present; returns the element and whether it is new.
  std::pair<iterator, bool> emplace(const K& key, const V& value) {
    if ((size_ + 1) * 8 > slots_.size() * 5) rehash(slots_.empty() ? 8 : slots_.size() * 2);
    size_t mask = slots_.size() - 1;
    uint64_t h = Hash{}(key);
    uint8_t t = tag(h);
    for (size_t i = slot_of(h);; i = (i + 1) & mask) {
      if (!used_[i]) {
        slots_[i] = value_type(key, value);
        used_[i] = t;
        ++size_;
        return {at(i), true};
      }
      if (used_[i] == t && flat_key_equal(slots_[i].first, key)) return {at(i), false};
    }
  }
  V& operator[](const K& key) { return emplace(key, V{}).first->second; }

  size_t erase(const K& key) {
    size_t i = index_of(key);
    if (i == kNone) return 0;
    // Backward-shift deletion: later members of the probe run move into the hole, so no
    // tombstones are needed.
    size_t mask = slots_.size() - 1;
    for (size_t j = (i + 1) & mask; used_[j]; j = (j + 1) & mask) {
      size_t h = slot_of(Hash{}(slots_[j].first));
      bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
      if (stays) continue;
      slots_[i] = std::move(slots_[j]);
      used_[i] = used_[j];
      i = j;
    }
    used_[i] = 0;
    slots_[i] = value_type{};
    --size_;
    return 1;
  }

 private:
  static constexpr size_t kNone = SIZE_MAX;

  // The high bits of a hash pick the slot; its low bits make a tag kept beside the slot
  // (0: empty), so a probe compares keys only when the tags agree.
  size_t slot_of(uint64_t h) const { return static_cast<size_t>(h >> shift_); }
  static uint8_t tag(uint64_t h) { return static_cast<uint8_t>(0x80 | (h & 0x7f)); }
  iterator at(size_t i) { return {slots_.data() + i, slots_.data() + slots_.size(), used_.data() + i}; }
  size_t index_of(const K& key) const {
    if (size_ == 0) return kNone;
    size_t mask = slots_.size() - 1;
    uint64_t h = Hash{}(key);
    uint8_t t = tag(h);
    for (size_t i = slot_of(h);; i = (i + 1) & mask) {
      if (!used_[i]) return kNone;
      if (used_[i] == t && flat_key_equal(slots_[i].first, key)) return i;
    }
  }
  void rehash(size_t cap) {
    assert((cap & (cap - 1)) == 0 && cap >= 8);
    std::vector<value_type> old_slots(cap);
    std::vector<uint8_t> old_used(cap, 0);
    old_slots.swap(slots_);
    old_used.swap(used_);
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(cap));
    size_t mask = cap - 1;
    for (size_t k = 0; k < old_slots.size(); ++k) {
      if (!old_used[k]) continue;
      size_t i = slot_of(Hash{}(old_slots[k].first));
      while (used_[i]) i = (i + 1) & mask;
      slots_[i] = std::move(old_slots[k]);
      used_[i] = old_used[k];
    }
  }

  std::vector<value_type> slots_;
  std::vector<uint8_t> used_;  // per slot: 0 empty, else the key's tag
  size_t size_ = 0;
  unsigned shift_ = 64;
};

// A set of keys: a FlatMap without values (one byte per slot spent on nothing).
template <typename K, typename Hash = FlatHash>
class FlatSet {
 public:
  FlatSet() = default;
  FlatSet(std::initializer_list<K> items) {
    for (auto& k : items) insert(k);
  }
  size_t size() const { return map_.size(); }
  bool empty() const { return map_.empty(); }
  void clear() { map_.clear(); }
  void reserve(size_t n) { map_.reserve(n); }
  // Like std::unordered_set: the element and whether it is new.
  std::pair<const K*, bool> insert(const K& key) {
    auto [it, fresh] = map_.emplace(key, Empty{});
    return {&it->first, fresh};
  }
  size_t erase(const K& key) { return map_.erase(key); }
  size_t count(const K& key) const { return map_.count(key); }
  bool contains(const K& key) const { return map_.contains(key); }
  template <typename F>
  void for_each(F&& f) const {
    for (auto& [k, _] : map_) f(k);
  }

 private:
  struct Empty {};
  FlatMap<K, Empty, Hash> map_;
};

}  // namespace ptxforge
