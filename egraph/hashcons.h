// The hashcons: canonical e-node -> the id of the e-node that owns it. Open
// addressing with linear probing and backward-shift deletion (no
// tombstones); keys are stored inline so that a lookup costs one cache miss.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "egraph/id.h"

namespace refinery::egraph {

template <class N>
class Hashcons {
 public:
  std::size_t size() const { return size_; }
  std::size_t memory_bytes() const { return slots_.capacity() * sizeof(Slot); }

  std::optional<Id> find(const N& key, std::uint64_t hash) const {
    if (slots_.empty()) return std::nullopt;
    auto home = static_cast<std::uint32_t>(hash);
    for (std::size_t i = hash & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.owner == kInvalidId) return std::nullopt;
      if (s.home == home && s.key == key) return s.owner;
    }
  }

  // Starts loading the slot where a lookup of `hash` begins.
  void prefetch(std::uint64_t hash) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[hash & mask_]);
  }

  // Inserts key -> owner; the caller has checked the key is absent.
  void insert(const N& key, std::uint64_t hash, Id owner) {
    if ((size_ + 1) * 8 > slots_.size() * 5) grow();
    place(Slot{key, owner, static_cast<std::uint32_t>(hash)});
    ++size_;
  }

  // Removes the entry owned by `owner` stored under `hash`, if any.
  bool erase(std::uint64_t hash, Id owner) {
    if (slots_.empty()) return false;
    auto home = static_cast<std::uint32_t>(hash);
    std::size_t i = hash & mask_;
    for (;; i = (i + 1) & mask_) {
      if (slots_[i].owner == kInvalidId) return false;
      if (slots_[i].owner == owner && slots_[i].home == home) break;
    }
    // Backward shift: pull later entries of the probe run into the hole.
    std::size_t hole = i;
    for (std::size_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
      if (slots_[j].owner == kInvalidId) break;
      std::size_t want = slots_[j].home & mask_;
      bool movable = (hole <= j) ? (want <= hole || want > j) : (want <= hole && want > j);
      if (movable) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].owner = kInvalidId;
    --size_;
    return true;
  }

  void reserve(std::size_t n) {
    while (n * 8 > slots_.size() * 5) grow();
  }

 private:
  struct Slot {
    N key{};
    Id owner = kInvalidId;
    std::uint32_t home = 0;  // low 32 bits of the hash: picks the preferred slot
  };

  void place(const Slot& s) {
    std::size_t i = s.home & mask_;
    while (slots_[i].owner != kInvalidId) i = (i + 1) & mask_;
    slots_[i] = s;
  }

  void grow() {
    std::vector<Slot> old = std::move(slots_);
    std::size_t cap = old.empty() ? 64 : old.size() * 2;
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    for (const Slot& s : old)
      if (s.owner != kInvalidId) place(s);
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace refinery::egraph
