/* Settings from the environment that every layer may read (env.h). */
#include "util/env.h"

#include <stdlib.h>
#include <string.h>

int kp_env_int(const char *name, int def, int lo, int hi)
{
    const char *e = getenv(name);
    if (!e || !*e)
        return def;
    char *end;
    long v = strtol(e, &end, 10);
    if (*end || v < lo || v > hi)
        return KP_ENV_BAD;
    return (int)v;
}

int kp_verbose(void)
{
    static int v = -1;
    if (v < 0) {
        const char *e = getenv("KPORT_VERBOSE");
        v = e && *e && strcmp(e, "0") != 0;
    }
    return v;
}

int kp_calibrate_mode(void)
{
    static int m = -2;
    if (m == -2) {
        const char *e = getenv("KPORT_CALIBRATE");
        m = 1;
        if (e && *e)
            m = strcmp(e, "0") == 0 ? 0 : strcmp(e, "force") == 0 ? 2 : strcmp(e, "1") == 0 ? 1 : -1;
    }
    return m;
}
