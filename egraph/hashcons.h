// The hashcons: canonical e-node -> the id of the e-node that owns it. The
// table stores only (hash tag, owner id); the key itself is read back from
// the e-graph's node array, so an entry costs 8 bytes. Open addressing with
// linear probing and backward-shift deletion (no tombstones).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "egraph/id.h"

namespace refinery::egraph {

class Hashcons {
 public:
  std::size_t size() const { return size_; }
  std::size_t memory_bytes() const { return slots_.capacity() * sizeof(Slot); }

  // Owner of the key with hash `hash` for which `same_key(owner)` holds.
  template <class SameKey>
  std::optional<Id> find(std::uint64_t hash, SameKey&& same_key) const {
    if (slots_.empty()) return std::nullopt;
    std::uint32_t tag = tag_of(hash);
    for (std::size_t i = hash & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.owner == kInvalidId) return std::nullopt;
      if (s.tag == tag && same_key(s.owner)) return s.owner;
    }
  }

  // Inserts `owner` under `hash`; the caller has checked the key is absent.
  void insert(std::uint64_t hash, Id owner) {
    if ((size_ + 1) * 8 > slots_.size() * 5) grow();
    place(Slot{tag_of(hash), owner}, hash);
    ++size_;
  }

  // Removes the entry owned by `owner` stored under `hash`, if any.
  bool erase(std::uint64_t hash, Id owner) {
    if (slots_.empty()) return false;
    std::uint32_t tag = tag_of(hash);
    std::size_t i = hash & mask_;
    for (;; i = (i + 1) & mask_) {
      if (slots_[i].owner == kInvalidId) return false;
      if (slots_[i].owner == owner && slots_[i].tag == tag) break;
    }
    // Backward shift: pull later entries of the probe run into the hole.
    std::size_t hole = i;
    for (std::size_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
      if (slots_[j].owner == kInvalidId) break;
      std::size_t home = slots_[j].home & mask_;
      bool movable = (hole <= j) ? (home <= hole || home > j) : (home <= hole && home > j);
      if (movable) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole] = Slot{};
    --size_;
    return true;
  }

  void reserve(std::size_t n) {
    while (n * 8 > slots_.size() * 5) grow();
  }

 private:
  struct Slot {
    std::uint32_t tag = 0;
    Id owner = kInvalidId;
    std::uint32_t home = 0;  // low 32 bits of the hash: the preferred slot
  };

  static std::uint32_t tag_of(std::uint64_t hash) { return static_cast<std::uint32_t>(hash >> 32); }

  void place(Slot s, std::uint64_t hash) {
    s.home = static_cast<std::uint32_t>(hash);
    std::size_t i = hash & mask_;
    while (slots_[i].owner != kInvalidId) i = (i + 1) & mask_;
    slots_[i] = s;
  }

  void grow() {
    std::vector<Slot> old = std::move(slots_);
    std::size_t cap = old.empty() ? 64 : old.size() * 2;
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    for (const Slot& s : old) {
      if (s.owner == kInvalidId) continue;
      std::uint64_t hash = (std::uint64_t{s.tag} << 32) | s.home;
      place(s, hash);
    }
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace refinery::egraph
