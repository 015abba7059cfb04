# The host thread count changes nothing a user sees: the same GEMMs (bf16 through the in-place kernel path, fp32
# low_high through the decoded path, MAVERICK's geometry) and a program run with --threads 1, 2 and 3
# write byte-identical results (C, SBUF/PSUM dumps) and run statistics (cycles, stalls, utilisation), and print
# the same summary apart from the wall-clock figures and the file names. Run with -DPEVP=<exe> -DWORK=<dir> -DEXAMPLE=<example dir>.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

function(run_ok)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err WORKING_DIRECTORY ${WORK})
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "exit ${rc}: ${ARGN}\n${out}\n${err}")
  endif()
  # The wall-clock figures are the only lines that may differ.
  string(REGEX REPLACE "wall [0-9.]+ s, [0-9.]+ G simulated MACs per wall second" "wall" out "${out}")
  string(REGEX REPLACE "t[0-9]_" "tN_" out "${out}")  # the output file names
  set(summary "${out}" PARENT_SCOPE)
endfunction()

function(expect_same_files what)
  foreach(f ${ARGN})
    execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK}/t1_${f} ${WORK}/${what}_${f} RESULT_VARIABLE diff)
    if(NOT diff EQUAL 0)
      message(FATAL_ERROR "${what}: ${f} differs from the --threads 1 run")
    endif()
  endforeach()
endfunction()

set(cases
  "bf16|--gen MARIANA --m 256 --k 512 --n 1024"
  "low_high|--gen MARIANA --dtype fp32 --fp32-mode low_high --m 130 --k 200 --n 520"
  "maverick|--gen MAVERICK --m 200 --k 300 --n 600")
foreach(c ${cases})
  string(REPLACE "|" ";" parts "${c}")
  list(GET parts 0 name)
  list(GET parts 1 args)
  separate_arguments(args)
  foreach(t 1 2 3)
    run_ok(${PEVP} gemm ${args} --threads ${t} --out t${t}_${name}_c.npy --stats-json t${t}_${name}_stats.json)
    set(summary_${t} "${summary}")
  endforeach()
  foreach(t 2 3)
    expect_same_files(t${t} ${name}_c.npy ${name}_stats.json)
    if(NOT summary_${t} STREQUAL summary_1)
      message(FATAL_ERROR "${name}: the summary with --threads ${t} differs:\n${summary_${t}}\n--- --threads 1:\n${summary_1}")
    endif()
  endforeach()
  if(NOT summary_1 MATCHES "bit-exact")
    message(FATAL_ERROR "${name}: not bit-exact against the reference:\n${summary_1}")
  endif()
endforeach()

# A program with its own loads and dumps (the single_matmul example).
foreach(t 1 2)
  run_ok(${PEVP} run --gen MARIANA ${EXAMPLE}/program.pes --load ${EXAMPLE}/st.npy@0x0:bf16
         --load ${EXAMPLE}/mv.npy@0x1000:bf16 --dump 0x2000000:32x48:fp32=t${t}_run_psum.npy
         --stats-json t${t}_run_stats.json --threads ${t})
endforeach()
expect_same_files(t2 run_psum.npy run_stats.json)
