# SIMD kernels live in files named *_avx2.cpp, *_avx512.cpp (*_avx512bf16.cpp), *_neon.cpp. Each
# is compiled with the flags of its instruction set only; the path is chosen at run time (see
# src/kernels/isa.h), so one binary runs on every CPU of its architecture and a test binary can
# exercise every path.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(EDGEINFER_ARCH_X86 ON)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$")
  set(EDGEINFER_ARCH_ARM64 ON)
endif()

set(EDGEINFER_AVX2_FLAGS -mavx2 -mfma -mf16c -mbmi2)
set(EDGEINFER_AVX512_FLAGS -mavx2 -mfma -mf16c -mbmi2 -mavx512f -mavx512bw -mavx512vl -mavx512dq
    -mavx512vnni)
# The BF16 kernels (vdpbf16ps) are apart, in *_avx512bf16.cpp: AVX-512 CPUs without AVX512_BF16
# (Ice Lake, Tiger Lake, Cascade Lake) run the AVX-512 path with the AVX2 BF16 kernels.
set(EDGEINFER_AVX512BF16_FLAGS ${EDGEINFER_AVX512_FLAGS} -mavx512bf16)
set(EDGEINFER_NEON_FLAGS -march=armv8.2-a+dotprod+fp16)

# Drops the files of other architectures from LIST_VAR and sets per-file ISA flags on the rest.
function(edgeinfer_filter_isa_sources list_var)
  set(kept "")
  foreach(f ${${list_var}})
    if(f MATCHES "_(avx2|avx512|avx512bf16)\\.cpp$")
      if(NOT EDGEINFER_ARCH_X86)
        continue()
      endif()
      if(f MATCHES "_avx2\\.cpp$")
        set_source_files_properties(${f} PROPERTIES COMPILE_OPTIONS "${EDGEINFER_AVX2_FLAGS}")
      elseif(f MATCHES "_avx512bf16\\.cpp$")
        set_source_files_properties(${f} PROPERTIES COMPILE_OPTIONS "${EDGEINFER_AVX512BF16_FLAGS}")
      else()
        set_source_files_properties(${f} PROPERTIES COMPILE_OPTIONS "${EDGEINFER_AVX512_FLAGS}")
      endif()
    elseif(f MATCHES "_neon\\.cpp$")
      if(NOT EDGEINFER_ARCH_ARM64)
        continue()
      endif()
      set_source_files_properties(${f} PROPERTIES COMPILE_OPTIONS "${EDGEINFER_NEON_FLAGS}")
    endif()
    list(APPEND kept ${f})
  endforeach()
  set(${list_var} ${kept} PARENT_SCOPE)
endfunction()

if(EDGEINFER_ARCH_X86)
  add_compile_definitions(EDGEINFER_ARCH_X86=1)
elseif(EDGEINFER_ARCH_ARM64)
  add_compile_definitions(EDGEINFER_ARCH_ARM64=1)
endif()
