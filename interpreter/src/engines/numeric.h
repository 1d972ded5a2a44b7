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
  // hi is a power of two, and lo is exact as a double.
  constexpr double hi = std::is_signed_v<I> ? -static_cast<double>(std::numeric_limits<I>::min()) : 2.0 * (static_cast<double>(std::numeric_limits<I>::max() / 2 + 1));
  constexpr double lo = std::is_signed_v<I> ? static_cast<double>(std::numeric_limits<I>::min()) : 0.0;
  // trunc(x) is in [lo, hi) exactly when x is in (lo - 1, hi): compared on x itself, with no call
  // to libm's trunc, which an x86-64 build without SSE4.1 makes (and a handler calling out spills
  // its state around the call). Every float is exact as a double, and so are hi and lo - 1 but for
  // a signed 64-bit lo - 1, -2^63 - 1, where no double lies between it and -2^63: x >= lo there.
  constexpr bool lo_minus_one_exact = !(std::is_signed_v<I> && sizeof(I) == 8);
  const double d = static_cast<double>(x);
  if (!(d < hi) || !(lo_minus_one_exact ? d > lo - 1.0 : d >= lo)) return "integer overflow";
  *out = static_cast<I>(x);  // truncates toward zero; in range, so defined
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
