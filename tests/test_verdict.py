"""The first lines an on-call engineer reads. Scenarios from the bundled incidents: a GC-frozen pod whose session
expired, a rolling restart, a Streams crash loop. The verdict names the cause as a chain of what the logs show,
the pod, the impact and what to do; routine operations read as routine, and severity follows impact.
"""

from __future__ import annotations

import json

from support import FIXTURES, ExitStatus


def test_a_gc_pause_behind_a_heartbeat_expiry_is_the_first_link_of_the_chain(analysis, cli):
    verdict = analysis("heartbeat-expiry").verdict

    assert verdict.cause == "heartbeat_expiry" and verdict.severity == "critical"
    assert verdict.chain[0] == "orders-app-2 (…03a9f7b1e5d2) froze in a 50.4 s JVM pause (G1 Compaction Pause)"
    assert verdict.chain[1] == "the coordinator expired it at 10:17:47"
    assert verdict.actions[0].startswith("Fix the 50.4 s JVM pause (G1 Compaction Pause) on orders-app-2")
    report = cli("report", "sample_logs/heartbeat-expiry/")
    assert report.exit_code == ExitStatus.OK
    first_lines = report.stdout.splitlines()[:5]
    assert first_lines[0] == "verdict critical · heartbeat expiry in orders-processor (and 1 other group)"
    assert "sample_logs/heartbeat-expiry/orders-app-2.log:274 [2024-03-12T10:17:53.578+0000][info][gc] GC(1184) Pause Full" in report.stdout


def test_a_rolling_restart_reads_as_routine(analysis):
    result = analysis("rolling-bounce-eager")
    findings = {f.kind: f.severity for g in result.groups for f in g.findings}

    assert result.verdict.cause == "rolling_restart" and result.verdict.severity == "info"
    assert "critical" not in findings.values()
    assert "rebalance_storm" not in findings and "crash_loop" not in findings
    impact = result.verdict.impact
    assert (impact["rebalances"], impact["failed"], round(impact["pause_ms"] / 1000, 1)) == (6, 0, 15.9)  # EXPECTED.md: 15.9 s


def test_a_crash_loop_is_not_headlined_as_the_expiry_it_caused(analysis):
    result = analysis("streams-crash-loop")
    findings = {f.kind: f.severity for g in result.groups for f in g.findings}

    assert result.verdict.cause == "crash_loop"
    assert "failed on one record (taskId=0_5, processor=fx-conversion, topic=price-updates, partition=5, offset=88123457: " \
           "java.lang.IllegalStateException: No FX rate for XBT->EUR" in result.verdict.chain[0]  # the poison record
    assert findings["heartbeat_expiry"] == "warning"  # it started no rebalance
    assert findings["rebalance_storm"] == "warning"  # nothing failed, nobody paused long


def test_the_verdict_is_the_first_section_of_every_document(analysis, render_text):
    result = analysis("poll-timeout-cooperative")

    assert render_text(result).startswith("verdict critical · poll timeout")
    assert render_text(result, "markdown").split("\n## ")[1].startswith("Verdict\n\n**critical: poll timeout")
    page = render_text(result, "html")
    assert page.index('<section class="verdict">') < page.index('<dl class="summary">')


