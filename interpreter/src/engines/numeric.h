// WebAssembly numeric semantics that C++ operators do not give directly: slot (lane) access,
// float min/max/nearest with the spec's NaN and signed-zero rules, and float-to-int truncation
// with its trap conditions.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace dlab::wasm::num {

// A slot holds i32/f32 in its low 32 bits and i64/f64 in all 64.
template <class T>
inline T get(uint64_t s) {
  if constexpr (std::is_same_v<T, float>) return std::bit_cast<float>(static_cast<uint32_t>(s));
  else if constexpr (std::is_same_v<T, double>) return std::bit_cast<double>(s);
  else return static_cast<T>(s);
}
template <class T>
inline uint64_t put(T v) {
  if constexpr (std::is_same_v<T, float>) return std::bit_cast<uint32_t>(v);
  else if constexpr (std::is_same_v<T, double>) return std::bit_cast<uint64_t>(v);
  else if constexpr (sizeof(T) == 4) return static_cast<uint32_t>(v);
  else if constexpr (std::is_same_v<T, bool>) return v ? 1 : 0;
  else return static_cast<uint64_t>(v);
}

// Unaligned little-endian access to bytes (GC fields and elements).
template <class T>
inline T load_bytes(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <class T>
inline void store_bytes(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

template <class F>
inline F fmin(F a, F b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;  // propagates a quiet NaN
  if (a == b) return std::signbit(a) ? a : b;       // min(-0, +0) = -0
  return a < b ? a : b;
}
template <class F>
inline F fmax(F a, F b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
// Round half to even, the default rounding mode's nearbyint.
template <class F>
inline F nearest(F a) { return std::nearbyint(a); }

template <class F>
inline F copysign(F a, F b) { return std::copysign(a, b); }

// Truncation: nullptr when in range (result in *out), else the trap message.
template <class I, class F>
inline const char* trunc(F x, I* out) {
  if (std::isnan(x)) return "invalid conversion to integer";
  // The exclusive bounds are exact powers of two in both float types.
  constexpr double hi = std::is_signed_v<I> ? -static_cast<double>(std::numeric_limits<I>::min()) : 2.0 * (static_cast<double>(std::numeric_limits<I>::max() / 2 + 1));
  constexpr double lo = std::is_signed_v<I> ? static_cast<double>(std::numeric_limits<I>::min()) : 0.0;
  F t = std::trunc(x);
  if (!(static_cast<double>(t) < hi) || static_cast<double>(t) < lo) return "integer overflow";
  *out = static_cast<I>(t);
  return nullptr;
}
template <class I, class F>
inline I trunc_sat(F x) {
  if (std::isnan(x)) return 0;
  I r;
  if (trunc<I>(x, &r) == nullptr) return r;
  return x < 0 ? std::numeric_limits<I>::min() : std::numeric_limits<I>::max();
}

}  // namespace dlab::wasm::num
