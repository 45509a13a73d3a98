# DeepSeek-V2-Lite's weights: the checkpoint loader (dsv2_weights, host C),
# the device side (dsv2_weights_device: the loader's copies to the GPU and
# the random weights), and their tests.  Included by this directory's
# CMakeLists.txt; the guard lets anything else that needs the libraries
# include it too.
include_guard(GLOBAL)

set(dsv2_dir ${CMAKE_CURRENT_LIST_DIR})

add_library(dsv2_weights STATIC ${dsv2_dir}/weights.c ${dsv2_dir}/safetensors.c)
target_include_directories(dsv2_weights PUBLIC ${dsv2_dir})
target_link_libraries(dsv2_weights PRIVATE m)
# The random weights' formula rounds each operation on its own, as the
# device and reference.py do: no fused multiply-add.
target_compile_options(dsv2_weights PRIVATE -Wall -Wextra -pedantic -ffp-contract=off)
target_compile_definitions(dsv2_weights PRIVATE _GNU_SOURCE)

add_library(dsv2_weights_device STATIC ${dsv2_dir}/weights_cuda.c ${dsv2_dir}/weights_random.cu)
target_link_libraries(dsv2_weights_device PUBLIC dsv2_weights CUDA::cudart)
target_compile_options(dsv2_weights_device PRIVATE $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra -pedantic>)

add_executable(test_dsv2_weights ${dsv2_dir}/test_weights.c)
target_link_libraries(test_dsv2_weights PRIVATE dsv2_weights)
target_compile_options(test_dsv2_weights PRIVATE -Wall -Wextra)
add_test(NAME weights.loader
         COMMAND sh -c "rm -rf \"$1\" && mkdir -p \"$1\" && \"$0\" \"$1\""
                 $<TARGET_FILE:test_dsv2_weights> ${CMAKE_CURRENT_BINARY_DIR}/weights_loader)
set_tests_properties(weights.loader PROPERTIES LABELS "sample")

add_executable(test_dsv2_weights_device ${dsv2_dir}/test_weights_device.c)
target_link_libraries(test_dsv2_weights_device PRIVATE dsv2_weights_device)
target_compile_options(test_dsv2_weights_device PRIVATE -Wall -Wextra)
add_test(NAME gpu.weights_device
         COMMAND sh -c "rm -rf \"$1\" && mkdir -p \"$1\" && \"$0\" load \"$1\""
                 $<TARGET_FILE:test_dsv2_weights_device>
                 ${CMAKE_CURRENT_BINARY_DIR}/weights_device)
add_test(NAME gpu.weights_random COMMAND test_dsv2_weights_device random)
set_tests_properties(gpu.weights_device gpu.weights_random
                     PROPERTIES LABELS "gpu;sample" SKIP_RETURN_CODE 77)
# Runs where CUDA sees no GPU (skipped where it does), as runtime.no_gpu.
add_test(NAME weights.device_no_gpu COMMAND test_dsv2_weights_device no_gpu)
set_tests_properties(weights.device_no_gpu PROPERTIES LABELS "sample" SKIP_RETURN_CODE 77)

find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  # The random weights' formula in plain Python against the C one (no
  # torch needed); then reference.py's torch model, skipped without torch.
  add_test(NAME weights.formula
           COMMAND ${Python3_EXECUTABLE} ${dsv2_dir}/test_reference.py --formula
                   $<TARGET_FILE:test_dsv2_weights>)
  set_tests_properties(weights.formula PROPERTIES LABELS "sample")
  add_test(NAME weights.reference
           COMMAND ${Python3_EXECUTABLE} ${dsv2_dir}/test_reference.py
                   $<TARGET_FILE:test_dsv2_weights>)
  set_tests_properties(weights.reference PROPERTIES LABELS "sample" SKIP_RETURN_CODE 77)
endif()
