// Stands in for <setjmp.h>, which Debian's wasi-libc does not have, in the wasm build of the
// corpus only. Lua's ldo.c includes it unconditionally; lua_bench.c replaces Lua's longjmp-based
// error handling (LUAI_THROW, LUAI_TRY), so nothing declared here would be used, and nothing is.
#ifndef DLAB_LUA_NO_LONGJMP
#error "wasi-libc has no setjmp/longjmp: only lua_bench.c, which does without them, may include this"
#endif