def test_a_rebalance_that_failed_while_the_coordinator_moved_is_not_blamed_on_slow_callbacks():
    """Scenario: a broker restarts and the coordinator of the group moves; the rebalance under way fails and the
    members retry. The verdict says the coordinator moved, and does not send anyone after slow callbacks."""
    from datetime import UTC, datetime, timedelta

    from rebalance_doctor.analysis.model import Cause, Evidence, Finding, GroupAnalysis, Rebalance
    from rebalance_doctor.analysis.verdict import verdict

    at = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    moved = Evidence("broker-2.log", 118, "Elected as the group coordinator for partition 3", at - timedelta(seconds=20))

    def rebalance(generation: int, failed: bool, kind: str) -> Rebalance:
        return Rebalance("orders", generation - 1, generation, at + timedelta(seconds=generation), None, None, "eager", None, "2",
                         None, [], None, [], [], Cause(kind, 0.6, "", [moved]), [], failed=failed)

    group = GroupAnalysis("orders", "2", "eager", [4, 5, 6], [rebalance(5, True, "member_join"), rebalance(6, False, "failed_rebalance_retry")],
                          [], None, [Finding("failed_rebalances", "critical", "1 rebalance never completed", [], ""),
                                     Finding("coordinator_change", "warning", "the coordinator moved", [moved], "")], {})

    result = verdict([group])

    assert result.cause == "failed_rebalances"
    assert result.chain[0] == "the group coordinator moved: members had to find it again"
    assert "coordinator moved" in result.actions[0] and "onPartitionsRevoked" not in " ".join(result.actions)


def test_a_static_member_back_without_a_rebalance_is_no_rebalance(analysis):
    """static-member-fencing, 14:06: ledger-sync-1 is evicted and back 51 s later; the coordinator swaps its member id
    and says it "will not trigger rebalance". Only the four fencing rebalances of 14:31 are rebalances."""
    rebalances = analysis("static-member-fencing").groups[0].rebalances

    assert [(r.from_generation, r.to_generation) for r in rebalances] == [(17, 18), (18, 19), (19, 20), (20, 21)]


def test_a_first_join_at_a_huge_generation_is_not_a_storm(cli, tmp_path):
    """A franz-go consumer joins an Azure Event Hubs group, whose generations run in the tens of millions: one
    rebalance, not a group that has rebalanced in a loop for a long time (the log starts at the join, so what
    started it is not shown). The same group seen reaching the next generation too is in a loop."""
    def report(path) -> dict:
        return json.loads(cli("report", str(path), "--format", "json").stdout)

    def findings(document: dict) -> set[str]:
        return {finding["kind"] for group in document["groups"] for finding in group["findings"]}

    joined = report(next((FIXTURES / "corpus").glob("362-*.log")))
    assert joined["verdict"]["impact"]["rebalances"] == 1 and joined["verdict"]["cause"] != "rebalance_storm"
    assert "rebalance_storm" not in findings(joined)

    looping = tmp_path / "kafka-1-server.log"
    looping.write_text("".join(
        f"[2024-05-01 10:00:0{n},000] INFO [GroupCoordinator 1]: Stabilized group orders generation {76048271 + n} "
        f"(__consumer_offsets-7) with 3 members (kafka.coordinator.group.GroupCoordinator)\n" for n in range(2)))
    assert "rebalance_storm" in findings(report(looping))


def test_a_group_whose_rebalance_has_a_known_cause_leads_one_whose_rebalance_has_none(cli, tmp_path):
    """A coordinator's log names why group orders rebalanced (a new member), while of group audit it shows only the
    new generation. The verdict leads with what the logs show, not with the group they say nothing about."""
    log = tmp_path / "kafka-1-server.log"
    log.write_text(
        "[2024-05-01 10:00:00,000] INFO [GroupCoordinator 1]: Stabilized group audit generation 9 (__consumer_offsets-3) "
        "with 2 members (kafka.coordinator.group.GroupCoordinator)\n"
        "[2024-05-01 10:00:01,000] INFO [GroupCoordinator 1]: Preparing to rebalance group orders in state PreparingRebalance "
        "with old generation 4 (__consumer_offsets-7) (reason: Adding new member consumer-orders-2-5d1e with group instance "
        "id None) (kafka.coordinator.group.GroupCoordinator)\n"
        "[2024-05-01 10:00:04,000] INFO [GroupCoordinator 1]: Stabilized group orders generation 5 (__consumer_offsets-7) "
        "with 2 members (kafka.coordinator.group.GroupCoordinator)\n")

    document = json.loads(cli("report", str(log), "--format", "json").stdout)

    assert document["verdict"]["root_cause"] == "member_join"
    assert document["verdict"]["headline"].startswith("routine scale-out in orders (and 1 other group)")
    audit = next(group for group in document["groups"] if group["group_id"] == "audit")
    assert [finding["kind"] for finding in audit["findings"]] == ["unexplained_rebalances"]


