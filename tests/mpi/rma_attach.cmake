# One-sided transport, the attach path (issue 10): the rma tests again with
# rma_path=attach (every message put straight into the attached receive
# buffer), plus test_rma's attachment-cache part. Under Open MPI the dynamic
# windows exist only on communicators with every rank of MPI_COMM_WORLD
# (src/exec/onesided.c: osc/rdma's backing files collide between disjoint
# communicators), so split and emulated-node cases run the fallback there.
set(KPORT_RMA_A "transport=rma,rma_path=attach")
set(KPORT_RMA_AS "transport=rma,rails=2,stripe_kb=1,rma_path=attach")
list(GET KPORT_RMA_PS 0 np)
kport_mpi_test(rma_attach_check_p${np} ${np} $<TARGET_FILE:test_rma> -n ${KPORT_RMA_NCALLS} -s 7 --path attach)
kport_mpi_test(rma_auto_check_p${np} ${np} $<TARGET_FILE:test_rma> -n ${KPORT_RMA_NCALLS} -s 8 --path auto
  --no-cache --no-attach)
kport_mpi_test(rma_attach_allgather_p${np} ${np} $<TARGET_FILE:test_allgather> -n 20 -a
  ring:${KPORT_RMA_A},recursive_doubling:${KPORT_RMA_AS},direct:k=3,${KPORT_RMA_A},bruck:k=2,${KPORT_RMA_AS},shm_flat:${KPORT_RMA_A},smp_bruck:${KPORT_RMA_AS})
kport_mpi_test(rma_attach_gather_p${np} ${np} $<TARGET_FILE:test_coll> gather -n 20 -a
  binomial:${KPORT_RMA_A},direct:k=3,${KPORT_RMA_AS},smp:${KPORT_RMA_A})
kport_mpi_test(rma_attach_alltoall_p${np} ${np} $<TARGET_FILE:test_coll> alltoall -n 20 -a
  pairwise:${KPORT_RMA_AS},direct:k=3,${KPORT_RMA_A},bruck:k=2,${KPORT_RMA_A})
if(KPORT_MPI_FLAVOR STREQUAL "openmpi")
  kport_mpi_test(rma_attach_check_p5 5 $<TARGET_FILE:test_rma> -n 2 -s 5 --path attach --no-flow)
  kport_emu_test(rma_attach_emu_check_n2_p4 4 "KPORT_NODE_SIZE=2" $<TARGET_FILE:test_rma> -n 2 -s 4 --path attach
    --no-flow --no-cache)
else()
  kport_emu_test(rma_attach_emu_allgather_n1_p2 2 "KPORT_NODE_SIZE=1" $<TARGET_FILE:test_allgather> -n 10 -a
    smp_bruck:${KPORT_RMA_AS},smp_direct:${KPORT_RMA_A})
endif()
# kport-bench rma --notify: every variant this MPI can run, validated; the ones that
# poll memory refused where a put needs the target's progress (MPICH: they would hang)
if(Python3_Interpreter_FOUND)
  if(KPORT_MPI_FLAVOR STREQUAL "openmpi")
    kport_bench_json_test(rma_bench_notify_p2 2 --expect coll=rma --keys median_us,min_us --records 52
      -- ${KPORT_MPIEXEC} ${MPIEXEC_NUMPROC_FLAG} 2 ${KPORT_MPIEXEC_FLAGS} $<TARGET_FILE:kport-bench> rma
      -c -m 8:1K -i 5 -x 1 -R 1 --notify acc,put,fao,accl --format json)
  else()
    kport_bench_json_test(rma_bench_notify_p2 2 --expect coll=rma --keys median_us,min_us --records 34
      -- ${KPORT_MPIEXEC} ${MPIEXEC_NUMPROC_FLAG} 2 ${KPORT_MPIEXEC_FLAGS} $<TARGET_FILE:kport-bench> rma
      -c -m 8:1K -i 5 -x 1 -R 1 --notify acc,fao --format json)
    kport_mpi_test(rma_bench_notify_refused 2 $<TARGET_FILE:kport-bench> rma --notify put)
    set_tests_properties(rma_bench_notify_refused PROPERTIES
      PASS_REGULAR_EXPRESSION "--notify put polls memory: it needs Open MPI's shared windows")
  endif()
endif()
kport_mpi_test(rma_bench_bad_notify 2 $<TARGET_FILE:kport-bench> rma --notify acc,flag)
set_tests_properties(rma_bench_bad_notify PROPERTIES PASS_REGULAR_EXPRESSION "bad --notify \"acc,flag\"")
# rma_path: a bad value, and the parameter without transport=rma, refused with the reason
kport_mpi_test(rma_bad_path 2 $<TARGET_FILE:kport-bench> allgather -m 8 -i 2 -a "ring:transport=rma,rma_path=foo")
set_tests_properties(rma_bad_path PROPERTIES PASS_REGULAR_EXPRESSION "rma_path=\"foo\" must be staging, attach or auto")
kport_mpi_test(rma_path_without_rma 2 $<TARGET_FILE:kport-bench> allgather -m 8 -i 2 -a "ring:rma_path=attach")
set_tests_properties(rma_path_without_rma PROPERTIES PASS_REGULAR_EXPRESSION "rails, stripe_kb and rma_path apply to transport=rma only")
