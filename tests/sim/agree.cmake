# Agreement of kport-sim with LogGOPSim (issue 9, item 2): every recorded case
# of tests/data/loggopsim (scripts/loggopsim_record.sh) within 1% per rank, and
# proof that the comparison fails on a recorded file perturbed by 2%; with
# --loggopsim-zero-bytes (LogGOPSim's unsigned (s-1) for 0-byte messages)
# every rank of every case to the nanosecond.
if(TARGET kport-sim)
  add_test(NAME sim_agree_loggopsim
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/agree_loggopsim.sh $<TARGET_FILE:kport-sim>
                   ${CMAKE_CURRENT_LIST_DIR}/../data/loggopsim)
  add_test(NAME sim_agree_loggopsim_detects
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/agree_loggopsim.sh --perturb barrier_dissemination_P8_m0_a
                   $<TARGET_FILE:kport-sim> ${CMAKE_CURRENT_LIST_DIR}/../data/loggopsim)
  set_tests_properties(sim_agree_loggopsim_detects PROPERTIES PASS_REGULAR_EXPRESSION
                       "FAIL barrier_dissemination_P8_m0_a rank 0: loggopsim [0-9]+ ns, kport-sim [0-9]+ ns \\(-[12]\\.[0-9]+%\\).*1 disagree")
  add_test(NAME sim_agree_loggopsim_exact
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/agree_loggopsim.sh --sim-arg --loggopsim-zero-bytes
                   $<TARGET_FILE:kport-sim> ${CMAKE_CURRENT_LIST_DIR}/../data/loggopsim)
  set_tests_properties(sim_agree_loggopsim_exact PROPERTIES PASS_REGULAR_EXPRESSION
                       "compared, 0 disagree; largest difference 0\\.0000%")
endif()