def test_a_rebalance_the_coordinator_explains_leads_one_of_the_same_group_it_does_not(cli):
    """A coordinator's log (a ThingsBoard deployment) shows a member leaving its group with the consumer's own reason,
    then, after a gap, the group at a next generation whose start is not in the lines. The verdict names the leave."""
    document = json.loads(cli("report", str(next((FIXTURES / "corpus").glob("500-*.log"))), "--format", "json").stdout)

    assert document["verdict"]["root_cause"] == "member_leave"
    causes = [r["cause"]["kind"] for g in document["groups"] if g["group_id"] == "transport-node-tb-http-transport" for r in g["rebalances"]]
    assert causes == ["member_leave", "unknown"]


def test_a_join_refused_and_never_retried_is_a_rebalance_that_did_not_complete(cli):
    """A Connect sink task's consumer shares its group id with a group of another protocol: its JoinGroup is refused
    with a fatal error, the task is killed and its consumer leaves. No generation follows; the verdict says the
    rebalance did not complete, not that a member joined and there is nothing to fix."""
    document = json.loads(cli("report", str(next((FIXTURES / "corpus").glob("471-*.log"))), "--format", "json").stdout)

    verdict = document["verdict"]
    assert verdict["cause"] == "failed_rebalances" and verdict["severity"] == "warning"
    assert verdict["chain"][0] == "1 rebalance did not complete (? → ✗)"
    assert not any(action.startswith("Nothing to fix") for action in verdict["actions"])


def test_a_consumer_that_heard_nothing_for_a_session_and_carried_on_lost_its_coordinator(cli, tmp_path):
    """A Java consumer's heartbeats go unanswered for a whole session: it marks its coordinator unknown, finds it
    again half a second later and goes on consuming, with no rejoin. The coordinator never expired it: the verdict
    says the coordinator was lost, with no rebalance. A consumer whose next heartbeat is refused for an unknown
    member id was expired: that is a heartbeat expiry."""
    prefix = "INFO 46474 --- [at-thread | foo] o.a.k.c.c.internals.ConsumerCoordinator  : [Consumer clientId=consumer-foo-1, groupId=foo]"
    lost = (f"2024-10-09T16:32:27.262Z  {prefix} Group coordinator kafka-1:9092 (id: 2147483646 rack: null) is unavailable or invalid "
            "due to cause: session timed out without receiving a heartbeat response. isDisconnected: false. Rediscovery will be attempted.\n")
    log = tmp_path / "app-1.log"
    log.write_text(lost + f"2024-10-09T16:32:27.796Z  {prefix} Discovered group coordinator kafka-1:9092 (id: 2147483646 rack: null)\n")

    document = json.loads(cli("report", str(log), "--format", "json").stdout)

    assert document["verdict"]["root_cause"] == "coordinator_change"
    assert document["verdict"]["impact"]["rebalances"] == 0
    finding = document["groups"][0]["findings"][0]
    assert finding["kind"] == "coordinator_change" and "found it again (broker 1)" in finding["summary"]

    log.write_text(lost + f"2024-10-09T16:32:28.100Z  {prefix} Attempt to heartbeat failed since member id "
                          "consumer-foo-1-5f0c is not valid.\n")
    expired = json.loads(cli("report", str(log), "--format", "json").stdout)
    assert expired["verdict"]["root_cause"] == "heartbeat_expiry"


