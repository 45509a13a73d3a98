; Scopes and definitions: a graph's names are its own; a for loop's
; variable and a control node's body are scoped to their block.
[
  (source_file)
  (graph_definition)
  (block)
  (kernel_declaration)
  (capture_declaration)
] @local.scope

(const_declaration name: (identifier) @local.definition.constant)
(scalar_declaration name: (identifier) @local.definition.var)
(buffer_declaration name: (identifier) @local.definition.var)
(parameter name: (identifier) @local.definition.parameter)
(graph_variants variable: (identifier) @local.definition.var)
(for_statement variable: (identifier) @local.definition.var)
(node_statement name: (identifier) @local.definition)
(while_statement name: (identifier) @local.definition)
(if_statement name: (identifier) @local.definition)
(switch_statement name: (identifier) @local.definition)

(identifier) @local.reference
