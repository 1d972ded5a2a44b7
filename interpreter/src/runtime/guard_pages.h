// Guard pages for 32-bit memories (engines.def's BOUNDS(guard)): instead of comparing every
// effective address with the memory's size, a guard engine's loads and stores just access
// data + ea. That is safe because a guarded memory is a reservation of kReservation bytes of
// address space, of which only the first `bytes` are readable and writable: a 32-bit address plus
// a 32-bit offset plus an access of at most 16 bytes stays below 2^33 + 16, inside the
// reservation, so every out-of-bounds access faults (SIGSEGV) on an inaccessible page instead of
// touching anything else. The fault handler turns a fault inside the running machine's current
// memory into the spec's "out of bounds memory access" trap by jumping back to where the
// invocation started (run), which then returns as a trapped run does.
//
// Why that jump is safe: between run and the faulting handler there are only the engine's entry
// and its handlers (tail calls, or one function), which hold no C++ objects; a host function
// (which may) runs with the jump disabled (leave / enter around it), and an out-of-line helper
// a handler calls (GC, bulk memory) checks its own bounds and never faults on a reservation.
// A store that faults writes nothing: wasm pages are 64 KiB, a multiple of the OS page, so the
// accessible part ends on a page boundary and an access that straddles it faults as one
// instruction (x86-64 and AArch64 report the fault before any byte is written).
#pragma once

#include <cstdint>
#include <string>

namespace dlab::wasm {

struct Machine;

namespace guard_pages {

// 4 GiB of addresses plus 4 GiB of offsets, plus 64 KiB for the access size (at most 16 bytes).
inline constexpr uint64_t kReservation = (uint64_t{1} << 33) + (uint64_t{1} << 16);

// "" when this platform has them (Linux on a 64-bit target), else why not.
std::string unavailable();
// A reservation with its first `bytes` accessible (zeroed), or null with errno set.
uint8_t* reserve(uint64_t bytes);
// Makes [from, to) of a reservation accessible (memory.grow); false with errno set if it cannot.
bool commit(uint8_t* base, uint64_t from, uint64_t to);
void release(uint8_t* base);

using RunFn = void (*)(const uint64_t*, uint64_t*, uint64_t*, Machine*);
// run(ip, sp, fp, m); a fault in the reservation of m's current memory (m->mem_base) ends it
// with m->trap = "out of bounds memory access". Nested calls (a host function invoking again)
// each catch their own faults.
void run(RunFn fn, const uint64_t* ip, uint64_t* sp, uint64_t* fp, Machine* m);
// Around a host function called from a guard engine's handler: a fault while it runs is not a
// wasm trap (and is not caught), and a nested invocation installs its own.
void* leave() noexcept;
void enter(void* scope) noexcept;

}  // namespace guard_pages
}  // namespace dlab::wasm