def test_a_join_at_the_top_of_a_log_is_a_first_join_only_after_a_start(cli, tmp_path):
    """A log that begins at a member's "(Re-)joining group" may begin in the middle of its life: nothing says why
    it rejoins, and the report says so. The same join after the consumer's subscription, or answered
    MEMBER_ID_REQUIRED (only a member without an id is), is a new member joining."""
    prefix = "INFO [Consumer clientId=consumer-foo-1, groupId=foo]"
    log = tmp_path / "app-1.log"
    join = f"2024-10-09 16:32:27,262 {prefix} (Re-)joining group\n"
    joined = f"2024-10-09 16:32:27,900 {prefix} Successfully joined group with generation 12\n"
    log.write_text(join + joined)
    assert json.loads(cli("report", str(log), "--format", "json").stdout)["verdict"]["root_cause"] == "unknown"

    log.write_text(f"2024-10-09 16:32:27,100 {prefix} Subscribed to topic(s): orders\n" + join + joined)
    assert json.loads(cli("report", str(log), "--format", "json").stdout)["verdict"]["root_cause"] == "member_join"

    log.write_text(join + f"2024-10-09 16:32:27,300 {prefix} Join group failed with org.apache.kafka.common.errors."
                          "MemberIdRequiredException: The group member needs to have a valid member id before actually "
                          "entering a consumer group.\n" + join.replace("27,262", "27,301") + joined)
    assert json.loads(cli("report", str(log), "--format", "json").stdout)["verdict"]["root_cause"] == "member_join"


def test_an_erlang_consumers_two_line_records_name_group_generation_and_reason(cli, tmp_path):
    """brod prints a header naming the group and the member's generation, and the message on the next line: each
    pair is one event, with the group, the generation and the reason of a rejoin."""
    log = tmp_path / "app.log"
    header = "[09:00:00.{ms}I||<0.1555.0>] Group member (orders,coor=<0.1555.0>,cb=<0.1554.0>,generation={gen}):\n"
    log.write_text(header.format(ms="001", gen=41) + "re-joining group, reason:unknown_member_id\n"
                   + header.format(ms="120", gen=42) + "elected=true\n"
                   + header.format(ms="130", gen=42) + "assignments received:\n  events:\n    partition=0 begin_offset=9268\n")

    rows = [json.loads(line) for line in cli("events", str(log), "--format", "ndjson").stdout.splitlines()]

    assert [(r["line"], r["kind"], r["group_id"], r["generation"]) for r in rows] == [
        (1, "join_requested", "orders", 41), (3, "join_succeeded", "orders", 42), (5, "sync_succeeded", "orders", 42)]
    assert rows[0]["reason"] == "unknown_member_id"


def test_a_join_that_failed_and_was_sent_again_is_a_failed_rebalance_retried(cli, tmp_path):
    """A log that begins with a member's join failing on a timeout: it sends its join again and is elected leader of
    the next generation. Nothing before shows what started the rebalance, but the one in view went on because
    the join failed and was retried, and the report says so."""
    log = tmp_path / "app.log"
    header = "12:52:0{s}.000 [info]  group coordinator (groupId=index.6,memberId={member},generation={gen},pid=#PID<0.263.0>):\n"
    log.write_text(header.format(s=1, member="", gen=11) + "failed to join group\nreason::timeout\n"
                   + header.format(s=2, member="", gen=11) + "re-joining group, reason::timeout\n"
                   + header.format(s=9, member="nonode@nohost/<0.263.0>-a4a2c673", gen=15) + "elected=true\n")

    document = json.loads(cli("report", str(log), "--format", "json").stdout)

    assert document["verdict"]["root_cause"] == "failed_rebalance_retry"
    rebalance = document["groups"][0]["rebalances"][0]
    assert rebalance["cause"]["kind"] == "failed_rebalance_retry"
    assert [e["line"] for e in rebalance["cause"]["evidence"]] == [1, 4]


