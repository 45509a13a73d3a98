# Helix's names for the captures of ../highlights.scm (the others are the
# same in Helix):  sed -f names.sed ../highlights.scm > highlights.scm
1i\
; Made from ../highlights.scm by names.sed, with Helix's capture names:\
; edit that file, then run: sed -f names.sed ../highlights.scm > highlights.scm\

s/@string\.escape\b/@constant.character.escape/g
s/@number\.float\b/@constant.numeric.float/g
s/@number\b/@constant.numeric.integer/g
s/@function\.call\b/@function/g
s/@type\.definition\b/@type/g
s/@property\b/@variable.other.member/g
s/@keyword\.modifier\b/@keyword.storage.modifier/g
s/@keyword\.repeat\b/@keyword.control.repeat/g
s/@keyword\.conditional\b/@keyword.control.conditional/g
