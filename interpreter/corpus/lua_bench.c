// The lua workload: the Lua 5.2.4 interpreter (lua/src from npm lua.vm.js@0.0.1) running a
// benchmark script this project wrote (below): `size` rounds of sorting with comparator closures,
// string formatting and pattern matching, a word count in a string-keyed table, objects with
// metatables and inheritance, binary trees for the collector, and higher-order functions. Each
// call makes a fresh lua_State, compiles the script, runs it and closes the state, so calls are
// independent and leave nothing allocated. The checksum is the 32-bit number the script returns.
//
// Lua is built as one translation unit, as its etc/one.c does, with only the libraries the
// script uses (base, string, table, math, bit32): no io, os, package, debug or coroutine.
#include <stdlib.h>

#include "corpus.h"

// Lua raises errors with longjmp, which Debian's wasi-libc does not have (no setjmp.h; wasm's
// setjmp needs the exception-handling proposal, which dlab lacks). The script raises no errors,
// so an error is a bug: print it and abort (a trap in wasm), identically in both builds.
// lua_pcall and friends run their body directly. Coroutines need the same longjmp to yield
// and are left out. ldo.c still includes <setjmp.h>: wasi/setjmp.h stands in for it there.
#define DLAB_LUA_NO_LONGJMP 1
#define LUAI_THROW(L, c) corpus_lua_throw(L)
#define LUAI_TRY(L, c, a) { a }
#define luai_jmpbuf int
// The seed of Lua's string hashing is the time mixed with some addresses; a constant instead of
// the time makes the wasm run the same every time (native addresses still vary with ASLR, which
// changes only the layout of hash tables, never the checksum).
#define luai_makeseed() 0x2545f491u

#define LUA_CORE
#define LUA_LIB
#define ltable_c
#define lvm_c
#include "luaconf.h"
#include "lua.h"
// Internal functions are static in the one translation unit, as in etc/one.c.
#undef LUAI_FUNC
#undef LUAI_DDEC
#undef LUAI_DDEF
#define LUAI_FUNC static
#define LUAI_DDEC static
#define LUAI_DDEF static

__attribute__((noreturn)) static void corpus_lua_throw(lua_State* L) {
  const char* msg = lua_tostring(L, -1);
  fprintf(stderr, "corpus lua: Lua error (the benchmark script has a bug): %s\n", msg ? msg : "(not a string)");
  abort();
}

// the core
#include "lapi.c"
#include "lcode.c"
#include "lctype.c"
#include "ldebug.c"
#include "ldo.c"
#include "ldump.c"
#include "lfunc.c"
#include "lgc.c"
#include "llex.c"
#include "lmem.c"
#include "lobject.c"
#include "lopcodes.c"
#include "lparser.c"
#include "lstate.c"
#include "lstring.c"
#include "ltable.c"
#include "ltm.c"
#include "lundump.c"
#include "lvm.c"
#include "lzio.c"
// the auxiliary library and the standard libraries the script uses
#include "lauxlib.c"
#include "lbaselib.c"
#include "lbitlib.c"
#include "lmathlib.c"
#include "lstrlib.c"
#include "ltablib.c"

static const char kName[] = "lua";

