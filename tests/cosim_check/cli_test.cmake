# pe-vp cosim-check as a user runs it: -DPEVP=<pe-vp> -DWORK=<scratch directory>.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

function(run_pevp out_var err_var rc_var)
  execute_process(COMMAND "${PEVP}" cosim-check ${ARGN} WORKING_DIRECTORY "${WORK}"
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  set(${out_var} "${out}" PARENT_SCOPE)
  set(${err_var} "${err}" PARENT_SCOPE)
  set(${rc_var} "${rc}" PARENT_SCOPE)
endfunction()

function(expect_match what text regex)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "${what}: expected to match '${regex}', got:\n${text}")
  endif()
endfunction()

# A clean run: status 0, the summary's counts, and the same output (but the wall-clock rate) on a rerun.
run_pevp(out1 err1 rc1 --regfile vp --cycles 20000 --seed 5)
if(NOT rc1 EQUAL 0)
  message(FATAL_ERROR "clean run: status ${rc1}\n${out1}${err1}")
endif()
foreach(line "pe-vp cosim-check: vp \\(vp_seq, 67 registers\\), seed 5\n" "cycles      20000\n"
             "accesses    [0-9]+: reads [0-9]+, writes [0-9]+\n" "protocol    0 violations\n" "mismatches  0\n"
             "seed        5\n" "rate        [0-9]+ APB cycles/s")
  expect_match("clean run" "${out1}" "${line}")
endforeach()
run_pevp(out2 err2 rc2 --regfile vp --cycles 20000 --seed 5)
string(REGEX REPLACE "rate [^\n]*\n" "" a "${out1}")
string(REGEX REPLACE "rate [^\n]*\n" "" b "${out2}")
if(NOT a STREQUAL b)
  message(FATAL_ERROR "the same seed gave another run:\n${out1}\n---\n${out2}")
endif()
if(EXISTS "${WORK}/cosim-check-vp-seed5.fst")
  message(FATAL_ERROR "a clean run wrote a waveform")
endif()

# A mismatch: status 1, the line with its cycle, and the waveform in the default place.
run_pevp(out err rc --regfile top --cycles 5000 --seed 3 --inject-mismatch 700 --window 10)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "injected mismatch: status ${rc}\n${out}${err}")
endif()
expect_match("injected mismatch" "${out}" "mismatches  1\n")
expect_match("injected mismatch" "${out}" "mismatch: cycle 701 \\(7.01 us\\): state of [a-z_0-9.]+ @ 0x[0-9a-f]+ [^\n]*: expected \\(TLM\\) 0x[0-9a-f]+, actual \\(RTL\\) 0x[0-9a-f]+\n")
expect_match("injected mismatch" "${out}"
             "waveform    cosim-check-top-seed3.fst: the RTL from cycle 691 \\(6.91 us\\) to cycle 711 \\(7.11 us\\)")
file(SIZE "${WORK}/cosim-check-top-seed3.fst" size)
if(size LESS 100)
  message(FATAL_ERROR "the waveform is ${size} bytes")
endif()

# Argument errors: status 2 and a line naming the problem.
run_pevp(out err rc --regfile bottom)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "--regfile bottom: status ${rc}")
endif()
expect_match("--regfile bottom" "${err}" "unknown register file 'bottom': expected top, cluster, protected or vp")
run_pevp(out err rc --cycles 0)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "--cycles 0: status ${rc}")
endif()
expect_match("--cycles 0" "${err}" "--cycles: expected an integer in 1\\.\\.[0-9]+, got '0'")
run_pevp(out err rc --fst "${WORK}/missing/w.fst")
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "--fst in a missing directory: status ${rc}")
endif()
expect_match("--fst" "${err}" "the directory [^\n]*missing does not exist")
