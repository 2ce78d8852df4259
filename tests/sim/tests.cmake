# kport-sim (issue 9): the engine on hand-computed LogGP cases, determinism,
# the node layout (test_sim.c); the command line: JSON validity, determinism,
# per-rank output, a closed-form barrier at P = 65536, bad input (cli.sh).
if(TARGET kport-sim)
  add_executable(test_sim ${CMAKE_CURRENT_LIST_DIR}/test_sim.c)
  target_link_libraries(test_sim PRIVATE kport_sim)
  add_test(NAME sim_unit COMMAND test_sim)
  add_test(NAME sim_cli COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cli.sh $<TARGET_FILE:kport-sim>)
endif()
