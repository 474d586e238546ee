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
     : (wtype) == 2u ? uintBitsToFloat((buf[(e) >> 1u] << ((~(e) & 1u) << 4u)) & 0xffff0000u) \
                     : LOAD_Q8_0(buf, e))

// Q8_0 (wtype 3): block b = e / 32 of 34 bytes at byte 34 b: an F16 scale (always at an even
// byte, so within one word), then 32 int8. Byte o of the buffer, sign-extended for the quant.
#define BYTE_AT(buf, o) ((buf[(o) >> 2u] >> (((o) & 3u) << 3u)) & 0xffu)
#define LOAD_Q8_0(buf, e)                                                                  \
    (float(int(BYTE_AT(buf, ((e) >> 5u) * 34u + 2u + ((e) & 31u)) << 24u) >> 24) *         \
     unpackHalf2x16(buf[(((e) >> 5u) * 34u) >> 2u] >> (((((e) >> 5u) * 34u) & 2u) << 3u)).x)
