#pragma once
// The closing summary of quantize and synth: tensors and bytes per type, and the type fallbacks
// taken (grouped, since a model repeats the same fallback in every layer).
#include <vector>

#include "quant/quantize_model.h"

namespace edgeinfer::cli {

void print_tensor_summary(const std::vector<QuantizedTensor>& tensors);

}  // namespace edgeinfer::cli
