/* Defaults, list handling and deadlines of the parsed command line. */
#include "sc_options.h"

#include <errno.h>
#include <string.h>

#include "sc_util.h"

#define MIN_PROBE_S 0.05 /* a probe started just before the deadline still gets to start */

void sc_options_init(sc_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->app_repeat = 1;
}

int sc_strlist_add(sc_strlist *list, const char *item)
{
    if (list->count >= SC_MAX_LIST)
        return -E2BIG;
    list->items[list->count++] = item;
    return 0;
}

double sc_opt_probe_timeout(const sc_options *opt, double default_s)
{
    double t = opt->timeout_s > 0 ? opt->timeout_s : default_s;
    if (opt->deadline_ms <= 0)
        return t;
    double left = (opt->deadline_ms - sc_now_ms()) / 1000.0;
    return left < t ? (left > MIN_PROBE_S ? left : MIN_PROBE_S) : t;
}

bool sc_opt_deadline_passed(const sc_options *opt)
{
    return opt->deadline_ms > 0 && sc_now_ms() >= opt->deadline_ms;
}
