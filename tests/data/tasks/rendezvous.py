"""Stands in for torchrun in the tests: every node meets the head at the
first of SKYPILOT_NODE_IPS, as a rendezvous does, and says who it met."""
import os
import socket
import sys
import time

ips = [ip for ip in os.environ["SKYPILOT_NODE_IPS"].split("\n") if ip]
rank = int(os.environ["SKYPILOT_NODE_RANK"])
world = int(os.environ["SKYPILOT_NUM_NODES"])
port = 20000 + int(os.environ.get("SLURM_JOB_ID", "0")) % 20000
if len(ips) != world:
    sys.exit(f"SKYPILOT_NODE_IPS has {len(ips)} addresses for {world} nodes")

if rank == 0:
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((ips[0], port))
    server.listen(world)
    server.settimeout(60)
    peers = []
    for _ in range(world - 1):
        conn, _ = server.accept()
        peers.append((int(conn.recv(64).decode()), conn))
    ranks = sorted([0] + [r for r, _ in peers])
    for _, conn in peers:
        conn.sendall(",".join(map(str, ranks)).encode())
        conn.close()
else:
    deadline = time.time() + 60
    while True:
        try:
            conn = socket.create_connection((ips[0], port), timeout=5)
            break
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.2)
    conn.sendall(str(rank).encode())
    ranks = [int(r) for r in conn.recv(256).decode().split(",")]
print(f"rank {rank} of {world}: met at {ips[0]}:{port}, ranks {ranks}")
