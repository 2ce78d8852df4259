# Graceful degradation (issue 35): kport's set-up refused by MPI or the OS.
# tests/fault/run_fault.sh runs, under one fault at a time, the MPI alone
# (proving the fault leaves MPI working), the MPI test programs and
# fault_kp through kport's API, and plain_app and fault_app unmodified
# through the drop-in; every byte is checked (see the script's header).
#
#   fault_osc_shared   Open MPI --mca osc pt2pt: MPI_Win_allocate_shared refused
#   fault_osc_none     Open MPI, every osc component excluded: every window refused
#   fault_small_shm    /dev/shm a small tmpfs in a private mount namespace (root):
#                      MPI starts, kport's larger segments no longer fit
#   fault_nocma        every rank under tests/fault/nocma (seccomp): process_vm_readv
#                      and process_vm_writev fail with EPERM
#
# Each skips (77) when its mechanism is unavailable (not root, no namespaces,
# no seccomp, no such osc component). The sanitizer build runs one refusal
# path (shared windows refused) with LeakSanitizer on, comparing the bytes
# leaked through kport with MPI's own.
set(KPORT_FAULT_DIR ${CMAKE_CURRENT_LIST_DIR})
add_executable(nocma ${CMAKE_CURRENT_LIST_DIR}/nocma.c)
add_executable(fault_app ${CMAKE_CURRENT_LIST_DIR}/fault_app.c)
target_link_libraries(fault_app PRIVATE MPI::MPI_C)
add_executable(fault_kp ${CMAKE_CURRENT_LIST_DIR}/fault_app.c)
target_compile_definitions(fault_kp PRIVATE FAULT_KPORT)
target_link_libraries(fault_kp PRIVATE kport)

set(KPORT_FAULT_ARGS
  nocma=$<TARGET_FILE:nocma> fault_app=$<TARGET_FILE:fault_app> fault_kp=$<TARGET_FILE:fault_kp>
  plain_app=$<TARGET_FILE:plain_app> pmpi=$<TARGET_FILE:kport-pmpi>
  test_allgather=$<TARGET_FILE:test_allgather> test_coll=$<TARGET_FILE:test_coll>
  flavor=${KPORT_MPI_FLAVOR})
function(kport_fault_test name fault)
  add_test(NAME ${name} COMMAND bash ${KPORT_FAULT_DIR}/run_fault.sh ${fault} ${KPORT_FAULT_ARGS} ${ARGN}
    -- ${KPORT_MPIEXEC} ${KPORT_MPIEXEC_FLAGS})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${KPORT_MPI_ENV}" TIMEOUT 300 PROCESSORS 2
    SKIP_RETURN_CODE 77 LABELS fault)
endfunction()

if(KPORT_SANITIZE)
  kport_fault_test(fault_osc_shared_leaks osc_shared mode=leaks)
elseif(KPORT_MPI_FLAVOR STREQUAL "openmpi")
  kport_fault_test(fault_osc_shared osc_shared)
  kport_fault_test(fault_osc_none osc_none)
  kport_fault_test(fault_small_shm small_shm)
  kport_fault_test(fault_nocma nocma)
else()
  kport_fault_test(fault_small_shm small_shm)
  kport_fault_test(fault_nocma nocma)
endif()
