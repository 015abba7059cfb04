# PEVP_FUZZ=ON: coverage instrumentation for libFuzzer and the sanitizers of docs/reliability.md on every project
# target (directory scope, like PEVP_SANITIZE), so the harnesses of tests/fuzz see the libraries' own edges and
# undefined behaviour. Included from the top-level CMakeLists.txt before the units are added.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR
    "PEVP_FUZZ=ON needs clang (libFuzzer is part of clang's compiler-rt); this build directory uses "
    "${CMAKE_CXX_COMPILER_ID} (${CMAKE_CXX_COMPILER}). Configure a separate directory with clang, e.g.\n"
    "  cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DPEVP_FUZZ=ON -DPEVP_BUILD_TESTS=OFF\n"
    "or run scripts/fuzz.sh.")
endif()
if(PEVP_SANITIZE)
  message(FATAL_ERROR "PEVP_FUZZ=ON sets its own sanitizers (docs/reliability.md); leave PEVP_SANITIZE off.")
endif()

# clang's -fsanitize=undefined already holds signed-integer-overflow, shift, integer-divide-by-zero,
# float-cast-overflow (which GCC's leaves out), bounds, null, alignment, enum, bool, vptr, ... Added:
# float-divide-by-zero, and the implicit conversions that change a value (a truncation or a sign change the code
# did not spell as a cast). Left out: unsigned-integer-overflow and unsigned-shift-base, well-defined modular
# arithmetic. docs/reliability.md gives the survey behind the choice.
set(PEVP_FUZZ_SANITIZERS "" CACHE STRING "The -fsanitize= list of the fuzz build; empty: docs/reliability.md's")
set(pevp_fuzz_sanitizers "address,undefined,float-cast-overflow,float-divide-by-zero,implicit-signed-integer-truncation,implicit-integer-sign-change,implicit-unsigned-integer-truncation")
if(PEVP_FUZZ_SANITIZERS)
  set(pevp_fuzz_sanitizers "${PEVP_FUZZ_SANITIZERS}")
endif()

# Every report aborts, so libFuzzer keeps the input. PEVP_FUZZ_RECOVER names checks that report and continue
# instead: how the survey in docs/reliability.md counted what each candidate check flags.
set(PEVP_FUZZ_RECOVER "" CACHE STRING "Sanitizer checks that report and continue (a survey build); empty: none")
# The implicit-conversion checks skip the system headers (ignorelist.txt). Spelled -fsanitize-blacklist, clang's
# older name of -fsanitize-ignorelist, because ccache 4.7 hashes the file's contents only under that name.
add_compile_options(-fsanitize=fuzzer-no-link,${pevp_fuzz_sanitizers} -fno-sanitize-recover=all
                    -fsanitize-blacklist=${CMAKE_CURRENT_LIST_DIR}/ignorelist.txt -fno-omit-frame-pointer)
if(PEVP_FUZZ_RECOVER)
  add_compile_options(-fsanitize-recover=${PEVP_FUZZ_RECOVER})
endif()
add_link_options(-fsanitize=${pevp_fuzz_sanitizers})
