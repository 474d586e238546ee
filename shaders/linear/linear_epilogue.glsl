// The end of a linear layer, fused into its kernel so that no separate pass over the output
// is needed: out = s (W x (+ bias)) (+ out). Include after the binding `y` (read-write), the
// push constants `p` and the specialization constant EPILOGUE, with LINEAR_BIAS_BINDING defined
// as the interface's bias binding: bit 0 adds bias[col] (read from that binding), bit 2
// multiplies the result by s = p.scale (Granite's residual and logit scales: no pass of their
// own), bit 1 adds what y already holds (a residual connection accumulated in place: each
// element is read and written by the invocation that computes it).
layout(binding = LINEAR_BIAS_BINDING) readonly buffer Bias { float bias[]; };

void store(uint idx, uint col, float v) {
    if ((EPILOGUE & 1u) != 0u) v += bias[col];
    if ((EPILOGUE & 4u) != 0u) v *= p.scale;
    if ((EPILOGUE & 2u) != 0u) v += y[idx];
    y[idx] = v;
}
