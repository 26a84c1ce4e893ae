"""Several instances as one: a common start time (first TX packets within 5 ms
of each other, from their pcap captures), one stop, merged results equal to the
sum of the parts, one failing instance stopping the other, and all of it through
sockets forwarded by OpenSSH (`ssh -L`) to an sshd on 127.0.0.1."""
import json
import os
import shutil
import socket
import struct
import subprocess
import time
from typing import Any, Callable, Iterator, Optional, Sequence

import pytest

import surge
from conftest import SCRIPT, SRC, Instance

try:
    import jsonschema
except ImportError:  # pragma: no cover
    jsonschema = None


def first_packet_time(path: str) -> float:
    """The timestamp of the first frame of a pcap file (s, float)."""
    with open(path, "rb") as f:
        head = f.read(24)
        magic = struct.unpack("<I", head[:4])[0]
        scale = 1e-9 if magic == 0xA1B23C4D else 1e-6
        sec, frac = struct.unpack("<II", f.read(8))
    return float(sec + frac * scale)


def two(tmp: str, extra_b: Sequence[str] = ()) -> list[Instance]:
    """Instances a and b, each sending on its own net_pcap port into a capture."""
    made: list[Instance] = []
    # each on a CPU of its own: two tasks spinning on one CPU take turns in
    # scheduler slices of milliseconds
    for name, extra, cpu in (("a", (), 0), ("b", tuple(extra_b), 1)):
        pcap = os.path.join(tmp, name + ".pcap")
        made.append(Instance(tmp, name, ["--vdev", f"net_pcap0,tx_pcap={pcap}", SCRIPT,
                                         "--fleet", "--rate", "20kpps", *extra], lcores=f"(0-1)@({cpu})"))
    return made


def fleet_of(insts: list[Instance], sockets: Optional[list[str]] = None) -> surge.Fleet:
    return surge.Fleet([surge.Instance(n, s, i.proc, i.log) for n, s, i in
                        zip("ab", sockets or [i.sock for i in insts], insts)])


def check_merged(fleet: surge.Fleet, insts: list[Instance], tmp: str) -> dict[str, Any]:
    merged = fleet.merged()
    parts = [i.results for i in fleet.instances if i.results is not None]
    tx = [p["summary"]["ports"][0]["tx_packets"] for p in parts]
    assert all(n > 0 for n in tx)
    assert merged["summary"]["ports"][0]["tx_packets"] == sum(tx)
    assert merged["summary"]["ports"][0]["tx_bytes"] == sum(p["summary"]["ports"][0]["tx_bytes"] for p in parts)
    assert [x["name"] for x in merged["scenarios"]["fleet"]["instances"]] == ["a", "b"]
    out = os.path.join(tmp, "merged.json")
    surge.fleet.write(out, merged)
    if jsonschema is not None:
        with open(os.path.join(SRC, "docs/results.schema.json")) as f:
            jsonschema.validate(json.load(open(out)), json.load(f))
    assert surge.load(out).tx_packets() == sum(tx)
    fleet.close()
    for i in insts:
        assert i.proc.wait(30) == 0, i.text()
    # the files the instances wrote themselves agree with what the fleet merged
    files = [surge.load(i.output) for i in insts]
    assert [f.tx_packets() for f in files] == tx
    return merged


def check_start(fleet: surge.Fleet, insts: list[Instance], tmp: str) -> None:
    # each instance's own wall-clock time of its first send (a gauge: in its
    # results and on its telemetry socket)
    sent = [surge.Results(i.results).counters["first_tx_unix"] for i in fleet.instances if i.results is not None]
    assert fleet.start_time is not None
    spread_ms = abs(sent[0] - sent[1]) * 1e3
    t = [first_packet_time(os.path.join(tmp, n + ".pcap")) for n in "ab"]
    pcap_ms = abs(t[0] - t[1]) * 1e3
    print(f"first TX {spread_ms:.3f} ms apart ({(sent[0] - fleet.start_time) * 1e3:.3f} and "
          f"{(sent[1] - fleet.start_time) * 1e3:.3f} ms after the start); in the captures {pcap_ms:.3f} ms")
    assert spread_ms < 5.0
    assert min(sent) >= fleet.start_time          # nobody started before the common time
    # net_pcap stamps frames from the TSC since its start (with DPDK's estimate of
    # the TSC's rate), not from the wall clock: a few ms off it after seconds
    assert pcap_ms < 10.0 and abs(min(t) - fleet.start_time) < 0.010


def test_common_start_stop_merge(tmp: str) -> None:
    insts = two(tmp)
    fleet = fleet_of(insts)
    fleet.connect()
    fleet.start(margin_s=0.5)
    fleet.run_for(1.0)
    fleet.stop()
    merged = check_merged(fleet, insts, tmp)
    assert all(lead > 0 for lead in merged["scenarios"]["fleet"]["armed_lead_s"].values())
    check_start(fleet, insts, tmp)


def test_one_failing_instance_stops_the_other(tmp: str) -> None:
    insts = two(tmp, extra_b=("--fail-after", "0.3"))
    fleet = fleet_of(insts)
    fleet.connect()
    fleet.start(margin_s=0.3)
    with pytest.raises(surge.FleetError) as e:
        fleet.run_for(10.0)
    assert e.value.instance == "b"
    assert "the test's own failure after 0.3 s" in str(e.value)
    fleet.close()
    assert insts[0].proc.wait(15) is not None      # a was stopped, not left running
    assert insts[1].proc.returncode != 0


