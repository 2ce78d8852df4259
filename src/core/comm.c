/*
 * Per-communicator state: kport's private duplicate of the user's
 * communicator and its plan cache, kept as an attribute of the user's
 * communicator and freed when the user frees it (or at MPI_Finalize, through
 * an attribute on MPI_COMM_SELF, whose attributes MPI deletes first).
 */
#include "core/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int keyval = MPI_KEYVAL_INVALID;
static int hooked; /* finalize hook registered on MPI_COMM_SELF */
static kp_comm *live; /* every live state, to release at finalize */
/* one-entry cache in front of MPI_Comm_get_attr: most programs call
 * collectives on one communicator; cleared when that state is freed */
static MPI_Comm hot_comm = MPI_COMM_NULL;
static kp_comm *hot_state;

static void state_free(kp_comm *c)
{
    if (hot_state == c) {
        hot_state = NULL;
        hot_comm = MPI_COMM_NULL;
    }
    while (c->plans) {
        kp_plan *n = c->plans->next;
        kp_plan_free(c->plans);
        c->plans = n;
    }
    free(c->stage);
    kp_topo_free(c);
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin && c->comm != MPI_COMM_NULL)
        MPI_Comm_free(&c->comm);
    if (c->gprev)
        c->gprev->gnext = c->gnext;
    else if (live == c)
        live = c->gnext;
    if (c->gnext)
        c->gnext->gprev = c->gprev;
    free(c);
}

static int delete_fn(MPI_Comm comm, int kv, void *attr, void *extra)
{
    (void)comm; (void)kv; (void)extra;
    state_free(attr);
    return MPI_SUCCESS;
}

/* copying a communicator does not copy kport's state */
static int finalize_fn(MPI_Comm comm, int kv, void *attr, void *extra)
{
    (void)comm; (void)kv; (void)attr; (void)extra;
    kp_release_caches();
    if (keyval != MPI_KEYVAL_INVALID)
        MPI_Comm_free_keyval(&keyval);
    hooked = 0;
    return MPI_SUCCESS;
}

void kp_release_caches(void)
{
    while (live) {
        kp_comm *c = live;
        /* deleting the attribute runs delete_fn, which frees c */
        if (MPI_Comm_delete_attr(c->user, keyval) != MPI_SUCCESS)
            state_free(c);
    }
}

static int init_keyvals(void)
{
    if (keyval == MPI_KEYVAL_INVALID &&
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &keyval, NULL) != MPI_SUCCESS)
        return kp_error(KP_ERR_MPI, "MPI_Comm_create_keyval failed");
    if (!hooked) {
        int self_keyval;
        if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize_fn, &self_keyval, NULL) != MPI_SUCCESS ||
            MPI_Comm_set_attr(MPI_COMM_SELF, self_keyval, NULL) != MPI_SUCCESS)
            return kp_error(KP_ERR_MPI, "cannot register kport's finalize hook on MPI_COMM_SELF");
        MPI_Comm_free_keyval(&self_keyval); /* the attribute keeps it alive */
        hooked = 1;
    }
    return KP_SUCCESS;
}

kp_comm *kp_comm_peek(MPI_Comm comm)
{
    if (hot_state && comm == hot_comm)
        return hot_state;
    return NULL;
}

int kp_comm_get(MPI_Comm comm, kp_comm **out)
{
    void *attr;
    int found = 0;
    if (hot_state && comm == hot_comm) {
        *out = hot_state;
        return KP_SUCCESS;
    }
    if (keyval != MPI_KEYVAL_INVALID) {
        MPI_Comm_get_attr(comm, keyval, &attr, &found);
        if (found) {
            *out = hot_state = attr;
            hot_comm = comm;
            return KP_SUCCESS;
        }
    }
    int rc = init_keyvals();
    if (rc)
        return rc;
    kp_comm *c = calloc(1, sizeof(*c));
    if (!c)
        return kp_error(KP_ERR_NOMEM, "out of memory for communicator state");
    c->user = comm;
    MPI_Comm_rank(comm, &c->rank);
    MPI_Comm_size(comm, &c->size);
    if (MPI_Comm_dup(comm, &c->comm) != MPI_SUCCESS) {
        free(c);
        return kp_error(KP_ERR_MPI, "MPI_Comm_dup failed");
    }
    MPI_Comm_set_name(c->comm, "kport private");
    if ((rc = kp_topo_init(c))) {
        char msg[512];
        snprintf(msg, sizeof(msg), "%s", kp_last_error());
        kp_topo_free(c);
        MPI_Comm_free(&c->comm);
        free(c);
        return kp_error(rc, "%s", msg);
    }
    c->gnext = live;
    if (live)
        live->gprev = c;
    live = c;
    if (MPI_Comm_set_attr(comm, keyval, c) != MPI_SUCCESS) {
        state_free(c);
        return kp_error(KP_ERR_MPI, "MPI_Comm_set_attr failed");
    }
    *out = hot_state = c;
    hot_comm = comm;
    return KP_SUCCESS;
}

int kp_comm_stage(kp_comm *c, int64_t n, void **out)
{
    if (n > c->stage_bytes) {
        void *p = realloc(c->stage, (size_t)n);
        if (!p)
            return kp_error(KP_ERR_NOMEM, "out of memory for %lld staging bytes", (long long)n);
        c->stage = p;
        c->stage_bytes = n;
    }
    *out = c->stage;
    return KP_SUCCESS;
}

int kp_node_info(MPI_Comm comm, int *nnodes, int *node, int *local, int *node_size)
{
    int rc;
    kp_comm *c;
    if ((rc = kp_settings_load()) || (rc = kp_check_comm("kp_node_info", comm)) || (rc = kp_comm_get(comm, &c)))
        return rc;
    if (nnodes)
        *nnodes = c->layout.nnodes;
    if (node)
        *node = c->layout.node_of[c->rank];
    if (local)
        *local = c->local;
    if (node_size)
        *node_size = c->node_size;
    return KP_SUCCESS;
}
