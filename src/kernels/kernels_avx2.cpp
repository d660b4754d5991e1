// AVX2 kernel table. Entries not specialized here stay on the scalar reference.
#include "kernels/kernels.h"

namespace edgeinfer {

void fill_avx2_kernels(Kernels& k) { k.isa = Isa::Avx2; }

}  // namespace edgeinfer