static const char kScript[] =
    "-- `rounds` rounds of a mix of what Lua programs do, folded into a 32-bit checksum with bit32.\n"
    "-- Only exact arithmetic (integers below 2^53 with + - * % and math.floor): no math.random, no\n"
    "-- transcendental functions, no dependence on the order of pairs(), so every build agrees.\n"
    "local rounds = ...\n"
    "local floor, concat, sort, format = math.floor, table.concat, table.sort, string.format\n"
    "local bxor, lrotate = bit32.bxor, bit32.lrotate\n"
    "\n"
    "local h = 0\n"
    "local function mix(v)\n"
    "  h = (lrotate(bxor(h, v % 4294967296), 7) + 0x9e3779b9) % 4294967296\n"
    "end\n"
    "local function mixs(s)\n"
    "  mix(#s)\n"
    "  for i = 1, #s, 5 do mix(s:byte(i)) end\n"
    "end\n"
    "\n"
    "-- Park-Miller: seed * 16807 stays below 2^46, exact in a double\n"
    "local seed = 42\n"
    "local function rand(n)\n"
    "  seed = seed * 16807 % 2147483647\n"
    "  return seed % n\n"
    "end\n"
    "\n"
    "-- sorting: numbers, then records by two keys through a comparator closure\n"
    "local function sorting(n)\n"
    "  local t = {}\n"
    "  for i = 1, n do t[i] = rand(1000000) end\n"
    "  sort(t)\n"
    "  mix(t[1]); mix(t[floor(n / 2)]); mix(t[n])\n"
    "  local recs = {}\n"
    "  for i = 1, n do recs[i] = {group = rand(16), value = rand(1000), id = i} end\n"
    "  sort(recs, function(a, b)\n"
    "    if a.group ~= b.group then return a.group < b.group end\n"
    "    if a.value ~= b.value then return a.value > b.value end\n"
    "    return a.id < b.id\n"
    "  end)\n"
    "  for i = 1, n, 37 do mix(recs[i].id) end\n"
    "end\n"
    "\n"
    "-- strings: formatting, concatenation, patterns and gsub with a function\n"
    "local words = {\"alpha\", \"bravo\", \"charlie\", \"delta\", \"echo\", \"foxtrot\", \"golf\", \"hotel\",\n"
    "               \"india\", \"juliet\", \"kilo\", \"lima\", \"mike\", \"november\", \"oscar\", \"papa\"}\n"
    "local function strings(n)\n"
    "  local parts = {}\n"
    "  for i = 1, n do\n"
    "    parts[i] = format(\"%s-%d:%x\", words[rand(#words) + 1], i, rand(65536))\n"
    "  end\n"
    "  local text = concat(parts, \" \")\n"
    "  mixs(text:sub(1, 200))\n"
    "  local total, count = 0, 0\n"
    "  for word, num, hex in text:gmatch(\"(%a+)-(%d+):(%x+)\") do\n"
    "    total = total + #word + tonumber(num) + tonumber(hex, 16)\n"
    "    count = count + 1\n"
    "  end\n"
    "  mix(total); mix(count)\n"
    "  local swapped, k = text:gsub(\"(%a+)-(%d+)\", function(w, d)\n"
    "    if #w > 5 then return d .. \"=\" .. w:upper() end\n"
    "  end)\n"
    "  mix(k); mixs(swapped:sub(-120))\n"
    "  mix(select(2, text:gsub(\"o\", \"0\")))\n"
    "  local first = text:find(\"lima-\", 1, true) or 0\n"
    "  mix(first)\n"
    "  mixs((\"ab\"):rep(20, \",\"):reverse())\n"
    "end\n"
    "\n"
    "-- word counts in a table keyed by strings, read back in sorted key order\n"
    "local function wordcount(n)\n"
    "  local counts, pieces = {}, {}\n"
    "  for i = 1, n do pieces[i] = words[rand(rand(#words) + 1) + 1] end\n"
    "  local text = concat(pieces, \" \")\n"
    "  for w in text:gmatch(\"%a+\") do counts[w] = (counts[w] or 0) + 1 end\n"
    "  local keys = {}\n"
    "  for w in pairs(counts) do keys[#keys + 1] = w end\n"
    "  sort(keys)\n"
    "  for _, w in ipairs(keys) do mixs(w); mix(counts[w]) end\n"
    "end\n"
    "\n"
    "-- objects: a class with methods and metamethods, inheritance through __index\n"
    "local Vec = {}\n"
    "Vec.__index = Vec\n"
    "function Vec.new(x, y) return setmetatable({x = x, y = y}, Vec) end\n"
    "function Vec.__add(a, b) return Vec.new(a.x + b.x, a.y + b.y) end\n"
    "function Vec.__eq(a, b) return a.x == b.x and a.y == b.y end\n"
    "function Vec:dot(o) return self.x * o.x + self.y * o.y end\n"
    "function Vec:scaled(k) return Vec.new(self.x * k, self.y * k) end\n"
    "local Body = setmetatable({}, {__index = Vec})\n"
    "Body.__index = Body\n"
    "Body.__add = Vec.__add\n"
    "function Body.new(x, y, vx, vy)\n"
    "  local b = setmetatable(Vec.new(x, y), Body)\n"
    "  b.v = Vec.new(vx, vy)\n"
    "  return b\n"
    "end\n"
    "function Body:step()\n"
    "  local p = self + self.v\n"
    "  self.x, self.y = p.x % 1000, p.y % 1000\n"
    "  if self.x < 10 or self.x > 990 then self.v = self.v:scaled(-1) end\n"
    "end\n"
    "local function objects(n, steps)\n"
    "  local bodies = {}\n"
    "  for i = 1, n do bodies[i] = Body.new(rand(1000), rand(1000), rand(7) - 3, rand(7) - 3) end\n"
    "  for _ = 1, steps do\n"
    "    for i = 1, n do bodies[i]:step() end\n"
    "  end\n"
    "  local acc = 0\n"
    "  for i = 2, n do acc = acc + bodies[i]:dot(bodies[i - 1]) end\n"
    "  mix(acc)\n"
    "  if bodies[1] == Vec.new(bodies[1].x, bodies[1].y) then mix(1) end\n"
    "end\n"
    "\n"
    "-- closures and recursion: binary trees (allocation and the collector), higher-order functions\n"
    "local function tree(d)\n"
    "  if d == 0 then return {} end\n"
    "  return {tree(d - 1), tree(d - 1)}\n"
    "end\n"
    "local function check(t)\n"
    "  if not t[1] then return 1 end\n"
    "  return 1 + check(t[1]) + check(t[2])\n"
    "end\n"
    "local function map(t, f) local r = {} for i = 1, #t do r[i] = f(t[i]) end return r end\n"
    "local function filter(t, f) local r = {} for i = 1, #t do if f(t[i]) then r[#r + 1] = t[i] end end return r end\n"
    "local function fold(t, f, a) for i = 1, #t do a = f(a, t[i]) end return a end\n"
    "local function functional(n, depth)\n"
    "  mix(check(tree(depth)))\n"
    "  local t = {}\n"
    "  for i = 1, n do t[i] = i end\n"
    "  local k = rand(10) + 2\n"
    "  local r = fold(filter(map(t, function(x) return x * k + 1 end),\n"
    "                        function(x) return x % 3 ~= 0 end),\n"
    "                 function(a, x) return (a * 31 + x) % 1000003 end, 7)\n"
    "  mix(r)\n"
    "  local function counter() local c = 0 return function() c = c + 1 return c end end\n"
    "  local c1, c2 = counter(), counter()\n"
    "  for _ = 1, n do c1() end\n"
    "  mix(c1() * 1000 + c2())\n"
    "end\n"
    "\n"
    "for round = 1, rounds do\n"
    "  sorting(600)\n"
    "  strings(300)\n"
    "  wordcount(600)\n"
    "  objects(60, 20)\n"
    "  functional(600, 9)\n"
    "  mix(round)\n"
    "end\n"
    "return h\n";

