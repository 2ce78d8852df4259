# --- kport-plot on kport-sim records (issue 9): scaling study and winner map ----
# tests/data/sim/sweep-sim.jsonl: kport-sim runs recorded by scripts/sim_sweep.py;
# sweep-model-array.json: records of that shape (cost-model values) as one JSON
# array). tests/bench/check_plot.py checks every PNG kport-plot writes
# (signature, > 10 KB, >= 300 x 200, more than 40 colours) and that the named
# figures are among them; bad input exits 2 with a message naming the file
# and record, no traceback. Skipped (77) only without matplotlib. Drawn in
# the Open MPI build without sanitizers only (kport-plot needs no MPI).
if(Python3_Interpreter_FOUND)
  set(KPORT_SIM_DATA ${PROJECT_SOURCE_DIR}/tests/data/sim)
  set(KPORT_PLOT_CHECK_SIM ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/bench/check_plot.py
    ${PROJECT_SOURCE_DIR}/tools/kport-plot)
  if(KPORT_MPI_FLAVOR STREQUAL "openmpi" AND NOT KPORT_SANITIZE)
    add_test(NAME plot_sim COMMAND ${KPORT_PLOT_CHECK_SIM}
      --expect sim-allgather-8B-scaling,sim-allgather-4KiB-scaling,sim-allgather-winner
      --expect sim-barrier-scaling,sim-barrier-winner
      ${KPORT_SIM_DATA}/sweep-sim.jsonl)
    add_test(NAME plot_sim_array COMMAND ${KPORT_PLOT_CHECK_SIM}
      --expect sim-allgather-8B-scaling,sim-allgather-4KiB-scaling,sim-allgather-winner
      ${KPORT_SIM_DATA}/sweep-model-array.json)
    set_tests_properties(plot_sim plot_sim_array PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
  endif()
  add_test(NAME plot_sim_bad_field COMMAND ${KPORT_PLOT_CHECK_SIM}
    --bad "bad-sim-field.jsonl:2: kport-sim allgather record: \"P\" is \"16\", not a number"
    ${KPORT_SIM_DATA}/bad-sim-field.jsonl)
  add_test(NAME plot_sim_bad_array COMMAND ${KPORT_PLOT_CHECK_SIM}
    --bad "bad-sim-array.json: element 1: not a JSON object" ${KPORT_SIM_DATA}/bad-sim-array.json)
endif()
