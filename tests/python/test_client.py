"""Every client call against a real surge (net_null, net_ring), and bad inputs."""
import math
import os
import signal
import threading
import time
from typing import Any

import pytest

import surge
from conftest import IDLE, MakeInstance


def test_eval_values(instance: MakeInstance) -> None:
    c = instance().client
    assert c.eval("1 + 1") == 2
    assert c.eval("'x' .. 1") == "x1"
    assert c.eval("{ 1, 2, { a = true } }") == [1, 2, {"a": True}]
    assert c.eval("1, nil, 'z'") == (1, None, "z")
    assert c.eval("local x = 3") is None
    assert c.eval("surge.ports()") == 1
    assert c.eval("surge.port(0)").startswith("port 0: net_null0 (net_null)")
    assert c.eval_output("print('hello') return 5") == (5, "hello\n")
    assert c.eval("x_from_python = 41") is None and c.eval("x_from_python + 1") == 42
    assert "surge.ports" in c.complete("surge.po")
    assert c.call("string.rep", "ab", 2) == "abab"


def test_lua_errors(instance: MakeInstance) -> None:
    c = instance().client
    with pytest.raises(surge.SurgeError) as e:
        c.eval("1 + nil")
    assert str(e.value) == "prompt:1: attempt to perform arithmetic on a nil value"
    with pytest.raises(surge.SurgeError) as e:
        c.eval("local a = 1\nlocal b = a + {}")
    assert str(e.value).startswith("prompt:2: attempt to perform arithmetic")
    with pytest.raises(surge.SurgeError) as e:
        c.eval("function f(")
    assert "prompt:1:" in str(e.value)
    with pytest.raises(surge.SurgeError) as e:
        c.eval("stop(99)")
    assert str(e.value) == "prompt:1: stop: no running task 99"
    assert c.eval("2") == 2       # the connection goes on after errors


def test_tasks_rates_stats(instance: MakeInstance) -> None:
    c = instance().client
    c.eval("require('surge.fleet').arm(0)")            # fleet_tx.lua without --fleet starts at once anyway
    for _ in range(200):     # the task has set its own rate once it sends
        if c.stats()["ports"][0]["tx_packets"] > 0:
            break
        time.sleep(0.05)
    assert [t["fn"] for t in c.tasks()] == ["tx"] and c.tasks()[0]["state"] == "running"
    line = c.set_rate(0, 0, "50kpps")
    assert line.startswith("txq(0,0)")
    time.sleep(0.5)
    assert "rate 0.050 Mpps set" in c.eval("surge.port(0):txq(0)")
    s = c.stats()
    assert s["ports"][0]["tx_packets"] > 0
    assert any(q["dir"] == "tx" and q["packets"] > 0 for q in s["queues"])
    assert [x["name"] for x in s["counters"]] == ["first_tx_unix"] and s["counters"][0]["kind"] == "gauge"
    rx = c.launch("rx", surge.Lua("surge.port(0):rxq(0)"))
    assert rx.name == "rx" and rx.state() == "running"
    assert rx.stop() == 1
    assert rx.wait(5) == 0
    assert rx.state() in ("done", "gone")     # gone: surge.wait collected it
    r = c.results()
    assert r["schema"] == "surge-results" and r["status"] == "running"
    assert r["summary"]["ports"][0]["tx_packets"] > 0


def test_scenario_with_progress(instance: MakeInstance) -> None:
    c = instance(args=("--vdev", "net_ring0", IDLE)).client
    lines: list[str] = []
    res = c.scenario("load-latency", {"rates": "5kpps,10kpps", "trial": 0.3, "settle": 0.1}, progress=lines.append,
                     timeout=120)
    assert len(res["rows"]) == 2
    assert any("%" in ln for ln in lines), lines          # the ETA line, as the CLI draws it
    assert "load_latency" in c.results()["scenarios"] or "load-latency" in c.results()["scenarios"]
    with pytest.raises(surge.SurgeError) as e:
        c.scenario("no-such-scenario")
    assert "unknown scenario" in str(e.value)


def test_dead_socket(tmp: str) -> None:
    with pytest.raises(surge.ConnectionClosed) as e:
        surge.connect(os.path.join(tmp, "none.sock"))
    assert "cannot connect to the control socket" in str(e.value)


def test_stop_during_a_call(instance: MakeInstance) -> None:
    i = instance()
    c = i.client
    got: dict[str, Any] = {}

    def call() -> None:
        try:
            c.eval("while true do end", timeout=60)
        except surge.SurgeError as e:
            got["e"] = e
    t = threading.Thread(target=call)
    t.start()
    time.sleep(0.5)
    i.proc.send_signal(signal.SIGTERM)       # `timeout` passes it on to surge
    t.join(30)
    assert not t.is_alive()
    assert isinstance(got.get("e"), surge.SurgeError)
    assert "interrupted (the run stopped)" in str(got["e"]) or isinstance(got["e"], surge.ConnectionClosed)
    with pytest.raises(surge.ConnectionClosed):
        for _ in range(50):
            try:
                c.eval("1")
            except surge.ConnectionClosed:
                raise
            except surge.SurgeError as e:     # the stop interrupts what runs meanwhile
                assert str(e) == "interrupted (the run stopped)"
            time.sleep(0.1)


