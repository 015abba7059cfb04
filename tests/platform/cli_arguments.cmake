# Bad arguments and conflicting options of the pe-vp binary: each refused with
# exit status 2 and a message naming the option (and the other option, or the
# file, it contradicts). Run with -DPEVP=<exe> -DWORK=<dir>.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/a_directory)

function(expect_refused pattern)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err WORKING_DIRECTORY ${WORK})
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "expected exit 2, got ${rc}: ${ARGN}\n${out}\n${err}")
  endif()
  if(NOT err MATCHES "${pattern}")
    message(FATAL_ERROR "the message of ${ARGN} does not match '${pattern}':\n${err}")
  endif()
endfunction()

set(small --m 32 --k 32 --n 32 --no-check)

# Argument parsing errors are status 2, not CLI11's own codes.
expect_refused("pe-vp: give a command \\(gemm, sweep, run, serve, qemu-device, asm, disasm, calibrate, demo, regs, cosim-check, coverage\\), or --dump-config" ${PEVP})
# A source that cannot be read says why (it read "no --gen and no .gen directive").
expect_refused("pe-vp asm: x.pes: cannot open: No such file or directory" ${PEVP} asm x.pes -o x.bin)
file(WRITE ${WORK}/nogen.pes "# no directive\n")
expect_refused("pe-vp asm: nogen.pes: no --gen and no .gen directive in the source" ${PEVP} asm nogen.pes -o x.bin)
# A timing-only run has no data to dump: refused before running, not zeros.
expect_refused("--dump c.npy: mode timing moves no data, so there is nothing to dump \\(use --mode both\\)"
               ${PEVP} run --gen MARIANA ${EXAMPLE}/program.pes --mode timing --dump 0x2000000:32x48:fp32=c.npy)
if(EXISTS ${WORK}/c.npy)
  message(FATAL_ERROR "a refused timing-only --dump wrote c.npy")
endif()