def test_a_consumer_stopped_before_its_first_join_completed_was_joining(cli, tmp_path):
    """A Spring Boot consumer subscribes, asks to join, and its container is stopped before the join completes. The
    container's "Consumer stopped" line names no client, only the group: it came after the member set out to join,
    so it did not start the rebalance in view. The member's start did."""
    thread = "[org.springframework.kafka.KafkaListenerEndpointContainer#0-0-C-1]"
    client = f"INFO 171926 --- {thread} o.a.k.c.c.internals.ConsumerCoordinator  : [Consumer clientId=consumer-g-1, groupId=g]"
    member = "consumer-g-1-b179631f-267d-4d36-96f1-4b5fede65236"
    log = tmp_path / "app.log"
    log.write_text(
        "2024-12-07 00:15:03,974  INFO 171926 --- [main] o.a.k.clients.consumer.KafkaConsumer     : [Consumer clientId=consumer-g-1, "
        "groupId=g] Subscribed to topic(s): orders\n"
        f"2024-12-07 00:15:04,364  {client} (Re-)joining group\n"
        f"2024-12-07 00:15:04,467  {client} Request joining group due to: need to re-join with the given member-id: {member}\n"
        f"2024-12-07 00:15:04,468  {client} (Re-)joining group\n"
        f"2024-12-07 00:15:06,851  {client} Member {member} sending LeaveGroup request to coordinator kafka-1:9092 "
        "(id: 2147483646 rack: null) due to the consumer unsubscribed from all topics\n"
        f"2024-12-07 00:15:07,634  INFO 171926 --- {thread} o.s.k.l.KafkaMessageListenerContainer    : g: Consumer stopped\n")

    document = json.loads(cli("report", str(log), "--format", "json").stdout)

    assert document["verdict"]["root_cause"] == "member_join"
    assert [r["cause"]["kind"] for r in document["groups"][0]["rebalances"]] == ["member_join"]


def test_a_streams_client_starting_with_no_consumer_line_is_a_member_joining(cli, tmp_path):
    """A ksqlDB query's Streams log shows its client leaving CREATED for REBALANCING and its thread starting, then
    the assignment its thread's consumer computed as leader, with no line of the consumer's own: the rebalance in
    view is the new member joining."""
    app = "_confluent-ksql-default_query_CTAS_MINI_AGG_0"
    client = f"stream-client [{app}-1fd371cd-705d-4b53-acf1-40d7f19338ec]"
    thread = f"stream-thread [{app}-1fd371cd-705d-4b53-acf1-40d7f19338ec-StreamThread-1]"
    log = tmp_path / "ksql-streams.log"
    log.write_text(
        f"[2020-02-11 09:54:46,777] INFO {client} State transition from CREATED to REBALANCING (org.apache.kafka.streams.KafkaStreams:283)\n"
        f"[2020-02-11 09:54:46,778] INFO {thread} State transition from CREATED to STARTING "
        "(org.apache.kafka.streams.processor.internals.StreamThread:218)\n"
        f"[2020-02-11 09:54:47,859] INFO {thread[:-1]}-consumer] Assigned tasks to clients as \n"
        "1fd371cd-705d-4b53-acf1-40d7f19338ec=[activeTasks: ([0_0]) standbyTasks: ([]) assignedTasks: ([0_0]) prevActiveTasks: ([]) "
        "prevStandbyTasks: ([]) prevAssignedTasks: ([]) prevOwnedPartitionsByConsumerId: ([]) capacity: 1]. "
        "(org.apache.kafka.streams.processor.internals.StreamsPartitionAssignor:736)\n"
        f"[2020-02-11 09:54:47,880] INFO {thread} State transition from STARTING to PARTITIONS_ASSIGNED "
        "(org.apache.kafka.streams.processor.internals.StreamThread:218)\n"
        f"[2020-02-11 09:54:47,916] INFO {thread} State transition from PARTITIONS_ASSIGNED to RUNNING "
        "(org.apache.kafka.streams.processor.internals.StreamThread:218)\n"
        f"[2020-02-11 09:54:48,184] INFO {client} State transition from REBALANCING to RUNNING (org.apache.kafka.streams.KafkaStreams:283)\n")

    document = json.loads(cli("report", str(log), "--format", "json").stdout)

    assert document["verdict"]["root_cause"] == "member_join"
    assert [g["group_id"] for g in document["groups"]] == [app]

    # three seconds after it is RUNNING, the client rebalances again: a second rebalance, whose cause no line shows
    log.write_text(log.read_text()
                   + f"[2020-02-11 09:54:50,905] INFO {client} State transition from RUNNING to REBALANCING (org.apache.kafka.streams.KafkaStreams:283)\n"
                   + f"[2020-02-11 09:54:50,906] INFO {thread} State transition from RUNNING to PARTITIONS_ASSIGNED "
                   "(org.apache.kafka.streams.processor.internals.StreamThread:218)\n"
                   + f"[2020-02-11 09:54:50,964] INFO {client} State transition from REBALANCING to RUNNING (org.apache.kafka.streams.KafkaStreams:283)\n")
    again = json.loads(cli("report", str(log), "--format", "json").stdout)
    assert [r["cause"]["kind"] for r in again["groups"][0]["rebalances"]] == ["member_join", "unknown"]
    assert again["verdict"]["root_cause"] == "member_join"


