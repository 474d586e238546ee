// Shared by every kernel.

// Dispatches of more than maxComputeWorkGroupCount[0] workgroups use a 2D grid; this is the
// workgroup's position in the flattened 1D order.
uint flat_group() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }

// Weight element e of a buffer declared `uint name[]`, stored as F32 (wtype 0), F16 (wtype 1,
// two per word, low half first) or BF16 (wtype 2, the upper 16 bits of an F32, two per word,
// low half first). Weights are read as words so that no 16-bit storage feature is needed; the
// specialization constant folds the branches away.
#define LOAD_WEIGHT(buf, wtype, e)                                              \
    ((wtype) == 0u   ? uintBitsToFloat(buf[(e)])                                \
     : (wtype) == 1u ? unpackHalf2x16(buf[(e) >> 1u])[(e) & 1u]                 \
                     : uintBitsToFloat((buf[(e) >> 1u] << ((~(e) & 1u) << 4u)) & 0xffff0000u))
