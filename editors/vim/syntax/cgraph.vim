" Vim syntax file
" Language: cgraph (cgc's description of CUDA graphs)
" Install: copy editors/vim/syntax and editors/vim/ftdetect into ~/.vim/

if exists("b:current_syntax")
  finish
endif

syn keyword cgraphDeclaration const kernel capture graph buffer scalar node
syn keyword cgraphModifier extern host explicit pdl in out inout
syn keyword cgraphControl for while if else switch case default max
syn keyword cgraphInclude include from symbol
syn keyword cgraphBuiltin copy fill cdiv min
syn keyword cgraphLaunch grid block smem cluster priority
syn keyword cgraphType i8 i16 i32 i64 u8 u16 u32 u64 f16 bf16 f32 f64 handle

syn match cgraphNumber "\<\d\+[KMG]\=\>"
syn match cgraphNumber "\<0[xX]\x\+[KMG]\=\>"
syn match cgraphFloat "\<\d\+\.\d\+\([eE][+-]\=\d\+\)\=\>"
syn match cgraphFloat "\<\d\+[eE][+-]\=\d\+\>"
syn match cgraphEdge "->\|=>"
syn match cgraphRange "\.\."

syn region cgraphString start=+"+ skip=+\\\\\|\\"+ end=+"+ contains=cgraphEscape oneline
syn match cgraphEscape contained "\\\(x\x\{1,2}\|[ntr\\"']\)"

syn keyword cgraphTodo contained TODO FIXME XXX
syn match cgraphLineComment "//.*$" contains=cgraphTodo
syn region cgraphBlockComment start="/\*" end="\*/" contains=cgraphTodo

hi def link cgraphDeclaration Keyword
hi def link cgraphModifier StorageClass
hi def link cgraphControl Conditional
hi def link cgraphInclude Include
hi def link cgraphBuiltin Function
hi def link cgraphLaunch Keyword
hi def link cgraphType Type
hi def link cgraphNumber Number
hi def link cgraphFloat Float
hi def link cgraphEdge Operator
hi def link cgraphRange Operator
hi def link cgraphString String
hi def link cgraphEscape SpecialChar
hi def link cgraphTodo Todo
hi def link cgraphLineComment Comment
hi def link cgraphBlockComment Comment

let b:current_syntax = "cgraph"
