# End-to-end checks of the pe-vp binary: run with -DPEVP=<exe> -DWORK=<dir>.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

function(expect_exit code)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL code)
    message(FATAL_ERROR "expected exit ${code}, got ${rc}: ${ARGN}\n${out}\n${err}")
  endif()
  set(last_out "${out}" PARENT_SCOPE)
  set(last_err "${err}" PARENT_SCOPE)
endfunction()

expect_exit(0 ${PEVP} demo --out-dir ${WORK})
foreach(gen CAYMAN MARIANA MARIANA_PLUS MAVERICK)
  expect_exit(0 ${PEVP} disasm --gen ${gen} ${WORK}/sample_${gen}.bin)
  expect_exit(0 ${PEVP} disasm --gen ${gen} --json ${WORK}/sample_${gen}.bin)
endforeach()

# A MARIANA stream is not a valid CAYMAN stream (PE_MANAGE_SEED, LDWEIGHTS_MX, BF16 out).
expect_exit(1 ${PEVP} disasm --gen CAYMAN ${WORK}/sample_MARIANA.bin)
if(NOT last_out MATCHES "opcode.unknown" OR NOT last_out MATCHES "mm.out_dtype")
  message(FATAL_ERROR "CAYMAN disasm of a MARIANA stream should name opcode.unknown and mm.out_dtype:\n${last_out}")
endif()

# Truncated file: a partial record is an error with its offset.
execute_process(COMMAND head -c 130 ${WORK}/sample_CAYMAN.bin OUTPUT_FILE ${WORK}/truncated.bin)
expect_exit(1 ${PEVP} disasm --gen CAYMAN ${WORK}/truncated.bin)
if(NOT last_out MATCHES "2 trailing byte\\(s\\) at offset 128")
  message(FATAL_ERROR "truncated file not reported:\n${last_out}")
endif()

# Usage errors.
expect_exit(2 ${PEVP} disasm --gen PLUTO ${WORK}/sample_CAYMAN.bin)
expect_exit(2 ${PEVP} disasm --gen CAYMAN ${WORK}/does_not_exist.bin)

# Register files.
foreach(rf top cluster protected vp)
  expect_exit(0 ${PEVP} regs --regfile ${rf})
  expect_exit(0 ${PEVP} regs --regfile ${rf} --json)
endforeach()
execute_process(COMMAND ${PEVP} regs --regfile bogus RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
if(rc EQUAL 0)
  message(FATAL_ERROR "pe-vp regs --regfile bogus must fail")
endif()
