/* Unit tests of the machine parameter file (src/params/params.c, docs/PARAMETERS.md):
 * save -> load gives back the same struct; the documented example loads; every
 * bad file is refused with KP_ERR_PARAM and a message naming the file and the field. */
#include "kport.h"
#include "params/params.h"

#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


static char tmp[64];

/* the example of docs/PARAMETERS.md, with the inter channel written out */
static const char *good =
    "{\n"
    "  \"kport_params\": 1,\n"
    "  \"machine\": {\n"
    "    \"host\": \"debian\", \"cpu\": \"Intel(R) Xeon(R) \\\"x\\\"\", \"cores\": 2,\n"
    "    \"mpi\": \"Open MPI 4.1.4\", \"date\": \"2026-11-22T23:50:00Z\",\n"
    "    \"command\": \"mpirun -np 2 kport-bench loggp -o params.json\", \"future\": [1, {\"x\": null}]\n"
    "  },\n"
    "  \"p2p\": {\n"
    "    \"intra\": {\n"
    "      \"pieces\": [\n"
    "        {\"max_bytes\": 4096,  \"L\": 300.0, \"o_s\": 150.0, \"o_r\": 200.0, \"g\": 180.0, \"G\": 0.10, \"O\": 0.0},\n"
    "        {\"max_bytes\": -1,    \"L\": 900.0, \"o_s\": 400.0, \"o_r\": 400.0, \"g\": 500.0, \"G\": 0.08, \"O\": 0.0}\n"
    "      ]\n"
    "    },\n"
    "    \"inter\": { \"pieces\": [ {\"max_bytes\": -1, \"L\": 1e3, \"o_s\": 1, \"o_r\": 2, \"g\": 3, \"G\": 4e-1, \"O\": 5} ] }\n"
    "  },\n"
    "  \"shm\": {\n"
    "    \"flag\":       {\"fixed\": 90.0},\n"
    "    \"copy_in\":    {\"fixed\": 20.0, \"per_byte\": 0.06},\n"
    "    \"copy_out\":   {\"fixed\": 21.0, \"per_byte\": 0.061},\n"
    "    \"memcpy\":     {\"fixed\": 10.0, \"per_byte\": 0.05},\n"
    "    \"peer_read\":  {\"fixed\": 700.0, \"per_byte\": 0.07},\n"
    "    \"peer_write\": {\"fixed\": 701.0, \"per_byte\": 0.071}\n"
    "  },\n"
    "  \"hockney\": {\n"
    "    \"intra\": {\"alpha\": 500.0, \"beta\": 0.09},\n"
    "    \"inter\": {\"alpha\": 501.0, \"beta\": 0.091}\n"
    "  },\n"
    "  \"unknown_later_field\": {\"ignored\": true}\n"
    "}\n";

static void write_file(const char *text, size_t len)
{
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        perror(tmp);
        exit(2);
    }
    fwrite(text, 1, len, f);
    fclose(f);
}

