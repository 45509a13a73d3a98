/**
 * @file Tree-sitter grammar for cgc's .cgraph files (CUDA graphs).
 *
 * It follows grammar/cgraph.l and grammar/cgraph.y, which define what cgc
 * accepts (doc/language.md, section 21, writes them out).  Where the
 * compiler's scanner depends on context, so does this grammar: the text
 * between a template's `<` and `>` (kernel K = T<ARGS>(...)) is C++, read
 * as a balanced run of words and punctuation.
 */

/// <reference types="tree-sitter-cli/dsl" />
// @ts-check

const PREC = {
  or: 1, // ||
  and: 2, // &&
  not: 3, // ! (conditions)
  compare: 4,
  add: 5, // + -
  mul: 6, // * / %
  neg: 7, // unary -
  index: 8, // [ ]
};

const commaSep1 = (rule) => seq(rule, repeat(seq(',', rule)));
const commaSep = (rule) => optional(commaSep1(rule));

module.exports = grammar({
  name: 'cgraph',

  word: ($) => $.identifier,

  extras: ($) => [/\s/, $.comment],

  supertypes: ($) => [$._item, $._statement, $._expression, $._condition],

  rules: {
    source_file: ($) => repeat($._item),

    _item: ($) => choice(
      $.include_directive,
      $.const_declaration,
      $.kernel_declaration,
      $.capture_declaration,
      $.graph_definition,
    ),

    include_directive: ($) => seq('include', field('path', $.string), ';'),

    const_declaration: ($) => seq(
      'const', field('name', $.identifier), '=', field('value', $._expression), ';'),

    // kernel K(params) from "M" symbol "S";
    // kernel K = T<ARGS>(params) from "H";
    kernel_declaration: ($) => seq(
      optional($.pdl),
      'kernel',
      field('name', $.identifier),
      optional(seq('=', field('template', $.template_instance))),
      field('parameters', $.parameter_list),
      repeat($._source),
      ';',
    ),

    pdl: (_) => 'pdl',

    template_instance: ($) => seq(
      field('name', $.identifier),
      field('arguments', $.template_arguments),
    ),

    // C++ template arguments, balanced as cgc's scanner balances them: `<`
    // and `>` nest outside parentheses, and anything goes inside them.
    template_arguments: ($) => seq('<', repeat($._template_argument), '>'),

    _template_argument: ($) => choice(
      $._template_token,
      seq('<', repeat($._template_argument), '>'),
      seq('(', repeat($._template_parenthesized), ')'),
    ),

    _template_parenthesized: ($) => choice(
      $._template_token,
      '<',
      '>',
      seq('(', repeat($._template_parenthesized), ')'),
    ),

    _template_token: (_) => token(choice(/[A-Za-z0-9_]+/, /[-+*/%=&|^!~:.?,\[\]]/)),

    capture_declaration: ($) => seq(
      'capture',
      field('name', $.identifier),
      field('parameters', $.parameter_list),
      repeat($._source),
      ';',
    ),

    _source: ($) => choice($.from_clause, $.symbol_clause),

    from_clause: ($) => seq('from', field('path', $.string)),

    symbol_clause: ($) => seq('symbol', field('symbol', $.string)),

    parameter_list: ($) => seq('(', commaSep($.parameter), ')'),

    parameter: ($) => seq(
      optional(field('mode', $.parameter_mode)),
      field('name', $.identifier),
      ':',
      field('type', $.primitive_type),
      optional(field('pointer', '*')),
    ),

    parameter_mode: (_) => choice('in', 'out', 'inout'),

    primitive_type: (_) => choice(
      'i8', 'i16', 'i32', 'i64', 'u8', 'u16', 'u32', 'u64', 'f16', 'bf16', 'f32', 'f64',
      'handle'), // handle: a kernel parameter's only (cgc refuses it elsewhere)

    // graph NAME { ... } and graph NAME for VAR in [values] { ... }
    graph_definition: ($) => seq(
      optional($.explicit),
      'graph',
      field('name', $.identifier),
      optional(field('variants', $.graph_variants)),
      field('body', $.block),
    ),

    explicit: (_) => 'explicit',

    graph_variants: ($) => seq(
      'for',
      field('variable', $.identifier),
      'in',
      '[',
      commaSep1(field('value', $._expression)),
      ']',
    ),

    block: ($) => seq('{', repeat($._statement), '}'),

    _statement: ($) => choice(
      $.const_declaration,
      $.scalar_declaration,
      $.buffer_declaration,
      $.node_statement,
      $.edge_statement,
      $.for_statement,
      $.while_statement,
      $.if_statement,
      $.switch_statement,
    ),

    scalar_declaration: ($) => seq(
      'scalar',
      field('name', $.identifier),
      ':',
      field('type', $.primitive_type),
      optional(seq('max', field('bound', $._expression))),
      optional(seq('=', field('value', $._expression))),
      ';',
    ),

    buffer_declaration: ($) => seq(
      optional(field('kind', $.buffer_kind)),
      'buffer',
      field('name', $.identifier),
      ':',
      field('type', $.primitive_type),
      field('shape', $.shape),
      optional(seq('=', field('value', $._expression))),
      ';',
    ),

    buffer_kind: (_) => choice('extern', 'host', seq('extern', 'host')),

    shape: ($) => seq('[', commaSep1($._expression), ']'),

    // [node NAME =] call launch... ;
    node_statement: ($) => seq(
      optional($._node_name),
      field('call', $.call),
      repeat(field('launch', $.launch)),
      ';',
    ),

    _node_name: ($) => seq('node', field('name', $.identifier), '='),

    call: ($) => seq(
      field('function', choice($.identifier, $.builtin_node)),
      field('arguments', $.argument_list),
    ),

    builtin_node: (_) => choice('copy', 'fill'),

    launch: ($) => seq(
      field('key', $.launch_key),
      field('arguments', $.argument_list),
    ),

    launch_key: (_) => choice('grid', 'block', 'smem', 'cluster', 'priority'),

    argument_list: ($) => seq('(', commaSep($._expression), ')'),

    // a -> {b, c} => d;
    edge_statement: ($) => seq(
      $._edge_group,
      repeat1(seq(field('arrow', $.arrow), $._edge_group)),
      ';',
    ),

    arrow: (_) => choice('->', '=>'),

    _edge_group: ($) => choice($.node_reference, $.node_group),

    node_group: ($) => seq('{', commaSep1($.node_reference), '}'),

    node_reference: ($) => seq(
      field('name', $.identifier),
      repeat(seq('[', field('index', $._expression), ']')),
    ),

    for_statement: ($) => seq(
      'for',
      field('variable', $.identifier),
      'in',
      field('start', $._expression),
      '..',
      field('end', $._expression),
      field('body', $.block),
    ),

    while_statement: ($) => seq(
      optional($._node_name),
      'while',
      field('condition', $._condition),
      optional(seq('max', field('max', $._expression))),
      field('body', $.block),
    ),

    if_statement: ($) => seq(optional($._node_name), $._if),

    _if: ($) => seq(
      'if',
      field('condition', $._condition),
      field('body', $.block),
      optional(field('alternative', $.else_clause)),
    ),

    // `else if`: the else's body is the if, as in `else { if ... }`.
    else_clause: ($) => seq('else', field('body', choice($.block, alias($._if, $.if_statement)))),

    switch_statement: ($) => seq(
      optional($._node_name),
      'switch',
      field('value', $._expression),
      field('body', $.switch_body),
    ),

    switch_body: ($) => seq('{', repeat(choice($.case_clause, $.default_clause)), '}'),

    case_clause: ($) => seq('case', field('value', $._expression), field('body', $.block)),

    default_clause: ($) => seq('default', field('body', $.block)),

    _condition: ($) => choice(
      $.comparison,
      $.logical_condition,
      $.not_condition,
      $.parenthesized_condition,
    ),

    comparison: ($) => prec(PREC.compare, seq(
      field('left', $._expression),
      field('operator', choice('==', '!=', '<', '<=', '>', '>=')),
      field('right', $._expression),
    )),

    logical_condition: ($) => choice(
      prec.left(PREC.and, seq(
        field('left', $._condition), field('operator', '&&'), field('right', $._condition))),
      prec.left(PREC.or, seq(
        field('left', $._condition), field('operator', '||'), field('right', $._condition))),
    ),

    not_condition: ($) => prec(PREC.not, seq('!', field('operand', $._condition))),

    parenthesized_condition: ($) => seq('(', $._condition, ')'),

    _expression: ($) => choice(
      $.integer,
      $.float,
      $.identifier,
      alias('max', $.identifier), // all_reduce(x, max)
      $.call_expression,
      $.parenthesized_expression,
      $.index_expression,
      $.slice_expression,
      $.unary_expression,
      $.binary_expression,
    ),

    call_expression: ($) => seq(
      field('function', choice($.identifier, alias('max', $.identifier))),
      field('arguments', $.argument_list),
    ),

    parenthesized_expression: ($) => seq('(', $._expression, ')'),

    index_expression: ($) => prec(PREC.index, seq(
      field('value', $._expression), '[', field('index', $._expression), ']')),

    // a view: x[lo:hi]
    slice_expression: ($) => prec(PREC.index, seq(
      field('value', $._expression),
      '[', field('start', $._expression), ':', field('end', $._expression), ']')),

    unary_expression: ($) => prec(PREC.neg, seq(
      field('operator', '-'), field('operand', $._expression))),

    binary_expression: ($) => choice(
      ...[['+', PREC.add], ['-', PREC.add], ['*', PREC.mul], ['/', PREC.mul], ['%', PREC.mul]]
        .map(([op, p]) => prec.left(p, seq(
          field('left', $._expression),
          // @ts-ignore
          field('operator', op),
          field('right', $._expression)))),
    ),

    identifier: (_) => /[A-Za-z_][A-Za-z0-9_]*/,

    // 4096, 0xff, 16K, 1M, 1G
    integer: (_) => token(seq(choice(/[0-9]+/, /0[xX][0-9a-fA-F]+/), optional(/[KMG]/))),

    // 1.5, 2.0e3, 1e-6
    float: (_) => token(choice(
      /[0-9]+\.[0-9]+([eE][+-]?[0-9]+)?/,
      /[0-9]+[eE][+-]?[0-9]+/,
    )),

    string: ($) => seq(
      '"',
      repeat(choice($._string_content, $.escape_sequence)),
      token.immediate('"'),
    ),

    _string_content: (_) => token.immediate(prec(1, /[^"\\\r\n]+/)),

    escape_sequence: (_) => token.immediate(seq('\\', choice(
      /x[0-9a-fA-F]{1,2}/,
      /[^x\r\n]/,
    ))),

    comment: (_) => token(choice(
      seq('//', /[^\r\n]*/),
      seq('/*', /[^*]*\*+([^/*][^*]*\*+)*/, '/'),
    )),
  },
});
