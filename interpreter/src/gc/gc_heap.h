// The GC heap: struct and array objects (runtime.h's GcObject) and exceptions, reclaimed by a
// non-moving mark-sweep collector.
//
// Roots (Runtime sets mark_roots): the operand stack from its base to the allocating handler's
// stack pointer, scanned conservatively (every slot is a candidate), and, exactly, the globals of
// reference type, the tables of the any, extern and exn hierarchies, passive element segments,
// the exception an invocation let out, and the host's pinned references. Objects are traced
// exactly (their Rtt says which fields hold references); an exception's payload conservatively.
//
// Why conservative over the operand stack: the lowering's fold, fuse and super techniques keep
// no per-instruction slot types, and stack maps for every engine x lowering would be a second
// validator. A slot is an object only if it is the exact start of a live cell (chunk map, cell
// boundary, non-null Rtt), so a number that happens to look like one keeps that object alive and
// nothing else: the collector never frees what the program can reach, and may keep a few objects
// a dead slot still names (a local or a popped slot below the top) until that slot is reused.
// In sp_wt / sp_wb the cached top is in a register, not a slot: allocating handlers are OP
// entries, which make the top's slot current before they run (placement.h's DLW_TOP_FLUSH).
//
// Allocation: 16-byte size classes up to kMaxSmall from 256 KiB chunks (bump, then each class's
// free list after a sweep); larger objects alone; exceptions from blocks of their own, reused. A collection runs when the bytes allocated since
// the last one pass max(kMinTrigger, the live bytes it left) or when an allocation would pass the
// limit; if even after it the allocation would pass the limit, allocation fails (the handler traps
// "out of memory").
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "dispatchlab/interpreter/runtime.h"

namespace dlab::wasm {

class GcHeap {
 public:
  static constexpr uint64_t kUnlimited = ~0ull;
  static constexpr uint64_t kMinTrigger = 4ull << 20;
  static constexpr uint32_t kMaxSmall = 4096;
  static constexpr uint32_t kChunkShift = 18;  // 256 KiB chunks

  GcHeap() = default;
  ~GcHeap();
  GcHeap(const GcHeap&) = delete;
  GcHeap& operator=(const GcHeap&) = delete;

  void set_limit(uint64_t bytes) { limit_ = bytes; }
  uint64_t limit() const { return limit_; }
  // Called during a collection to mark every root; `sp` is the top of the operand stack in use
  // (null: none in use).
  std::function<void(const uint64_t* sp)> mark_roots;
  // While false (instantiation, whose constant expressions hold objects outside any root),
  // allocation never collects; the limit still holds.
  bool allow_collect = true;

  // An object of `bytes` (the header included), its header set and its payload zeroed; null when
  // past the limit or out of host memory. May collect first (with `sp` as the stack's top).
  GcObject* allocate(const Rtt* rtt, uint64_t bytes, uint32_t length, const uint64_t* sp) noexcept;
  // An exception with the tag and payload; null when past the limit or out of host memory.
  ExnInst* new_exception(const TagInst* tag, const uint64_t* payload, uint32_t slots, const uint64_t* sp) noexcept;
  void collect(const uint64_t* sp) noexcept;
  // A word that may be a reference: the object or exception it is (if any) is marked and traced.
  void mark(uint64_t word);
  // Whether the word is the start of a live object of this heap.
  bool is_object(uint64_t word) const;

  GcStats stats() const;

 private:
  struct Chunk {
    uint8_t* base = nullptr;
    uint32_t cell = 0;   // bytes per cell; a large object's size
    uint32_t cells = 0;  // cells that fit
    uint32_t used = 0;   // cells handed out (bumped) so far
    bool large = false;
  };
  std::unordered_map<uintptr_t, Chunk> chunks_;  // by base >> kChunkShift (a large one: its first)
  std::vector<Chunk*> current_;                   // per size class: the chunk it bumps from
  std::vector<GcObject*> free_;                   // per size class: free cells (linked through +8)
  // Exceptions live in blocks of kExnBlock, reused: a free one has tag null and keeps its payload's
  // capacity, so a program that throws in a loop allocates nothing from the host once warm. The
  // blocks' address ranges, sorted, say whether a stack word is an exception.
  static constexpr size_t kExnBlock = 256;
  std::vector<std::unique_ptr<ExnInst[]>> exn_blocks_;
  std::vector<std::pair<uintptr_t, uintptr_t>> exn_ranges_;  // [begin, end) per block, sorted
  std::vector<ExnInst*> exn_free_;
  ExnInst* exception_at(uint64_t word) const;
  std::vector<GcObject*> work_;
  std::vector<ExnInst*> exn_work_;
  uint64_t limit_ = kUnlimited;
  uint64_t since_collect_ = 0, trigger_ = kMinTrigger;
  GcStats stats_;

  GcObject* object_at(uint64_t word) const;
  void* take_cell(uint32_t bytes);
  void trace();
  void sweep();
  bool make_room(uint64_t bytes, const uint64_t* sp) noexcept;
  void count_allocation(uint64_t bytes);
};

}  // namespace dlab::wasm