def test_start_time_already_past(tmp: str) -> None:
    i = Instance(tmp, "a", [SCRIPT, "--fleet"], lcores="(0-1)@(0-1)")
    fleet = surge.Fleet([surge.Instance("a", i.sock, i.proc, i.log)])
    fleet.connect()
    with pytest.raises(surge.FleetError) as e:
        fleet.start(margin_s=-0.5)
    assert e.value.instance == "a" and "the start time arrived" in str(e.value) and "ms late" in str(e.value)
    fleet.close()
    assert i.proc.wait(15) is not None          # the failed start stopped it


def test_start_without_instance(tmp: str) -> None:
    fleet = surge.Fleet([surge.Instance("x", os.path.join(tmp, "none.sock"))])
    with pytest.raises(surge.FleetError) as e:
        fleet.connect(wait=0.2)
    assert e.value.instance == "x" and "cannot connect" in str(e.value)


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p: int = s.getsockname()[1]
    s.close()
    return p


@pytest.fixture
def sshd(tmp: str) -> Iterator[Callable[[str, str], None]]:
    """An OpenSSH server on 127.0.0.1 with its own host key, config and client key."""
    exe = shutil.which("sshd") or "/usr/sbin/sshd"
    if not os.path.exists(exe) or not shutil.which("ssh") or not shutil.which("ssh-keygen"):
        pytest.skip("OpenSSH (openssh-server, openssh-client) is not installed")
    d = os.path.join(tmp, "ssh")
    os.makedirs(d, mode=0o700)
    for key in ("host", "client"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", os.path.join(d, key)], check=True)
    shutil.copy(os.path.join(d, "client.pub"), os.path.join(d, "authorized_keys"))
    os.makedirs("/run/sshd", exist_ok=True)         # sshd's privilege separation folder
    port = free_port()
    with open(os.path.join(d, "sshd_config"), "w") as f:
        f.write(f"ListenAddress 127.0.0.1\nPort {port}\nHostKey {d}/host\nAuthorizedKeysFile {d}/authorized_keys\n"
                f"PidFile {d}/sshd.pid\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
                "PermitRootLogin prohibit-password\nAllowStreamLocalForwarding yes\nStrictModes no\nUsePAM no\n")
    proc = subprocess.Popen([exe, "-D", "-e", "-f", os.path.join(d, "sshd_config")], stderr=subprocess.PIPE)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        except OSError:
            if proc.poll() is not None:
                assert proc.stderr is not None
                pytest.skip(f"sshd cannot run here: {proc.stderr.read().decode(errors='replace').strip()}")
            time.sleep(0.05)
    tunnels: list[subprocess.Popen[bytes]] = []

    def forward(local: str, remote: str) -> None:
        t = subprocess.Popen(["ssh", "-N", "-p", str(port), "-i", os.path.join(d, "client"), "-o", "BatchMode=yes",
                              "-o", "StrictHostKeyChecking=no", "-o", f"UserKnownHostsFile={d}/known_hosts",
                              "-o", "ExitOnForwardFailure=yes", "-o", "StreamLocalBindUnlink=yes",
                              "-L", f"{local}:{remote}", "root@127.0.0.1"], stderr=subprocess.PIPE)
        tunnels.append(t)
        for _ in range(200):
            if os.path.exists(local):
                return
            if t.poll() is not None:
                assert t.stderr is not None
                raise AssertionError(f"ssh -L failed: {t.stderr.read().decode(errors='replace')}")
            time.sleep(0.05)
        raise AssertionError("ssh -L did not make its socket")
    yield forward
    for t in tunnels:
        t.terminate()
        t.wait()
    proc.terminate()
    proc.wait()


def test_through_ssh_forwarded_sockets(tmp: str, sshd: Callable[[str, str], None]) -> None:
    insts = two(tmp)
    fwd = []
    for n, i in zip("ab", insts):
        local = os.path.join(tmp, f"fwd-{n}.sock")
        sshd(local, i.sock)
        fwd.append(local)
    c = surge.connect(fwd[0])
    assert c.eval("surge.port(0)").startswith("port 0:")
    c.close()
    fleet = fleet_of(insts, fwd)
    fleet.connect()
    fleet.start(margin_s=0.5)
    fleet.run_for(1.0)
    fleet.stop()
    check_merged(fleet, insts, tmp)
    check_start(fleet, insts, tmp)


def test_through_ssh_a_failure_is_reported(tmp: str, sshd: Callable[[str, str], None]) -> None:
    insts = two(tmp, extra_b=("--fail-after", "0.3"))
    fwd = []
    for n, i in zip("ab", insts):
        local = os.path.join(tmp, f"fwd-{n}.sock")
        sshd(local, i.sock)
        fwd.append(local)
    # as for a remote host: the fleet has no process and no log, only the sockets
    fleet = surge.Fleet([surge.Instance(n, s) for n, s in zip("ab", fwd)])
    fleet.connect()
    fleet.start(margin_s=0.5)
    with pytest.raises(surge.FleetError) as e:
        fleet.run_for(10.0)
    assert e.value.instance == "b"
    fleet.close()
    assert insts[0].proc.wait(15) is not None