/* text with the first `from` replaced by `to` */
static char *subst(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    if (!at) {
        fprintf(stderr, "test bug: '%s' not in the template\n", from);
        exit(2);
    }
    size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
    char *out = malloc(n);
    snprintf(out, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    return out;
}

static int eq_linear(const kp_linear *a, const kp_linear *b)
{
    return a->fixed == b->fixed && a->per_byte == b->per_byte && a->large_from == b->large_from &&
           a->large_per_byte == b->large_per_byte;
}
static int eq_channel(const kp_channel *a, const kp_channel *b)
{
    if (a->npieces != b->npieces)
        return 0;
    for (int i = 0; i < a->npieces; i++) {
        const kp_loggp *x = &a->piece[i], *y = &b->piece[i];
        if (x->max_bytes != y->max_bytes || x->L != y->L || x->o_s != y->o_s || x->o_r != y->o_r || x->g != y->g ||
            x->G != y->G || x->O != y->O || x->has_x != y->has_x || x->X != y->X || x->XG != y->XG || x->has_x2 != y->has_x2 ||
            x->X2 != y->X2 || x->X2G != y->X2G)
            return 0;
    }
    return a->eager_max == b->eager_max;
}
static int eq_machine(const kp_machine *a, const kp_machine *b)
{
    return a->version == b->version && !strcmp(a->host, b->host) && !strcmp(a->cpu, b->cpu) &&
           !strcmp(a->mpi, b->mpi) && !strcmp(a->date, b->date) && !strcmp(a->command, b->command) &&
           a->cores == b->cores && eq_channel(&a->intra, &b->intra) && eq_channel(&a->inter, &b->inter) &&
           eq_linear(&a->flag, &b->flag) && eq_linear(&a->copy_in, &b->copy_in) &&
           eq_linear(&a->copy_out, &b->copy_out) && eq_linear(&a->memcpy_, &b->memcpy_) &&
           eq_linear(&a->peer_read, &b->peer_read) && eq_linear(&a->peer_write, &b->peer_write) &&
           eq_linear(&a->hockney_intra, &b->hockney_intra) && eq_linear(&a->hockney_inter, &b->hockney_inter) &&
           a->call.fixed == b->call.fixed && a->call.skew == b->call.skew && a->data_line == b->data_line &&
           eq_linear(&a->reduce, &b->reduce) && a->reduce_given == b->reduce_given &&
           !strcmp(a->reduce_kernel, b->reduce_kernel);
}

static void test_good(void)
{
    kp_machine m;
    char err[512];
    write_file(good, strlen(good));
    CHECK_THAT(kp_params_load(tmp, &m, err, sizeof err) == KP_SUCCESS);
    if (err[0])
        fprintf(stderr, "unexpected: %s\n", err);
    CHECK_THAT(m.version == 1 && m.cores == 2 && !strcmp(m.host, "debian") && !strcmp(m.cpu, "Intel(R) Xeon(R) \"x\""));
    CHECK_THAT(m.intra.npieces == 2 && m.intra.piece[0].max_bytes == 4096 && m.intra.piece[0].L == 300.0 &&
          m.intra.piece[0].o_s == 150.0 && m.intra.piece[0].o_r == 200.0 && m.intra.piece[0].g == 180.0 &&
          m.intra.piece[0].G == 0.10 && m.intra.piece[0].O == 0.0);
    CHECK_THAT(m.intra.piece[1].max_bytes == -1 && m.intra.piece[1].L == 900.0 && m.intra.piece[1].G == 0.08);
    CHECK_THAT(m.inter.npieces == 1 && m.inter.piece[0].L == 1000.0 && m.inter.piece[0].o_s == 1 &&
          m.inter.piece[0].o_r == 2 && m.inter.piece[0].g == 3 && m.inter.piece[0].G == 0.4 && m.inter.piece[0].O == 5);
    CHECK_THAT(m.flag.fixed == 90.0 && m.flag.per_byte == 0.0);
    CHECK_THAT(m.copy_in.fixed == 20.0 && m.copy_in.per_byte == 0.06 && m.copy_out.fixed == 21.0 &&
          m.copy_out.per_byte == 0.061 && m.memcpy_.fixed == 10.0 && m.memcpy_.per_byte == 0.05);
    CHECK_THAT(m.peer_read.fixed == 700.0 && m.peer_read.per_byte == 0.07 && m.peer_write.fixed == 701.0 &&
          m.peer_write.per_byte == 0.071);
    CHECK_THAT(m.hockney_intra.fixed == 500.0 && m.hockney_intra.per_byte == 0.09 && m.hockney_inter.fixed == 501.0 &&
          m.hockney_inter.per_byte == 0.091);
    /* pieces: the first with bytes <= max_bytes, the last (-1) beyond */
    CHECK_THAT(kp_channel_piece(&m.intra, 0) == &m.intra.piece[0]);
    CHECK_THAT(kp_channel_piece(&m.intra, 4096) == &m.intra.piece[0]);
    CHECK_THAT(kp_channel_piece(&m.intra, 4097) == &m.intra.piece[1]);
    CHECK_THAT(kp_channel_piece(&m.intra, INT64_MAX) == &m.intra.piece[1]);
    CHECK_THAT(kp_channel_piece(&m.inter, 1 << 30) == &m.inter.piece[0]);

    /* machine is informational: a file without it loads */
    const char *from = strstr(good, "  \"machine\"");
    const char *to = strstr(good, "  \"p2p\"");
    char *nomach = malloc(strlen(good) + 1);
    snprintf(nomach, strlen(good) + 1, "%.*s%s", (int)(from - good), good, to);
    write_file(nomach, strlen(nomach));
    CHECK_THAT(kp_params_load(tmp, &m, err, sizeof err) == KP_SUCCESS && m.cores == 0 && m.host[0] == '\0');
    free(nomach);
}

static void test_round_trip(void)
{
    kp_machine a, b;
    char err[512];
    kp_params_init(&a);
    CHECK_THAT(kp_params_check(&a, err, sizeof err) == KP_SUCCESS);
    snprintf(a.host, sizeof a.host, "host \"with\" quotes\\ and\ttab");
    snprintf(a.cpu, sizeof a.cpu, "AMD EPYC \xc3\xa9");
    snprintf(a.mpi, sizeof a.mpi, "MPICH 4.0");
    snprintf(a.date, sizeof a.date, "2026-01-02T03:04:05Z");
    snprintf(a.command, sizeof a.command, "mpirun -np 2 kport-bench loggp\n-o x.json");
    a.cores = 64;
    a.intra.npieces = 3;
    int64_t maxb[3] = {0, 65536, -1};
    for (int i = 0; i < 3; i++) {
        kp_loggp *p = &a.intra.piece[i];
        p->max_bytes = maxb[i];
        p->L = 1.0 / 3.0 + i;
        p->o_s = 0.1 * (i + 1);
        p->o_r = 1e-9 + i;
        p->g = 123456.789 * (i + 1);
        p->G = 3.14159265358979 / 100;
        p->O = i == 2 ? 0.0 : 2.0 / 7.0;
    }
    a.inter.npieces = 2;
    a.inter.piece[0] = (kp_loggp){8192, 3000.5, 400.25, 410.125, 1e-300, 0.3, 0.0, 1, 701.0625, 0.0123456789, 1, 96.5, 0.03125};
    a.inter.piece[1] = (kp_loggp){-1, 1e6, 1e-6, 0.7, 5, 0.123456789012345678, 1, 0, 0, 0, 0, 0, 0};
    a.flag = (kp_linear){.fixed = 87.654321, .per_byte = 0};
    a.data_line = 29.5;
    a.copy_in = (kp_linear){.fixed = 1.1, .per_byte = 0.0612345};
    a.copy_out = (kp_linear){.fixed = 2.2, .per_byte = 0.07};
    a.memcpy_ = (kp_linear){.fixed = 3.3, .per_byte = 0.04999999};
    a.peer_read = (kp_linear){.fixed = 712.5, .per_byte = 0.0701, .large_from = 32768, .large_per_byte = 0.123456789};
    a.peer_write = (kp_linear){.fixed = 0.0, .per_byte = 0.0};
    a.hockney_intra = (kp_linear){.fixed = 499.999, .per_byte = 0.09};
    a.hockney_inter = (kp_linear){.fixed = 1e4, .per_byte = 1.0 / 7.0};
    /* without compute.reduce: loaded back as the default of this memcpy */
    a.reduce = kp_params_reduce_default(&a);
    CHECK_THAT(kp_params_save(tmp, &a) == KP_SUCCESS);
    memset(&b, 0xff, sizeof b);
    CHECK_THAT(kp_params_load(tmp, &b, err, sizeof err) == KP_SUCCESS && eq_machine(&a, &b) && !b.reduce_given);
    /* a combine's cost that is not the default is written even when no one said it was given */
    a.reduce = (kp_linear){.fixed = 2.5, .per_byte = 0.0178125};
    CHECK_THAT(kp_params_save(tmp, &a) == KP_SUCCESS);
    CHECK_THAT(kp_params_load(tmp, &b, err, sizeof err) == KP_SUCCESS && b.reduce_given &&
               eq_linear(&a.reduce, &b.reduce));
    a.reduce = (kp_linear){.fixed = 2.5, .per_byte = 0.0178125, .large_from = 262144, .large_per_byte = 0.2};
    a.reduce_given = 1;
    snprintf(a.reduce_kernel, sizeof a.reduce_kernel, "MPI_SUM on MPI_DOUBLE \"inline\", dst = a");
    CHECK_THAT(kp_params_save(tmp, &a) == KP_SUCCESS);
    memset(&b, 0xff, sizeof b);
    CHECK_THAT(kp_params_load(tmp, &b, err, sizeof err) == KP_SUCCESS);
    if (err[0])
        fprintf(stderr, "round trip: %s\n", err);
    CHECK_THAT(eq_machine(&a, &b));
    /* and once more: the saved file is stable */
    CHECK_THAT(kp_params_save(tmp, &b) == KP_SUCCESS);
    kp_machine c;
    CHECK_THAT(kp_params_load(tmp, &c, err, sizeof err) == KP_SUCCESS && eq_machine(&a, &c));

    /* save refuses what load would refuse, and an unwritable path */
    b.intra.piece[1].G = -1;
    CHECK_THAT(kp_params_save(tmp, &b) == KP_ERR_PARAM);
    CHECK_THAT(kp_params_check(&b, err, sizeof err) == KP_ERR_PARAM &&
               !strcmp(err, "p2p.intra.pieces[1].G: -1 is negative"));
    b.intra.piece[1].G = NAN;
    CHECK_THAT(kp_params_check(&b, err, sizeof err) == KP_ERR_PARAM &&
               strstr(err, "p2p.intra.pieces[1].G: not a finite"));
    b.intra.piece[1].G = 0;
    b.inter.npieces = 0;
    CHECK_THAT(kp_params_check(&b, err, sizeof err) == KP_ERR_PARAM && strstr(err, "p2p.inter.pieces: 0 pieces"));
    b.inter.npieces = 2;
    b.version = 2;
    CHECK_THAT(kp_params_check(&b, err, sizeof err) == KP_ERR_PARAM && strstr(err, "kport_params: version 2"));
    b.version = 1;
    b.cores = -1;
    CHECK_THAT(kp_params_check(&b, err, sizeof err) == KP_ERR_PARAM && strstr(err, "machine.cores: -1 is negative"));
    b.cores = 1;
    b.copy_out.large_from = -5;
    CHECK_THAT(kp_params_check(&b, err, sizeof err) == KP_ERR_PARAM &&
               strstr(err, "shm.copy_out.large_from: -5 is negative"));
    b.copy_out.large_from = 4096;
    b.copy_out.large_per_byte = -0.5;
    CHECK_THAT(kp_params_check(&b, err, sizeof err) == KP_ERR_PARAM &&
          strstr(err, "shm.copy_out.large_per_byte: -0.5 is negative"));
    b.copy_out.large_per_byte = 0.5;
    CHECK_THAT(kp_params_check(&b, err, sizeof err) == KP_SUCCESS);
    /* the second slope: beyond large_from the bytes cost large_per_byte */
    CHECK_THAT(kp_linear_cost(&b.copy_out, 4096) == b.copy_out.fixed + 4096 * b.copy_out.per_byte);
    CHECK_THAT(kp_linear_cost(&b.copy_out, 6144) == b.copy_out.fixed + 4096 * b.copy_out.per_byte + 2048 * 0.5);
    b.copy_out.large_from = 0; /* one slope */
    CHECK_THAT(kp_linear_cost(&b.copy_out, 6144) == b.copy_out.fixed + 6144 * b.copy_out.per_byte);
    CHECK_THAT(kp_params_save("/nonexistent-kport-dir/params.json", &b) == KP_ERR_ARG);
    CHECK_THAT(kp_params_check(NULL, err, sizeof err) == KP_ERR_PARAM);
}

/* load text, expect KP_ERR_PARAM with `want` in the message (and the file's name) */
static void bad(const char *text, size_t len, const char *want, int line)
{
    kp_machine m;
    char err[512];
    write_file(text, len);
    int rc = kp_params_load(tmp, &m, err, sizeof err);
    int ok = rc == KP_ERR_PARAM && strstr(err, want) && !strncmp(err, tmp, strlen(tmp));
    if (!ok)
        fprintf(stderr, "line %d: rc %d, message '%s', expected '%s'\n", line, rc, err, want);
    CHECK_THAT(ok);
}
#define BAD_SUBST(from, to, want)                                                                                  \
    do {                                                                                                           \
        char *t_ = subst(good, from, to);                                                                          \
        bad(t_, strlen(t_), want, __LINE__);                                                                       \
        free(t_);                                                                                                  \
    } while (0)

static void test_bad(void)
{
    /* missing fields */
    BAD_SUBST("\"G\": 0.08, ", "", "p2p.intra.pieces[1].G: missing");
    BAD_SUBST("\"kport_params\": 1,", "", "kport_params: missing (is this a kport parameter file?)");
    BAD_SUBST("\"per_byte\": 0.06}", "\"perbyte\": 0.06}", "shm.copy_in.per_byte: missing");
    BAD_SUBST("\"hockney\"", "\"hockny\"", "hockney: missing");
    BAD_SUBST("\"inter\": { \"pieces\"", "\"inter\": { \"piece\"", "p2p.inter.pieces: missing");
    BAD_SUBST("\"peer_write\"", "\"peer_writes\"", "shm.peer_write: missing");
    /* wrong version */
    BAD_SUBST("\"kport_params\": 1", "\"kport_params\": 2", "kport_params: version 2, this reader knows version 1");
    BAD_SUBST("\"kport_params\": 1", "\"kport_params\": \"1\"", "kport_params: is a string");
    BAD_SUBST("\"kport_params\": 1", "\"kport_params\": 1.5", "kport_params: 1.5 is not an integer");
    /* negative costs */
    BAD_SUBST("\"L\": 300.0", "\"L\": -350.1", "p2p.intra.pieces[0].L: -350.1 is below -(o_s + o_r) = -350");
    BAD_SUBST("\"L\": 300.0", "\"L\": -1e999", "p2p.intra.pieces[0].L: not a finite number");
    BAD_SUBST("\"unknown_later_field\"", "\"call\": {\"fixed\": -1}, \"x\"", "call.fixed: -1 is negative");
    BAD_SUBST("\"unknown_later_field\"", "\"call\": {\"skew\": \"1\"}, \"x\"", "call.skew: is a string");
    BAD_SUBST("\"unknown_later_field\"", "\"call\": 5, \"x\"", "call: is a number");
    BAD_SUBST("\"inter\": { \"pieces\"", "\"inter\": { \"eager_max\": -3, \"pieces\"",
              "p2p.inter.eager_max: -3 is not an integer from -1");
    BAD_SUBST("\"inter\": { \"pieces\"", "\"inter\": { \"eager_max\": 1.5, \"pieces\"",
              "p2p.inter.eager_max: 1.5 is not an integer");
    BAD_SUBST("\"per_byte\": 0.06}", "\"per_byte\": -0.06}", "shm.copy_in.per_byte: -0.06 is negative");
    /* the optional data_line: a fixed cost only, >= 0 */
    BAD_SUBST("\"peer_write\"", "\"data_line\": {\"fixed\": -3}, \"peer_write\"", "shm.data_line.fixed: -3 is negative");
    BAD_SUBST("\"peer_write\"", "\"data_line\": {\"fixed\": 3, \"per_byte\": 0.1}, \"peer_write\"",
              "shm.data_line: a fixed cost only");
    BAD_SUBST("\"peer_write\"", "\"data_line\": {\"per_byte\": 0}, \"peer_write\"", "shm.data_line.fixed: missing");
    /* the optional compute.reduce: fixed and per_byte required in it, >= 0; compute.kernel a string */
#define BAD_COMPUTE(obj, want) BAD_SUBST("\"unknown_later_field\"", "\"compute\": " obj ", \"x\"", want)
    BAD_COMPUTE("{\"reduce\": {\"fixed\": 1, \"per_byte\": -0.5}}", "compute.reduce.per_byte: -0.5 is negative");
    BAD_COMPUTE("{\"reduce\": {\"fixed\": 1}}", "compute.reduce.per_byte: missing");
    BAD_COMPUTE("{\"reduce\": 0.02}", "compute.reduce: is a number (line 29), expected an object");
    BAD_COMPUTE("[]", "compute: is an array (line 29), expected an object");
    BAD_COMPUTE("{\"kernel\": 7}", "compute.kernel: is a number (line 29), expected a string");
#undef BAD_COMPUTE
    /* the optional exchange: both fields, finite, >= 0 */
    BAD_SUBST("\"G\": 0.10, ", "\"G\": 0.10, \"X\": 250, ", "p2p.intra.pieces[0].XG: missing");
    BAD_SUBST("\"G\": 0.10, ", "\"G\": 0.10, \"XG\": 0.1, ", "p2p.intra.pieces[0].X: missing");
    BAD_SUBST("\"G\": 0.10, ", "\"G\": 0.10, \"X\": -1, \"XG\": 0.1, ", "p2p.intra.pieces[0].X: -1 is negative");
    BAD_SUBST("\"G\": 0.10, ", "\"G\": 0.10, \"X\": 1, \"XG\": -0.5, ",
              "p2p.intra.pieces[0].XG: -0.5 is negative");
    BAD_SUBST("\"G\": 0.10, ", "\"G\": 0.10, \"X\": \"1\", \"XG\": 0.5, ", "p2p.intra.pieces[0].X: is a string");
    /* a further exchange: X2 and X2G both or neither, only with X and XG, not negative */
    BAD_SUBST("\"G\": 0.10, ", "\"G\": 0.10, \"X\": 1, \"XG\": 0.5, \"X2\": 250, ",
              "p2p.intra.pieces[0].X2G: missing");
    BAD_SUBST("\"G\": 0.10, ", "\"G\": 0.10, \"X2\": 250, \"X2G\": 0.1, ",
              "p2p.intra.pieces[0]: has X2 and X2G without X and XG");
    BAD_SUBST("\"G\": 0.10, ", "\"G\": 0.10, \"X\": 1, \"XG\": 0.5, \"X2\": -1, \"X2G\": 0.1, ",
              "p2p.intra.pieces[0].X2: -1 is negative");
    BAD_SUBST("\"G\": 0.10, ", "\"G\": 0.10, \"X\": 1, \"XG\": 0.5, \"X2\": 1, \"X2G\": -0.5, ",
              "p2p.intra.pieces[0].X2G: -0.5 is negative");
    /* the optional second slope: both fields, a positive integer bound */
    BAD_SUBST("\"per_byte\": 0.06}", "\"per_byte\": 0.06, \"large_from\": 32768}",
              "shm.copy_in.large_per_byte: missing");
    BAD_SUBST("\"per_byte\": 0.06}", "\"per_byte\": 0.06, \"large_per_byte\": 0.1}", "shm.copy_in.large_from: missing");
    BAD_SUBST("\"per_byte\": 0.06}", "\"per_byte\": 0.06, \"large_from\": 0, \"large_per_byte\": 0.1}",
              "shm.copy_in.large_from: 0 is not an integer from 1");
    BAD_SUBST("\"per_byte\": 0.06}", "\"per_byte\": 0.06, \"large_from\": 64, \"large_per_byte\": -1}",
              "shm.copy_in.large_per_byte: -1 is negative");
    BAD_SUBST("\"alpha\": 501.0", "\"alpha\": -1", "hockney.inter.alpha: -1 is negative");
    BAD_SUBST("\"O\": 5", "\"O\": -5", "p2p.inter.pieces[0].O: -5 is negative");
    BAD_SUBST("\"fixed\": 90.0", "\"fixed\": 1e999", "shm.flag.fixed: not a finite number");
    /* pieces out of order, last piece not -1, -1 too early */
    BAD_SUBST("\"max_bytes\": -1,    \"L\": 900.0", "\"max_bytes\": 100,    \"L\": 900.0",
              "p2p.intra.pieces[1].max_bytes: 100 in the last piece, which must be -1");
    BAD_SUBST("{\"max_bytes\": 4096,", "{\"max_bytes\": 8192, \"L\": 1, \"o_s\": 1, \"o_r\": 1, \"g\": 1, \"G\": 1, \"O\": 1},\n{\"max_bytes\": 4096,",
              "p2p.intra.pieces[1].max_bytes: 4096 is not above the previous piece's 8192 (pieces out of order)");
    BAD_SUBST("{\"max_bytes\": 4096,", "{\"max_bytes\": -1,", "p2p.intra.pieces[0].max_bytes: -1 (no limit) before the last piece");
    BAD_SUBST("{\"max_bytes\": 4096,", "{\"max_bytes\": 4096.5,", "p2p.intra.pieces[0].max_bytes: 4096.5 is not an integer");
    BAD_SUBST("\"pieces\": [ {", "\"pieces\": [ ], \"x\": [{", "p2p.inter.pieces: 0 pieces, expected 1 to 8");
    /* wrong types */
    BAD_SUBST("\"o_r\": 200.0", "\"o_r\": \"200\"", "p2p.intra.pieces[0].o_r: is a string (line 11), expected a number");
    BAD_SUBST("\"cores\": 2", "\"cores\": -2", "machine.cores: -2 is not an integer from 0");
    BAD_SUBST("\"shm\": {", "\"shm\": [], \"x\": {", "shm: is an array");
    /* malformed JSON */
    BAD_SUBST("\"L\": 300.0, \"o_s\"", "\"L\": 300.0 \"o_s\"", "malformed JSON: line 11, column");
    BAD_SUBST("\"L\": 300.0, \"o_s\"", "\"L\": 300.0,, \"o_s\"", "malformed JSON: line 11");
    BAD_SUBST("\"L\": 1e3", "\"L\": 1e", "expected a digit in an exponent");
    BAD_SUBST("\"L\": 1e3", "\"L\": NaN", "expected a value");
    BAD_SUBST("\"host\": \"debian\"", "\"host\": \"deb\\qian\"", "unknown escape");
    BAD_SUBST("\n}\n", "\n}\n}", "text after the end of the JSON value");
    bad("[1, 2]", 6, "expected an object", __LINE__);
    bad("", 0, "empty file", __LINE__);
    bad("   \n", 4, "empty file", __LINE__);
    /* truncated anywhere: refused, never accepted or crashed */
    size_t n = strlen(good);
    size_t cuts[] = {1, 10, n / 3, n / 2, n - 3, n - 2};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++)
        bad(good, cuts[i], "unexpected end of file", __LINE__);
    int accepted = 0;
    for (size_t len = 0; len + 1 < n; len++) { /* every prefix (the last newline is optional) */
        kp_machine m;
        char err[512];
        write_file(good, len);
        if (kp_params_load(tmp, &m, err, sizeof err) != KP_ERR_PARAM)
            accepted++;
    }
    CHECK_THAT(accepted == 0);
    /* a file that is not there */
    kp_machine m;
    char err[512];
    CHECK_THAT(kp_params_load("/nonexistent-kport-dir/p.json", &m, err, sizeof err) == KP_ERR_PARAM &&
          strstr(err, "/nonexistent-kport-dir/p.json: cannot open: No such file"));
    /* deep nesting refused, not a stack overflow */
    char deep[400];
    memset(deep, '[', sizeof deep);
    bad(deep, sizeof deep, "nested more than 64 levels", __LINE__);
}

