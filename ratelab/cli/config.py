"""``ratelab haproxy-config`` and ``ratelab nginx-config``: the server's lines for a policy.

    ratelab haproxy-config --policy "haproxy period=10 limit=100"
    ratelab nginx-config --policy "nginx rate=10 burst=20 nodelay=true" --key '$http_x_api_key'

The lines deploy the rule exactly as ``what-if`` replays the same policy (the models are held
to the real servers by the service tests).
"""

from __future__ import annotations

from ..limiters import haproxy, nginx
from ..limiters.policy import parse_policy
from .support import UsageError, command

DEFAULT_KEYS = {"haproxy": haproxy.KEY, "nginx": nginx.KEY}
EXAMPLES = {"haproxy": "haproxy period=10 limit=100",
            "nginx": "nginx rate=10 burst=20 nodelay=true"}
KEY_HELP = {"haproxy": "the sample expression to limit by, e.g. req.hdr(x-api-key)",
            "nginx": "the variable to limit by, e.g. $http_x_api_key"}


def add_haproxy_config(sub) -> None:
    """Add the ``haproxy-config`` subcommand."""
    _add(sub, "haproxy", "print the HAProxy lines (stick table, track, deny) of a haproxy policy")


def add_nginx_config(sub) -> None:
    """Add the ``nginx-config`` subcommand."""
    _add(sub, "nginx", "print the nginx lines (limit_req_zone, limit_req) of an nginx policy")


def _add(sub, server: str, help_: str) -> None:
    p = command(
        sub, f"{server}-config", run=run, render=render, help=help_,
        description=f"The {server} configuration that runs a policy exactly as what-if "
                    "replays it: the same policy text, the lines to paste. The client is its "
                    f"address ({DEFAULT_KEYS[server]}) unless --key names another.",
        example=f'ratelab {server}-config --policy "{EXAMPLES[server]}"')
    p.add_argument("--policy", required=True, metavar="POLICY",
                   help=f"a {server} policy as what-if takes it, e.g. \"{EXAMPLES[server]}\" "
                        "(see `ratelab limiters`) (default: none, give one)")
    p.add_argument("--key", default=None, metavar="EXPR",
                   help=f"{KEY_HELP[server]} (default: {DEFAULT_KEYS[server]}, the client's "
                        "address)")
    p.set_defaults(server=server)


def run(args) -> dict:
    """The record: the policy, the server, what it limits by, and the lines."""
    try:
        policy = parse_policy(args.policy)
    except ValueError as e:
        raise UsageError("--policy", str(e)) from None
    if policy.name != args.server:
        near = nearest(policy)
        hint = f"; the nearest {args.server} rule: {near}" if near else ""
        raise UsageError("--policy", f"{policy.text!r} is a {policy.name} policy, not a "
                                     f"{args.server} one{hint}")
    key = DEFAULT_KEYS[args.server] if args.key is None else args.key
    try:
        text = policy.config(key)
    except ValueError as e:
        flag = "--key" if str(e).startswith("key") else "--policy"
        raise UsageError(flag, str(e)) from None
    return {"policy": policy.text, "server": args.server, "key": key, "config": text}


def nearest(policy) -> str | None:
    """The haproxy policy closest to a sliding-window-counter one (the same limit per window;
    its periods start at each client's first request), else None."""
    if policy.name != "sliding-window-counter":
        return None
    lim = policy.limiter()
    return f"\"haproxy period={lim.window:g} limit={int(lim.limit)}\"" \
        if lim.limit == int(lim.limit) else None


def render(record: dict) -> str:
    return record["config"]
