" .cgraph files are cgc's CUDA graph descriptions.
autocmd BufNewFile,BufRead *.cgraph setfiletype cgraph
