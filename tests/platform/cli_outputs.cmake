# Every file a pe-vp command writes (--trace, --vcd, --stats-json, --out, --dump,
# asm -o, demo --out-dir) goes through one writer: a symlink is followed and
# stays a link, a device is written in place, and a write error (a full device,
# a missing folder) is exit status 2 with the path and the reason.
# Run with -DPEVP=<exe> -DWORK=<dir> -DEXAMPLE=<platform/examples/single_matmul>.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

function(expect_exit code)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err WORKING_DIRECTORY ${EXAMPLE})
  if(NOT rc EQUAL code)
    message(FATAL_ERROR "expected exit ${code}, got ${rc}: ${ARGN}\n${out}\n${err}")
  endif()
  set(last_err "${err}" PARENT_SCOPE)
endfunction()

set(gemm ${PEVP} gemm --m 128 --k 128 --n 128 --no-check)
set(run ${PEVP} run --gen MARIANA program.pes --load st.npy@0x0:bf16 --load mv.npy@0x1000:bf16)

# Each writer, given a path: through a symlink, to /dev/full, into a missing folder.
foreach(kind trace vcd stats out dump asm)
  if(kind STREQUAL "trace")
    set(cmd ${gemm} --trace)
  elseif(kind STREQUAL "vcd")
    set(cmd ${gemm} --vcd)
  elseif(kind STREQUAL "stats")
    set(cmd ${gemm} --stats-json)
  elseif(kind STREQUAL "out")
    set(cmd ${gemm} --out)
  elseif(kind STREQUAL "dump")
    set(cmd ${run} --dump)
  else()
    set(cmd ${PEVP} asm --gen MARIANA program.pes -o)
  endif()
  set(prefix "")
  if(kind STREQUAL "dump")
    set(prefix "0x2000000:32x48:fp32=")
  endif()

  file(CREATE_LINK ${WORK}/${kind}.real ${WORK}/${kind}.link SYMBOLIC)
  expect_exit(0 ${cmd} ${prefix}${WORK}/${kind}.link)
  if(NOT IS_SYMLINK ${WORK}/${kind}.link OR NOT EXISTS ${WORK}/${kind}.real)
    message(FATAL_ERROR "${kind}: the symlink was replaced or its target not written")
  endif()
  file(SIZE ${WORK}/${kind}.real size)
  if(size EQUAL 0)
    message(FATAL_ERROR "${kind}: the symlink's target is empty")
  endif()

  expect_exit(2 ${cmd} ${prefix}/dev/full)
  if(NOT last_err MATCHES "/dev/full: write error: No space left on device")
    message(FATAL_ERROR "${kind}: the full device is not reported:\n${last_err}")
  endif()

  expect_exit(2 ${cmd} ${prefix}${WORK}/no/such/folder/x)
  # (checked before the run where the command can: "no such directory")
  if(NOT last_err MATCHES "no/such/folder/x: (cannot create the temporary file .*No such file or directory|no such directory)")
    message(FATAL_ERROR "${kind}: the missing folder is not reported:\n${last_err}")
  endif()

  file(CREATE_LINK /dev/null ${WORK}/${kind}.null SYMBOLIC)
  expect_exit(0 ${cmd} ${prefix}${WORK}/${kind}.null)
  if(NOT IS_SYMLINK ${WORK}/${kind}.null)
    message(FATAL_ERROR "${kind}: the link to /dev/null was replaced")
  endif()
endforeach()

# demo --out-dir creates a missing folder (cli.consistency); a file in its way is refused before anything runs.
file(WRITE ${WORK}/a_file "x")
expect_exit(2 ${PEVP} demo --out-dir ${WORK}/a_file/folder)
if(NOT last_err MATCHES "--out-dir .*/a_file/folder: .*/a_file exists and is not a folder")
  message(FATAL_ERROR "demo into a folder under a file is not reported:\n${last_err}")
endif()
