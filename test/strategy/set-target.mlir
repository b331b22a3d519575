// RUN: mha-opt %s --mha-set-target=cpu=haswell | FileCheck %s --check-prefix=HASWELL
// RUN: mha-opt %s --mha-set-target=cpu=znver4 | FileCheck %s --check-prefix=ZNVER4
// RUN: mha-opt %s --mha-set-target=cpu=sapphirerapids | FileCheck %s --check-prefix=SPR
// RUN: mha-opt %s --mha-set-target | FileCheck %s --check-prefix=HOST
// RUN: mha-opt %s --mha-set-target=cpu=haswell --mha-set-target=cpu=znver4 | FileCheck %s --check-prefix=HASWELL
// RUN: %expect-exit 2 mha-opt %s --mha-set-target=cpu=pentium9 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// mha-set-target writes the named CPU's features as the vendors document
// them (Haswell: AVX2 and FMA, no AVX-512; Zen 4: AVX-512 with BF16, no
// AMX; Sapphire Rapids: AVX-512 with BF16 and AMX), the registers they
// give, and the caches of the CPU's family (Haswell 32 KiB / 256 KiB per
// core, Zen 4 32 KiB / 1 MiB, Sapphire Rapids 48 KiB / 2 MiB). A module that
// has a target keeps it.
// HASWELL: module attributes {mha.target = #mha.target<cpu = "haswell", features = ["avx2", "fma"], vector_bits = 256, vector_registers = 16, l1_bytes = 32768, l2_bytes = 262144, l3_bytes = 0, cores = 0>}
// ZNVER4: module attributes {mha.target = #mha.target<cpu = "znver4", features = ["avx2", "fma", "avx512f", "avx512bf16"], vector_bits = 512, vector_registers = 32, l1_bytes = 32768, l2_bytes = 1048576, l3_bytes = 0, cores = 0>}
// SPR: module attributes {mha.target = #mha.target<cpu = "sapphirerapids", features = ["avx2", "fma", "avx512f", "avx512bf16", "amx-tile", "amx-bf16"], vector_bits = 512, vector_registers = 32, l1_bytes = 49152, l2_bytes = 2097152, l3_bytes = 0, cores = 0>}
// The machine the test runs on: whatever it is, a target that verifies.
// HOST: module attributes {mha.target = #mha.target<cpu = "{{[a-z0-9-]*}}", features = [{{.*}}], vector_bits = {{128|256|512}}, vector_registers = {{16|32}}, l1_bytes = {{[0-9]+}}, l2_bytes = {{[0-9]+}}, l3_bytes = {{[0-9]+}}, cores = {{[0-9]+}}>}
// UNKNOWN: error: mha-set-target: unknown CPU 'pentium9'
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