def test_a_leave_before_a_rebalance_whose_start_line_is_cut_started_it(cli, tmp_path):
    """A coordinator's log whose excerpt has lost its "Preparing to rebalance" line: a member leaves, the group
    stabilizes two and a half seconds later, and a new member is added right after. The leave started the first
    rebalance in view (its join phase lasted until the stabilization), and it is the root cause, not the later join."""
    coordinator = "INFO [GroupCoordinator 2]:"
    log = tmp_path / "server.log"
    log.write_text(
        f"[2019-07-14 10:15:48,890] {coordinator} Member app-1-c9fa103b in group chraw has left, removing it from the group "
        "(kafka.coordinator.group.GroupCoordinator)\n"
        f"[2019-07-14 10:15:51,268] {coordinator} Stabilized group chraw generation 12950 (__consumer_offsets-23) "
        "(kafka.coordinator.group.GroupCoordinator)\n"
        f"[2019-07-14 10:15:51,273] {coordinator} Assignment received from leader for group chraw for generation 12950 "
        "(kafka.coordinator.group.GroupCoordinator)\n"
        f"[2019-07-14 10:15:51,603] {coordinator} Preparing to rebalance group chraw in state PreparingRebalance with old "
        "generation 12950 (__consumer_offsets-23) (reason: Adding new member app-2-c7f0a98a) (kafka.coordinator.group.GroupCoordinator)\n")

    document = json.loads(cli("report", str(log), "--format", "json").stdout)

    assert [r["cause"]["kind"] for r in document["groups"][0]["rebalances"]] == ["member_leave", "member_join"]
    assert document["verdict"]["root_cause"] == "member_leave"


def test_a_join_request_that_gives_its_reason_tells_a_new_member(cli, tmp_path):
    """From 3.2 the Java consumer's DEBUG JoinGroup request ends with its reason: a request sent with "need to re-join
    with the given member-id" is the second step of a new member's first join."""
    prefix = ("2024-10-24T12:16:06.562Z DEBUG 7 --- [nio-9343-exec-6] o.a.k.c.c.internals.ConsumerCoordinator  : "
              "[Consumer clientId=consumer-g-1, groupId=g]")
    member = "consumer-g-1-2d2a4ce9-a07a-4476-bf70-d0a050178684"
    log = tmp_path / "app.log"
    log.write_text(
        f"{prefix} Joining group with current subscription: [orders]\n"
        f"{prefix} Sending JoinGroup (JoinGroupRequestData(groupId='g', sessionTimeoutMs=45000, rebalanceTimeoutMs=300000, "
        f"memberId='{member}', groupInstanceId=null, protocolType='consumer', protocols=[JoinGroupRequestProtocol("
        f"name='range', metadata=[0, 3, 0, 0])], reason='need to re-join with the given member-id: {member}')) to coordinator "
        "kafka-1:9092 (id: 2147483646 rack: null)\n")

    document = json.loads(cli("report", str(log), "--format", "json").stdout)

    assert document["verdict"]["root_cause"] == "member_join"