/* loads the good file with its first `from` replaced by `to` into m */
static int load_subst(const char *from, const char *to, kp_machine *m)
{
    char err[512];
    char *t = subst(good, from, to);
    write_file(t, strlen(t));
    free(t);
    return kp_params_load(tmp, m, err, sizeof err);
}

/* fields added after version 1 was first written: the eager limit per
 * channel and kport's cost per call; both optional, old files keep loading
 * (eager limit: the first piece's max_bytes; call: 0) */
static void test_optional_fields(void)
{
    kp_machine m;
    char err[512];
    write_file(good, strlen(good));
    CHECK_THAT(kp_params_load(tmp, &m, err, sizeof err) == KP_SUCCESS);
    CHECK_THAT(m.intra.eager_max == KP_EAGER_FIRST_PIECE && kp_channel_eager_max(&m.intra) == 4096);
    CHECK_THAT(m.inter.eager_max == KP_EAGER_FIRST_PIECE && kp_channel_eager_max(&m.inter) == -1); /* one piece */
    CHECK_THAT(m.call.fixed == 0 && m.call.skew == 0);
    CHECK_THAT(!m.intra.piece[0].has_x && !m.intra.piece[1].has_x && !m.inter.piece[0].has_x); /* no exchange */
    CHECK_THAT(m.data_line == 0); /* no data_line */
    /* no compute.reduce: memcpy's cost with its slopes x 1.5 (memcpy 10 + 0.05/B) */
    CHECK_THAT(!m.reduce_given && m.reduce.fixed == 10.0 && m.reduce.per_byte == 0.05 * KP_REDUCE_DEFAULT_SCALE &&
               m.reduce.large_from == 0 && !m.reduce_kernel[0]);
    CHECK_THAT(load_subst("\"unknown_later_field\"",
                          "\"compute\": {\"reduce\": {\"fixed\": 3, \"per_byte\": 0.02, \"large_from\": 65536, "
                          "\"large_per_byte\": 0.1}, \"kernel\": \"MPI_SUM on MPI_DOUBLE\"}, \"x\"",
                          &m) == KP_SUCCESS);
    CHECK_THAT(m.reduce_given && m.reduce.fixed == 3 && m.reduce.per_byte == 0.02 && m.reduce.large_from == 65536 &&
               m.reduce.large_per_byte == 0.1 && !strcmp(m.reduce_kernel, "MPI_SUM on MPI_DOUBLE"));
    CHECK_THAT(load_subst("\"unknown_later_field\"", "\"compute\": {\"kernel\": \"x\"}, \"x\"", &m) == KP_SUCCESS &&
               !m.reduce_given && m.reduce.per_byte == 0.05 * KP_REDUCE_DEFAULT_SCALE);
    CHECK_THAT(load_subst("\"G\": 0.08, ", "\"G\": 0.08, \"X\": 1500.5, \"XG\": 0.0625, ", &m) == KP_SUCCESS);
    CHECK_THAT(!m.intra.piece[0].has_x && m.intra.piece[1].has_x && m.intra.piece[1].X == 1500.5 &&
          m.intra.piece[1].XG == 0.0625);
    CHECK_THAT(!m.intra.piece[1].has_x2); /* no further exchange: X alone prices it */
    CHECK_THAT(load_subst("\"G\": 0.08, ", "\"G\": 0.08, \"X\": 1500.5, \"XG\": 0.0625, \"X2\": 75.25, \"X2G\": 0.5, ",
                     &m) == KP_SUCCESS);
    CHECK_THAT(!m.intra.piece[0].has_x2 && m.intra.piece[1].has_x2 && m.intra.piece[1].X2 == 75.25 &&
          m.intra.piece[1].X2G == 0.5);
    write_file(good, strlen(good));
    CHECK_THAT(kp_params_load(tmp, &m, err, sizeof err) == KP_SUCCESS);
    char *t = subst(good, "\"unknown_later_field\"", "\"call\": {\"fixed\": 80.5, \"skew\": 160}, \"x\"");
    char *t2 = subst(t, "\"intra\": {\n", "\"intra\": {\"eager_max\": 4095,\n");
    char *t3 = subst(t2, "\"inter\": { \"pieces\"", "\"inter\": { \"eager_max\": -1, \"pieces\"");
    char *t4 = subst(t3, "\"L\": 300.0", "\"L\": -349.5"); /* overheads overlapping the transfer */
    write_file(t4, strlen(t4));
    CHECK_THAT(kp_params_load(tmp, &m, err, sizeof err) == KP_SUCCESS);
    if (err[0])
        fprintf(stderr, "unexpected: %s\n", err);
    CHECK_THAT(m.call.fixed == 80.5 && m.call.skew == 160);
    CHECK_THAT(m.intra.eager_max == 4095 && kp_channel_eager_max(&m.intra) == 4095);
    CHECK_THAT(m.inter.eager_max == -1 && kp_channel_eager_max(&m.inter) == -1);
    CHECK_THAT(m.intra.piece[0].L == -349.5);
    /* saved and loaded back: the same, eager_max and call included */
    kp_machine b;
    CHECK_THAT(kp_params_save(tmp, &m) == KP_SUCCESS && kp_params_load(tmp, &b, err, sizeof err) == KP_SUCCESS &&
          eq_machine(&m, &b));
    m.call.skew = -1;
    CHECK_THAT(kp_params_check(&m, err, sizeof err) == KP_ERR_PARAM && !strcmp(err, "call.skew: -1 is negative"));
    m.call.skew = 0;
    m.intra.eager_max = -7;
    CHECK_THAT(kp_params_check(&m, err, sizeof err) == KP_ERR_PARAM && strstr(err, "p2p.intra.eager_max: -7"));
    free(t);
    free(t2);
    free(t3);
    free(t4);
}

int main(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/kport_test_params_%d.json", (int)getpid());
    test_good();
    test_round_trip();
    test_bad();
    test_optional_fields();
    unlink(tmp);
    printf("test_params: %ld passed, %ld failed\n", checks - fails, fails);
    return fails ? 1 : 0;
}
