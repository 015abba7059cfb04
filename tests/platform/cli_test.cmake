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
# Every generation's stream runs on the platform (a pe-vp run each), the MX samples included.
string(REGEX MATCHALL "retired, done at" runs "${last_out}")
list(LENGTH runs run_count)
if(NOT run_count EQUAL 4 OR NOT last_out MATCHES "every stream runs to completion on the platform"
   OR last_out MATCHES "not run:")
  message(FATAL_ERROR "demo did not run every stream to completion (${run_count} runs):\n${last_out}")
endif()
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

# Configuration on any command: --dump-config reproduces a run, --set and --config
# errors name the key, a --gen that disagrees with the configuration is refused.
expect_exit(0 ${PEVP} gemm --gen CAYMAN --set arr_seq.ififo_depth=3 --dump-config)
file(WRITE ${WORK}/cayman.json "${last_out}")
if(NOT last_out MATCHES "\"ififo_depth\": 3" OR NOT last_out MATCHES "\"generation\": \"CAYMAN\"")
  message(FATAL_ERROR "--dump-config does not show the effective configuration:\n${last_out}")
endif()
expect_exit(0 ${PEVP} gemm --config ${WORK}/cayman.json --dump-config)
if(NOT last_out MATCHES "\"ififo_depth\": 3")
  message(FATAL_ERROR "a dumped configuration does not load back:\n${last_out}")
endif()
expect_exit(0 ${PEVP} gemm --config ${WORK}/cayman.json --m 40 --k 130 --n 70)
if(NOT last_out MATCHES "CAYMAN" OR NOT last_out MATCHES "bit-exact")
  message(FATAL_ERROR "gemm under a loaded configuration:\n${last_out}")
endif()
expect_exit(2 ${PEVP} gemm --set arr_seq.ififo_depht=3)
if(NOT last_err MATCHES "unknown key 'arr_seq.ififo_depht'")
  message(FATAL_ERROR "unknown key not named:\n${last_err}")
endif()
expect_exit(2 ${PEVP} gemm --set seq.queue_depth=0)
if(NOT last_err MATCHES "seq.queue_depth = 0: out of range")
  message(FATAL_ERROR "out-of-range value not named:\n${last_err}")
endif()
expect_exit(2 ${PEVP} gemm --gen MARIANA --config ${WORK}/cayman.json)
if(NOT last_err MATCHES "disagrees")
  message(FATAL_ERROR "--gen / configuration conflict not reported:\n${last_err}")
endif()
expect_exit(2 ${PEVP} run --config ${WORK}/no_such.json x.bin)
