"""The real-service wiring: a redis-server started by a fixture, used through redis-py."""

import redis


def test_incr_on_a_real_redis(redis_url):
    r = redis.Redis.from_url(redis_url)
    r.delete("hits")
    assert [r.incr("hits") for _ in range(3)] == [1, 2, 3]
    assert r.info("server")["redis_version"].split(".")[0].isdigit()
