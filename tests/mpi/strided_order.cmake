# The strided API's one-sided promises (issue 35; tests/mpi/test_strided_order.c):
# the pack agent serves every window from a call on any window (--cross), one
# origin's operations to one target take effect in issue order across methods
# and blocking / nonblocking calls (--order), windows of 8 mod 16 bytes (--sizes,
# MPICH's MPI_Win_allocate misplaced them), and windows MPI refuses (--refused:
# Open MPI's osc/pt2pt cannot make shared windows, with every osc component
# excluded nothing can). Every byte is checked; a regression would hang, so
# each test has a TIMEOUT of 120 s (the program's own watchdog fires at 100;
# a normal run takes 1-25 s, the longest on a loaded machine).
add_executable(test_strided_order ${CMAKE_CURRENT_LIST_DIR}/test_strided_order.c)
target_link_libraries(test_strided_order PRIVATE kport)
function(kport_strided_order_test name np env)
  kport_mpi_test(${name} ${np} ${ARGN})
  get_test_property(${name} ENVIRONMENT envs)
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${envs};${env}" TIMEOUT 120)
endfunction()
if(KPORT_SANITIZE)
  # the registry of live windows, the helper threads' mutexes and the
  # refused set-up's clean-up are what the sanitizers look at
  kport_strided_order_test(mpi_strided_order_p2 2 "" $<TARGET_FILE:test_strided_order> --cross --order --methods direct,pack)
  kport_strided_order_test(mpi_strided_order_thread_p2 2 "" $<TARGET_FILE:test_strided_order> --thread)
else()
  set(np_list 2)
  if(KPORT_MPI_FLAVOR STREQUAL "openmpi")
    list(APPEND np_list 4)
  endif()
  foreach(np ${np_list})
    # kport's shared window (load/store direct) and MPI_Win_allocate's
    kport_strided_order_test(mpi_strided_order_p${np} ${np} "" $<TARGET_FILE:test_strided_order>)
    kport_strided_order_test(mpi_strided_order_mpiwin_p${np} ${np} "KPORT_STRIDED_SHARED=0"
      $<TARGET_FILE:test_strided_order>)
  endforeach()
  kport_strided_order_test(mpi_strided_order_thread_p2 2 "" $<TARGET_FILE:test_strided_order> --thread)
endif()
if(KPORT_MPI_FLAVOR STREQUAL "openmpi")
  # osc/pt2pt refuses MPI_Win_allocate_shared: kp_win_create falls back to
  # MPI_Win_allocate, every method's puts, gets and accumulates checked
  # (osc/pt2pt is slow: auto, which runs one of the three, is left out)
  set(pt2pt_methods direct,datatype,pack)
  if(KPORT_SANITIZE)
    set(pt2pt_methods direct,pack)
  endif()
  kport_strided_order_test(mpi_strided_refused_pt2pt_p2 2 "KPORT_VERBOSE=1" --mca osc pt2pt
    $<TARGET_FILE:test_strided_order> --refused fallback --methods ${pt2pt_methods})
  set_tests_properties(mpi_strided_refused_pt2pt_p2 PROPERTIES PASS_REGULAR_EXPRESSION
    "refused MPI_Win_allocate_shared.*passed, 0 failed" FAIL_REGULAR_EXPRESSION "FAIL")
  # no osc component at all: KP_ERR_UNSUPPORTED, no abort, the program goes on
  kport_strided_order_test(mpi_strided_refused_none_p2 2 "" --mca osc ^sm,pt2pt,rdma,monitoring,ucx
    $<TARGET_FILE:test_strided_order> --refused error)
endif()
