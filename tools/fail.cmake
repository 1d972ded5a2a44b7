# A test that fails with MESSAGE (ctest shows it): cmake -DMESSAGE=... -P tools/fail.cmake
message(FATAL_ERROR "${MESSAGE}")
