# Cross build for AArch64 Linux on an x86-64 Debian 12 host: clang-19 --target=aarch64-linux-gnu
# against Debian's arm64 multiarch packages (`./tools/bootstrap aarch64` installs them beside the
# host's: dpkg --add-architecture arm64; libfmt-dev:arm64, libpfm4-dev:arm64, libstdc++-12-dev:arm64
# ...), linked by lld. Nothing built here is ever timed on this host: every binary runs under
# qemu-user (CMAKE_CROSSCOMPILING_EMULATOR, so ctest and GoogleTest's discovery go through it), and
# the fingerprint of such a run says "emulated".
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER clang-19)
set(CMAKE_CXX_COMPILER clang++-19)
set(CMAKE_C_COMPILER_TARGET aarch64-linux-gnu)
set(CMAKE_CXX_COMPILER_TARGET aarch64-linux-gnu)
set(CMAKE_ASM_COMPILER_TARGET aarch64-linux-gnu)
# Multiarch: the arm64 libraries and their CMake packages live in /usr/lib/aarch64-linux-gnu of the
# same root, the host's in /usr/lib/x86_64-linux-gnu; this picks the former.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_EXE_LINKER_FLAGS_INIT "-fuse-ld=lld")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-fuse-ld=lld")
find_program(DLAB_QEMU_AARCH64 qemu-aarch64-static)
if(DLAB_QEMU_AARCH64)
  # -L /: the arm64 dynamic loader and libraries are those multiarch put under /.
  set(CMAKE_CROSSCOMPILING_EMULATOR ${DLAB_QEMU_AARCH64} -L /)
endif()
# pkg-config (PAPI) reads the arm64 .pc files, not the host's.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