def test_a_log_of_a_consumer_starting_then_closing_is_about_its_start(cli, tmp_path):
    """A consumer subscribes, joins, is assigned its partitions and is closed twenty seconds later: two rebalances,
    a join and a leave, one each. The verdict names what started the first. The layout puts ` | ` between every
    part, the date and the time too: that is a time, not a docker-compose service name."""
    prefix = "INFO  | [main] | o.a.k.c.c.i.ConsumerCoordinator (AbstractCoordinator.java:535) | [Consumer clientId=consumer-foo-1, groupId=foo]"
    member = "consumer-foo-1-8840e9c8-5c86-4b28-b293-f42d80f86cb6"
    log = tmp_path / "app.log"
    log.write_text(
        f"2023-10-24 | 09:52:10.100 | {prefix} Subscribed to topic(s): orders\n"
        f"2023-10-24 | 09:52:10.200 | {prefix} (Re-)joining group\n"
        f"2023-10-24 | 09:52:13.300 | {prefix} Successfully joined group with generation Generation{{generationId=1, "
        f"memberId='{member}', protocol='range'}}\n"
        f"2023-10-24 | 09:52:13.400 | {prefix} Adding newly assigned partitions: orders-0\n"
        f"2023-10-24 | 09:52:33.500 | {prefix} Member {member} sending LeaveGroup request to coordinator kafka-1:9092 "
        "(id: 2147483646 rack: null) due to the consumer is being closed\n")

    document = json.loads(cli("report", str(log), "--format", "json").stdout)
    events = [json.loads(line) for line in cli("events", str(log), "--format", "ndjson").stdout.splitlines()]

    assert document["verdict"]["root_cause"] == "member_join"
    assert sorted(r["cause"]["kind"] for r in document["groups"][0]["rebalances"]) == ["member_join", "member_leave"]
    assert all(e["ts"].startswith("2023-10-24T09:52:") for e in events) and {e["node"] for e in events} != {"2023-10-24"}


def test_a_consumer_told_not_coordinator_as_it_starts_saw_no_coordinator_move(cli, tmp_path):
    """A consumer that has just subscribed and found its coordinator is told the broker is not the coordinator, and
    finds the same broker again: a coordinator that had not loaded the group yet, not a move. The same loss in a
    log that begins with no start (a member at work) is a coordinator change."""
    prefix = "INFO [Consumer clientId=consumer-foo-1, groupId=foo]"
    found = f"{prefix} Discovered group coordinator kafka-1:9092 (id: 2147483646 rack: null)\n"
    lost = (f"{prefix} Group coordinator kafka-1:9092 (id: 2147483646 rack: null) is unavailable or invalid due to cause: "
            "error response NOT_COORDINATOR. isDisconnected: false. Rediscovery will be attempted.\n")
    log = tmp_path / "app.log"
    log.write_text(f"2024-10-09 16:32:27,000 {prefix} Subscribed to topic(s): orders\n" + f"2024-10-09 16:32:27,100 {found}"
                   + f"2024-10-09 16:32:27,200 {lost}" + f"2024-10-09 16:32:27,300 {found}")
    starting = json.loads(cli("report", str(log), "--format", "json").stdout)
    assert starting["verdict"]["root_cause"] == "unknown"
    assert not [f for g in starting["groups"] for f in g["findings"] if f["kind"] == "coordinator_change"]

    log.write_text(f"2024-10-09 16:32:27,200 {lost}" + f"2024-10-09 16:32:27,300 {found}")
    assert json.loads(cli("report", str(log), "--format", "json").stdout)["verdict"]["root_cause"] == "coordinator_change"


