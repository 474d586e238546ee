// The end of a linear layer, fused into its kernel so that no separate pass over the output
// is needed: out = s (W x (+ bias)) (+ out). Include after the binding `y` (read-write), the
// push constants `p` and the specialization constant EPILOGUE, with LINEAR_BIAS_BINDING defined
// as the interface's bias binding. Its bits (linear_epilogue.h): EPILOGUE_BIAS adds bias[col]
// (read from that binding), EPILOGUE_SCALE multiplies the result by s = p.scale (Granite's
// residual and logit scales: no pass of their own), EPILOGUE_ACCUMULATE adds what y already holds
// (a residual connection accumulated in place: each element is read and written by the
// invocation that computes it).
layout(binding = LINEAR_BIAS_BINDING) readonly buffer Bias { float bias[]; };

void store(uint idx, uint col, float v) {
    if ((EPILOGUE & EPILOGUE_BIAS) != 0u) v += bias[col];
    if ((EPILOGUE & EPILOGUE_SCALE) != 0u) v *= p.scale;
    if ((EPILOGUE & EPILOGUE_ACCUMULATE) != 0u) v += y[idx];
    y[idx] = v;
}
