#!/usr/bin/python3
"""Enqueues jobs through redis-py's cluster client running lua/enqueue.lua:
a client that is not ours, routing by the {q} hashtag on its own.

usage: enqueue_redis_py.py HOST PORT LUA_FILE QUEUE COUNT
Prints the ids enqueued, one a line."""
import sys

from redis.cluster import RedisCluster


def main():
    host, port, lua_file, queue, count = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
    client = RedisCluster(host=host, port=port)
    with open(lua_file) as f:
        enqueue = client.register_script(f.read())
    for i in range(count):
        job_id = "JOB_py-%s-%06d" % (queue, i)
        row = "emq:{%s}:job:%s" % (queue, job_id)
        pending = "emq:{%s}:pending" % queue
        if enqueue(keys=[row, pending], args=[job_id, "from redis-py"]) != 1:
            sys.exit("enqueue of %s did not answer 1" % job_id)
        print(job_id)


if __name__ == "__main__":
    main()
