// WebAssembly SIMD (v128) semantics as portable lane loops: a v128 occupies two stack slots
// (low half first) and is copied into a 16-byte value for an operation. Portable rather than
// intrinsics on purpose: the interpreter measures dispatch, and these bodies stay the same on
// every target the models run on.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "engines/numeric.h"

namespace dlab::wasm::simd {

struct V128 {
  uint8_t b[16];
};

inline V128 load(const uint64_t* p) {
  V128 v;
  std::memcpy(v.b, p, 16);
  return v;
}
inline void store(uint64_t* p, const V128& v) { std::memcpy(p, v.b, 16); }

inline V128 from_bytes(const uint8_t* p) {
  V128 v;
  std::memcpy(v.b, p, 16);
  return v;
}
template <class T>
inline T read(const uint8_t* p) {
  T x;
  std::memcpy(&x, p, sizeof(T));
  return x;
}

template <class T>
constexpr int kLanes = 16 / static_cast<int>(sizeof(T));

template <class T>
inline T lane(const V128& v, int i) {
  T x;
  std::memcpy(&x, v.b + i * sizeof(T), sizeof(T));
  return x;
}
template <class T>
inline void set_lane(V128& v, int i, T x) {
  std::memcpy(v.b + i * sizeof(T), &x, sizeof(T));
}

template <class T, class F>
inline V128 map1(const V128& a, F f) {
  V128 r;
  for (int i = 0; i < kLanes<T>; ++i) set_lane<T>(r, i, static_cast<T>(f(lane<T>(a, i))));
  return r;
}
template <class T, class F>
inline V128 map2(const V128& a, const V128& b, F f) {
  V128 r;
  for (int i = 0; i < kLanes<T>; ++i) set_lane<T>(r, i, static_cast<T>(f(lane<T>(a, i), lane<T>(b, i))));
  return r;
}
// Lane-wise comparison: all ones where true. T is the lane type compared, M the same-width mask.
template <class T, class F>
inline V128 compare(const V128& a, const V128& b, F f) {
  using M = std::conditional_t<sizeof(T) == 1, uint8_t, std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
  V128 r;
  for (int i = 0; i < kLanes<T>; ++i) set_lane<M>(r, i, f(lane<T>(a, i), lane<T>(b, i)) ? static_cast<M>(~M(0)) : M(0));
  return r;
}
template <class T>
inline V128 splat(T x) {
  V128 r;
  for (int i = 0; i < kLanes<T>; ++i) set_lane<T>(r, i, x);
  return r;
}

template <class T>
inline T sat(int64_t x) {
  if (x < static_cast<int64_t>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (x > static_cast<int64_t>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(x);
}
template <class T>
inline V128 add_sat(const V128& a, const V128& b) {
  return map2<T>(a, b, [](T x, T y) { return sat<T>(int64_t(x) + int64_t(y)); });
}
template <class T>
inline V128 sub_sat(const V128& a, const V128& b) {
  return map2<T>(a, b, [](T x, T y) { return sat<T>(int64_t(x) - int64_t(y)); });
}
// Wrapping arithmetic in the unsigned lane type (no signed overflow).
template <class U>
inline V128 add(const V128& a, const V128& b) { return map2<U>(a, b, [](U x, U y) { return U(x + y); }); }
template <class U>
inline V128 sub(const V128& a, const V128& b) { return map2<U>(a, b, [](U x, U y) { return U(x - y); }); }
// Products in 64 bits: uint16_t operands would otherwise be promoted to (signed, overflowing) int.
template <class U>
inline U wrap_mul(U x, U y) { return static_cast<U>(uint64_t(x) * uint64_t(y)); }
template <class U>
inline V128 mul(const V128& a, const V128& b) { return map2<U>(a, b, [](U x, U y) { return wrap_mul<U>(x, y); }); }
template <class U>
inline V128 neg(const V128& a) { return map1<U>(a, [](U x) { return U(U(0) - x); }); }
template <class S>
inline V128 abs(const V128& a) {
  using U = std::make_unsigned_t<S>;
  return map1<S>(a, [](S x) { return static_cast<S>(x < 0 ? U(U(0) - U(x)) : U(x)); });
}
template <class T>
inline V128 min(const V128& a, const V128& b) { return map2<T>(a, b, [](T x, T y) { return x < y ? x : y; }); }
template <class T>
inline V128 max(const V128& a, const V128& b) { return map2<T>(a, b, [](T x, T y) { return x > y ? x : y; }); }
template <class U>
inline V128 avgr(const V128& a, const V128& b) { return map2<U>(a, b, [](U x, U y) { return U((uint32_t(x) + y + 1) / 2); }); }

template <class U>
inline V128 shl(const V128& a, uint32_t n) {
  n &= sizeof(U) * 8 - 1;
  return map1<U>(a, [n](U x) { return U(x << n); });
}
template <class T>
inline V128 shr(const V128& a, uint32_t n) {  // arithmetic for signed T, logical for unsigned
  n &= sizeof(T) * 8 - 1;
  return map1<T>(a, [n](T x) { return T(x >> n); });
}

template <class T>
inline uint32_t all_true(const V128& a) {
  for (int i = 0; i < kLanes<T>; ++i)
    if (lane<T>(a, i) == 0) return 0;
  return 1;
}
template <class S>
inline uint32_t bitmask(const V128& a) {
  uint32_t m = 0;
  for (int i = 0; i < kLanes<S>; ++i)
    if (lane<S>(a, i) < 0) m |= 1u << i;
  return m;
}
inline uint32_t any_true(const V128& a) {
  for (uint8_t x : a.b)
    if (x) return 1;
  return 0;
}

// Narrowing: signed wide lanes saturated into narrow lanes N; a's lanes first, then b's.
template <class W, class N>
inline V128 narrow(const V128& a, const V128& b) {
  V128 r;
  constexpr int n = kLanes<W>;
  for (int i = 0; i < n; ++i) set_lane<N>(r, i, sat<N>(lane<W>(a, i)));
  for (int i = 0; i < n; ++i) set_lane<N>(r, n + i, sat<N>(lane<W>(b, i)));
  return r;
}
// Widening the low (high = false) or high half of narrow lanes N into wide lanes W.
template <class N, class W>
inline V128 extend(const V128& a, bool high) {
  V128 r;
  constexpr int n = kLanes<W>;
  for (int i = 0; i < n; ++i) set_lane<W>(r, i, static_cast<W>(lane<N>(a, i + (high ? n : 0))));
  return r;
}
template <class N, class W>
inline V128 extmul(const V128& a, const V128& b, bool high) {
  using U = std::make_unsigned_t<W>;
  V128 r;
  constexpr int n = kLanes<W>;
  for (int i = 0; i < n; ++i) {
    int j = i + (high ? n : 0);
    set_lane<W>(r, i, static_cast<W>(wrap_mul<U>(U(static_cast<W>(lane<N>(a, j))), U(static_cast<W>(lane<N>(b, j))))));
  }
  return r;
}
template <class N, class W>
inline V128 extadd_pairwise(const V128& a) {
  V128 r;
  for (int i = 0; i < kLanes<W>; ++i) set_lane<W>(r, i, static_cast<W>(W(lane<N>(a, 2 * i)) + W(lane<N>(a, 2 * i + 1))));
  return r;
}
inline V128 q15mulr_sat(const V128& a, const V128& b) {
  return map2<int16_t>(a, b, [](int16_t x, int16_t y) { return sat<int16_t>((int32_t(x) * y + 0x4000) >> 15); });
}
inline V128 dot_i16x8(const V128& a, const V128& b) {
  V128 r;
  for (int i = 0; i < 4; ++i) {
    uint32_t s = uint32_t(int32_t(lane<int16_t>(a, 2 * i)) * lane<int16_t>(b, 2 * i)) +
                 uint32_t(int32_t(lane<int16_t>(a, 2 * i + 1)) * lane<int16_t>(b, 2 * i + 1));
    set_lane<uint32_t>(r, i, s);
  }
  return r;
}
// Relaxed SIMD's dot products, with the choices the reference interpreter makes: the second
// operand's i7 lanes read as signed i8, the i16 sums wrapping.
inline V128 relaxed_dot_i8x16_i7x16(const V128& a, const V128& b) {
  V128 r;
  for (int i = 0; i < 8; ++i) {
    int32_t s = int32_t(lane<int8_t>(a, 2 * i)) * lane<int8_t>(b, 2 * i) + int32_t(lane<int8_t>(a, 2 * i + 1)) * lane<int8_t>(b, 2 * i + 1);
    set_lane<uint16_t>(r, i, static_cast<uint16_t>(s));
  }
  return r;
}
inline V128 relaxed_dot_i8x16_i7x16_add(const V128& a, const V128& b, const V128& c) {
  V128 r;
  for (int i = 0; i < 4; ++i) {
    int32_t s = 0;
    for (int k = 0; k < 4; ++k) s += int32_t(lane<int8_t>(a, 4 * i + k)) * lane<int8_t>(b, 4 * i + k);
    set_lane<uint32_t>(r, i, uint32_t(s) + lane<uint32_t>(c, i));
  }
  return r;
}
// a * b + c per lane (sign < 0: -(a * b) + c), fused as the reference interpreter computes it.
template <class T>
inline V128 madd(const V128& a, const V128& b, const V128& c, int sign) {
  V128 r;
  for (int i = 0; i < kLanes<T>; ++i) set_lane<T>(r, i, std::fma(sign < 0 ? -lane<T>(a, i) : lane<T>(a, i), lane<T>(b, i), lane<T>(c, i)));
  return r;
}
inline V128 popcnt(const V128& a) { return map1<uint8_t>(a, [](uint8_t x) { return uint8_t(__builtin_popcount(x)); }); }

inline V128 bitwise(const V128& a, const V128& b, int op) {  // 0 and, 1 andnot, 2 or, 3 xor
  V128 r;
  for (int i = 0; i < 16; ++i) {
    uint8_t x = a.b[i], y = b.b[i];
    r.b[i] = op == 0 ? x & y : op == 1 ? x & uint8_t(~y) : op == 2 ? x | y : x ^ y;
  }
  return r;
}
inline V128 bit_not(const V128& a) {
  V128 r;
  for (int i = 0; i < 16; ++i) r.b[i] = uint8_t(~a.b[i]);
  return r;
}
inline V128 bitselect(const V128& a, const V128& b, const V128& c) {
  V128 r;
  for (int i = 0; i < 16; ++i) r.b[i] = uint8_t((a.b[i] & c.b[i]) | (b.b[i] & ~c.b[i]));
  return r;
}
inline V128 swizzle(const V128& a, const V128& s) {
  V128 r;
  for (int i = 0; i < 16; ++i) r.b[i] = s.b[i] < 16 ? a.b[s.b[i]] : 0;
  return r;
}
inline V128 shuffle(const V128& a, const V128& b, const uint8_t* idx) {
  V128 r;
  for (int i = 0; i < 16; ++i) r.b[i] = idx[i] < 16 ? a.b[idx[i]] : b.b[idx[i] & 15];
  return r;
}

// v128.load8x8_s and friends: 8 bytes of narrow lanes N widened to W.
template <class N, class W>
inline V128 load_extend(const uint8_t* p) {
  V128 r;
  for (int i = 0; i < kLanes<W>; ++i) set_lane<W>(r, i, static_cast<W>(read<N>(p + i * sizeof(N))));
  return r;
}
template <class T>
inline V128 load_zero(const uint8_t* p) {
  V128 r{};
  set_lane<T>(r, 0, read<T>(p));
  return r;
}

// Floats. abs and neg flip bits only (a NaN keeps its payload), as in the scalar handlers.
template <class F>
inline V128 fabs(const V128& a) {
  using U = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
  return map1<U>(a, [](U x) { return U(x & ~(U(1) << (sizeof(U) * 8 - 1))); });
}
template <class F>
inline V128 fneg(const V128& a) {
  using U = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
  return map1<U>(a, [](U x) { return U(x ^ (U(1) << (sizeof(U) * 8 - 1))); });
}
template <class F>
inline V128 pmin(const V128& a, const V128& b) { return map2<F>(a, b, [](F x, F y) { return y < x ? y : x; }); }
template <class F>
inline V128 pmax(const V128& a, const V128& b) { return map2<F>(a, b, [](F x, F y) { return x < y ? y : x; }); }

template <class F, class I>
inline V128 trunc_sat(const V128& a) {  // F lanes -> I lanes (f64x2 -> i32x4: the low two, the high ones zero)
  V128 r{};
  for (int i = 0; i < kLanes<F>; ++i) set_lane<I>(r, i, num::trunc_sat<I>(lane<F>(a, i)));
  return r;
}
template <class I, class F>
inline V128 convert(const V128& a) {  // I lanes -> F lanes, as many as F holds (the low ones)
  V128 r;
  for (int i = 0; i < kLanes<F>; ++i) set_lane<F>(r, i, static_cast<F>(lane<I>(a, i)));
  return r;
}
inline V128 demote(const V128& a) {
  V128 r{};
  for (int i = 0; i < 2; ++i) set_lane<float>(r, i, static_cast<float>(lane<double>(a, i)));
  return r;
}
inline V128 promote(const V128& a) {
  V128 r;
  for (int i = 0; i < 2; ++i) set_lane<double>(r, i, static_cast<double>(lane<float>(a, i)));
  return r;
}

}  // namespace dlab::wasm::simd
