// AVX-512 kernel table. Entries not specialized here stay on the scalar reference.
#include "kernels/kernels.h"

namespace edgeinfer {

void fill_avx512_kernels(Kernels& k) { k.isa = Isa::Avx512; }

}  // namespace edgeinfer
