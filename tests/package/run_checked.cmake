# run(COMMAND ARGS...) for the package tests' scripts (cmake -P): runs the command; when it
# fails, the test stops with the command, its status and its output, named by `run_what`. Its
# standard output is left in `run_output` in the caller's scope, and shown as a status line
# when `run_echo` is set.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(JOIN " " cmd ${ARGN})
    message(FATAL_ERROR "${run_what}: '${cmd}' failed (${rc}):\n${out}\n${err}")
  endif()
  if(run_echo)
    message(STATUS "${out}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()
