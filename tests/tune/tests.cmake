# The tuning file (KPORT_TUNING_FILE, docs/TUNING.md) and kport-tune
# (tools/kport-tune); included from tests/CMakeLists.txt.
#   unit_tuning        the loader and matcher: a valid file, ranges, layout,
#                      first match wins, every malformed case (file, line, field)
#   tune_*             tests/tune/check_tune.py: kport-tune on a recorded
#                      kport-bench file (and --run: its own short sweep), then
#                      real runs with the file it wrote
kport_unit(unit_tuning ${CMAKE_CURRENT_LIST_DIR}/test_tuning.c)
add_executable(test_tuning_run ${CMAKE_CURRENT_LIST_DIR}/test_tuning_run.c)
target_link_libraries(test_tuning_run PRIVATE kport)
if(Python3_Interpreter_FOUND)
  # roundtrip: the issue's acceptance test (a file kport-tune writes changes what
  # kp_allgather runs, KPORT_VERBOSE=1 names the rule); P=3 needs Open MPI's
  # --oversubscribe (MPICH: P=2 only)
  set(KPORT_TUNE_PS 2)
  if(KPORT_MPI_FLAVOR STREQUAL "openmpi")
    list(APPEND KPORT_TUNE_PS 3)
  endif()
  function(kport_tune_test name case np)
    add_test(NAME ${name} COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/check_tune.py ${case}
      --tune ${PROJECT_SOURCE_DIR}/tools/kport-tune --run $<TARGET_FILE:test_tuning_run> --np ${np}
      --bench $<TARGET_FILE:kport-bench>
      --data ${PROJECT_SOURCE_DIR}/tests/data/tune/allgather-ompi-p2-p3.jsonl ${ARGN}
      -- ${KPORT_MPIEXEC} ${KPORT_MPIEXEC_FLAGS})
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "${KPORT_MPI_ENV}" TIMEOUT 300 PROCESSORS 2)
  endfunction()
  foreach(np ${KPORT_TUNE_PS})
    kport_tune_test(tune_roundtrip_p${np} roundtrip ${np})
  endforeach()
  list(GET KPORT_TUNE_PS -1 np)
  kport_tune_test(tune_fallthrough_p${np} fallthrough ${np})
  kport_tune_test(tune_malformed_p2 malformed 2)
  kport_tune_test(tune_forced_p2 forced 2)
  kport_tune_test(tune_tool_run_p2 run 2)
  if(TARGET kport-sim) # kport-tune --sim, with the simulator when it is built
    kport_tune_test(tune_tool_sim sim 2 --sim $<TARGET_FILE:kport-sim>)
  endif()
  # kport-tune's own errors: a file that is not kport-bench JSON
  add_test(NAME tune_tool_bad_input COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/kport-tune
    --from-bench ${PROJECT_SOURCE_DIR}/tests/data/bench/bad-text-output.txt)
  set_tests_properties(tune_tool_bad_input PROPERTIES PASS_REGULAR_EXPRESSION "bad-text-output.txt, line [0-9]+: not JSON")
endif()
