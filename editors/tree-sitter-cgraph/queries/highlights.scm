; Highlights for .cgraph files, with the capture names of Neovim and of
; the tree-sitter CLI; helix/highlights.scm is this file with Helix's.
; No node is captured by two patterns under different names: editors
; disagree on which of two such patterns wins (the first in Helix and the
; tree-sitter CLI, the last in Neovim), and tests/editors/ts_check.c fails
; on one.

(comment) @comment

(string) @string
(escape_sequence) @string.escape

(integer) @number
(float) @number.float

(primitive_type) @type.builtin

; Declarations
(kernel_declaration name: (identifier) @function)
(capture_declaration name: (identifier) @function)
(template_instance name: (identifier) @type)
(template_arguments) @type
(graph_definition name: (identifier) @type.definition)
(const_declaration name: (identifier) @constant)
(scalar_declaration name: (identifier) @variable)
(buffer_declaration name: (identifier) @variable)
(parameter name: (identifier) @variable.parameter)
(graph_variants variable: (identifier) @variable.parameter)
(for_statement variable: (identifier) @variable.parameter)
(node_statement name: (identifier) @label)
(while_statement name: (identifier) @label)
(if_statement name: (identifier) @label)
(switch_statement name: (identifier) @label)
(node_reference name: (identifier) @label)

; Calls
(call function: (identifier) @function.call)
(call function: (builtin_node) @function.builtin)
(call_expression function: (identifier) @function.builtin
  (#any-of? @function.builtin "cdiv" "min" "max"))
(call_expression function: (identifier) @function.call
  (#not-any-of? @function.call "cdiv" "min" "max"))
(launch key: (launch_key) @property)

; Names in expressions: constants by convention upper-case
([
  (argument_list (identifier) @constant)
  (shape (identifier) @constant)
  (parenthesized_expression (identifier) @constant)
  (unary_expression operand: (identifier) @constant)
  (binary_expression left: (identifier) @constant)
  (binary_expression right: (identifier) @constant)
  (index_expression index: (identifier) @constant)
  (slice_expression start: (identifier) @constant)
  (slice_expression end: (identifier) @constant)
  (comparison left: (identifier) @constant)
  (comparison right: (identifier) @constant)
  (const_declaration value: (identifier) @constant)
  (scalar_declaration value: (identifier) @constant)
  (buffer_declaration value: (identifier) @constant)
  (graph_variants value: (identifier) @constant)
  (for_statement start: (identifier) @constant)
  (for_statement end: (identifier) @constant)
  (while_statement max: (identifier) @constant)
  (scalar_declaration bound: (identifier) @constant)
  (switch_statement value: (identifier) @constant)
  (case_clause value: (identifier) @constant)
  (node_reference index: (identifier) @constant)
]
  (#match? @constant "^[A-Z][A-Z0-9_]*$"))

; Keywords
[
  "include"
  "const"
  "kernel"
  "capture"
  "graph"
  "buffer"
  "scalar"
  "node"
  "from"
  "symbol"
] @keyword

[
  (pdl)
  (explicit)
  (buffer_kind)
  (parameter_mode)
] @keyword.modifier

[
  "for"
  "in"
  "while"
] @keyword.repeat

[
  "if"
  "else"
  "switch"
  "case"
  "default"
] @keyword.conditional

(while_statement "max" @keyword)
(scalar_declaration "max" @keyword)

; Operators and punctuation
[
  "->"
  "=>"
  ".."
  "="
  "+"
  "-"
  "*"
  "/"
  "%"
  "=="
  "!="
  "<"
  "<="
  ">"
  ">="
  "&&"
  "||"
  "!"
] @operator

(arrow) @operator

["(" ")" "[" "]" "{" "}"] @punctuation.bracket

[";" "," ":"] @punctuation.delimiter
