# Agreement of kport-sim with LogGOPSim (issue 9, item 2): every recorded case
# of tests/data/loggopsim (scripts/loggopsim_record.sh) within 1% per rank, and
# proof that the comparison fails on a recorded file perturbed by 2%.
if(TARGET kport-sim)
  add_test(NAME sim_agree_loggopsim
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/agree_loggopsim.sh $<TARGET_FILE:kport-sim>
                   ${CMAKE_CURRENT_LIST_DIR}/../data/loggopsim)
  add_test(NAME sim_agree_loggopsim_detects
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/agree_loggopsim.sh --perturb barrier_dissemination_P8_m0_a
                   $<TARGET_FILE:kport-sim> ${CMAKE_CURRENT_LIST_DIR}/../data/loggopsim)
  set_tests_properties(sim_agree_loggopsim_detects PROPERTIES PASS_REGULAR_EXPRESSION
                       "FAIL barrier_dissemination_P8_m0_a rank 0: loggopsim [0-9]+ ns, kport-sim [0-9]+ ns \\(-[12]\\.[0-9]+%\\).*1 disagree")
endif()