def test_a_consumer_starting_whose_first_join_the_lines_do_not_reach_is_a_member_joining(cli, tmp_path):
    """A consumer subscribes and finds its coordinator, and the excerpt ends there: no rebalance is in view, but
    the one coming is its first join. A start followed by a refusal (a broker without the API) is not."""
    prefix = "INFO [Consumer clientId=consumer-foo-1, groupId=foo]"
    log = tmp_path / "app.log"
    log.write_text(f"2024-10-09 16:32:27,000 {prefix} Subscribed to topic(s): orders\n"
                   f"2024-10-09 16:32:27,100 {prefix} Discovered group coordinator kafka-1:9092 (id: 2147483646 rack: null)\n")

    document = json.loads(cli("report", str(log), "--format", "json").stdout)

    assert document["verdict"]["headline"] == "no rebalance in these logs: a member of foo is starting"
    assert document["verdict"]["root_cause"] == "member_join"
    [finding] = document["groups"][0]["findings"]
    assert finding["kind"] == "member_start" and finding["severity"] == "info"
    assert [e["line"] for e in finding["evidence"]] == [1]

    with log.open("a") as out:
        out.write("2024-10-09 16:32:27,200 ERROR [Consumer clientId=consumer-foo-1, groupId=foo] GroupHeartbeatRequest failed "
                  "due to error: UNSUPPORTED_VERSION\n")
    refused = json.loads(cli("report", str(log), "--format", "json").stdout)
    assert refused["verdict"]["root_cause"] == "unknown"
    assert not [f for g in refused["groups"] for f in g["findings"] if f["kind"] == "member_start"]


def test_stream_threads_starting_join_their_application_group_though_no_line_names_it(cli, tmp_path):
    """Four stream threads start and leave CREATED; the application id is on none of their lines. They are
    members on their way to their first join all the same."""
    log = tmp_path / "app.log"
    log.write_text("".join(
        f"2024-10-09 16:32:27,{n}00 INFO stream-thread [app-client-StreamThread-{n}] Starting "
        "(org.apache.kafka.streams.processor.internals.StreamThread)\n"
        f"2024-10-09 16:32:27,{n}10 INFO stream-thread [app-client-StreamThread-{n}] State transition from CREATED to "
        "STARTING (org.apache.kafka.streams.processor.internals.StreamThread)\n" for n in range(1, 5)))

    document = json.loads(cli("report", str(log), "--format", "json").stdout)

    assert document["verdict"]["root_cause"] == "member_join"
    assert [f["kind"] for g in document["groups"] for f in g["findings"]] == ["member_start"]


def test_a_producers_start_is_no_member_starting(cli, tmp_path):
    """librdkafka names every handle it creates: a producer's start is no consumer's, and no group's member."""
    log = tmp_path / "app.log"
    log.write_text("%7|1649256093.940|INIT|rdkafka#producer-1| [thrd:app]: librdkafka v1.8.2 (0x10802ff) rdkafka#producer-1 "
                   "initialized (builtin.features gzip,snappy, debug 0x500)\n"
                   "%7|1649256093.950|INIT|rdkafka#consumer-2| [thrd:app]: librdkafka v1.8.2 (0x10802ff) rdkafka#consumer-2 "
                   "initialized (builtin.features gzip,snappy, debug 0x500)\n")

    rows = [json.loads(line) for line in cli("events", str(log), "--format", "ndjson").stdout.splitlines()]

    assert [(r["line"], r["kind"], r["client_id"]) for r in rows] == [(2, "consumer_started", "rdkafka#consumer-2")]
