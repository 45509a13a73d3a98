// Not the header of template_subdir.cgraph's kernel, though it has its name.
#error "the companion of template_subdir.cgraph includes the wrong scale.cuh"
