; Folds: graph bodies, control flow bodies, long parameter lists, comments.
[
  (block)
  (switch_body)
  (parameter_list)
  (comment)
] @fold