def test_instance_ends_during_call(instance: MakeInstance) -> None:
    c = instance().client
    with pytest.raises(surge.SurgeError) as e:
        c.eval("surge.stop() while true do end")
    assert "interrupted" in str(e.value) or isinstance(e.value, surge.ConnectionClosed)


def test_sizes_and_arguments(instance: MakeInstance) -> None:
    c = instance().client
    with pytest.raises(surge.SurgeError) as e:
        c.eval("string.rep('x', 2 ^ 21)")
    assert "a reply may have" in str(e.value)
    with pytest.raises(surge.SurgeError) as e:
        c.eval("return '" + "x" * (1 << 21) + "'")
    assert "more than the 1048576 surge takes" in str(e.value)
    with pytest.raises(TypeError):
        c.call("print", object())
    assert c.eval("#" + surge.lua_literal("a\"b\\\n\x00é")) == 8     # bytes as Lua sees them
    assert c.eval("1") == 1


def test_values_kept_whole(instance: MakeInstance) -> None:
    c = instance().client
    # keys of several types: none replaces another (issue 31.8)
    assert c.eval("{ [1] = 'a', ['1'] = 'b' }") == {1: "a", "1": "b"}
    assert c.eval("{ [true] = 'x', [2.5] = 'y', z = 1 }") == {True: "x", 2.5: "y", "z": 1}
    assert c.eval("{ [1] = 'a', [3] = 'c' }") == {1: "a", 3: "c"}
    assert c.eval("1, nil") == (1, None) and c.call("select", 2, "a", None, None) == (None, None)
    # integers Lua cannot hold exactly are refused before anything is sent
    assert c.call("tostring", 2 ** 53) == "9.007199254741e+15"
    for big in (2 ** 53 + 1, -(2 ** 53) - 1, 2 ** 64):
        with pytest.raises(TypeError, match="2\\^53"):
            c.call("tostring", big)
        with pytest.raises(TypeError, match="2\\^53"):
            c.launch("tx", big)
        with pytest.raises(TypeError, match="2\\^53"):
            c.scenario("load-latency", {"rates": big})
    with pytest.raises(TypeError):
        c.call("tostring", "\ud800")
    assert c.eval("1") == 1


def test_values_json_cannot_hold(instance: MakeInstance) -> None:
    """NaN, the infinities and strings that are not UTF-8 come back as they are,
    both ways (they came back as None and U+FFFD), keys too; a table whose keys a
    Python dict takes as one (1 and true) is a SurgeError, never one value lost."""
    c = instance().client
    nan, inf, neg, raw = c.eval("0/0, math.huge, -math.huge, '\\255\\0A'")
    assert math.isnan(nan) and inf == math.inf and neg == -math.inf and raw == b"\xff\x00A"
    assert c.call("(function(...) return ... end)", math.inf, b"\xfe", [math.nan])[:2] == (math.inf, b"\xfe")
    assert c.eval("{ [math.huge] = 1, ['\\254'] = 2, x = 3 }") == {math.inf: 1, b"\xfe": 2, "x": 3}
    assert c.eval("{ ['\\255'] = 1, ['\\254'] = 2 }") == {b"\xff": 1, b"\xfe": 2}
    for code in ("{ [1] = 'a', [true] = 'b' }", "{ [0] = 'a', [false] = 'b' }", "{ [{}] = 1, ['{}'] = 2 }"):
        with pytest.raises(surge.SurgeError, match="are one key in a Python dict") as e:
            c.eval(code)
        assert not isinstance(e.value, surge.ConnectionClosed), code
        assert not c.closed and c.eval("1") == 1, "the reply was read whole: the connection stays"


def test_waits_longer_than_the_socket_timeout(instance: MakeInstance) -> None:
    i = instance(args=(IDLE,))
    c = surge.connect(i.sock, timeout=1.0)
    t0 = time.monotonic()
    t = c.launch("nap", 2.5)
    assert t.wait() == "napped"                     # 2.5 s: several requests, none cut
    assert 2.0 < time.monotonic() - t0 < 15
    c.launch("nap", 2.5)
    c.launch("nap", 1.5)
    assert c.wait(0.2) is None                      # the wait's own timeout
    assert c.wait() == ["napped", "napped"]
    assert not c.closed and c.eval("1") == 1
    c.close()


def test_seventeenth_client(instance: MakeInstance) -> None:
    i = instance(args=(IDLE,))
    others: list[surge.Client] = []
    for _ in range(15):                                       # 16 with the fixture's
        others.append(surge.connect(i.sock, wait=10))
        assert others[-1].eval("1") == 1
    extra = surge.connect(i.sock, wait=10)
    # surge accepts it, sends its refusal and closes before the client's first
    # request: that request meets a closed socket, the refusal still unread
    assert i.client.eval("1") == 1
    time.sleep(0.3)
    with pytest.raises(surge.SurgeError) as e:
        extra.eval("1")
    assert "too many clients attached" in str(e.value), str(e.value)
    others.pop().close()
    assert i.client.eval("2") == 2
    for o in others:
        o.close()
