/* PLACEHOLDER: being written; refuses until then. */
#include "algo/algo.h"
#include "kport.h"

int kp_alltoall_direct_build(kp_sched *s, const kp_params *prm)
{
    (void)prm;
    return kp_sched_refuse(s, KP_ERR_UNSUPPORTED, "alltoall direct: not implemented yet");
}
