/* PLACEHOLDER: being written; refuses until then. */
#include "algo/algo.h"
#include "kport.h"

int kp_gather_binomial_build(kp_sched *s, const kp_params *prm)
{
    (void)prm;
    return kp_sched_refuse(s, KP_ERR_UNSUPPORTED, "gather binomial: not implemented yet");
}