# What works without a command, and the version.
execute_process(COMMAND ${PEVP} --version RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^pe-vp [0-9]+\\.[0-9]+\\.[0-9]+")
  message(FATAL_ERROR "pe-vp --version: status ${rc}, '${out}'")
endif()
execute_process(COMMAND ${PEVP} --dump-config --set geometry.pe_rows=64 RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "\"pe_rows\": 64")
  message(FATAL_ERROR "pe-vp --dump-config without a command: status ${rc}\n${out}")
endif()
# asm takes the generation from the source's .gen directive.
execute_process(COMMAND ${PEVP} asm ${EXAMPLE}/program.pes -o ${WORK}/p.bin RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "for MARIANA")
  message(FATAL_ERROR "pe-vp asm without --gen: status ${rc}, '${out}'")
endif()
# ... with that generation's preset: MAVERICK's 256-column array, on which this record is valid (on MARIANA's
# preset, which asm used when --gen was absent, its 128 columns are "must be 1..64 (the tile's columns)").
file(WRITE ${WORK}/mav.pes ".gen MAVERICK\nldweights src_mem_pattern=sbuf[0]:[1,128][0,1][0,1] in_dtype=BFLOAT16 \
fp32_mode=None num_active_rows=128 num_active_cols=128 tile_size.row=R128 tile_size.col=C128 tile_sel.row_sel=0 \
tile_sel.col_sel=0 flags.xpose_mode=0 flags.scalar_mode=0 flags.seed_mode=NONE flags.load_order=LAST_COL_FIRST \
perf_mode=NONE\n")
execute_process(COMMAND ${PEVP} asm ${WORK}/mav.pes -o ${WORK}/mav_directive.bin
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "wrote 1 instruction\\(s\\) \\(64 bytes\\) for MAVERICK")
  message(FATAL_ERROR "pe-vp asm of a MAVERICK source without --gen: status ${rc}, '${out}${err}'")
endif()
execute_process(COMMAND ${PEVP} asm --gen MAVERICK ${WORK}/mav.pes -o ${WORK}/mav_option.bin RESULT_VARIABLE rc)
file(SHA256 ${WORK}/mav_directive.bin with_directive)
file(SHA256 ${WORK}/mav_option.bin with_option)
if(NOT rc EQUAL 0 OR NOT with_directive STREQUAL with_option)
  message(FATAL_ERROR "pe-vp asm: the .gen directive and --gen MAVERICK give different records (status ${rc})")
endif()
file(WRITE ${WORK}/cayman.json "{\"generation\": \"CAYMAN\"}")
expect_refused("pe-vp: .*mav.pes: .gen MAVERICK disagrees with the configuration's generation CAYMAN"
               ${PEVP} asm ${WORK}/mav.pes -o x.bin --config cayman.json)
file(WRITE ${WORK}/pluto.pes ".gen PLUTO\n")
expect_refused("pe-vp asm: pluto.pes: .gen names an unknown generation 'PLUTO' \\(CAYMAN, MARIANA, MARIANA_PLUS, MAVERICK\\)"
               ${PEVP} asm pluto.pes -o x.bin)
expect_refused("The following argument was not expected" ${PEVP} gemm --no-such-option)
# Integers: the range, no wrap of -1, no clamp of 2^64, no exponent.
expect_refused("--m: expected an integer in 1..1048576, got '0'" ${PEVP} gemm --m 0)
expect_refused("--n: expected an integer in 1..1048576, got '18446744073709551616'" ${PEVP} gemm --n 18446744073709551616)
expect_refused("--seed: expected an integer in 0..18446744073709551615, got '-1'" ${PEVP} gemm ${small} --seed -1)
expect_refused("--k: expected an integer in 1..1048576, got '1e3'" ${PEVP} gemm --k 1e3)
expect_refused("--threads: expected an integer in 1..4096, got '0'" ${PEVP} gemm ${small} --threads 0)
expect_refused("--threads: expected an integer in 1..4096, got '4097'" ${PEVP} run --gen MARIANA x.pes --threads 4097)
expect_refused("--threads: expected an integer in 1..4096, got '-2'" ${PEVP} gemm ${small} --threads -2)
# Directories as inputs name the file.
expect_refused("pe-vp asm: a_directory: is a directory" ${PEVP} asm --gen MARIANA a_directory -o x.bin)
# Without --gen too: the source is read before its .gen directive is looked for (it said "no --gen and no .gen
# directive in the source").
expect_refused("pe-vp asm: a_directory: is a directory" ${PEVP} asm a_directory -o x.bin)
# A sweep's spec the same way, before its format (it said "unknown spec format ''").
expect_refused("pe-vp sweep: a_directory: is a directory" ${PEVP} sweep a_directory --out sweep_out)
expect_refused("pe-vp disasm: a_directory: is a directory" ${PEVP} disasm --gen MARIANA a_directory)
expect_refused("pe-vp gemm: a_directory: is a directory" ${PEVP} gemm --a a_directory --b a_directory --no-check)
expect_refused("pe-vp run: a_directory: is a directory" ${PEVP} run --gen MARIANA a_directory)
expect_refused("pe-vp: a_directory: is a directory" ${PEVP} gemm --config a_directory)
# A number beyond double in a configuration file names the file and the key.
file(WRITE ${WORK}/big.json "{\"timing\": {\"fp32_factor\": 1e400}}")
expect_refused("big.json: timing.fp32_factor: number overflow parsing '1e400'" ${PEVP} gemm --config big.json)
# Conflicting options name both.
expect_refused("--mode timing contradicts --set mode=both" ${PEVP} gemm ${small} --mode timing --set mode=both)
expect_refused("--dtype tf32 means fp32_mode Low; --fp32-mode high contradicts it" ${PEVP} gemm ${small} --dtype tf32 --fp32-mode high)
expect_refused("--fp32-mode low applies to fp32 inputs only" ${PEVP} gemm ${small} --dtype bf16 --fp32-mode low)
expect_refused("--out and --stats-json both name 'same.out'" ${PEVP} gemm ${small} --out same.out --stats-json same.out)
execute_process(COMMAND ${PEVP} gemm ${small} --out a.npy WORKING_DIRECTORY ${WORK} OUTPUT_QUIET)
execute_process(COMMAND ${PEVP} gemm ${small} --out b.npy WORKING_DIRECTORY ${WORK} OUTPUT_QUIET)
expect_refused("--m 64 contradicts the operands: --a a.npy has 32 rows" ${PEVP} gemm --a a.npy --b b.npy --m 64 --no-check)

# Messages: a script's unknown register names its line; a huge --dump row its size
# without wrapping; a long .npy header is cut, not echoed whole.
file(WRITE ${WORK}/bad.regs "submit\nwrite top no_such_reg 1\nwait\n")
expect_refused("bad.regs:2: tpb_arr_seq_top_host_visible has no register 'no_such_reg'"
               ${PEVP} run --gen MARIANA ${EXAMPLE}/program.pes --regs bad.regs)
expect_refused("a row of 4611686018427387904 elements \\(more than 2\\^64 bytes\\)"
               ${PEVP} run --gen MARIANA ${EXAMPLE}/program.pes --dump 0x2000000:1x4611686018427387904:fp32=x.npy)
string(REPEAT "x" 5000 junk)
file(WRITE ${WORK}/long_header.txt "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), 'junk': '${junk}'}")
execute_process(COMMAND /usr/bin/python3 -c "import struct,sys; h=open(sys.argv[1],'rb').read(); h += b' ' * ((64 - (10 + len(h) + 1) % 64) % 64) + b'\\n'; open(sys.argv[2],'wb').write(b'\\x93NUMPY\\x01\\x00' + struct.pack('<H', len(h)) + h + bytes(16))"
                        ${WORK}/long_header.txt ${WORK}/long.npy)
execute_process(COMMAND ${PEVP} gemm --a long.npy --b long.npy --no-check RESULT_VARIABLE rc ERROR_VARIABLE err
                WORKING_DIRECTORY ${WORK})
string(LENGTH "${err}" err_length)
if(NOT rc EQUAL 2 OR err_length GREATER 600 OR NOT err MATCHES "\\.\\.\\. \\([0-9]+ characters\\)")
  message(FATAL_ERROR "a long .npy header must be cut in the message (status ${rc}, ${err_length} characters):\n${err}")
endif()

# The array modes of gemm: double_row needs fp8 on a generation with perf_opt; a wide --tile-n needs v4+.
expect_refused("options.double_row: double_row packs two fp8 rows per partition; the dtype is BFLOAT16"
               ${PEVP} gemm ${small} --double-row)
expect_refused("options.double_row: fp8 double_row is perf_opt, a field of CAYMAN and MARIANA"
               ${PEVP} gemm ${small} --gen MAVERICK --dtype fp8_e4m3fn --double-row)
expect_refused("options.tile_n = 1024: must be 1..512 \\(fp32 elements of one 2048-byte PSUM bank, as CAYMAN keeps"
               ${PEVP} gemm ${small} --gen CAYMAN --tile-n 1024)
expect_refused("options.tile_n = 4097: must be 1..4096"
               ${PEVP} gemm ${small} --gen MARIANA --tile-n 4097)
# Structured sparsity: the published patterns only, bf16 / fp16 only.
expect_refused("--sparsity '3:4' is not a published N:M pattern; one of 4:16, 4:12, 4:8, 2:8, 2:4, 1:4, 1:2"
               ${PEVP} gemm ${small} --sparsity 3:4)
expect_refused("--sparsity 2:4 runs bf16 or fp16 operands \\(a TAG_WEIGHT load's 16-bit weight\\), and --dtype fp32"
               ${PEVP} gemm ${small} --sparsity 2:4 --dtype fp32)

# Every command's --help names the options every command takes.
foreach(cmd gemm sweep run asm disasm calibrate demo regs)
  execute_process(COMMAND ${PEVP} ${cmd} --help RESULT_VARIABLE rc OUTPUT_VARIABLE out)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "--set KEY=VALUE" OR NOT out MATCHES "--dump-config" OR NOT out MATCHES "--config FILE")
    message(FATAL_ERROR "pe-vp ${cmd} --help does not list the global options (status ${rc}):\n${out}")
  endif()
endforeach()
