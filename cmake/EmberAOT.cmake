# ember_aot_module(NAME <target> SOURCE <file.py> FUNCTION <fn> ARGS <type>... [STATIC <name=value>...]
#                  [TARGET cpu|cuda|vulkan|rocm[:arch]])
#
# Compiles a Python function with `ember-compile` into ${CMAKE_CURRENT_BINARY_DIR}/<NAME>.vmfb
# as part of the build (rebuilt when SOURCE changes). Adds a target <NAME> whose EMBER_VMFB
# property holds the path, for install() or for tests that run the module.
#
# Finds ember-compile on PATH, in $VIRTUAL_ENV, or in EMBER_ROOT/.venv (set EMBER_COMPILE to
# override).
include_guard(GLOBAL)

set(EMBER_ROOT "${CMAKE_CURRENT_LIST_DIR}/.." CACHE PATH "Ember's source tree")
find_program(EMBER_COMPILE ember-compile
             HINTS "$ENV{VIRTUAL_ENV}/bin" "${EMBER_ROOT}/.venv/bin"
             DOC "Ember's ahead-of-time compiler")

function(ember_aot_module)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "NAME;SOURCE;FUNCTION;TARGET" "ARGS;STATIC")
  foreach(required NAME SOURCE FUNCTION)
    if(NOT ARG_${required})
      message(FATAL_ERROR "ember_aot_module requires ${required}")
    endif()
  endforeach()
  if(NOT EMBER_COMPILE)
    message(FATAL_ERROR "ember_aot_module(${ARG_NAME}) needs ember-compile: install Ember "
                        "(pip install -e <ember>) or set EMBER_COMPILE")
  endif()
  if(NOT ARG_TARGET)
    set(ARG_TARGET cpu)
  endif()
  get_filename_component(source "${ARG_SOURCE}" ABSOLUTE)
  set(output "${CMAKE_CURRENT_BINARY_DIR}/${ARG_NAME}.vmfb")
  set(command "${EMBER_COMPILE}" "${source}:${ARG_FUNCTION}" --target "${ARG_TARGET}"
              -o "${output}")
  foreach(arg IN LISTS ARG_ARGS)
    list(APPEND command --arg "${arg}")
  endforeach()
  foreach(static IN LISTS ARG_STATIC)
    list(APPEND command --static "${static}")
  endforeach()
  add_custom_command(OUTPUT "${output}" COMMAND ${command} DEPENDS "${source}"
                     COMMENT "ember-compile ${ARG_FUNCTION} -> ${ARG_NAME}.vmfb (${ARG_TARGET})"
                     VERBATIM)
  add_custom_target(${ARG_NAME} ALL DEPENDS "${output}")
  set_target_properties(${ARG_NAME} PROPERTIES EMBER_VMFB "${output}")
endfunction()