CORPUS_ENTRY(lua) {
  static const struct {
    const char* name;
    lua_CFunction open;
  } kLibs[] = {{"_G", luaopen_base},   {LUA_STRLIBNAME, luaopen_string}, {LUA_TABLIBNAME, luaopen_table},
               {LUA_MATHLIBNAME, luaopen_math}, {LUA_BITLIBNAME, luaopen_bit32}};
  lua_State* L = luaL_newstate();
  if (!L) return corpus_fail(kName, "out of memory", NULL);
  for (size_t i = 0; i < sizeof kLibs / sizeof kLibs[0]; ++i) {
    luaL_requiref(L, kLibs[i].name, kLibs[i].open, 1);
    lua_pop(L, 1);
  }
  // Without longjmp a compile or run-time error aborts in corpus_lua_throw before these checks
  // could see it; they stay for a build where LUAI_THROW unwinds again.
  uint32_t result = CORPUS_FAILED;
  if (luaL_loadbuffer(L, kScript, sizeof kScript - 1, "=corpus") != LUA_OK) {
    corpus_fail(kName, "cannot compile the script", lua_tostring(L, -1));
  } else {
    lua_pushnumber(L, (lua_Number)size);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK)
      corpus_fail(kName, "script failed", lua_tostring(L, -1));
    else if (!lua_isnumber(L, -1))
      corpus_fail(kName, "the script returned no number", NULL);
    else
      result = corpus_finish((uint32_t)lua_tounsigned(L, -1));
  }
  lua_close(L);
  return result;
}
