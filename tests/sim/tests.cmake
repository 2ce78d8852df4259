# kport-sim (issue 9): the engine on hand-computed LogGP cases, determinism,
# the node layout (test_sim.c); the command line: JSON validity, determinism,
# per-rank output, a closed-form barrier at P = 65536, bad input (cli.sh).
if(TARGET kport-sim)
  add_executable(test_sim ${CMAKE_CURRENT_LIST_DIR}/test_sim.c)
  target_link_libraries(test_sim PRIVATE kport_sim)
  add_test(NAME sim_unit COMMAND test_sim)
  add_test(NAME sim_cli COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cli.sh $<TARGET_FILE:kport-sim>)
  # one timing engine (issue 36): the cost model and kport-sim give the same time, rank by rank,
  # under the same rules (both rule sets), over every algorithm, P, node layouts, sizes, three machines
  add_executable(test_equal ${CMAKE_CURRENT_LIST_DIR}/test_equal.c)
  target_link_libraries(test_equal PRIVATE kport_sim)
  add_test(NAME sim_model_equal COMMAND test_equal ${PROJECT_SOURCE_DIR}/docs/bench/allgather-p2)
  # the combine of reductions (issue 37): hand-built reduce and recursive-doubling allreduce
  # schedules priced by the model and the LogGOPSim rules against hand formulas, the combine's
  # classes, its GOAL calc, and LogGOPSim's own recorded times (tests/sim/record_reduce.sh)
  add_executable(test_reduce ${CMAKE_CURRENT_LIST_DIR}/test_reduce.c)
  target_link_libraries(test_reduce PRIVATE kport_sim)
  add_test(NAME sim_reduce COMMAND test_reduce ${PROJECT_SOURCE_DIR}/tests/data/loggopsim_hand/reduce.txt)
  add_test(NAME sim_reduce_detects COMMAND test_reduce --perturb ${PROJECT_SOURCE_DIR}/tests/data/loggopsim_hand/reduce.txt)
  set_tests_properties(sim_reduce_detects PROPERTIES PASS_REGULAR_EXPRESSION
                       "FAIL [^\n]*LogGOPSim reduce2 m=8 set a rank 0: 2624 ns, kport 2623\\.000 ns.*, 68 failed")
  # the six collectives of issue 37 at 2^16 and 65,536 ranks, allreduce recursive doubling against
  # its closed form (tests/sim/million.sh). The million-rank run (2^20 and 10^6, the script's
  # default: 24 s here) is a benchmark, not a test: bash tests/sim/million.sh build/ompi/kport-sim
  if(KPORT_SANITIZE) # the sanitizers' code paths at 4,096 ranks (65,536: 26 s under ASan)
    add_test(NAME sim_million COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/million.sh $<TARGET_FILE:kport-sim> 12 4096)
  else()
    add_test(NAME sim_million COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/million.sh $<TARGET_FILE:kport-sim> 16 65536)
  endif()
  set_tests_properties(sim_million PROPERTIES TIMEOUT 1200 PASS_REGULAR_EXPRESSION "all 6 collectives ran")
endif()
# predict_report.py's text and --json outputs agree on a recorded make bench
# run, kport-sim's table included (the bar of issue 9 is read from them)
if(TARGET kport-sim AND Python3_Interpreter_FOUND)
  add_test(NAME sim_predict_report COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/bench/check_predict_report.py
    ${PROJECT_SOURCE_DIR}/scripts/predict_report.py $<TARGET_FILE:kport-sim>
    ${PROJECT_SOURCE_DIR}/docs/bench/allgather-p2)
endif()
# kport-bench loggp measures the combine of reductions and writes compute.reduce (issue 37)
if(TEST bench_loggp_p2 AND Python3_Interpreter_FOUND)
  add_test(NAME bench_loggp_params_reduce COMMAND ${Python3_EXECUTABLE}
    ${CMAKE_CURRENT_LIST_DIR}/check_params_reduce.py ${KPORT_BENCH_PARAMS})
  set_tests_properties(bench_loggp_params_reduce PROPERTIES FIXTURES_REQUIRED kport_params_file)
endif()
