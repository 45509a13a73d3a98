/* cgrt_kinds.c: what the runtime knows of each kind of node.  ORDER
 * cgrt_node_kind (cgrt_abi.h): a new kind gets its row here, and
 * NODE_KINDS (cgrt_internal.h) follows the last kind; until it has a row,
 * check_desc refuses nodes of that kind. */
#include "cgrt_internal.h"

const NodeKindInfo cgrt_node_kinds[NODE_KINDS] = {
    [CGRT_KERNEL_NODE] = {"kernel", ADD_PARAMS, .runs_kernel = 1, .device_updatable = 1},
    [CGRT_COPY_NODE] = {"copy", ADD_PARAMS},
    [CGRT_FILL_NODE] = {"fill", ADD_PARAMS},
    [CGRT_WHILE_NODE] = {"while", ADD_CONTROL, cudaGraphCondTypeWhile, .repeats = 1},
    [CGRT_IF_NODE] = {"if", ADD_CONTROL, cudaGraphCondTypeIf},
    [CGRT_SWITCH_NODE] = {"switch", ADD_CONTROL, cudaGraphCondTypeSwitch, .cases = 1},
    [CGRT_CAPTURE_NODE] = {"capture", ADD_CAPTURE, .captured = CAPTURE_FUNCTION},
    [CGRT_COLLECTIVE_NODE] = {"collective", ADD_CAPTURE, .captured = CAPTURE_COLLECTIVE},
};
