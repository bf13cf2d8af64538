#!/usr/bin/env python3
"""links.py -- the links of `bench.py watch-recovery`: one process that forwards each of
COUNT loopback ports (FIRST, FIRST+1, ...) to one upstream address (the real API server),
and that the benchmark switches off and on, as an edge site's link goes down and comes back.

    python3 scripts/bench.d/links.py --upstream 127.0.0.1:36443 --first 24000 --count 1000

Commands, one a line on stdin; each is answered by one JSON line on stdout:

    down          every listener closed, every connection reset (RST): nothing answers,
                  a connect is refused                            -> {"event": "down", "time": T}
    reset         listening, but every connection is reset as soon as it is accepted: a
                  probe connects, an attempt reaches the far end and fails
                                                                  -> {"event": "reset", "time": T}
    up [SPREAD]   forwarding; each port opens at a random moment within SPREAD seconds
                  (default 0: all at once)                        -> {"event": "up", "times": [T...]}
    stats         connections accepted and forwarded so far, and when each port first
                  accepted one since it came up (null: not yet) -> {"event": "stats", "first": [T...], ...}
    quit

T is Unix time in seconds (float), taken when the port's listener was bound and listening.
"""
import argparse
import asyncio
import json
import random
import resource
import socket
import struct
import sys
import time


class Links:
    def __init__(self, upstream, first, count):
        self.upstream = upstream
        self.ports = list(range(first, first + count))
        self.servers = {}  # port -> asyncio.Server
        self.conns = set()  # (client socket, upstream writer or None)
        self.live = set()  # ports forwarding (the others reset what they accept)
        self.accepted = 0
        self.first = {}  # port -> when it first accepted a connection since its link came up
        self.forwarded = 0

    def listener(self, port):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        s.listen(1024)
        s.setblocking(False)
        return s

    async def open(self, port):
        if port not in self.servers:
            self.servers[port] = await asyncio.start_server(self.serve, sock=self.listener(port))
        return time.time()

    async def close_all(self):
        for server in self.servers.values():
            server.close()
        self.servers.clear()
        for entry in list(self.conns):
            reset(*entry)
        self.conns.clear()

    async def serve(self, reader, writer):
        self.accepted += 1
        sock = writer.get_extra_info("socket")
        port = sock.getsockname()[1]
        if port in self.live:
            self.first.setdefault(port, time.time())
        if port not in self.live:
            reset(sock, writer)
            return
        try:
            up_r, up_w = await asyncio.open_connection(*self.upstream)
        except OSError:
            reset(sock, writer)
            return
        entry = (sock, writer, up_w)
        self.conns.add(entry)
        self.forwarded += 1
        try:
            await asyncio.gather(pump(reader, up_w), pump(up_r, writer))
        finally:
            self.conns.discard(entry)
            for w in (writer, up_w):
                try:
                    w.close()
                except Exception:
                    pass


def reset(sock, *writers):
    """Closes a connection with a RST (SO_LINGER 0): the link is gone, not shut down."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    for w in writers:
        try:
            w.transport.abort()
        except Exception:
            pass


async def pump(reader, writer):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except (OSError, asyncio.CancelledError):
        pass
    finally:
        try:
            writer.write_eof()
        except Exception:
            pass


def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--upstream", required=True, help="HOST:PORT of the real server")
    parser.add_argument("--first", type=int, required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--seed", type=int, default=48)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    host, port = args.upstream.rsplit(":", 1)
    links = Links((host, int(port)), args.first, args.count)
    rng = random.Random(args.seed)
    loop = asyncio.get_running_loop()
    stdin = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    say({"event": "ready", "ports": [links.ports[0], links.ports[-1]]})
    while True:
        line = (await stdin.readline()).decode().split()
        if not line or line[0] == "quit":
            await links.close_all()
            return
        cmd = line[0]
        if cmd == "down":
            links.live.clear()
            await links.close_all()
            say({"event": "down", "time": time.time()})
        elif cmd == "reset":
            links.live.clear()
            for p in links.ports:
                await links.open(p)
            for entry in list(links.conns):
                reset(*entry)
            say({"event": "reset", "time": time.time()})
        elif cmd == "up":
            spread = float(line[1]) if len(line) > 1 else 0.0
            links.first.clear()
            start = loop.time()
            offsets = sorted((rng.uniform(0, spread), p) for p in links.ports)
            times = {}
            for offset, p in offsets:
                delay = start + offset - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                await links.open(p)
                links.live.add(p)
                times[p] = time.time()
            say({"event": "up", "times": [times[p] for p in links.ports]})
        elif cmd == "stats":
            say({"event": "stats", "accepted": links.accepted, "forwarded": links.forwarded,
                 "open": len(links.conns), "first": [links.first.get(p) for p in links.ports]})
        else:
            say({"event": "error", "msg": f"unknown command {cmd}"})


if __name__ == "__main__":
    asyncio.run(main())
