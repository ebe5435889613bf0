/* Defaults and list handling for the parsed command line. */
#include "sc_options.h"

#include <errno.h>
#include <string.h>

void sc_options_init(sc_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->app_repeat = 1;
    opt->jobs = 1;
}

int sc_strlist_add(sc_strlist *list, const char *item)
{
    if (list->count >= SC_MAX_LIST)
        return -E2BIG;
    list->items[list->count++] = item;
    return 0;
}
