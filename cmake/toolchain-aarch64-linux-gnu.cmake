# Cross build for 64-bit Arm Linux with Debian's cross compiler and multiarch arm64 libraries
# (scripts/setup-arm64 installs them), the unit tests run under qemu's user-mode emulator:
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64-linux-gnu.cmake \
#         -DKRC_TESTS=ON -DKRC_WERROR=ON
#   cmake --build build-arm64 -j2 && ctest --test-dir build-arm64 -L unit
# scripts/test runs this stage (KRC_SKIP_ARM64=1 skips it) with KRC_EMULATOR_SKIP naming the
# seven test cases that check what qemu's user-mode emulation does not provide (the list and
# the reasons are there); without it those cases fail under qemu. The image is not built this
# way: the Dockerfile builds natively on each platform (docs/image.md); the release workflow's
# arm64 binary is.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)

# Debian's multiarch layout has no separate sysroot: the arm64 libraries and their
# architecture-specific headers are in /usr/lib/aarch64-linux-gnu and
# /usr/include/aarch64-linux-gnu (the cross compiler searches both), the cross toolchain's
# own C library in /usr/aarch64-linux-gnu. Find programs on the build machine, libraries and
# headers only in the arm64 places.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config reads only the arm64 .pc files (never the build machine's x86_64 ones), plus
# libpq's: libpq-dev is not Multi-Arch: same, so setup-test unpacks libpq-dev:arm64 into
# .test-tools/arm64 instead of installing it (its libpq.so links to libpq5:arm64).
set(KRC_ARM64_PKG_PATH /usr/lib/aarch64-linux-gnu/pkgconfig /usr/share/pkgconfig)
get_filename_component(KRC_ARM64_TOOLS "${CMAKE_CURRENT_LIST_DIR}/../.test-tools/arm64" ABSOLUTE)
if(EXISTS "${KRC_ARM64_TOOLS}/root/usr/lib/aarch64-linux-gnu/pkgconfig/libpq.pc")
  list(APPEND KRC_ARM64_PKG_PATH "${KRC_ARM64_TOOLS}/root/usr/lib/aarch64-linux-gnu/pkgconfig")
  # a root of its own, so that pkg_check_modules resolves -lpq to its libpq.so there
  list(APPEND CMAKE_FIND_ROOT_PATH "${KRC_ARM64_TOOLS}/root")
endif()
string(REPLACE ";" ":" KRC_ARM64_PKG_PATH "${KRC_ARM64_PKG_PATH}")
set(ENV{PKG_CONFIG_LIBDIR} "${KRC_ARM64_PKG_PATH}")
set(ENV{PKG_CONFIG_PATH} "")

# ctest runs the test programs through qemu (add_test with a target as its COMMAND). The
# arm64 dynamic loader and libraries are the multiarch ones, at the paths an arm64 Debian
# has them (/lib/ld-linux-aarch64.so.1, /usr/lib/aarch64-linux-gnu), so no -L is needed.
find_program(KRC_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64 REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR "${KRC_QEMU_AARCH64}")
