/* --slurm's pure half: `scontrol show node` output read (real 22.05 output, a drained node with
 * its stamp, several nodes, malformed and cut input), the drain reason of a verdict (layer and
 * finding, no quotes, at most Slurm's length), and the choice between drain, resume and leaving a
 * node alone (someone else's drain or down state is never touched). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "sc_slurm.h"

static const char drained[] =
    "NodeName=sctest1 Arch=x86_64 CoresPerSocket=1 \n"
    "   CPUAlloc=0 CPUEfctv=1 CPUTot=1 CPULoad=16.34\n"
    "   NodeAddr=127.0.0.1 NodeHostName=vm Version=22.05.8\n"
    "   State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n"
    "   Partitions=debug \n"
    "   Reason=stackcheck: driver driver.no-accelerator [root@2026-12-01T23:46:47]\n"
    "\n"
    "NodeName=other State=DOWN\n"
    "   Reason=not this one [root@2026-12-01T23:46:47]\n";

static void parses_state_and_reason_of_the_first_node(void **state)
{
    (void)state;
    sc_slurm_node node;
    assert_int_equal(sc_slurm_parse_node(drained, strlen(drained), &node), 0);
    assert_string_equal(node.state, "IDLE+DRAIN");
    assert_string_equal(node.reason, "stackcheck: driver driver.no-accelerator");
}

static void malformed_output_names_no_node(void **state)
{
    (void)state;
    sc_slurm_node node;
    const char *bad[] = {"", "Node sctest1 not found\n", "State=IDLE\nReason=x\n", "\n\n\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(sc_slurm_parse_node(bad[i], strlen(bad[i]), &node), -2 /* ENOENT */);
    /* Cut in the middle of the reason: what is there is read, nothing past the end. */
    size_t cut = strstr(drained, "driver.no") - drained;
    assert_int_equal(sc_slurm_parse_node(drained, cut, &node), 0);
    assert_string_equal(node.reason, "stackcheck: driver");
}

static void decides_drain_resume_or_keep(void **state)
{
    (void)state;
    const char *why, *ours = "stackcheck: driver driver.no-accelerator";
    sc_slurm_node idle = {true, "IDLE", ""}, mine = {true, "IDLE+DRAIN", ""};
    sc_slurm_node theirs = {true, "MIXED+DRAIN", "disk replacement"};
    sc_slurm_node down = {true, "DOWN*+NOT_RESPONDING", "Not responding"};
    strcpy(mine.reason, ours);
    assert_int_equal(sc_slurm_decide(true, &idle, ours, &why), SC_SLURM_DRAIN);
    assert_int_equal(sc_slurm_decide(true, &mine, ours, &why), SC_SLURM_KEEP);
    assert_int_equal(sc_slurm_decide(true, &mine, "stackcheck: runtime hip.no-device", &why),
                     SC_SLURM_DRAIN);
    assert_int_equal(sc_slurm_decide(false, &mine, "", &why), SC_SLURM_RESUME);
    assert_int_equal(sc_slurm_decide(false, &idle, "", &why), SC_SLURM_KEEP);
    assert_int_equal(sc_slurm_decide(false, &theirs, "", &why), SC_SLURM_KEEP);
    assert_int_equal(sc_slurm_decide(true, &theirs, ours, &why), SC_SLURM_KEEP);
    assert_int_equal(sc_slurm_decide(true, &down, ours, &why), SC_SLURM_KEEP);
}

static void reason_names_layer_and_finding_within_slurms_length(void **state)
{
    (void)state;
    char buf[1024];
    cJSON *snap = cJSON_Parse("{\"summary\":{\"status\":\"fail\",\"first_failure\":{\"layer\":"
                              "\"runtime\",\"probe\":\"runtime.hip\",\"status\":\"crash\"}}}");
    sc_slurm_reason(snap, buf, sizeof buf);
    assert_string_equal(buf, "stackcheck: runtime runtime.hip crash");
    cJSON *ff = cJSON_GetObjectItem(cJSON_GetObjectItem(snap, "summary"), "first_failure");
    char longer[600];
    memset(longer, 'x', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    longer[3] = '"';
    cJSON_AddStringToObject(ff, "finding", longer);
    sc_slurm_reason(snap, buf, sizeof buf);
    assert_int_equal(strlen(buf), SC_SLURM_REASON_MAX);
    assert_null(strchr(buf, '"'));
    cJSON_Delete(snap);
    snap = cJSON_Parse("{\"summary\":{\"status\":\"pass\",\"first_failure\":null}}");
    sc_slurm_reason(snap, buf, sizeof buf);
    assert_string_equal(buf, "");
    cJSON_Delete(snap);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_state_and_reason_of_the_first_node),
        cmocka_unit_test(malformed_output_names_no_node),
        cmocka_unit_test(decides_drain_resume_or_keep),
        cmocka_unit_test(reason_names_layer_and_finding_within_slurms_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
