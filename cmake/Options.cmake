# Compiler settings shared by every target of ours.
#   skyslurm::warnings  our warnings; errors only with SKYSLURM_WERROR=ON (CI and
#                       scripts/build.sh), never forced on a user's or a
#                       distribution's build, whose compiler may warn where ours
#                       does not
#   skyslurm::sanitize  ASan+UBSan when SKYSLURM_SANITIZE=ON (nothing otherwise)
add_library(skyslurm_warnings INTERFACE)
add_library(skyslurm::warnings ALIAS skyslurm_warnings)
target_compile_options(skyslurm_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
  -Wcast-align -Wunused -Woverloaded-virtual -Wconversion -Wsign-conversion
  -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough
  # GCC 12 also warns on designated initializers that leave members at their
  # defaults, which is what they are for.
  -Wno-missing-field-initializers)
if(SKYSLURM_WERROR)
  target_compile_options(skyslurm_warnings INTERFACE -Werror)
endif()

add_library(skyslurm_sanitize INTERFACE)
add_library(skyslurm::sanitize ALIAS skyslurm_sanitize)
if(SKYSLURM_SANITIZE)
  set(_san -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  if(SKYSLURM_FUZZ)
    # Coverage for the fuzzers in everything they reach.
    list(APPEND _san -fsanitize=fuzzer-no-link)
  endif()
  target_compile_options(skyslurm_sanitize INTERFACE ${_san})
  target_link_options(skyslurm_sanitize INTERFACE ${_san})
endif()

# skyslurm_target(<target>): our warnings and, where asked for, sanitizers.
function(skyslurm_target target)
  target_link_libraries(${target} PRIVATE skyslurm::warnings skyslurm::sanitize)
endfunction()
