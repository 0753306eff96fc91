"""The scenarios, one module each, in the order a run takes them: each
measures its figures beside a ceiling or the peer in the same run and adds
its rows, with the targets they are held to, to the session's report
(scenario(session))."""
from emqbench.scenarios import (ceiling, cluster, enqueue, events, exec_handler, flows, groups, latency, limits, memory,
                                native, noop, pool, search, tls, tracing, unique)

# The names --only takes, in the order a run takes them.
SCENARIOS = {
    "enqueue": enqueue.scenario,
    "noop": noop.scenario,
    "tls": tls.scenario,
    "native": native.scenario,
    "ceiling": ceiling.scenario,
    "cluster": cluster.scenario,
    "pool": pool.scenario,
    "exec": exec_handler.scenario,
    "limits": limits.scenario,
    "flows": flows.scenario,
    "events": events.scenario,
    "search": search.scenario,
    "unique": unique.scenario,
    "groups": groups.scenario,
    "tracing": tracing.scenario,
    "latency": latency.scenario,
    "memory": memory.scenario,
}
