// The mark-sweep collector and its allocator (gc_heap.h says what is a root and why).
#include "gc/gc_heap.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <new>

namespace dlab::wasm {

namespace {
constexpr uint64_t kChunkBytes = 1ull << GcHeap::kChunkShift;
uint64_t* next_link(GcObject* cell) { return reinterpret_cast<uint64_t*>(reinterpret_cast<uint8_t*>(cell) + 8); }
}  // namespace

GcHeap::~GcHeap() {
  for (auto& [key, c] : chunks_) std::free(c.base);
}

ExnInst* GcHeap::exception_at(uint64_t word) const {
  if (word == 0 || exn_ranges_.empty()) return nullptr;
  auto it = std::upper_bound(exn_ranges_.begin(), exn_ranges_.end(), std::make_pair(static_cast<uintptr_t>(word), ~uintptr_t{0}));
  if (it == exn_ranges_.begin()) return nullptr;
  --it;
  if (word >= it->second || (word - it->first) % sizeof(ExnInst) != 0) return nullptr;
  auto* e = reinterpret_cast<ExnInst*>(word);
  return e->tag ? e : nullptr;  // a free one is no exception
}

GcObject* GcHeap::object_at(uint64_t word) const {
  if (word == 0 || (word & 15) != 0) return nullptr;  // null, i31, host references, unaligned
  auto it = chunks_.find(word >> kChunkShift);
  if (it == chunks_.end()) return nullptr;
  const Chunk& c = it->second;
  uint64_t off = word - reinterpret_cast<uint64_t>(c.base);
  if (off % c.cell != 0 || off / c.cell >= c.used) return nullptr;
  auto* o = reinterpret_cast<GcObject*>(word);
  return o->rtt ? o : nullptr;
}

bool GcHeap::is_object(uint64_t word) const { return object_at(word) != nullptr; }

void* GcHeap::take_cell(uint32_t bytes) {
  if (bytes > kMaxSmall) {
    // Alone, aligned to a chunk so that its base is its key (no other object shares the key).
    uint64_t span = (bytes + kChunkBytes - 1) / kChunkBytes * kChunkBytes;
    void* p = std::aligned_alloc(kChunkBytes, span);
    if (!p) return nullptr;
    Chunk c{static_cast<uint8_t*>(p), bytes, 1, 1, true};
    chunks_[reinterpret_cast<uintptr_t>(p) >> kChunkShift] = c;
    return p;
  }
  size_t cls = bytes / 16 - 1;
  if (current_.size() <= cls) {
    current_.resize(cls + 1, nullptr);
    free_.resize(cls + 1, nullptr);
  }
  if (GcObject* f = free_[cls]) {
    free_[cls] = reinterpret_cast<GcObject*>(*next_link(f));
    return f;
  }
  Chunk* c = current_[cls];
  if (!c || c->used == c->cells) {
    void* p = std::aligned_alloc(kChunkBytes, kChunkBytes);
    if (!p) return nullptr;
    Chunk n{static_cast<uint8_t*>(p), bytes, static_cast<uint32_t>(kChunkBytes / bytes), 0, false};
    c = &(chunks_[reinterpret_cast<uintptr_t>(p) >> kChunkShift] = n);
    current_[cls] = c;
  }
  return c->base + static_cast<uint64_t>(c->used++) * c->cell;
}

// Before an allocation of `bytes`: collect when the trigger or the limit says so; false when the
// allocation would still pass the limit.
bool GcHeap::make_room(uint64_t bytes, const uint64_t* sp) noexcept {
  bool over_limit = limit_ != kUnlimited && stats_.live_bytes + bytes > limit_;
  if ((over_limit || since_collect_ + bytes > trigger_) && allow_collect) collect(sp);
  return limit_ == kUnlimited || stats_.live_bytes + bytes <= limit_;
}

void GcHeap::count_allocation(uint64_t bytes) {
  ++stats_.objects_allocated;
  stats_.bytes_allocated += bytes;
  stats_.live_bytes += bytes;
  stats_.peak_live_bytes = std::max(stats_.peak_live_bytes, stats_.live_bytes);
  since_collect_ += bytes;
}

GcObject* GcHeap::allocate(const Rtt* rtt, uint64_t bytes, uint32_t length, const uint64_t* sp) noexcept {
  bytes = (bytes + 15) / 16 * 16;
  if (bytes > (1ull << 32) - kChunkBytes || !make_room(bytes, sp)) return nullptr;
  void* p;
  try {
    p = take_cell(static_cast<uint32_t>(bytes));
  } catch (...) {  // the chunk map's own allocation
    return nullptr;
  }
  if (!p) return nullptr;
  std::memset(p, 0, bytes);
  auto* o = static_cast<GcObject*>(p);
  o->rtt = rtt;
  o->length = length;
  count_allocation(bytes);
  return o;
}

ExnInst* GcHeap::new_exception(const TagInst* tag, const uint64_t* payload, uint32_t slots, const uint64_t* sp) noexcept {
  uint64_t bytes = sizeof(ExnInst) + slots * sizeof(uint64_t);
  if (!make_room(bytes, sp)) return nullptr;
  try {
    if (exn_free_.empty()) {
      // The free list can then hold every exception: a sweep's push_back never allocates.
      exn_free_.reserve((exn_blocks_.size() + 1) * kExnBlock);
      auto block = std::make_unique<ExnInst[]>(kExnBlock);
      auto begin = reinterpret_cast<uintptr_t>(block.get());
      exn_ranges_.insert(std::upper_bound(exn_ranges_.begin(), exn_ranges_.end(), std::make_pair(begin, uintptr_t{0})),
                         {begin, begin + kExnBlock * sizeof(ExnInst)});
      for (size_t k = kExnBlock; k-- > 0;) exn_free_.push_back(&block[k]);
      exn_blocks_.push_back(std::move(block));
    }
    ExnInst* e = exn_free_.back();
    e->payload.assign(payload, payload + slots);  // may throw: then the exception stays free
    e->tag = tag;
    exn_free_.pop_back();
    count_allocation(bytes);
    return e;
  } catch (...) {
    return nullptr;
  }
}

void GcHeap::mark(uint64_t word) {
  if (GcObject* o = object_at(word)) {
    if (!(o->flags & 1)) {
      o->flags |= 1;
      work_.push_back(o);
    }
    return;
  }
  if (ExnInst* e = exception_at(word); e && !e->gc_mark) {
    e->gc_mark = true;
    exn_work_.push_back(e);
  }
}

// Marks everything reachable from what is marked so far (a work list, not recursion: a long list
// of structs would overflow the C++ stack).
void GcHeap::trace() {
  while (!work_.empty() || !exn_work_.empty()) {
    if (!exn_work_.empty()) {
      ExnInst* e = exn_work_.back();
      exn_work_.pop_back();
      for (uint64_t w : e->payload) mark(w);
      continue;
    }
    GcObject* o = work_.back();
    work_.pop_back();
    const Rtt& t = *o->rtt;
    const uint8_t* base = reinterpret_cast<const uint8_t*>(o);
    auto at = [&](uint64_t off) {
      uint64_t w;
      std::memcpy(&w, base + off, 8);
      return w;
    };
    if (t.kind == TypeKind::kStruct) {
      for (uint32_t off : t.ref_offsets) mark(at(off));
    } else if (t.elem_ref) {
      for (uint32_t i = 0; i < o->length; ++i) mark(at(sizeof(GcObject) + 8ull * i));
    }
  }
}

void GcHeap::sweep() {
  for (auto it = chunks_.begin(); it != chunks_.end();) {
    Chunk& c = it->second;
    for (uint32_t k = 0; k < c.used; ++k) {
      auto* o = reinterpret_cast<GcObject*>(c.base + static_cast<uint64_t>(k) * c.cell);
      if (!o->rtt) continue;
      if (o->flags & 1) {
        o->flags &= ~1u;
        continue;
      }
      ++stats_.objects_freed;
      stats_.bytes_freed += c.cell;
      stats_.live_bytes -= c.cell;
      // Poisoned: a reference the collector missed reads 0xDB bytes, not plausible old fields
      // (the tests check fields after collections; a missed root shows as a wrong value).
      // (A large object goes back to the host whole: nothing to poison.)
      if (!c.large) std::memset(reinterpret_cast<uint8_t*>(o) + 8, 0xDB, c.cell - 8);
      o->rtt = nullptr;
      if (!c.large) {
        size_t cls = c.cell / 16 - 1;
        *next_link(o) = reinterpret_cast<uint64_t>(free_[cls]);
        free_[cls] = o;
      }
    }
    if (c.large && !reinterpret_cast<GcObject*>(c.base)->rtt) {
      std::free(c.base);
      it = chunks_.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& block : exn_blocks_)
    for (size_t k = 0; k < kExnBlock; ++k) {
      ExnInst& e = block[k];
      if (!e.tag) continue;
      if (e.gc_mark) {
        e.gc_mark = false;
        continue;
      }
      uint64_t bytes = sizeof(ExnInst) + e.payload.size() * sizeof(uint64_t);
      ++stats_.objects_freed;
      stats_.bytes_freed += bytes;
      stats_.live_bytes -= bytes;
      e.tag = nullptr;
      e.payload.clear();  // its capacity stays, for the next exception
      exn_free_.push_back(&e);  // within the capacity new_exception reserved
    }
}

void GcHeap::collect(const uint64_t* sp) noexcept {
  auto t0 = std::chrono::steady_clock::now();
  try {
    if (mark_roots) mark_roots(sp);
    trace();
  } catch (...) {
    // Out of host memory for the work list: unmark everything and free nothing (safe), and
    // let the allocation fail against the limit if it must.
    work_.clear();
    exn_work_.clear();
    for (auto& [key, c] : chunks_)
      for (uint32_t k = 0; k < c.used; ++k) reinterpret_cast<GcObject*>(c.base + static_cast<uint64_t>(k) * c.cell)->flags &= ~1u;
    for (const auto& block : exn_blocks_)
      for (size_t k = 0; k < kExnBlock; ++k) block[k].gc_mark = false;
    return;
  }
  sweep();
  since_collect_ = 0;
  trigger_ = std::max(kMinTrigger, stats_.live_bytes);
  ++stats_.collections;
  stats_.collect_ns += static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
}

GcStats GcHeap::stats() const {
  GcStats s = stats_;
  s.heap_limit = limit_;
  return s;
}

}  // namespace dlab::wasm
