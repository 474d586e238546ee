// Shared by every kernel.

// Dispatches of more than maxComputeWorkGroupCount[0] workgroups use a 2D grid; this is the
// workgroup's position in the flattened 1D order.
uint flat_group() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }
