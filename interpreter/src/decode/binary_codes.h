// The binary format's codes that are not instructions, by name (WebAssembly 3.0, section 5):
// section ids and the type constructors' leading bytes. Opcodes are decode/opcode.h's.
#pragma once

#include <cstdint>

#include "dispatchlab/interpreter/module.h"

namespace dlab::wasm {

enum class SectionId : uint8_t {
  kCustom = 0, kType = 1, kImport = 2, kFunction = 3, kTable = 4, kMemory = 5, kGlobal = 6,
  kExport = 7, kStart = 8, kElement = 9, kCode = 10, kData = 11, kDataCount = 12, kTag = 13,
};
constexpr uint8_t kLastSectionId = 13;

// The leading byte of a type: reference types written out (the shorthands are their heap type's
// byte, module.h's kHeap*), and the composite and sub types of the type section.
enum class TypeCode : uint8_t {
  kRefNull = 0x63,  // (ref null ht)
  kRef = 0x64,      // (ref ht)
  kFunc = 0x60,     // func [t*] -> [t*]
  kStruct = 0x5F,   // struct field*
  kArray = 0x5E,    // array field
  kSub = 0x50,      // sub vec(typeidx) comptype: open to subtypes
  kSubFinal = 0x4F, // sub final vec(typeidx) comptype
  kRec = 0x4E,      // rec vec(subtype): a recursive group
  kI8 = 0x78,       // packed storage types of struct and array fields
  kI16 = 0x77,
  kEmpty = 0x40,    // the empty block type; before a table type, "an initializer follows"
};
constexpr uint8_t code_byte(TypeCode c) { return static_cast<uint8_t>(c); }

// A number or vector type's byte (i32 i64 f32 f64 v128: module.h's ValType codes).
constexpr bool is_numtype_or_vec(uint8_t b) {
  for (ValType t : {ValType::kI32, ValType::kI64, ValType::kF32, ValType::kF64, ValType::kV128})
    if (b == static_cast<uint8_t>(t)) return true;
  return false;
}

}  // namespace dlab::wasm
